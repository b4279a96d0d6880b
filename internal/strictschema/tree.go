package strictschema

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// Decode parses one JSON document into a tree of map[string]any, []any,
// string, json.Number (the literal as written), bool and nil. Duplicate
// member names, invalid UTF-8 and trailing data are errors.
func Decode(raw []byte) (any, error) {
	dec := getDecoder(raw)
	defer decoders.Put(dec)
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errTrailing
	}
	return v, nil
}

// decoders reuse the buffers of jsontext decoders, which are large enough
// that clearing fresh ones shows in profiles.
var decoders = sync.Pool{New: func() any { return jsontext.NewDecoder(bytes.NewReader(nil)) }}

func getDecoder(raw []byte) *jsontext.Decoder {
	dec := decoders.Get().(*jsontext.Decoder)
	dec.Reset(bytes.NewReader(raw))
	return dec
}

const errTrailing = undoError("trailing data after the JSON value")

func decodeValue(dec *jsontext.Decoder) (any, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case '{':
		m := map[string]any{}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			key := name.String()
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			m[key] = v
		}
		_, err := dec.ReadToken()
		return m, err
	case '[':
		a := []any{}
		for dec.PeekKind() != ']' {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.ReadToken()
		return a, err
	case '"':
		return tok.String(), nil
	case '0':
		return json.Number(tok.String()), nil
	case 't', 'f':
		return tok.Bool(), nil
	}
	return nil, nil
}

// Encode writes a tree made by Decode (or built of the same types) as
// compact JSON, object members sorted by name.
func Encode(v any) []byte {
	return appendValue(nil, v)
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = jsontext.AppendQuote(b, k)
			b = append(b, ':')
			b = appendValue(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case string:
		b, _ = jsontext.AppendQuote(b, x)
		return b
	case json.Number:
		return append(b, x...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case nil:
		return append(b, "null"...)
	}
	// Only the types above are built by this package.
	raw, _ := json.Marshal(v)
	return append(b, raw...)
}
