package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/fastcheck"
	"github.com/agentcontract/tool/internal/strictjson"
)

// MaxSchemaVisits bounds the work one instance location can cause in a
// schema: the number of subschemas that validating a single JSON value may
// apply to that same value, counted through allOf, anyOf, oneOf, not,
// if/then/else, dependentSchemas and every kind of reference. ParseSchema
// refuses a schema above the bound, because the validator has no
// cancellation and a small schema of chained anyOf references would
// otherwise take minutes to validate one value. Ordinary schemas stay far
// below it: a chain of a hundred references costs a hundred visits.
const MaxSchemaVisits = 1000

// schemaBase is the URL under which a schema document is compiled. Relative
// references resolve against it (or against the document's own $id), and
// nothing outside the document is ever loaded, so the host never resolves.
const schemaBase = "https://schema.invalid/schema.json"

// Schema is a compiled JSON Schema document.
//
// The zero Schema is invalid: Valid reports false and Validate returns an
// error. A Schema is immutable and safe for concurrent use; copying it is
// cheap and shares the compiled form.
type Schema struct {
	s *compiledSchema
}

type compiledSchema struct {
	canonical []byte // compact, member order and number text as given
	compiled  *jsonschema.Schema
	fast      *fastcheck.Checker // nil when the schema needs the full validator
}

// ParseSchema compiles raw, which must be one RFC 7493 JSON document of at
// most MaxInputBytes. The draft is 2020-12 unless the document names another
// with $schema, and "format" is asserted, not just annotated.
//
// Nothing is loaded from outside the document: a $ref to any other URL
// (file, http or otherwise) is refused with an error, never read. A schema
// whose validation work per value could exceed MaxSchemaVisits subschemas is
// refused as well. Raw is not retained; every error wraps ErrInvalidSchema.
func ParseSchema(raw []byte) (Schema, error) {
	if len(raw) > MaxInputBytes {
		return Schema{}, fmt.Errorf("%w: document is %d bytes, more than the limit of %d", ErrInvalidSchema, len(raw), MaxInputBytes)
	}
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return Schema{}, fmt.Errorf("%w: not one I-JSON document: %v", ErrInvalidSchema, err)
	}
	return compileSchema(tree, strictjson.Compact(make([]byte, 0, len(raw)), raw))
}

func compileSchema(tree any, canonical []byte) (Schema, error) {
	return compileSchemaWith(tree, canonical, refuseLoader{})
}

// compileSchemaWith compiles with loader; only tests install another loader
// than refuseLoader.
func compileSchemaWith(tree any, canonical []byte, loader jsonschema.URLLoader) (Schema, error) {
	switch tree.(type) {
	case map[string]any, bool:
	default:
		return Schema{}, fmt.Errorf("%w: a schema must be a JSON object or boolean", ErrInvalidSchema)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(loader)
	if err := c.AddResource(schemaBase, tree); err != nil {
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	compiled, err := c.Compile(schemaBase)
	if err != nil {
		var load *jsonschema.LoadURLError
		if errors.As(err, &load) {
			return Schema{}, fmt.Errorf("%w: reference to %q outside the document is not allowed", ErrInvalidSchema, load.URL)
		}
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	if visits := maxVisits(compiled); visits > MaxSchemaVisits {
		return Schema{}, fmt.Errorf("%w: validating one value could apply %d subschemas, more than the limit of %d (nested anyOf/oneOf/allOf through $ref multiply)", ErrInvalidSchema, visits, MaxSchemaVisits)
	}
	return Schema{s: &compiledSchema{canonical: canonical, compiled: compiled, fast: fastcheck.Compile(compiled)}}, nil
}

// refuseLoader is the only loader a compiler here ever has: metaschemas come
// embedded in the validator, anything else would be I/O on behalf of whoever
// wrote the schema.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("loading %q is not allowed", url)
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
		return nil, fmt.Errorf("%w: the zero Schema has no document", ErrInvalidSchema)
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
		return fmt.Errorf("%w: the zero Schema validates nothing", ErrInvalidSchema)
	}
	if len(value) > MaxInputBytes {
		return rejectf("value is %d bytes, more than the limit of %d", len(value), MaxInputBytes)
	}
	tree, err := strictjson.Parse(value)
	if err != nil {
		return rejectf("invalid JSON %v", err)
	}
	return s.validateTree(tree)
}

// validateTree checks an already parsed value.
func (s Schema) validateTree(tree any) error {
	if s.s.fast != nil && s.s.fast.Valid(tree) {
		return nil
	}
	// The full validator decides, and says what is wrong.
	err := s.s.compiled.Validate(tree)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return rejectf("value cannot be validated: %v", err)
	}
	return &InputRejection{message: violationMessage(verr), cause: err}
}

var englishPrinter = message.NewPrinter(language.English)

// violationMessage renders one validation error as a single line: the JSON
// pointer of the first offending value, the rule it breaks, and how many
// other problems were found.
func violationMessage(verr *jsonschema.ValidationError) string {
	var leaves []*jsonschema.ValidationError
	collectViolations(verr, &leaves)
	if len(leaves) == 0 {
		leaves = append(leaves, verr)
	}
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return slices.Compare(a.InstanceLocation, b.InstanceLocation)
	})
	first := leaves[0]
	msg := fmt.Sprintf("at %s: %s", pointer(first.InstanceLocation), first.ErrorKind.LocalizedString(englishPrinter))
	if more := len(leaves) - 1; more == 1 {
		msg += " (and 1 more problem)"
	} else if more > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", more)
	}
	return msg
}

// collectViolations gathers the errors that say what is wrong, looking
// through the ones that only group others. It stops at anyOf and oneOf: the
// causes of a failed alternative are guesses, the alternative is the fact.
func collectViolations(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			collectViolations(c, out)
		}
		return
	case *kind.AnyOf, *kind.OneOf:
		// When all alternatives but one failed on the type of the value
		// alone (a nullable field that is not null, say), the one that
		// matched the type says what is wrong.
		// Each cause is searched once: searching the chosen one again
		// would double the work at every nested anyOf.
		var candidate []*jsonschema.ValidationError
		matches := 0
		for _, c := range e.Causes {
			var leaves []*jsonschema.ValidationError
			collectViolations(c, &leaves)
			if !onlyTypeMismatch(leaves, e.InstanceLocation) {
				candidate = leaves
				matches++
			}
		}
		if matches == 1 {
			*out = append(*out, candidate...)
			return
		}
	}
	*out = append(*out, e)
}

// onlyTypeMismatch reports whether leaves are just a wrong type at loc.
func onlyTypeMismatch(leaves []*jsonschema.ValidationError, loc []string) bool {
	if len(leaves) == 0 {
		return false
	}
	for _, l := range leaves {
		if _, ok := l.ErrorKind.(*kind.Type); !ok || !slices.Equal(l.InstanceLocation, loc) {
			return false
		}
	}
	return true
}

// pointer renders reference tokens as an RFC 6901 JSON pointer; the root is
// "/" here so that the message always shows a location.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return "/"
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// maxVisits returns the largest number of subschemas validating one
// instance location can apply, over every subschema of root. Edges that
// stay on the same instance location (applicators and references) add up;
// edges that descend into children (properties, items, ...) start a new
// location and are only followed to find more subschemas. A reference cycle
// that stays on one location is counted once, as the validator stops it.
func maxVisits(root *jsonschema.Schema) int {
	// Every subschema, and every dynamic anchor by name.
	var all []*jsonschema.Schema
	seen := map[*jsonschema.Schema]bool{}
	anchors := map[string][]*jsonschema.Schema{}
	var collect func(*jsonschema.Schema)
	collect = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		all = append(all, s)
		if s.DynamicAnchor != "" {
			anchors[s.DynamicAnchor] = append(anchors[s.DynamicAnchor], s)
		}
		for _, c := range sameLocation(s, nil) {
			collect(c)
		}
		for _, c := range childLocations(s) {
			collect(c)
		}
	}
	collect(root)

	const inProgress = -1
	memo := make(map[*jsonschema.Schema]int, len(all))
	var visits func(*jsonschema.Schema) int
	visits = func(s *jsonschema.Schema) int {
		switch n, ok := memo[s]; {
		case ok && n == inProgress:
			return 1
		case ok:
			return n
		}
		memo[s] = inProgress
		total := 1
		for _, c := range sameLocation(s, anchors) {
			total += visits(c)
			if total > MaxSchemaVisits {
				total = MaxSchemaVisits + 1 // saturate: the answer is already "too many"
			}
		}
		memo[s] = total
		return total
	}
	highest := 0
	for _, s := range all {
		highest = max(highest, visits(s))
	}
	return highest
}

// sameLocation lists the subschemas s applies to the value it is applied
// to. With anchors, a dynamic reference counts every subschema its anchor
// could resolve to.
func sameLocation(s *jsonschema.Schema, anchors map[string][]*jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c ...*jsonschema.Schema) {
		for _, x := range c {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
		if s.DynamicRef.Anchor != "" {
			add(anchors[s.DynamicRef.Anchor]...)
		}
	}
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	for _, k := range sortedKeys(s.DependentSchemas) {
		add(s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if c, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			add(c)
		}
	}
	return out
}

// childLocations lists the subschemas s applies to members, items or
// decoded content of the value.
func childLocations(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c ...*jsonschema.Schema) {
		for _, x := range c {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	addAny := func(v any) {
		switch v := v.(type) {
		case *jsonschema.Schema:
			add(v)
		case []*jsonschema.Schema:
			add(v...)
		}
	}
	add(s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	for _, k := range sortedKeys(s.Properties) {
		add(s.Properties[k])
	}
	for _, c := range s.PatternProperties {
		add(c)
	}
	addAny(s.AdditionalProperties)
	addAny(s.Items)
	addAny(s.AdditionalItems)
	add(s.PrefixItems...)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
