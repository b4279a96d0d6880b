// Package keyword is the engine's model of JSON Schema keywords: for every
// keyword of draft 2020-12, and for the spellings of earlier drafts the
// meta-schema still lists, the shape its value must have, which says which
// parts of the value are subschemas. Code that reads schema documents asks
// the model instead of matching keyword names itself: the meta-schema
// check validates each keyword's value with Fits.
package keyword

import (
	"encoding/json"
	"strconv"
)

// Shape is the shape of a keyword's value. The zero Shape is Any.
type Shape uint8

// The shapes of keyword values.
const (
	Any            Shape = iota // any JSON value: const, default, a keyword of no vocabulary
	Schema                      // one subschema
	SchemaList                  // a non-empty array of subschemas
	SchemaMap                   // an object whose members are subschemas
	PatternMap                  // an object whose member names are patterns and members subschemas
	DependencyMap               // an object whose members are subschemas or Names (dependencies)
	NamesMap                    // an object whose members are Names
	Names                       // an array of distinct strings
	Types                       // a simple type name, or a non-empty array of distinct ones
	Values                      // an array of any values
	String                      // a string
	Pattern                     // a regular expression
	Anchor                      // a plain-name anchor, ^[A-Za-z_][-A-Za-z0-9._]*$
	Reference                   // a URI reference to a schema
	Identifier                  // a base URI ($id)
	Dialect                     // the URI of a meta-schema ($schema)
	Vocabulary                  // an object of vocabulary URIs ($vocabulary)
	Number                      // a number
	PositiveNumber              // a number above zero
	Count                       // a non-negative integer
	Boolean                     // true or false
)

// shapes is the table of keywords. A name not in it has shape Any.
var shapes = map[string]Shape{
	// Core.
	"$id": Identifier, "$schema": Dialect, "$vocabulary": Vocabulary,
	"$ref": Reference, "$dynamicRef": Reference, "$recursiveRef": Reference,
	"$anchor": Anchor, "$dynamicAnchor": Anchor, "$recursiveAnchor": Anchor,
	"$comment": String, "$defs": SchemaMap, "definitions": SchemaMap,
	// Applicator and unevaluated.
	"prefixItems": SchemaList, "allOf": SchemaList, "anyOf": SchemaList, "oneOf": SchemaList,
	"items": Schema, "contains": Schema, "additionalProperties": Schema, "propertyNames": Schema,
	"if": Schema, "then": Schema, "else": Schema, "not": Schema,
	"unevaluatedItems": Schema, "unevaluatedProperties": Schema,
	"properties": SchemaMap, "dependentSchemas": SchemaMap, "patternProperties": PatternMap,
	"dependencies": DependencyMap,
	// Validation.
	"type": Types, "enum": Values, "multipleOf": PositiveNumber,
	"maximum": Number, "exclusiveMaximum": Number, "minimum": Number, "exclusiveMinimum": Number,
	"maxLength": Count, "minLength": Count, "maxItems": Count, "minItems": Count,
	"maxContains": Count, "minContains": Count, "maxProperties": Count, "minProperties": Count,
	"pattern": Pattern, "uniqueItems": Boolean, "required": Names, "dependentRequired": NamesMap,
	// Meta-data, format and content.
	"title": String, "description": String, "examples": Values,
	"deprecated": Boolean, "readOnly": Boolean, "writeOnly": Boolean,
	"format": String, "contentEncoding": String, "contentMediaType": String, "contentSchema": Schema,
}

// Of returns the shape of the value of keyword name; Any for a name the
// model does not know.
func Of(name string) Shape { return shapes[name] }

// Fits reports whether v, a value of the shape shape as strictjson.Parse
// builds it, has that shape: schema decides each subschema, pattern each
// regular expression. The shapes whose meaning depends on more than the
// value (Any, Values' items, Reference, Identifier, Dialect, Vocabulary)
// are checked for their JSON type only.
func Fits(shape Shape, v any, schema func(any) bool, pattern func(string) bool) bool {
	switch shape {
	case Schema:
		return schema(v)
	case SchemaList:
		list, ok := v.([]any)
		return ok && len(list) > 0 && all(list, schema)
	case SchemaMap, PatternMap, DependencyMap, NamesMap:
		m, ok := v.(map[string]any)
		return ok && members(shape, m, schema, pattern)
	case Names:
		list, ok := v.([]any)
		return ok && stringSet(list)
	case Types:
		return types(v)
	case Values:
		_, ok := v.([]any)
		return ok
	case String, Reference, Identifier, Dialect:
		_, ok := v.(string)
		return ok
	case Pattern:
		s, ok := v.(string)
		return ok && pattern(s)
	case Anchor:
		s, ok := v.(string)
		return ok && anchor(s)
	case Vocabulary:
		_, ok := v.(map[string]any)
		return ok
	case Number, PositiveNumber, Count:
		n, ok := v.(json.Number)
		return ok && number(shape, n)
	case Boolean:
		_, ok := v.(bool)
		return ok
	}
	return true
}

// members reports whether every member of m, an object of shape shape,
// fits.
func members(shape Shape, m map[string]any, schema func(any) bool, pattern func(string) bool) bool {
	for name, member := range m {
		var ok bool
		switch list, isList := member.([]any); shape {
		case SchemaMap:
			ok = schema(member)
		case PatternMap:
			ok = pattern(name) && schema(member)
		case DependencyMap:
			ok = isList && stringSet(list) || !isList && schema(member)
		case NamesMap:
			ok = isList && stringSet(list)
		}
		if !ok {
			return false
		}
	}
	return true
}

func all(list []any, schema func(any) bool) bool {
	for _, s := range list {
		if !schema(s) {
			return false
		}
	}
	return true
}

// number reports whether n has the shape of a number keyword: any number,
// one above zero (exactly and as a float64, as "exclusiveMinimum": 0
// requires of multipleOf), or one written with decimal digits alone.
func number(shape Shape, n json.Number) bool {
	switch shape {
	case PositiveNumber:
		if n == "" || n[0] == '-' {
			return false
		}
		f, err := strconv.ParseFloat(string(n), 64)
		return err == nil && f > 0
	case Count:
		if n == "" {
			return false
		}
		for i := 0; i < len(n); i++ {
			if n[i] < '0' || n[i] > '9' {
				return false
			}
		}
	}
	return true
}

// types reports whether v is one of the meta-schema's simpleTypes or a
// non-empty set of them.
func types(v any) bool {
	switch t := v.(type) {
	case string:
		return simpleType(t)
	case []any:
		if len(t) == 0 || !stringSet(t) {
			return false
		}
		for _, name := range t {
			if !simpleType(name.(string)) {
				return false
			}
		}
		return true
	}
	return false
}

func simpleType(t string) bool {
	switch t {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

// anchor reports whether s matches ^[A-Za-z_][-A-Za-z0-9._]*$, the
// meta-schema's anchorString.
func anchor(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		switch {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', b == '_':
		case i > 0 && ('0' <= b && b <= '9' || b == '-' || b == '.'):
		default:
			return false
		}
	}
	return true
}

// stringSet reports whether list holds only strings, no two equal: the
// meta-schema's stringArray. Short lists, the usual case, are compared
// pairwise without allocating.
func stringSet(list []any) bool {
	if len(list) > 16 {
		seen := make(map[string]struct{}, len(list))
		for _, s := range list {
			s, ok := s.(string)
			if !ok {
				return false
			}
			if _, dup := seen[s]; dup {
				return false
			}
			seen[s] = struct{}{}
		}
		return true
	}
	for i, s := range list {
		s, ok := s.(string)
		if !ok {
			return false
		}
		for _, t := range list[:i] {
			if t == s {
				return false
			}
		}
	}
	return true
}
