package toolgemini_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

const obj = `{"type":"object"}`

func TestProjectRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		defs []tool.Definition
		want string
	}{
		{"a name starting with a digit: Gemini wants a letter or _", []tool.Definition{adaptertest.Def("1st", obj)},
			`tool: invalid config for Gemini: name "1st" is not 1 to 64 of A-Z, a-z, 0-9, _ and -, starting with a letter or an underscore`},
		{"a name starting with a dash", []tool.Definition{adaptertest.Def("-x", obj)},
			`tool: invalid config for Gemini: name "-x" is not 1 to 64 of A-Z, a-z, 0-9, _ and -, starting with a letter or an underscore`},
		{"two definitions of one name", []tool.Definition{adaptertest.Def("a", obj), adaptertest.Def("a", obj)},
			`tool: invalid config for Gemini: name "a" is given twice`},
		{"recursion through a required member only", []tool.Definition{adaptertest.Def("r",
			`{"type":"object","properties":{"next":{"$ref":"#"}},"required":["next"]}`)},
			`tool: invalid config for Gemini: r input schema at /properties/next/$ref: $ref "#" recurses through required members only; Gemini unrolls recursion only through optional properties`},
		{"recursion through items of a required member", []tool.Definition{adaptertest.Def("r",
			`{"type":"object","$defs":{"n":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/n"}}},"required":["kids"]}},
			"properties":{"root":{"$ref":"#/$defs/n"}}}`)},
			`tool: invalid config for Gemini: r input schema at /$defs/n/properties/kids/items/$ref: $ref "#/$defs/n" recurses through required members only; Gemini unrolls recursion only through optional properties`},
		{"dynamic references", []tool.Definition{adaptertest.Def("d",
			`{"type":"object","$dynamicAnchor":"x","properties":{"a":{"$dynamicRef":"#x"}}}`)},
			`tool: invalid config for Gemini: d input schema at /$dynamicAnchor: $dynamicAnchor depends on dynamic scope, which Gemini cannot express; d input schema at /properties/a/$dynamicRef: $dynamicRef depends on dynamic scope, which Gemini cannot express`},
		{"a name the core refuses", []tool.Definition{adaptertest.Def("a.b", obj)},
			`tool: invalid config for Gemini: name "a.b" is not 1 to 64 of A-Z, a-z, 0-9, _ and -, starting with a letter or an underscore`},
		{"an empty name", []tool.Definition{adaptertest.Def("", obj)},
			`tool: invalid config for Gemini: name "" is not 1 to 64 of A-Z, a-z, 0-9, _ and -, starting with a letter or an underscore`},
		{"a schema that is not JSON", []tool.Definition{adaptertest.Def("a", `{"type":`)},
			`tool: invalid config for Gemini: invalid definition: input schema of tool "a": invalid schema: not one I-JSON document: at /type (byte 8): unexpected end of input, expected a value`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := project(tc.defs, toolgemini.Config{})
			require.ErrorIs(t, err, toolgemini.ErrInvalidConfig)
			require.EqualError(t, err, tc.want)
			require.Nil(t, p)
		})
	}
}

func TestProjectLowers(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
		lints             []string
	}{
		{"a derived schema needs nothing",
			`{"type":"object","properties":{"a":{"type":"integer","minimum":0}},"required":["a"],"additionalProperties":false}`,
			`{"type":"object","properties":{"a":{"type":"integer","minimum":0}},"required":["a"],"additionalProperties":false}`, nil},
		{"annotations are dropped without a lint: they never decide validity",
			`{"$schema":"https://json-schema.org/draft/2020-12/schema","$comment":"c","type":"object","properties":{"a":{"type":"string","default":"x","examples":["y"],"x-vendor":1}}}`,
			`{"type":"object","properties":{"a":{"type":"string"}}}`, nil},
		{"const becomes a one-value enum, const null a null type",
			`{"type":"object","properties":{"a":{"const":"on"},"b":{"const":2},"c":{"const":null}}}`,
			`{"type":"object","properties":{"a":{"enum":["on"]},"b":{"enum":[2]},"c":{"type":"null"}}}`, nil},
		{"an enum with null becomes anyOf with a null branch",
			`{"type":"object","properties":{"a":{"enum":["x",null]}}}`,
			`{"type":"object","properties":{"a":{"anyOf":[{"enum":["x"]},{"type":"null"}]}}}`, nil},
		{"a $ref with siblings moves into a one-branch anyOf",
			`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n","description":"d","maximum":3}}}`,
			`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"anyOf":[{"$ref":"#/$defs/n"}],"description":"d","maximum":3}}}`, nil},
		{"a $ref with only $-keywords beside it stays",
			`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n","$comment":"c"}}}`,
			`{"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, nil},
		{"a $ref whose only sibling is dropped still moves into anyOf, beside the note",
			`{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/n","pattern":"^x"}}}`,
			`{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"a":{"anyOf":[{"$ref":"#/$defs/n"}],"description":"(pattern: \"^x\")"}}}`,
			[]string{"t input schema at /properties/a/pattern: pattern is not supported; dropped and written into the description"}},
		{"a $ref beside anyOf is dropped",
			`{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/n","anyOf":[{"maxLength":3},{"const":"x"}]}}}`,
			`{"type":"object","$defs":{"n":{"type":"string"}},"properties":{"a":{"anyOf":[{"description":"(maxLength: 3)"},{"enum":["x"]}],"description":"(see #/$defs/n)"}}}`,
			[]string{"t input schema at /properties/a/anyOf/0/maxLength: maxLength is not supported; dropped and written into the description",
				"t input schema at /properties/a/$ref: $ref beside anyOf is not supported; the $ref is dropped"}},
		{"unsupported constraints move into the description",
			`{"type":"object","properties":{"s":{"type":"string","description":"Code.","pattern":"^[A-Z]{3}$","maxLength":3}}}`,
			`{"type":"object","properties":{"s":{"type":"string","description":"Code. (maxLength: 3; pattern: \"^[A-Z]{3}$\")"}}}`,
			[]string{"t input schema at /properties/s/maxLength: maxLength is not supported; dropped and written into the description",
				"t input schema at /properties/s/pattern: pattern is not supported; dropped and written into the description"}},
		{"oneOf is read as anyOf",
			`{"type":"object","properties":{"v":{"oneOf":[{"type":"integer"},{"type":"string"}]}}}`,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"integer"},{"type":"string"}]}}}`,
			[]string{"t input schema at /properties/v/oneOf: oneOf is read as anyOf: a value may match several branches"}},
		{"an enum of booleans is dropped",
			`{"type":"object","properties":{"b":{"enum":[true]}}}`,
			`{"type":"object","properties":{"b":{"description":"(enum: [true])"}}}`,
			[]string{"t input schema at /properties/b/enum: enum values other than strings, numbers and null are not supported; the enum is dropped and written into the description"}},
		{"recursion through an optional member is fine",
			`{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"integer"}},"required":["v"]}`,
			`{"type":"object","properties":{"next":{"$ref":"#"},"v":{"type":"integer"}},"required":["v"]}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := project([]tool.Definition{adaptertest.Def("t", tc.input)}, toolgemini.Config{})
			require.NoError(t, err)
			got, err := json.Marshal(p.Tools()[0].FunctionDeclarations[0].ParametersJsonSchema)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
			require.Equal(t, tc.lints, adaptertest.LintStrings(p.Relaxed()))
		})
	}
}

func TestProjectOutputSchema(t *testing.T) {
	d := adaptertest.Def("t", obj)
	d.Description = "Does t."
	d.OutputSchema = json.RawMessage(`{"type":"array","items":{"type":"string","minLength":1}}`)
	p, err := project([]tool.Definition{d}, toolgemini.Config{})
	require.NoError(t, err)
	decl := p.Tools()[0].FunctionDeclarations[0]
	require.Equal(t, "t", decl.Name)
	require.Equal(t, "Does t.", decl.Description)
	got, err := json.Marshal(decl.ResponseJsonSchema)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"array","items":{"type":"string","description":"(minLength: 1)"}}`, string(got))
	require.Equal(t, []toolgemini.Lint{{Tool: "t", Schema: "output", Pointer: "/items/minLength",
		Rule: "minLength is not supported; dropped and written into the description"}}, p.Relaxed())
	require.Nil(t, decl.Parameters)
	require.Nil(t, decl.Response)
}

func TestProjectEmptyAndCopies(t *testing.T) {
	p, err := project(nil, toolgemini.Config{})
	require.NoError(t, err)
	require.Nil(t, p.Tools())

	var zero *toolgemini.Tools
	require.Nil(t, zero.Tools())
	require.Nil(t, zero.Relaxed())
	_, err = toolgemini.New(toolgemini.Config{Registry: newRegistry(t), Definitions: []tool.Definition{adaptertest.Def("a", obj)}})
	require.ErrorIs(t, err, toolgemini.ErrInvalidConfig)

	// The projection shares no memory with the Definitions.
	input := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`)
	p, err = project([]tool.Definition{adaptertest.Def("t", string(input))}, toolgemini.Config{})
	require.NoError(t, err)
	d := tool.Definition{Name: "t", InputSchema: input}
	p2, err := project([]tool.Definition{d}, toolgemini.Config{})
	require.NoError(t, err)
	copy(input, `{"type":"xxxxxx"`)
	a, _ := json.Marshal(p.Tools()[0].FunctionDeclarations[0].ParametersJsonSchema)
	b, _ := json.Marshal(p2.Tools()[0].FunctionDeclarations[0].ParametersJsonSchema)
	require.JSONEq(t, string(a), string(b))
}

// TestProjectSharedSchema: tools with one schema get equal declarations
// that share no memory, and each its own lints.
func TestProjectSharedSchema(t *testing.T) {
	schema := `{"type":"object","properties":{"s":{"type":"string","maxLength":3},"e":{"enum":["x","y"]}}}`
	p, err := project([]tool.Definition{adaptertest.Def("a", schema), adaptertest.Def("b", schema), adaptertest.Def("c", schema)}, toolgemini.Config{})
	require.NoError(t, err)
	decls := p.Tools()[0].FunctionDeclarations
	require.Equal(t, decls[0].ParametersJsonSchema, decls[1].ParametersJsonSchema)
	decls[0].ParametersJsonSchema.(map[string]any)["properties"].(map[string]any)["e"].(map[string]any)["enum"].([]any)[0] = "changed"
	decls[1].ParametersJsonSchema.(map[string]any)["type"] = "changed"
	for _, d := range decls[1:] {
		require.Equal(t, []any{"x", "y"}, d.ParametersJsonSchema.(map[string]any)["properties"].(map[string]any)["e"].(map[string]any)["enum"])
	}
	require.Equal(t, "object", decls[2].ParametersJsonSchema.(map[string]any)["type"])
	rule := "maxLength is not supported; dropped and written into the description"
	require.Equal(t, []toolgemini.Lint{
		{Tool: "a", Schema: "input", Pointer: "/properties/s/maxLength", Rule: rule},
		{Tool: "b", Schema: "input", Pointer: "/properties/s/maxLength", Rule: rule},
		{Tool: "c", Schema: "input", Pointer: "/properties/s/maxLength", Rule: rule},
	}, p.Relaxed())
}

// TestProjectSharedSchemaOpenAPI: on the OpenAPI path too, tools with one
// schema get equal schemas that share no memory.
func TestProjectSharedSchemaOpenAPI(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":9},"e":{"enum":["x","y"]},
		"l":{"type":"array","items":{"type":"string"},"maxItems":2},"o":{"anyOf":[{"type":"string"},{"type":"integer"}]}},"required":["n"]}`
	p, err := project([]tool.Definition{adaptertest.Def("a", schema), adaptertest.Def("b", schema)}, toolgemini.Config{OpenAPI: true})
	require.NoError(t, err)
	a, b := p.Tools()[0].FunctionDeclarations[0].Parameters, p.Tools()[0].FunctionDeclarations[1].Parameters
	require.Equal(t, a, b)
	want, err := json.Marshal(b)
	require.NoError(t, err)
	*a.Properties["n"].Minimum = 5
	*a.Properties["l"].MaxItems = 7
	a.Properties["l"].Items.Type = "changed"
	a.Properties["e"].Enum[0] = "changed"
	a.Properties["o"].AnyOf[0].Type = "changed"
	a.Required[0] = "changed"
	a.Properties["new"] = &genai.Schema{}
	got, err := json.Marshal(b)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
}

// TestSchemaFieldsCopied: the fields of genai.Schema that can share memory
// are those the OpenAPI memo copies; a new one must be copied too.
func TestSchemaFieldsCopied(t *testing.T) {
	var shared []string
	typ := reflect.TypeFor[genai.Schema]()
	for i := range typ.NumField() {
		switch typ.Field(i).Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			shared = append(shared, typ.Field(i).Name)
		}
	}
	require.Equal(t, []string{"AnyOf", "Default", "Enum", "Example", "Items", "MaxItems", "MaxLength", "MaxProperties", "Maximum",
		"MinItems", "MinLength", "MinProperties", "Minimum", "Nullable", "Properties", "PropertyOrdering", "Required"}, shared)
}

// TestDefinitionsBecomeDefs: Gemini documents $defs, not draft-07's
// definitions; the JSON path moves the root's definitions into $defs and
// rewrites the $refs that point into them.
func TestDefinitionsBecomeDefs(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"definitions only",
			`{"type":"object","definitions":{"addr":{"type":"object","properties":{"city":{"type":"string"},"next":{"$ref":"#/definitions/addr"}}}},
			"properties":{"home":{"$ref":"#/definitions/addr"},"work":{"$ref":"#/definitions/addr/properties/city"}}}`,
			`{"$defs":{"addr":{"properties":{"city":{"type":"string"},"next":{"$ref":"#/$defs/addr"}},"type":"object"}},
			"properties":{"home":{"$ref":"#/$defs/addr"},"work":{"$ref":"#/$defs/addr/properties/city"}},"type":"object"}`},
		{"definitions beside $defs, names apart",
			`{"type":"object","$defs":{"a":{"type":"string"}},"definitions":{"b":{"type":"integer"}},
			"properties":{"x":{"$ref":"#/$defs/a"},"y":{"$ref":"#/definitions/b"}}}`,
			`{"$defs":{"a":{"type":"string"},"b":{"type":"integer"}},
			"properties":{"x":{"$ref":"#/$defs/a"},"y":{"$ref":"#/$defs/b"}},"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := project([]tool.Definition{adaptertest.Def("t", tc.in)}, toolgemini.Config{})
			require.NoError(t, err)
			got, err := json.Marshal(p.Tools()[0].FunctionDeclarations[0].ParametersJsonSchema)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
		})
	}
}

// TestLintIsThisPackages: Lint is a type of this package, not an alias of
// an internal one, so that its documentation shows its whole contract;
// its fields are read and written as before, and String renders it, a
// problem with the name (no schema) as a finding about the tool.
func TestLintIsThisPackages(t *testing.T) {
	require.Equal(t, "github.com/agentcontract/tool/adapters/gemini", reflect.TypeFor[toolgemini.Lint]().PkgPath())
	for _, tc := range []struct {
		lint toolgemini.Lint
		want string
	}{
		{toolgemini.Lint{Tool: "w", Schema: "output", Pointer: "/properties/a", Rule: "r"}, "w output schema at /properties/a: r"},
		{toolgemini.Lint{Tool: "w", Rule: "name"}, `tool "w": name`},
	} {
		require.Equal(t, tc.want, tc.lint.String())
		require.Equal(t, "w", tc.lint.Tool)
	}
}
