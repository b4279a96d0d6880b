package dispatch

import (
	"bytes"
	"math"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// memberReader is a decoder of arguments, kept for the next member read:
// a decision reads one or two, and a decoder is most of their cost.
type memberReader struct {
	r   bytes.Reader
	dec jsontext.Decoder
}

var memberReaders = sync.Pool{New: func() any { return new(memberReader) }}

// memberValue returns the value at path in args, one JSON object, and
// whether there is one. The value is a copy.
func memberValue(args []byte, path []string) (jsontext.Value, bool) {
	mr := memberReaders.Get().(*memberReader)
	defer memberReaders.Put(mr)
	mr.r.Reset(args)
	mr.dec.Reset(&mr.r)
	dec := &mr.dec
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
// one that a sum counts: 0, or of a magnitude above 1e-300 and below
// 1e308 (see Event.Number).
func memberNumber(args []byte, path []string) (float64, bool) {
	v, ok := memberValue(args, path)
	if !ok || v.Kind() != '0' {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil || math.Abs(f) >= 1e308 || (f != 0 && math.Abs(f) <= 1e-300) {
		return 0, false
	}
	return f, true
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
