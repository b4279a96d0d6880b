// This file holds what the strict lowering knows of keywords as such:
// which no strict mode takes, which only annotate, where definitions
// may stand, and how a keyword is named in a JSON pointer.

package strictschema

import (
	"encoding/json"

	"github.com/agentcontract/tool/internal/keyword"
)

// annotations are keywords that do not constrain a value: dropped when the
// provider may not accept them, never a reason to block.
var annotations = map[string]bool{
	"title": true, "$comment": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$id": true, "$schema": true,
	"contentSchema": true,
}

// unsupported reports whether no provider's strict mode accepts keyword k;
// each such keyword blocks.
func unsupported(k string) bool {
	switch k {
	case "allOf", "not", "if", "then", "else", "dependentRequired",
		"dependentSchemas", "patternProperties", "propertyNames",
		"unevaluatedProperties", "unevaluatedItems", "prefixItems", "contains",
		"minContains", "maxContains", "$dynamicRef", "$dynamicAnchor",
		"$anchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary",
		"dependencies", "additionalItems":
		return true
	}
	return false
}

// hasAny reports whether m holds one of keys.
func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// describesObject reports whether schema m says something of an object's
// members or declares the type object.
func describesObject(m map[string]any) bool {
	return hasType(m, "object") || hasAny(m, "properties", "required", "additionalProperties", "minProperties",
		"maxProperties", "patternProperties", "propertyNames", "unevaluatedProperties", "dependentRequired", "dependentSchemas")
}

// misplaced blocks keyword k of the node at ptr when no strict mode takes
// it there: an unsupported keyword, or definitions below the root. It
// reports whether it did.
func (l *lowerer) misplaced(k, ptr string, root bool) bool {
	switch {
	case unsupported(k):
		l.block(ptr+"/"+escape(k), k+" is not supported in strict mode")
	case !root && (k == "$defs" || k == "definitions"):
		l.block(ptr+"/"+k, "definitions are lowered only at the root")
	default:
		return false
	}
	return true
}

// lazyPath is the JSON pointer of a keyword, built only when needed.
type lazyPath struct{ parent, key string }

// String builds the pointer.
func (p lazyPath) String() string { return p.parent + "/" + escape(p.key) }

// escape escapes s as a reference token of a JSON pointer.
func escape(s string) string { return keyword.Escape(s) }

// unescape unescapes a reference token; a token with a bad escape is kept
// as it is, and then names no definition.
func unescape(s string) string {
	if u, err := keyword.Unescape(s); err == nil {
		return u
	}
	return s
}

// primitive reports whether v is a string, a number, a boolean or null:
// the values strict mode takes in enum and const.
func primitive(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, nil:
		return true
	}
	return false
}

// primitiveChars counts the characters of v, a primitive, as Result
// counts StringChars: those of a string or a number literal.
func primitiveChars(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case json.Number:
		return len(x)
	}
	return 0
}
