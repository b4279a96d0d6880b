package tool_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/strictjson"
)

// sameGraph requires the program engine.FromDocument compiles of raw,
// when it compiles one, to be what the validator's compiler makes of it:
// a compilation that succeeds, programs that are structurally equal, the
// same cost analysis, and the same verdicts and explanations for values.
// It reports whether a program was compiled from the document.
func sameGraph(t *testing.T, raw []byte, values []jsontext.Value, where string) bool {
	t.Helper()
	built, compiled, ok, err := tool.SchemaGraphs(raw)
	if !ok {
		return false
	}
	require.NoError(t, err, "%s: built, but the validator refuses it", where)
	require.Empty(t, engine.Diff(built, compiled), where)
	fastBuilt, fastCompiled := built.Checker(), compiled.Checker()

	costBuilt := built.Analyze(tool.MaxSchemaVisits, strictjson.MaxDepth)
	costCompiled := compiled.Analyze(tool.MaxSchemaVisits, strictjson.MaxDepth)
	require.Equal(t, summary(costCompiled), summary(costBuilt), where)

	if fastBuilt == nil {
		return true
	}
	for i, v := range values {
		tree, err := strictjson.Parse(v)
		if err != nil {
			continue
		}
		at := fmt.Sprintf("%s: value %d", where, i)
		// Check stops at the first violation, in the order of a map of
		// the value's members: only its verdict is fixed.
		want, got := fastCompiled.Check(tree, tool.MaxValidationWork), fastBuilt.Check(tree, tool.MaxValidationWork)
		require.Equal(t, [2]bool{want.Valid, want.Exhausted}, [2]bool{got.Valid, got.Exhausted}, at)
		require.Equal(t, explained(fastCompiled.Explain(tree, tool.MaxValidationWork)), explained(fastBuilt.Explain(tree, tool.MaxValidationWork)), at)
		require.Equal(t, fastCompiled.CheckJSON(v, tool.MaxValidationWork, 1<<20), fastBuilt.CheckJSON(v, tool.MaxValidationWork, 1<<20), at)
	}
	return true
}

// summary is an Analysis with its patterns named by location.
func summary(a engine.Analysis) string {
	patterns := make([]string, len(a.Patterns))
	for i, p := range a.Patterns {
		patterns[i] = p.Location + " " + p.String()
	}
	return fmt.Sprintf("visits %d, located %d, bounded %v, largest enum %d, patterns %q", a.Visits, a.Located, a.Bounded, a.LargestEnum, patterns)
}

// explained renders a Report with its violations' messages. Its work is
// left out: a match of the backtracking engine is charged the time it
// takes.
func explained(r engine.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "valid %v, exhausted %v, where %q, total %d", r.Valid, r.Exhausted, r.Where, r.Total)
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "; %q: %s", v.Location, v.Kind.LocalizedString(english))
	}
	return b.String()
}

var english = message.NewPrinter(language.English)

// TestSchemaGraphSuite builds every schema of JSON-Schema-Test-Suite
// (and every test value, a schema too for the tests of the meta-schema)
// both ways and requires the same graphs, costs and verdicts.
func TestSchemaGraphSuite(t *testing.T) {
	documents, built := eachSuiteDocument(t, sameGraph)
	t.Logf("%d documents, %d built", documents, built)
	require.Greater(t, built, documents/4)
}

// TestSchemaGraphCatalogue builds the schemas of the large catalogue
// benchmark both ways, and requires ParseSchema to build every one.
func TestSchemaGraphCatalogue(t *testing.T) {
	values := valuesOf([]string{`{}`, `{"a":1}`, `null`})
	for i, raw := range registrySchemas(200) {
		where := fmt.Sprintf("catalogue schema %d", i)
		require.True(t, sameGraph(t, raw, values, where), where)
		s, err := tool.ParseSchema(raw)
		require.NoError(t, err, where)
		require.True(t, tool.Built(s), where)
	}
}

// TestSchemaGraph holds documents at the edges of what engine.FromDocument
// compiles: each is compiled or declined as listed, and what is compiled
// is what the validator compiles.
func TestSchemaGraph(t *testing.T) {
	for _, c := range []struct {
		schema string
		built  bool
	}{
		{`true`, true},
		{`{}`, true},
		{`{"type":["string","null"],"enum":["a",null],"const":"a","format":"email"}`, true},
		{`{"format":"regex"}`, true},
		{`{"format":"date-time"}`, true},
		{`{"format":"no-such-format"}`, true},
		{`{"minimum":1.5,"exclusiveMaximum":1e3,"multipleOf":0.25,"maxLength":2}`, true},
		{`{"properties":{"a/b~c":{"type":"string"}},"$ref":"#/properties/a~1b~0c"}`, true},
		{`{"properties":{"a b":{"type":"string"}},"$ref":"#/properties/a%20b"}`, true},
		{`{"allOf":[{"$ref":"#/allOf/1"},{"type":"string"}]}`, true},
		{`{"allOf":[{"$ref":"#/allOf/01"},{"type":"string"}]}`, false},
		{`{"if":false,"then":{"type":"string"},"else":{"type":"number"}}`, true},
		{`{"if":true,"then":{"type":"string"},"else":{"type":"number"}}`, true},
		{`{"contains":{"type":"string"},"minContains":2,"maxContains":3}`, true},
		{`{"minContains":2}`, true},
		{`{"dependentRequired":{"a":["b"]},"dependentSchemas":{"b":{"required":["c"]}}}`, true},
		{`{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":{"type":"integer"}}`, true},
		{`{"prefixItems":[{"type":"string"}],"items":false,"uniqueItems":true}`, true},
		{`{"$ref":"#/$defs/missing"}`, false},
		{`{"$ref":"#/properties/a/enum/0","properties":{"a":{"enum":["x"]}}}`, false},
		{`{"$ref":"#/properties/a/enum/0","properties":{"a":{"enum":[{"type":"string"}]}}}`, false},
		{`{"$ref":"#/x-extension","x-extension":{"type":"string"}}`, false},
		{`{"$ref":"#/$defs/a/items/0","$defs":{"a":{"items":[{"type":"string"}]}}}`, false},
		{`{"$ref":"#/$defs/a/prefixItems/0","$defs":{"a":{"prefixItems":[{"type":"string"}]}}}`, true},
		{`{"$ref":"#/$defs/a/properties/b/not","$defs":{"a":{"properties":{"b":{"not":{"type":"string"}}}}}}`, true},
		{`{"$ref":"#node","$defs":{"n":{"$anchor":"node"}}}`, false},
		{`{"$dynamicRef":"#/$defs/a","$defs":{"a":true}}`, false},
		{`{"unevaluatedProperties":false}`, false},
		{`{"dependencies":{"a":["b"]}}`, false},
		{`{"$id":"https://example.invalid/s.json"}`, false},
	} {
		got := sameGraph(t, []byte(c.schema), valuesOf([]string{`null`, `"ab"`, `1`, `[1,"a"]`, `{"a":1}`}), c.schema)
		require.Equal(t, c.built, got, c.schema)
	}
}

// FuzzSchemaGraph mutates schema documents and requires every program
// engine.FromDocument compiles to be what the validator compiles (see
// sameGraph).
func FuzzSchemaGraph(f *testing.F) {
	for _, seed := range append(schemaSeeds, `{"prefixItems":[{"type":"string"}],"items":{"$ref":"#/prefixItems/0"},"contains":{"const":1},"minContains":1}`) {
		f.Add([]byte(seed))
	}
	values := valuesOf([]string{`null`, `true`, `1`, `2.5`, `"ab"`, `"2024-01-02T03:04:05Z"`, `[]`, `["a",1]`, `{}`, `{"a":1,"b":["xyz"]}`, `{"next":{"next":null}}`, `{"x-a":"b"}`})
	f.Fuzz(func(t *testing.T, schema []byte) {
		if len(schema) > 1<<12 {
			return
		}
		sameGraph(t, schema, values, string(schema))
	})
}
