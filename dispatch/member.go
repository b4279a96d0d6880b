package dispatch

import (
	"bytes"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// memberValue returns the value at path in args, one JSON object, and
// whether there is one. The value is a copy.
func memberValue(args []byte, path []string) (jsontext.Value, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(args))
	for i, name := range path {
		if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
			return nil, false
		}
		for {
			if dec.PeekKind() == '}' {
				return nil, false
			}
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, false
			}
			if tok.String() == name {
				break
			}
			if err := dec.SkipValue(); err != nil {
				return nil, false
			}
		}
		if i == len(path)-1 {
			v, err := dec.ReadValue()
			if err != nil {
				return nil, false
			}
			return v.Clone(), true
		}
	}
	return nil, false
}

// memberNumber returns the number at path in args, and whether there is
// one.
func memberNumber(args []byte, path []string) (float64, bool) {
	v, ok := memberValue(args, path)
	if !ok || v.Kind() != '0' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// memberString returns the string at path in args, and whether there is
// one.
func memberString(args []byte, path []string) (string, bool) {
	v, ok := memberValue(args, path)
	if !ok || v.Kind() != '"' {
		return "", false
	}
	s, err := jsontext.AppendUnquote(nil, v)
	return string(s), err == nil
}
