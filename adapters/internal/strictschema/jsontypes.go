// This file holds what the strict lowering reads of the JSON types a
// schema admits: type names and values as bits, and the checks of a
// value against a node's type.

package strictschema

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
)

// JSON types as bits; integer is counted as number, of which it is a part.
const (
	typeObject = 1 << iota
	typeArray
	typeString
	typeNumber
	typeBoolean
	typeNull
)

// typeBit is the bit of the JSON type a type keyword names; 0 for a name
// that is no type.
func typeBit(name any) int {
	switch name {
	case "object":
		return typeObject
	case "array":
		return typeArray
	case "string":
		return typeString
	case "number", "integer":
		return typeNumber
	case "boolean":
		return typeBoolean
	case "null":
		return typeNull
	}
	return 0
}

// valueBit is the bit of the JSON type of v, a decoded value.
func valueBit(v any) int {
	switch v.(type) {
	case map[string]any:
		return typeObject
	case []any:
		return typeArray
	case string:
		return typeString
	case json.Number:
		return typeNumber
	case bool:
		return typeBoolean
	case nil:
		return typeNull
	}
	return 0
}

// typesOf returns the JSON types a canonical subschema can admit at most,
// as bits; 0 when it cannot tell.
func (l *lowerer) typesOf(node any, depth int) int {
	m, ok := node.(map[string]any)
	if !ok || depth > 32 {
		return 0
	}
	if ref, ok := m["$ref"].(string); ok {
		if ref == "#" {
			return l.typesOf(l.rootSchema, depth+1)
		}
		prefix := "#/" + l.definitionsKeyword + "/"
		if l.definitionsKeyword == "" || !strings.HasPrefix(ref, prefix) {
			return 0
		}
		d, ok := l.definitions[unescape(ref[len(prefix):])]
		if !ok {
			return 0
		}
		return l.typesOf(d.schema, depth+1)
	}
	switch t := m["type"].(type) {
	case string:
		return typeBit(t)
	case []any:
		bits := 0
		for _, name := range t {
			b := typeBit(name)
			if b == 0 {
				return 0
			}
			bits |= b
		}
		return bits
	}
	if e, ok := m["enum"].([]any); ok {
		bits := 0
		for _, v := range e {
			bits |= valueBit(v)
		}
		return bits
	}
	if c, ok := m["const"]; ok {
		return valueBit(c)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if br, ok := m[k].([]any); ok && len(br) > 0 {
			bits := 0
			for _, b := range br {
				t := l.typesOf(b, depth+1)
				if t == 0 {
					return 0
				}
				bits |= t
			}
			return bits
		}
	}
	return 0
}

// hasType reports whether the type keyword of node m names the type want,
// alone or in a list.
func hasType(m map[string]any, want string) bool {
	switch t := m["type"].(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

// ofType reports whether the primitive value v has a type of the node m.
func ofType(m map[string]any, v any) bool {
	switch x := v.(type) {
	case string:
		return hasType(m, "string")
	case bool:
		return hasType(m, "boolean")
	case nil:
		return hasType(m, "null")
	case json.Number:
		if hasType(m, "number") {
			return true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		return hasType(m, "integer") && (err != nil || f == math.Trunc(f))
	}
	return true // not primitive: blocked already
}
