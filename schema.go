package tool

import (
	"bytes"
	"encoding/json"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/strictjson"
)

// MaxSchemaVisits bounds the work one instance location can cause in a
// schema: the number of subschemas that validating a single JSON value may
// apply to that same value, counted through allOf, anyOf, oneOf, not,
// if/then/else, dependentSchemas and every kind of reference. The count is
// made at every location of the value, members and items included: where
// several keywords apply subschemas to the same member or item (items and
// contains, say, or two branches of an allOf that reach the same
// definition), their counts add up, level after level. ParseSchema
// refuses a schema above the bound, because the validator has no
// cancellation and a small schema of chained anyOf references would
// otherwise take minutes to validate one value. Ordinary schemas stay far
// below it: a chain of a hundred references costs a hundred visits.
const MaxSchemaVisits = engine.MaxSchemaVisits

// MaxSchemaPrograms bounds the regular expressions of one schema: the
// estimated instructions of all their programs together. ParseSchema
// refuses a schema above it before compiling any of them: a pattern such
// as \pL{1000} is a few bytes of text and a thousand instructions of
// program, and four thousand of them took a second and a gigabyte to
// compile.
const MaxSchemaPrograms = engine.MaxSchemaPrograms

// MaxValidationWork bounds the work of checking one value against a
// schema, in steps. A step is one short operation: one subschema applied
// to one value costs a few, matching a string against a pattern costs its
// length times the size of the pattern's compiled program, looking a
// string up in an enum costs its length, comparing another value with an
// enum or a constant costs the size of what is compared, and recording a
// violation costs a few more. A value whose check would take more is
// refused with an *InputRejection that says so, and where the limit was
// reached when that is known; validation is charged as it goes and stops
// there. The bound keeps one check within the budget the package
// documentation states ("What one call may cost"); ordinary arguments take
// a few thousand steps.
const MaxValidationWork = engine.MaxValidationWork

// Schema is a compiled JSON Schema document.
//
// The zero Schema is invalid: Valid reports false and Validate returns an
// error. A Schema is immutable and safe for concurrent use; copying it is
// cheap and shares the compiled form.
type Schema struct {
	s *compiledSchema
}

type compiledSchema struct {
	canonical []byte         // compact, member order and number text as given
	object    bool           // the document is an object whose "type" is "object"
	engine    *engine.Schema // the compiled form
}

// ParseSchema compiles raw, which must be one RFC 7493 JSON document of at
// most MaxInputBytes. The draft is 2020-12 unless the document names another
// with $schema, and "format" is asserted, not just annotated.
//
// Nothing is loaded from outside the document: a $ref to any other URL
// (file, http or otherwise), even in a definition nothing references, is
// refused with an error, never read. Refused as well, each with a message
// naming the keyword and its location: a schema whose validation work per
// value could exceed MaxSchemaVisits subschemas; a document nested deeper
// than 128 levels of arrays and objects or holding more than 4096 objects
// and booleans (each of which can be a subschema: the validator's compiler
// takes time that grows with the square of either); a pattern neither RE2
// nor ECMAScript accepts, or whose program would exceed ten thousand
// instructions; and patterns that together would take too long to parse
// or compile (MaxSchemaPrograms). A schema can come from storage or a
// peer, so ParseSchema is bounded like Prepare; see "What one call may
// cost" in the package documentation. Raw is not retained; every error
// wraps ErrInvalidSchema.
func ParseSchema(raw []byte) (Schema, error) {
	return parseSchema(raw, engine.Options{})
}

// parseSchema is ParseSchema with opts, which only tests set.
func parseSchema(raw []byte, opts engine.Options) (Schema, error) {
	if len(raw) > MaxInputBytes {
		return Schema{}, errorf("%w: document is %d bytes, more than the limit of %d", ErrInvalidSchema, len(raw), MaxInputBytes)
	}
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return Schema{}, errorf("%w: not one I-JSON document: %v", ErrInvalidSchema, err)
	}
	return compileSchema(tree, strictjson.Compact(make([]byte, 0, len(raw)), raw), opts)
}

// compileSchema compiles tree, whose compact text is canonical.
func compileSchema(tree any, canonical []byte, opts engine.Options) (Schema, error) {
	compiled, err := engine.Compile(tree, opts)
	if err != nil {
		return Schema{}, errorf("%w: %v", ErrInvalidSchema, err)
	}
	return Schema{s: &compiledSchema{canonical: canonical, object: isObjectSchema(tree), engine: compiled}}, nil
}

// Valid reports whether s holds a compiled schema. The zero Schema is not
// valid.
func (s Schema) Valid() bool { return s.s != nil }

// JSON returns the schema document in compact form with member order,
// escapes and number text exactly as given. The caller owns the returned
// bytes. It is nil for the zero Schema.
func (s Schema) JSON() json.RawMessage {
	if s.s == nil {
		return nil
	}
	return bytes.Clone(s.s.canonical)
}

// MarshalJSON returns the canonical document, as JSON does. The zero Schema
// cannot be marshalled.
func (s Schema) MarshalJSON() ([]byte, error) {
	if s.s == nil {
		return nil, errorf("%w: the zero Schema has no document", ErrInvalidSchema)
	}
	return s.JSON(), nil
}

// UnmarshalJSON parses and compiles data as ParseSchema does. On error s is
// left unchanged.
func (s *Schema) UnmarshalJSON(data []byte) error {
	parsed, err := ParseSchema(data)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// Validate reports whether value, which must be one RFC 7493 JSON document
// of at most MaxInputBytes, satisfies the schema. Numbers are compared
// exactly, never through float64.
//
// A value that is not valid I-JSON or breaks the schema gets an
// *InputRejection whose Message names the JSON pointer of the offending
// value and the rule it breaks, in words fit to show to whoever wrote the
// value. The zero Schema gets an error wrapping ErrInvalidSchema.
func (s Schema) Validate(value []byte) error {
	if s.s == nil {
		return errorf("%w: the zero Schema validates nothing", ErrInvalidSchema)
	}
	r, fault := s.verdict(value)
	if r != nil {
		return rejection(r)
	}
	return fault
}

// verdict checks value against a valid Schema with the engine's one
// check: the engine's rejection when the value is refused, an error
// wrapping ErrInvalidSchema when the schema is at fault (a pattern's
// match had no verdict), and neither when the value satisfies the schema.
func (s Schema) verdict(value []byte) (*engine.Rejection, error) {
	return sortVerdict(s.s.engine.Check(value))
}

// verdictDecode is verdict that also decodes value into *into, in the same
// read where d covers into's type and the read shows value valid, and
// reports whether it did (see engine.Schema.CheckDecode).
func (s Schema) verdictDecode(value []byte, d *engine.Decoder, into any) (bool, *engine.Rejection, error) {
	decoded, err := s.s.engine.CheckDecode(value, d, into)
	r, fault := sortVerdict(err)
	return decoded, r, fault
}

// sortVerdict sorts the engine's verdict into a rejection of the value and
// a fault of the schema.
func sortVerdict(err error) (*engine.Rejection, error) {
	switch err := err.(type) {
	case nil:
		return nil, nil
	case *engine.Rejection:
		return err, nil
	default:
		return nil, errorf("%w: %v", ErrInvalidSchema, err)
	}
}
