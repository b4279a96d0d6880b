package tool

import (
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/keyword"
)

// Keys of a `jsonschema` tag that state the type of a value themselves;
// without one, the reflector applies the keys of a type (enum, pattern,
// minimum, ...) only to a type it derived.
var typeTagKeys = []string{"type", "oneof_type", "anyof_type", "oneof_ref", "anyof_ref"}

// Keys of a `jsonschema` tag the reflector applies to any schema.
var genericTagKeys = append([]string{"title", "description", "anchor", "oneof_required", "anyof_required"}, typeTagKeys...)

func tagStatesType(tag string) bool {
	for _, piece := range splitSchemaTag(tag) {
		if key, _, ok := strings.Cut(piece, "="); ok && slices.Contains(typeTagKeys, key) {
			return true
		}
	}
	return false
}

// Keys the schema reflector reads from a `jsonschema` tag; see
// checkSchemaTags. A key that names a keyword takes a value of that
// keyword's shape (tagValueOf), the others any text.
var schemaTagKeys = []string{
	"title", "description", "type", "anchor", "oneof_required", "anyof_required",
	"oneof_ref", "oneof_type", "anyof_ref", "anyof_type", "pattern", "format",
	"default", "example", "enum", "readOnly", "writeOnly", "uniqueItems",
	"minLength", "maxLength", "minItems", "maxItems",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
}

type tagValue uint8

const (
	tagText   tagValue = iota // any text
	tagCount                  // a non-negative integer
	tagNumber                 // a JSON number
)

// tagValueOf is the kind of value tag key takes, from the shape of the
// keyword it names: a count for a Count, a number for a Number or a
// PositiveNumber (the reflector writes the number; the meta-schema check
// judges its sign), text for the rest.
func tagValueOf(key string) tagValue {
	switch keyword.Of(key) {
	case keyword.Count:
		return tagCount
	case keyword.Number, keyword.PositiveNumber:
		return tagNumber
	}
	return tagText
}

// The bare flags of a `jsonschema` tag.
var schemaTagFlags = []string{"required", "nullable"}

// escapeHint tells how to keep a comma in a tag value.
const escapeHint = `a comma inside a value must be escaped as \, (written \\, between the tag's quotes in Go source)`

// checkSchemaTags refuses `jsonschema` and `jsonschema_extras` tags the
// schema reflector would read otherwise than they were meant: it cuts a
// tag at every comma not preceded by a backslash, and silently drops a
// piece that is not a known key=value or flag, a number it cannot parse,
// and a whole tag whose quoting is malformed. "City name, e.g. Lisbon"
// would lose ", e.g. Lisbon", and "^[a-z]{1,40}$" become "^[a-z]{1".
func checkSchemaTags(owner reflect.Type, f reflect.StructField) error {
	field := owner.String() + "." + f.Name
	for _, key := range []string{"jsonschema", "jsonschema_extras"} {
		if _, ok := f.Tag.Lookup(key); !ok && strings.Contains(string(f.Tag), key+":") {
			return errorf("%w: field %s: its struct tag is malformed, so the schema tags are ignored; %s", ErrInvalidSchema, field, escapeHint)
		}
	}
	tag := f.Tag.Get("jsonschema")
	plain := strings.Split(tag, ",")
	if plain[0] == "-" {
		return nil // the field is left out
	}
	pieces := splitSchemaTag(tag)
	for _, piece := range pieces {
		key, value, isPair := strings.Cut(piece, "=")
		kind, known := tagValueOf(key), slices.Contains(schemaTagKeys, key)
		switch {
		case piece == "" || !isPair && slices.Contains(schemaTagFlags, piece):
			continue
		case !isPair || !known:
			return errorf("%w: field %s: jsonschema tag piece %q is neither a known key=value nor a flag (%s); %s", ErrInvalidSchema, field, piece, strings.Join(schemaTagFlags, ", "), escapeHint)
		case kind == tagCount && !isCount(value):
			return errorf("%w: field %s: jsonschema tag %s=%q needs a non-negative integer", ErrInvalidSchema, field, key, value)
		case kind == tagNumber && !isNumber(value):
			return errorf("%w: field %s: jsonschema tag %s=%q needs a JSON number", ErrInvalidSchema, field, key, value)
		}
	}
	// A type described by its own schema gets only the generic keys: the
	// reflector would drop the others.
	if form := wireFormOf(derefType(f.Type)); (form == wireModel || form == wireHook) && !tagStatesType(tag) {
		for _, piece := range pieces {
			if key, _, ok := strings.Cut(piece, "="); ok && !slices.Contains(genericTagKeys, key) {
				return errorf("%w: field %s: jsonschema tag key %q would be dropped, because type %s describes itself; put the keyword in its schema, or state the type in the tag (type=...)", ErrInvalidSchema, field, key, f.Type)
			}
		}
	}
	// The reflector reads the flags from the tag cut at every comma.
	for _, flag := range schemaTagFlags {
		if slices.Contains(plain, flag) && !slices.Contains(pieces, flag) {
			return errorf("%w: field %s: jsonschema tag has %q after an escaped comma, which is read as the flag all the same", ErrInvalidSchema, field, flag)
		}
	}
	for _, piece := range splitSchemaTag(f.Tag.Get("jsonschema_extras")) {
		if piece != "" && !strings.Contains(piece, "=") {
			return errorf("%w: field %s: jsonschema_extras tag piece %q is not key=value; %s", ErrInvalidSchema, field, piece, escapeHint)
		}
	}
	return nil
}

// splitSchemaTag cuts a tag as the schema reflector does: at every comma
// not preceded by a backslash, the backslash being dropped.
func splitSchemaTag(tag string) []string {
	var pieces []string
	for _, part := range strings.Split(tag, ",") {
		if n := len(pieces); n > 0 && strings.HasSuffix(pieces[n-1], `\`) {
			pieces[n-1] = strings.TrimSuffix(pieces[n-1], `\`) + "," + part
			continue
		}
		pieces = append(pieces, part)
	}
	return pieces
}

func isCount(s string) bool {
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil && json.Valid([]byte(s))
}
