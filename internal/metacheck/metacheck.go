// Package metacheck decides, by a direct walk of a schema document, that
// the document certainly satisfies the draft 2020-12 meta-schema, so that
// the generic validator's pass over the meta-schema ($dynamicRef, allOf of
// vocabularies, a fresh scope per keyword) can be skipped for it.
//
// The check is one-sided. Conforms returning true means the meta-schema
// accepts the document, with "format" asserted and patterns checked by
// the regular-expression engine the caller names; false means only that
// the check does not know, and the caller compiles the document the
// ordinary way, which validates it against the meta-schema and reports
// whatever is wrong in its own words.
//
// Conforms also requires the document to be self-contained: no $id, no
// $vocabulary, no $schema other than draft 2020-12, and every reference a
// fragment of the same document. What such a document means cannot depend
// on the URL it is compiled under.
package metacheck

import (
	"encoding/json"
	"strconv"
)

// Draft2020 is the only $schema a conforming document may name.
const Draft2020 = "https://json-schema.org/draft/2020-12/schema"

// Conforms reports whether doc, a tree of maps, slices, strings,
// json.Number, booleans and nil as strictjson.Parse builds it, is a
// self-contained schema document that the draft 2020-12 meta-schema
// accepts. validRegex decides the "regex" format of pattern and of the
// names of patternProperties; it must be the engine the validator uses.
// Doc is only read. Conforms is safe for concurrent use when validRegex is.
func Conforms(doc any, validRegex func(string) bool) bool {
	return checker{validRegex}.schema(doc)
}

type checker struct {
	validRegex func(string) bool
}

// schema checks a value in a schema position: a boolean, or an object
// whose every keyword has the shape the meta-schema gives it.
func (c checker) schema(v any) bool {
	switch v := v.(type) {
	case bool:
		return true
	case map[string]any:
		for k, m := range v {
			if !c.keyword(k, m) {
				return false
			}
		}
		return true
	}
	return false
}

// keyword checks the value of one keyword of a schema object against
// the 2020-12 meta-schema: core, applicator, unevaluated, validation,
// meta-data, format-annotation and content vocabularies, and the
// deprecated keywords the meta-schema still lists.
func (c checker) keyword(k string, v any) bool {
	switch k {
	// Core. $id and $vocabulary would change what references mean or
	// which vocabularies apply: not known here.
	case "$id", "$vocabulary":
		return false
	case "$schema":
		return v == Draft2020
	case "$ref", "$dynamicRef", "$recursiveRef":
		s, ok := v.(string)
		return ok && Fragment(s)
	case "$anchor", "$dynamicAnchor", "$recursiveAnchor":
		s, ok := v.(string)
		return ok && anchor(s)
	case "$comment", "title", "description", "format", "contentEncoding", "contentMediaType":
		_, ok := v.(string)
		return ok
	case "$defs", "definitions", "properties", "dependentSchemas":
		m, ok := v.(map[string]any)
		return ok && c.schemas(m)
	// Applicator.
	case "patternProperties":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for p, s := range m {
			if !c.validRegex(p) || !c.schema(s) {
				return false
			}
		}
		return true
	case "prefixItems", "allOf", "anyOf", "oneOf":
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			return false
		}
		for _, s := range list {
			if !c.schema(s) {
				return false
			}
		}
		return true
	case "items", "contains", "additionalProperties", "propertyNames", "if", "then", "else", "not",
		"unevaluatedItems", "unevaluatedProperties", "contentSchema":
		return c.schema(v)
	case "dependencies":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, d := range m {
			if list, ok := d.([]any); ok {
				if !stringSet(list) {
					return false
				}
			} else if !c.schema(d) {
				return false
			}
		}
		return true
	// Validation.
	case "type":
		switch t := v.(type) {
		case string:
			return simpleType(t)
		case []any:
			return len(t) > 0 && stringSet(t) && allSimpleTypes(t)
		}
		return false
	case "enum", "examples":
		_, ok := v.([]any)
		return ok && inert(v)
	case "multipleOf":
		n, ok := v.(json.Number)
		return ok && positive(n)
	case "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum":
		_, ok := v.(json.Number)
		return ok
	case "maxLength", "minLength", "maxItems", "minItems", "maxContains", "minContains", "maxProperties", "minProperties":
		n, ok := v.(json.Number)
		return ok && digits(string(n))
	case "pattern":
		s, ok := v.(string)
		return ok && c.validRegex(s)
	case "uniqueItems", "deprecated", "readOnly", "writeOnly":
		_, ok := v.(bool)
		return ok
	case "required":
		list, ok := v.([]any)
		return ok && stringSet(list)
	case "dependentRequired":
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for _, d := range m {
			if list, ok := d.([]any); !ok || !stringSet(list) {
				return false
			}
		}
		return true
	}
	// const, default and keywords of no vocabulary: any value, so long
	// as nothing in it could change what a reference means were a
	// reference to point into it.
	return inert(v)
}

// schemas checks every member of m as a schema.
func (c checker) schemas(m map[string]any) bool {
	for _, s := range m {
		if !c.schema(s) {
			return false
		}
	}
	return true
}

// inert reports whether v, a value the meta-schema does not constrain,
// holds no object that, taken as a schema by a reference into it, would
// name a base URL, a vocabulary, another draft or a reference outside the
// document.
func inert(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			switch k {
			case "$id", "$vocabulary":
				return false
			case "$schema":
				if m != Draft2020 {
					return false
				}
			case "$ref", "$dynamicRef", "$recursiveRef":
				if s, ok := m.(string); ok && !Fragment(s) {
					return false
				}
			}
			if !inert(m) {
				return false
			}
		}
	case []any:
		for _, m := range v {
			if !inert(m) {
				return false
			}
		}
	}
	return true
}

// Fragment reports whether ref is a reference to a fragment of the same
// document ("#", "#/$defs/item", "#node") written only with the characters
// RFC 3986 allows in a fragment, percent-escapes included: a URI-reference
// whose meaning does not depend on the base URL.
func Fragment(ref string) bool {
	if len(ref) == 0 || ref[0] != '#' {
		return false
	}
	for i := 1; i < len(ref); i++ {
		switch b := ref[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		case b == '%':
			if i+2 >= len(ref) || !hex(ref[i+1]) || !hex(ref[i+2]) {
				return false
			}
			i += 2
		default:
			switch b {
			case '-', '.', '_', '~', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@', '/', '?':
			default:
				return false
			}
		}
	}
	return true
}

func hex(b byte) bool {
	return '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F'
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

// simpleType reports whether t is one of the meta-schema's simpleTypes.
func simpleType(t string) bool {
	switch t {
	case "array", "boolean", "integer", "null", "number", "object", "string":
		return true
	}
	return false
}

func allSimpleTypes(list []any) bool {
	for _, t := range list {
		if !simpleType(t.(string)) {
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

// digits reports whether n is written with decimal digits alone: an
// integer at least zero, the meta-schema's nonNegativeInteger.
func digits(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		if n[i] < '0' || n[i] > '9' {
			return false
		}
	}
	return true
}

// positive reports whether n is above zero, exactly and as a float64,
// as "exclusiveMinimum": 0 requires of multipleOf.
func positive(n json.Number) bool {
	if n == "" || n[0] == '-' {
		return false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && f > 0
}
