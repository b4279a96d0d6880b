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
			if err := misspeltTagWord(field, piece, key, isPair); err != nil {
				return err
			}
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

// misspeltTagWord is the error for a tag piece that is a known key (before
// its "=") or a known flag spelt slightly wrong, naming the one meant; nil
// when the piece is not close to any, and the comma hint applies instead.
func misspeltTagWord(field, piece, key string, isPair bool) error {
	if isPair {
		if meant, ok := nearestWord(key, schemaTagKeys); ok {
			return errorf("%w: field %s: jsonschema tag key %q is not a key the schema reads; did you mean %q (as in %s=%s)?", ErrInvalidSchema, field, key, meant, meant, piece[len(key)+1:])
		}
		return nil
	}
	if meant, ok := nearestWord(piece, schemaTagFlags); ok {
		return errorf("%w: field %s: jsonschema tag piece %q is not a flag the schema reads; did you mean %q? (if it is part of a value, %s)", ErrInvalidSchema, field, piece, meant, escapeHint)
	}
	return nil
}

// maxSuggestedWord bounds the length of a word a suggestion is sought for:
// every key and flag is far shorter, and it bounds the work.
const maxSuggestedWord = 32

// nearestWord returns the word of table nearest to word, by edit distance
// (an insertion, a deletion, a change or a swap of two neighbours costs 1;
// letters are compared regardless of case), when it is near enough to be a
// slip of the keyboard rather than another word: at most one edit for a
// word of up to five letters, at most two for a longer one, and never as
// many edits as the word has letters. The first word of table wins a tie.
func nearestWord(word string, table []string) (string, bool) {
	if word == "" || len(word) > maxSuggestedWord {
		return "", false
	}
	best, bestDistance := "", -1
	for _, candidate := range table {
		d := editDistance(strings.ToLower(word), strings.ToLower(candidate))
		limit := 1
		if len(candidate) > 5 {
			limit = 2
		}
		if d > limit || d >= len(word) || d >= len(candidate) {
			continue
		}
		if bestDistance < 0 || d < bestDistance {
			best, bestDistance = candidate, d
		}
	}
	return best, bestDistance >= 0
}

// editDistance is the optimal string alignment distance between a and b,
// counted in runes: insertions, deletions, changes and swaps of two
// adjacent runes cost 1 each.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	// Three rows of the table: two back (for swaps), the last and this.
	older, last, row := make([]int, len(y)+1), make([]int, len(y)+1), make([]int, len(y)+1)
	for j := range last {
		last[j] = j
	}
	for i := 1; i <= len(x); i++ {
		row[0] = i
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			row[j] = min(last[j]+1, row[j-1]+1, last[j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				row[j] = min(row[j], older[j-2]+1)
			}
		}
		older, last, row = last, row, older
	}
	return last[len(y)]
}
