// The meta-schema check decides, by a direct walk of a schema document,
// that the document certainly satisfies the draft 2020-12 meta-schema, so
// that the generic validator's pass over the meta-schema ($dynamicRef,
// allOf of vocabularies, a fresh scope per keyword) can be skipped for it.
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

package engine

import "github.com/agentcontract/tool/internal/keyword"

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
// the 2020-12 meta-schema, by the shape the keyword model gives it. $id
// and $vocabulary would change what references mean or which
// vocabularies apply: not known here.
func (c checker) keyword(k string, v any) bool {
	switch shape := keyword.Of(k); shape {
	case keyword.Identifier, keyword.Vocabulary:
		return false
	case keyword.Dialect:
		return v == Draft2020
	case keyword.Reference:
		s, ok := v.(string)
		return ok && Fragment(s)
	case keyword.Values:
		_, ok := v.([]any)
		return ok && inert(v)
	case keyword.Any:
		// const, default and keywords of no vocabulary: any value, so
		// long as nothing in it could change what a reference means
		// were a reference to point into it.
		return inert(v)
	default:
		return keyword.Fits(shape, v, c.schema, c.validRegex)
	}
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
