package tool

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/strictjson"
)

// Definition is the model-visible description of a tool: the name a model
// calls it by, what it does, the JSON [Schema] of its arguments and, when it
// returns structured details, of its output.
//
// A Definition is a plain value: the schemas are raw JSON the caller owns,
// and nothing is checked until Validate, [Bind] or MarshalJSON. Clone makes a
// copy that shares no memory. The zero Definition is invalid.
type Definition struct {
	// Name matches ^[A-Za-z0-9_-]{1,64}$.
	Name string `json:"name"`
	// Description tells the model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// InputSchema is a JSON Schema object whose "type" is "object".
	InputSchema json.RawMessage `json:"input_schema"`
	// OutputSchema, when present, is the JSON Schema that the Details of
	// every completed Output must satisfy.
	OutputSchema json.RawMessage `json:"output_schema,omitzero"`
	// Effect is the tool's replay promise; empty promises nothing.
	Effect Effect `json:"effect,omitzero"`
}

// Clone returns a deep copy of d.
func (d Definition) Clone() Definition {
	d.InputSchema = bytes.Clone(d.InputSchema)
	d.OutputSchema = bytes.Clone(d.OutputSchema)
	return d
}

// Validate reports whether d can be bound: the name matches
// ^[A-Za-z0-9_-]{1,64}$, the description is valid UTF-8 of at most
// [MaxInputBytes], InputSchema is a JSON object whose "type" member is the
// string "object" and compiles with [ParseSchema], OutputSchema compiles when
// present, and [Effect] is known. Errors wrap [ErrInvalidDefinition] (and
// [ErrInvalidSchema] for a schema that does not compile).
func (d Definition) Validate() error {
	_, err := d.compile()
	return err
}

// frozenDefinition is a validated definition with its compiled schemas.
type frozenDefinition struct {
	def    Definition // schemas in canonical form
	input  Schema
	output Schema // zero when the definition has no output schema
}

// compile validates d and compiles its schemas. The returned definition
// owns canonical copies of the schemas.
//
// A schema whose canonical bytes equal one of known is not compiled again:
// the known [Schema] is used as it is. [Bind] passes the schemas a typed tool
// compiled when it was built.
func (d Definition) compile(known ...Schema) (frozenDefinition, error) {
	if err := d.validateHead(); err != nil {
		return frozenDefinition{}, err
	}
	if len(d.InputSchema) == 0 {
		return frozenDefinition{}, errorf("%w: tool %q has no input schema", ErrInvalidDefinition, d.Name)
	}
	if len(d.InputSchema) > MaxInputBytes {
		return frozenDefinition{}, errorf("%w: input schema of tool %q: %w: document is %d bytes, more than the limit of %d", ErrInvalidDefinition, d.Name, ErrInvalidSchema, len(d.InputSchema), MaxInputBytes)
	}
	input, ok := knownSchema(d.InputSchema, known)
	if ok && !input.s.object {
		return frozenDefinition{}, errorf(`%w: input schema of tool %q must be a JSON object with "type":"object"`, ErrInvalidDefinition, d.Name)
	}
	if !ok {
		tree, err := strictjson.Parse(d.InputSchema)
		if err != nil {
			return frozenDefinition{}, errorf("%w: input schema of tool %q: %w: not one I-JSON document: %v", ErrInvalidDefinition, d.Name, ErrInvalidSchema, err)
		}
		if !isObjectSchema(tree) {
			return frozenDefinition{}, errorf(`%w: input schema of tool %q must be a JSON object with "type":"object"`, ErrInvalidDefinition, d.Name)
		}
		if input, err = compileKnown(tree, strictjson.Compact(nil, d.InputSchema), known); err != nil {
			return frozenDefinition{}, errorf("%w: input schema of tool %q: %w", ErrInvalidDefinition, d.Name, err)
		}
	}
	f := frozenDefinition{input: input}
	var err error
	if len(d.OutputSchema) > 0 {
		f.output, err = parseKnown(d.OutputSchema, known)
		if err != nil {
			return frozenDefinition{}, errorf("%w: output schema of tool %q: %w", ErrInvalidDefinition, d.Name, err)
		}
	}
	f.def = Definition{
		Name:        d.Name,
		Description: d.Description,
		InputSchema: input.s.canonical,
		Effect:      d.Effect,
	}
	if f.output.Valid() {
		f.def.OutputSchema = f.output.s.canonical
	}
	return f, nil
}

// validateHead checks what a definition says besides its schemas: the
// name, the effect and the description.
func (d Definition) validateHead() error {
	if err := validateName(d.Name); err != nil {
		return err
	}
	if err := d.Effect.validate(); err != nil {
		return err
	}
	if len(d.Description) > MaxInputBytes {
		return errorf("%w: description of tool %q is %d bytes, more than the limit of %d", ErrInvalidDefinition, d.Name, len(d.Description), MaxInputBytes)
	}
	if !utf8.ValidString(d.Description) {
		return errorf("%w: description of tool %q is not valid UTF-8", ErrInvalidDefinition, d.Name)
	}
	return nil
}

// knownSchema returns the known [Schema] whose canonical bytes are raw, if
// there is one: raw is then a compact document already compiled, and need
// not be parsed again.
func knownSchema(raw []byte, known []Schema) (Schema, bool) {
	for _, k := range known {
		if k.Valid() && bytes.Equal(k.s.canonical, raw) {
			return k, true
		}
	}
	return Schema{}, false
}

// compileKnown returns the known [Schema] with these canonical bytes, or
// compiles tree.
func compileKnown(tree any, canonical []byte, known []Schema) (Schema, error) {
	for _, k := range known {
		if k.Valid() && bytes.Equal(k.s.canonical, canonical) {
			return k, nil
		}
	}
	return compileSchema(tree, canonical, engine.Options{})
}

// parseKnown is [ParseSchema] that reuses a known [Schema] with the same
// canonical bytes.
func parseKnown(raw []byte, known []Schema) (Schema, error) {
	if len(known) == 0 || len(raw) > MaxInputBytes {
		return ParseSchema(raw)
	}
	if k, ok := knownSchema(raw, known); ok {
		return k, nil
	}
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return ParseSchema(raw) // reports the error
	}
	return compileKnown(tree, strictjson.Compact(make([]byte, 0, len(raw)), raw), known)
}

// definition returns a detached copy of the frozen definition.
func (f frozenDefinition) definition() Definition { return f.def.Clone() }

func validateName(name string) error {
	if len(name) == 0 || len(name) > 64 {
		return errorf("%w: name %q must be 1 to 64 characters", ErrInvalidDefinition, name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return errorf("%w: name %q may hold only A-Z, a-z, 0-9, '_' and '-'", ErrInvalidDefinition, name)
		}
	}
	return nil
}

// definitionWire is the JSON form of a [Definition], with the schemas kept as
// raw values.
type definitionWire struct {
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	InputSchema  jsontext.Value `json:"input_schema"`
	OutputSchema jsontext.Value `json:"output_schema,omitzero"`
	Effect       Effect         `json:"effect,omitzero"`
}

// definitionModel describes the wire form to schema reflection.
type definitionModel struct {
	Name         string         `json:"name" jsonschema:"pattern=^[A-Za-z0-9_-]{1\\,64}$"`
	Description  string         `json:"description,omitempty"`
	InputSchema  map[string]any `json:"input_schema"`
	OutputSchema any            `json:"output_schema,omitempty"`
	Effect       string         `json:"effect,omitempty" jsonschema:"enum=safe,enum=idempotent"`
}

// JSONSchemaModel returns a value whose Go type describes the JSON form of a
// [Definition], for [SchemaFor] and typed tools that take or return one.
func (Definition) JSONSchemaModel() any { return definitionModel{} }

// MarshalJSON validates d and encodes it with its schemas in compact form.
// The encoding is deterministic. Errors wrap [ErrInvalidDefinition].
func (d Definition) MarshalJSON() ([]byte, error) {
	f, err := d.compile()
	if err != nil {
		return nil, err
	}
	return f.def.marshal()
}

// marshal encodes an already validated definition. The schemas are
// written as held, in canonical form: raw strings are preserved, so an
// escape such as \u0041 is not rewritten and the wire form carries the
// very bytes the schemas were compiled from.
func (d Definition) marshal() ([]byte, error) {
	return jsonv2.Marshal(definitionWire{
		Name:         d.Name,
		Description:  d.Description,
		InputSchema:  jsontext.Value(d.InputSchema),
		OutputSchema: jsontext.Value(d.OutputSchema),
		Effect:       d.Effect,
	}, jsonv2.Deterministic(true), jsontext.PreserveRawStrings(true))
}

// UnmarshalJSON decodes one RFC 7493 object strictly: unknown or duplicate
// members, names in the wrong case and a definition that fails Validate are
// errors wrapping [ErrInvalidDefinition]. It reads documents of up to a
// little over 8×[MaxInputBytes], enough for every [Definition] MarshalJSON
// writes. On error d is left unchanged; on success d owns its bytes.
func (d *Definition) UnmarshalJSON(data []byte) error {
	var w definitionWire
	if err := strictUnmarshal(data, maxEncodedDefinition, &w); err != nil {
		return errorf("%w: %v", ErrInvalidDefinition, err)
	}
	decoded := Definition{
		Name:         w.Name,
		Description:  w.Description,
		InputSchema:  json.RawMessage(w.InputSchema),
		OutputSchema: json.RawMessage(w.OutputSchema),
		Effect:       w.Effect,
	}
	if len(decoded.OutputSchema) == 0 {
		decoded.OutputSchema = nil
	}
	f, err := decoded.compile()
	if err != nil {
		return err
	}
	*d = f.definition()
	return nil
}

// maxEncodedDefinition bounds the wire form of a [Definition]: two schemas
// of at most [MaxInputBytes] each and a description of at most MaxInputBytes
// that escaping can grow up to six times, and the rest of the object.
const maxEncodedDefinition = 8*MaxInputBytes + 1<<10
