package tool_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func coreSchema(t testing.TB, doc string) tool.Schema {
	t.Helper()
	s, err := tool.ParseSchema([]byte(doc))
	require.NoError(t, err)
	require.True(t, s.Valid())
	return s
}

func TestParseSchemaLocalReferences(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		valid  []string
		broken []string
	}{
		{
			name:   "$defs by pointer",
			schema: `{"type":"object","properties":{"n":{"$ref":"#/$defs/small"}},"$defs":{"small":{"type":"integer","maximum":3}}}`,
			valid:  []string{`{"n":3}`, `{}`},
			broken: []string{`{"n":4}`, `{"n":"3"}`},
		},
		{
			name:   "recursive reference to the root",
			schema: `{"type":"object","properties":{"child":{"$ref":"#"}},"additionalProperties":false}`,
			valid:  []string{`{}`, `{"child":{"child":{}}}`},
			broken: []string{`{"child":{"x":1}}`},
		},
		{
			name:   "anchor",
			schema: `{"$ref":"#word","$defs":{"w":{"$anchor":"word","type":"string","minLength":2}}}`,
			valid:  []string{`"ab"`},
			broken: []string{`"a"`, `1`},
		},
		{
			name:   "relative reference to the document's own $id",
			schema: `{"$id":"https://example.test/root.json","$ref":"root.json#/$defs/s","$defs":{"s":{"type":"string"}}}`,
			valid:  []string{`"x"`},
			broken: []string{`1`},
		},
		{
			name:   "embedded resource with its own $id",
			schema: `{"$ref":"https://example.test/inner.json","$defs":{"i":{"$id":"https://example.test/inner.json","type":"boolean"}}}`,
			valid:  []string{`true`},
			broken: []string{`"true"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := coreSchema(t, tt.schema)
			for _, v := range tt.valid {
				require.NoError(t, s.Validate([]byte(v)), v)
			}
			for _, v := range tt.broken {
				err := s.Validate([]byte(v))
				var rej *tool.InputRejection
				require.ErrorAs(t, err, &rej, v)
			}
		})
	}
}

func TestParseSchemaRefusesExternalReferences(t *testing.T) {
	// A schema file that would compile if it were read: the refusal shows
	// it was not.
	dir := t.TempDir()
	path := filepath.Join(dir, "string.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"type":"string"}`), 0o600))
	fileURL := "file://" + filepath.ToSlash(path)

	tests := []struct {
		name   string
		schema string
		url    string
	}{
		{"file URL of an existing file", `{"$ref":"` + fileURL + `"}`, fileURL},
		{"file URL with a fragment", `{"$ref":"` + fileURL + `#/type"}`, fileURL},
		{"http URL", `{"$ref":"http://example.test/s.json"}`, "http://example.test/s.json"},
		{"https URL", `{"$ref":"https://example.test/s.json"}`, "https://example.test/s.json"},
		{"relative reference", `{"$ref":"other.json"}`, "other.json"},
		{"relative reference with a pointer", `{"properties":{"a":{"$ref":"other.json#/$defs/a"}}}`, "other.json"},
		{"relative reference against a file $id", `{"$id":"file://` + filepath.ToSlash(dir) + `/root.json","$ref":"string.json"}`, fileURL},
		{"urn", `{"$ref":"urn:example:schema"}`, "urn:example:schema"},
		{"unknown metaschema", `{"$schema":"` + fileURL + `"}`, fileURL},
		{"inside a definition nothing references", `{"type":"object","$defs":{"unused":{"$ref":"http://example.test/s.json"}}}`, "at /$defs/unused: reference to \"http://example.test/s.json\""},
		{"inside a nested, unreferenced definitions entry", `{"$defs":{"a":{"definitions":{"b/c":{"items":{"$ref":"urn:example:x"}}}}}}`, "at /$defs/a/definitions/b~1c: reference to \"urn:example:x\""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tool.ParseSchema([]byte(tt.schema))
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
			require.Contains(t, err.Error(), tt.url)
			require.False(t, s.Valid())
		})
	}
}

func TestParseSchemaRefusesDocuments(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		msg    string
	}{
		{"not JSON", `{`, "tool: invalid schema: not one I-JSON document: at the root (byte 1): unexpected end of input, expected a member name"},
		{"duplicate member", `{"type":"string","type":"number"}`, `tool: invalid schema: not one I-JSON document: at /type (byte 17): duplicate member name "type"`},
		{"array", `[]`, "tool: invalid schema: a schema must be a JSON object or boolean"},
		{"number", `1`, "tool: invalid schema: a schema must be a JSON object or boolean"},
		{"empty", ``, "tool: invalid schema: not one I-JSON document: at the root (byte 0): unexpected end of input, expected a value"},
		{"missing local reference", `{"$ref":"#/$defs/missing"}`, ""},
		{"keyword of the wrong type", `{"type":7}`, ""},
		{"invalid pattern", `{"pattern":"("}`, ""},
		{"over MaxInputBytes", `{"description":"` + strings.Repeat("x", tool.MaxInputBytes) + `"}`, fmt.Sprintf("tool: invalid schema: document is %d bytes, more than the limit of %d", tool.MaxInputBytes+18, tool.MaxInputBytes)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tool.ParseSchema([]byte(tt.schema))
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
			require.False(t, s.Valid())
			if tt.msg != "" {
				require.EqualError(t, err, tt.msg)
			}
		})
	}
}

func TestParseSchemaDrafts(t *testing.T) {
	tests := []struct {
		name          string
		schema        string
		valid, broken string
	}{
		{"boolean true", `true`, `{"anything":1}`, ""},
		{"boolean false", `false`, "", `1`},
		{"2020-12 by default: prefixItems", `{"prefixItems":[{"type":"string"}],"items":false}`, `["a"]`, `["a",1]`},
		{"draft-07 named: items as a tuple", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`, `["a"]`, `["a","b"]`},
		{"formats are asserted", `{"type":"string","format":"email"}`, `"a@example.test"`, `"not an address"`},
		{"date-time asserted", `{"format":"date-time"}`, `"2024-01-02T03:04:05Z"`, `"yesterday"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := coreSchema(t, tt.schema)
			if tt.valid != "" {
				require.NoError(t, s.Validate([]byte(tt.valid)))
			}
			if tt.broken != "" {
				require.ErrorIs(t, s.Validate([]byte(tt.broken)), tool.ErrInvalidInvocation)
			}
		})
	}
}

func TestSchemaNumbersAreExact(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		value  string
		ok     bool
	}{
		{"const admits itself", `{"const":9007199254740993}`, `9007199254740993`, true},
		{"const refuses its float64 rounding", `{"const":9007199254740993}`, `9007199254740992`, false},
		{"maximum admits the bound", `{"maximum":9007199254740993}`, `9007199254740993`, true},
		{"maximum refuses one more", `{"maximum":9007199254740993}`, `9007199254740994`, false},
		{"enum is exact", `{"enum":[18446744073709551617]}`, `18446744073709551616`, false},
		{"multipleOf is exact", `{"multipleOf":0.1}`, `0.3`, true},
		{"integer with a zero fraction", `{"type":"integer"}`, `1.0`, true},
		{"exponent form of an integer", `{"type":"integer","maximum":100}`, `1E2`, true},
		{"tiny positive is above zero", `{"exclusiveMinimum":0}`, `5e-324`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := coreSchema(t, tt.schema).Validate([]byte(tt.value))
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			}
		})
	}
}

func TestSchemaZeroValue(t *testing.T) {
	var s tool.Schema
	require.False(t, s.Valid())
	require.Nil(t, s.JSON())
	require.ErrorIs(t, s.Validate([]byte(`{}`)), tool.ErrInvalidSchema)
	_, err := s.MarshalJSON()
	require.ErrorIs(t, err, tool.ErrInvalidSchema)
	_, err = json.Marshal(struct{ S tool.Schema }{})
	require.ErrorIs(t, err, tool.ErrInvalidSchema)
}

func TestSchemaJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"compact", " {\n \"type\" : \"object\" ,\n \"properties\" : { } }\n", `{"type":"object","properties":{}}`},
		{"member order as given", `{"required":["b"],"type":"object","properties":{"b":{},"a":{}}}`, `{"required":["b"],"type":"object","properties":{"b":{},"a":{}}}`},
		{"number text as given", `{"maximum": 1.0E+2, "minimum": -0.50}`, `{"maximum":1.0E+2,"minimum":-0.50}`},
		{"escapes as given", `{"description": "\u0041 \"quoted\" \/"}`, `{"description":"\u0041 \"quoted\" \/"}`},
		{"boolean", ` true `, `true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := coreSchema(t, tt.in)
			got := s.JSON()
			require.Equal(t, tt.want, string(got))
			got[0] = 'X'
			require.Equal(t, tt.want, string(s.JSON()), "JSON returns a copy")
			m, err := s.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tt.want, string(m))
		})
	}
}

func TestSchemaDoesNotRetainInput(t *testing.T) {
	raw := []byte(`{"type":"string"}`)
	s, err := tool.ParseSchema(raw)
	require.NoError(t, err)
	copy(raw, `{"type":"number"}`)
	require.Equal(t, `{"type":"string"}`, string(s.JSON()))
	require.NoError(t, s.Validate([]byte(`"x"`)))
}

func TestSchemaJSONRoundTrip(t *testing.T) {
	type holder struct {
		S tool.Schema `json:"schema"`
	}
	in := holder{S: coreSchema(t, `{"type":"integer", "maximum":1.0E+2}`)}
	data, err := json.Marshal(in)
	require.NoError(t, err)
	require.Equal(t, `{"schema":{"type":"integer","maximum":1.0E+2}}`, string(data))

	var out holder
	require.NoError(t, json.Unmarshal(data, &out))
	require.True(t, out.S.Valid())
	require.Equal(t, in.S.JSON(), out.S.JSON())
	require.NoError(t, out.S.Validate([]byte(`100`)))
	require.Error(t, out.S.Validate([]byte(`101`)))

	// A failed UnmarshalJSON leaves the Schema as it was.
	before := out.S
	err = out.S.UnmarshalJSON([]byte(`{"$ref":"https://example.test/x"}`))
	require.ErrorIs(t, err, tool.ErrInvalidSchema)
	require.Equal(t, before.JSON(), out.S.JSON())
	require.NoError(t, out.S.Validate([]byte(`100`)))
}

// chainedAnyOf returns n definitions d0..d(n-1), each an anyOf of two
// references to the next, ending in a string. Validation work doubles with
// every definition.
func chainedAnyOf(n int) string {
	return `{"$ref":"#/$defs/d0","$defs":` + chainedDefs(n) + `}`
}

// chainedDefs returns the $defs object of chainedAnyOf.
func chainedDefs(n int) string {
	var b strings.Builder
	b.WriteString(`{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}`, n)
	return b.String()
}

// linearChain returns n references, each to the next, ending in a string.
func linearChain(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"$ref":"#/$defs/d%d"},`, i, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, n)
	return b.String()
}

// allOfTrivial returns a schema whose validation of one value applies
// exactly 1+n subschemas: the root and n empty ones.
func allOfTrivial(n int) string {
	return `{"allOf":[` + strings.TrimSuffix(strings.Repeat("{},", n), ",") + `]}`
}

func anyOfTypes(n int) string {
	alts := make([]string, n)
	for i := range alts {
		alts[i] = fmt.Sprintf(`{"const":%d}`, i)
	}
	return `{"anyOf":[` + strings.Join(alts, ",") + `]}`
}

func TestParseSchemaBoundsValidationWork(t *testing.T) {
	require.Equal(t, 1000, tool.MaxSchemaVisits)
	tests := []struct {
		name    string
		schema  string
		refused bool
		why     string
	}{
		// The 1.3 KB schema of the pitfall: unbounded, one validation
		// would take seconds and double with every definition. Here
		// ParseSchema refuses it in about 1.5 ms (measured on the 2-core
		// development machine; about 10 ms for the first schema of a
		// process, which also compiles the metaschema).
		{"20 definitions of two chained references", chainedAnyOf(20), true, "the expanded size is about 2^21 visits"},
		{"9 definitions of two chained references", chainedAnyOf(9), true, "2^10 visits already pass the bound"},
		{"7 definitions of two chained references", chainedAnyOf(7), false, "about 2^9 visits stay under it"},
		{"linear chain of 200 references", linearChain(200), false, "a chain costs one visit per link"},
		{"anyOf of 50 alternatives", anyOfTypes(50), false, "alternatives add up, they do not multiply"},
		{"exactly MaxSchemaVisits", allOfTrivial(tool.MaxSchemaVisits - 1), false, "the root and 999 subschemas"},
		{"one over MaxSchemaVisits", allOfTrivial(tool.MaxSchemaVisits), true, "the root and 1000 subschemas"},
		{"explosion under a property", `{"properties":{"p":{"$ref":"#/$defs/d0"}},"$defs":` + chainedDefs(20) + `}`, true, "every location is bounded, not just the root"},
		{"nested locations do not add up", strings.Repeat(`{"allOf":[`+strings.Repeat(`{},`, 19)+`{}],"items":`, 60) + `{}` + strings.Repeat(`}`, 60), false, "21 visits at each of 60 locations, 1260 in all, 21 at any one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tool.ParseSchema([]byte(tt.schema))
			if !tt.refused {
				require.NoError(t, err, tt.why)
				require.True(t, s.Valid())
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidSchema, tt.why)
			require.Contains(t, err.Error(), "more than the limit of 1000")
			require.False(t, s.Valid())
		})
	}
}

func TestParseSchemaLinearChainValidates(t *testing.T) {
	s := coreSchema(t, linearChain(200))
	require.NoError(t, s.Validate([]byte(`"end"`)))
	require.ErrorIs(t, s.Validate([]byte(`1`)), tool.ErrInvalidInvocation)
}

func TestSchemaValidateMessages(t *testing.T) {
	s := coreSchema(t, `{
		"type":"object",
		"properties":{
			"a":{"type":"integer","minimum":3},
			"b":{"type":"string","maxLength":2},
			"c/d":{"type":"array","items":{"type":"boolean"}}
		},
		"required":["a"],
		"additionalProperties":false
	}`)
	tests := []struct {
		name, value, msg string
	}{
		{"below the minimum", `{"a":1}`, "at /a: minimum: got 1, want 3"},
		{"wrong type", `{"a":"x"}`, "at /a: got string, want integer"},
		{"too long", `{"a":3,"b":"abc"}`, "at /b: maxLength: got 3, want 2"},
		{"pointer escaping", `{"a":3,"c/d":[true,1]}`, "at /c~1d/1: got number, want boolean"},
		{"missing required", `{}`, "at the root: missing property 'a'"},
		{"unknown member", `{"a":3,"z":1}`, "at the root: additional properties 'z' not allowed"},
		{"two problems", `{"a":1,"b":"abc"}`, "at /a: minimum: got 1, want 3; at /b: maxLength: got 3, want 2"},
		{"not JSON", `{"a":`, "invalid JSON at /a (byte 5): unexpected end of input, expected a value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate([]byte(tt.value))
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			rej, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok)
			require.Equal(t, tt.msg, rej.Message())
			require.NotContains(t, rej.Message(), "\n")
			require.Equal(t, "tool: invalid invocation: "+tt.msg, err.Error())
		})
	}
}

// TestSchemaValidateMessageIsDeterministic: when one value breaks several
// subschemas at the same location, the validator finds them in map order
// (patternProperties); the message must name the same one every time, or
// a replayed Prepare would tell the model something else.
func TestSchemaValidateMessageIsDeterministic(t *testing.T) {
	s := coreSchema(t, `{"type":"object","patternProperties":{
		"^a":{"type":"string"},
		"a$":{"minimum":5},
		"^.$":{"type":"boolean"}
	}}`)
	messages := map[string]int{}
	for range 200 {
		rej, ok := tool.ClassifyInputRejection(s.Validate([]byte(`{"a":1}`)))
		require.True(t, ok)
		messages[rej.Message()]++
	}
	// "#/patternProperties/%5E.$" sorts first among the three locations.
	require.Equal(t, map[string]int{"at /a: got number, want boolean; at /a: got number, want string; at /a: minimum: got 1, want 5": 200}, messages)
}

func TestSchemaValidateBounds(t *testing.T) {
	s := coreSchema(t, `{}`)
	big := `"` + strings.Repeat("x", tool.MaxInputBytes-2) + `"`
	require.NoError(t, s.Validate([]byte(big)))
	err := s.Validate([]byte(big + " "))
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Equal(t, fmt.Sprintf("value is %d bytes, more than the limit of %d", tool.MaxInputBytes+1, tool.MaxInputBytes), rej.Message())
}

func TestSchemaConcurrentUse(t *testing.T) {
	s := coreSchema(t, `{"type":"object","properties":{"n":{"type":"integer","maximum":10}}}`)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			for j := range 8 {
				n := i + j
				err := s.Validate(fmt.Appendf(nil, `{"n":%d}`, n))
				if (err == nil) != (n <= 10) {
					errs <- fmt.Errorf("n=%d: %v", n, err)
				}
				_ = s.JSON()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.False(t, errors.Is(nil, tool.ErrInvalidSchema))
}

// TestSchemaValidateNestedAlternatives pins that explaining a violation
// deep inside nested anyOf alternatives walks each alternative once. It
// used to walk the chosen one twice per level: 2^200 steps for this value.
func TestSchemaValidateNestedAlternatives(t *testing.T) {
	s := coreSchema(t, `{"$ref":"#/$defs/t","$defs":{"t":{"anyOf":[
		{"type":"array","items":{"$ref":"#/$defs/t"}},
		{"type":"object","additionalProperties":{"$ref":"#/$defs/t"}}
	]}}}`)
	const depth = 200
	require.NoError(t, s.Validate([]byte(strings.Repeat("[", depth)+strings.Repeat("]", depth))))
	err := s.Validate([]byte(strings.Repeat("[", depth) + "1" + strings.Repeat("]", depth)))
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Equal(t, "at "+strings.Repeat("/0", depth)+": 'anyOf' failed", rej.Message())
}

// TestSchemaNumericMessages pins that numeric rules are explained with the
// exact numbers, as a model wrote them, not through float64.
func TestSchemaNumericMessages(t *testing.T) {
	tests := []struct {
		schema, value, msg string
	}{
		{`{"minimum":3}`, `1`, "at the root: minimum: got 1, want 3"},
		{`{"minimum":1000000}`, `999999`, "at the root: minimum: got 999999, want 1000000"},
		{`{"maximum":9007199254740993}`, `9007199254740994`, "at the root: maximum: got 9007199254740994, want 9007199254740993"},
		{`{"maximum":1e300}`, `2E+300`, "at the root: maximum: got 2e+300, want 1e+300"},
		{`{"exclusiveMinimum":0}`, `-0.5`, "at the root: exclusiveMinimum: got -0.5, want 0"},
		{`{"exclusiveMaximum":1.5}`, `1.50`, "at the root: exclusiveMaximum: got 1.5, want 1.5"},
		{`{"minimum":0.000001}`, `1e-7`, "at the root: minimum: got 1e-7, want 0.000001"},
		{`{"multipleOf":0.1}`, `0.25`, "at the root: multipleOf: got 0.25, want 0.1"},
		{`{"maximum":123456789012345678901}`, `123456789012345678902`, "at the root: maximum: got 123456789012345678902, want 123456789012345678901"},
		{`{"minimum":-12.5e-3}`, `-1`, "at the root: minimum: got -1, want -0.0125"},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			err := coreSchema(t, tt.schema).Validate([]byte(tt.value))
			rej, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, tt.msg, rej.Message())
		})
	}
}

// TestParseSchemaBoundsDocumentShape pins the bounds on a schema's
// nesting and size, which keep the validator's compiler (whose time grows
// with the square of both) fast on documents from storage or a peer.
func TestParseSchemaBoundsDocumentShape(t *testing.T) {
	nested := func(levels int) string {
		// Each level is one object: {"not":{"not":...}}.
		return strings.Repeat(`{"not":`, levels-1) + `{}` + strings.Repeat(`}`, levels-1)
	}
	booleans := func(n int) string {
		// The root, the properties object, and n-2 boolean subschemas.
		var b strings.Builder
		b.WriteString(`{"properties":{`)
		for i := range n - 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":true`, i)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	objects := func(n int) string {
		// The root, the properties object, and n-2 empty subschemas.
		var b strings.Builder
		b.WriteString(`{"properties":{`)
		for i := range n - 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"p%d":{}`, i)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	tests := []struct {
		name    string
		schema  string
		refused string
	}{
		{"128 levels", nested(128), ""},
		{"129 levels", nested(129), "nested 129 levels deep, more than the limit of 128"},
		{"4096 objects", objects(4096), ""},
		{"4097 objects", objects(4097), "holds 4097 objects and booleans, more than the limit of 4096"},
		{"4096 with booleans", booleans(4096), ""},
		{"4097 with booleans", booleans(4097), "holds 4097 objects and booleans, more than the limit of 4096"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tool.ParseSchema([]byte(tt.schema))
			if tt.refused == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
			require.ErrorContains(t, err, tt.refused)
		})
	}
}

// TestValidationWorkIsBounded: a value whose size times the schema's
// subschemas per location exceeds MaxValidationWork is refused before any
// validation, quickly, with a public rejection; the same schema still
// validates values within the budget.
func TestValidationWorkIsBounded(t *testing.T) {
	// 999 subschemas meet every item.
	heavy := `{"type":"array","allOf":[` + strings.TrimSuffix(strings.Repeat(`{"items":{"type":"integer"}},`, 999), ",") + `]}`
	s, err := tool.ParseSchema([]byte(heavy))
	require.NoError(t, err)

	items := func(n int) []byte {
		return []byte("[" + strings.TrimSuffix(strings.Repeat("1,", n), ",") + "]")
	}
	require.NoError(t, s.Validate(items(100)))

	err = s.Validate(items(100_000))
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	rejection, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Contains(t, rejection.Message(), fmt.Sprintf("more than the limit of %d (MaxValidationWork)", tool.MaxValidationWork))

	// A light schema admits the same large value.
	light, err := tool.ParseSchema([]byte(`{"type":"array","items":{"type":"integer"}}`))
	require.NoError(t, err)
	require.NoError(t, light.Validate(items(100_000)))
}

// TestSchemaECMAScriptPatterns: JSON Schema patterns are ECMA-262. The
// pattern zod v4 writes for z.string().email() has lookaheads RE2 cannot
// compile; it binds, and matches as JavaScript would. A pattern neither
// engine compiles is refused in one line that names its location.
func TestSchemaECMAScriptPatterns(t *testing.T) {
	zod := `{"type":"object","properties":{"email":{"type":"string","pattern":"^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$"}},"required":["email"]}`
	s, err := tool.ParseSchema([]byte(zod))
	require.NoError(t, err)
	for address, valid := range map[string]bool{
		"ada@example.com":        true,
		"first.last+x@a.b.io":    true,
		".ada@example.com":       false,
		"ada..l@example.com":     false,
		"ada@example":            false,
		`ada@example.com\n`:      false,
		"ada lovelace@example.c": false,
	} {
		err := s.Validate([]byte(`{"email":"` + address + `"}`))
		if valid {
			require.NoError(t, err, address)
			continue
		}
		rej, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%s: %v", address, err)
		require.Contains(t, rej.Message(), "at /email: ", address)
		require.Contains(t, rej.Message(), "does not match pattern", address)
	}

	cases := []struct{ schema, message string }{
		{`{"properties":{"a":{"pattern":"a{0,1000}{0,1000}"}}}`, "tool: invalid schema: at /properties/a/pattern: 'a{0,1000}{0,1000}' is not valid regex: neither RE2 nor ECMAScript accepts it: error parsing regexp: invalid nested repetition operator: `{0,1000}{0,1000}`"},
		{`{"patternProperties":{"(":true}}`, "tool: invalid schema: at /patternProperties: invalid propertyName '('"},
	}
	for _, c := range cases {
		_, err := tool.ParseSchema([]byte(c.schema))
		require.ErrorIs(t, err, tool.ErrInvalidSchema)
		require.Equal(t, c.message, err.Error())
	}
}

// TestSchemaMessagesGuideTheModel: a rejection lists up to five problems
// sorted by location, names the declared member an unknown one resembles,
// and tells the model to omit an optional member rather than send null.
func TestSchemaMessagesGuideTheModel(t *testing.T) {
	s := coreSchema(t, `{
		"type":"object",
		"properties":{
			"title":{"type":"string"},
			"author":{"type":"string"},
			"pages":{"type":"integer","minimum":1},
			"tags":{"type":"array","items":{"type":"string"}},
			"note":{"anyOf":[{"type":"string"},{"type":"integer"}]}
		},
		"required":["title"],
		"additionalProperties":false
	}`)
	tests := []struct {
		name, value, msg string
	}{
		{"wrong case", `{"Title":"Dune"}`, "at the root: additional properties 'Title' not allowed (did you mean 'title'?); at the root: missing property 'title'"},
		{"one letter swapped", `{"title":"Dune","autor":"Herbert"}`, "at the root: additional properties 'autor' not allowed (did you mean 'author'?)"},
		{"several resemble", `{"title":"Dune","Author":"Herbert","page":3}`, "at the root: additional properties 'Author', 'page' not allowed (did you mean 'author' for 'Author', 'pages' for 'page'?)"},
		{"nothing resembles", `{"title":"Dune","isbn":"x"}`, "at the root: additional properties 'isbn' not allowed"},
		{"null for an optional member", `{"title":"Dune","author":null}`, "at /author: got null, want string; this member is optional: leave it out instead of sending null"},
		{"null for an optional alternative", `{"title":"Dune","note":null}`, "at /note: 'anyOf' failed"},
		{"null for a required member", `{"title":null}`, "at /title: got null, want string"},
		{"five problems, listed by location", `{"title":1,"author":2,"pages":0,"tags":[3,4]}`,
			"at /author: got number, want string; at /pages: minimum: got 0, want 1; at /tags/0: got number, want string; at /tags/1: got number, want string; at /title: got number, want string"},
		{"more than five", `{"title":1,"author":2,"pages":0,"tags":[3,4,5,6]}`,
			"at /author: got number, want string; at /pages: minimum: got 0, want 1; at /tags/0: got number, want string; at /tags/1: got number, want string; at /tags/2: got number, want string (and 2 more problems)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rej, ok := tool.ClassifyInputRejection(s.Validate([]byte(tt.value)))
			require.True(t, ok)
			require.Equal(t, tt.msg, rej.Message())
		})
	}
}

// TestSchemaBacktrackingUnderTheFullValidator: where the fast check does
// not cover a schema, nothing could stop the full validator between the
// matches of a backtracking pattern, so the matches' static costs are
// charged within the budget first, and a value whose matches do not fit
// is refused before the validator runs.
func TestSchemaBacktrackingUnderTheFullValidator(t *testing.T) {
	// A draft-07 schema, as zod-to-json-schema writes them, takes the
	// full validator.
	s, err := tool.ParseSchema([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"array","items":{"type":"string","pattern":"^(a+)+(?=b)"}}`))
	require.NoError(t, err)
	require.NoError(t, s.Validate([]byte(`["aab","ab"]`)))
	rej, ok := tool.ClassifyInputRejection(s.Validate([]byte(`["ac"]`)))
	require.True(t, ok)
	require.Contains(t, rej.Message(), "at /0: 'ac' does not match pattern")
	catastrophic := `["` + strings.Repeat("a", 40) + `!"]`
	// Refused for the steps it would take, before the 2^40 steps of the
	// match: a run that did them would not end within the test timeout.
	start := time.Now()
	rej, ok = tool.ClassifyInputRejection(s.Validate([]byte(catastrophic)))
	require.True(t, ok)
	require.Contains(t, rej.Message(), "(MaxValidationWork), and the pattern can check strings of at most")
	t.Logf("refused in %v", time.Since(start))
}
