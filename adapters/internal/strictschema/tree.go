// This file holds Decode and Encode, between schema text and the tree
// the lowerings work on.

package strictschema

import (
	"encoding/json"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/keyword"
	"github.com/agentcontract/tool/internal/strictjson"
)

// Decode parses one JSON document into a tree of map[string]any, []any,
// string, json.Number (the literal as written), bool and nil, with the
// core's reader and its rules (strictjson: RFC 7493, the rules Prepare
// reads arguments and Bind reads schemas by). A canonical schema has been
// read by those rules already, at Bind.
func Decode(raw []byte) (any, error) {
	tree, _, err := strictjson.ParseInterning(raw, commonStrings)
	return tree, err
}

// commonStrings are the strings a schema repeats most, given to the reader so
// that it does not allocate them for every node.
var commonStrings = map[string]string{
	"type": "type", "properties": "properties", "required": "required", "description": "description",
	"items": "items", "enum": "enum", "additionalProperties": "additionalProperties",
	"string": "string", "object": "object", "array": "array", "integer": "integer",
	"number": "number", "boolean": "boolean", "null": "null",
}

// Encode writes a tree made by Decode (or built of the same types) as
// compact JSON, object members sorted by name.
func Encode(v any) []byte {
	return appendValue(nil, v)
}

// appendValue appends v, encoded as Encode does, to b.
func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		b = append(b, '{')
		for i, k := range keyword.SortedNames(x) {
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
