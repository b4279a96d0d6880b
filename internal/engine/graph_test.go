package engine

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/strictjson"
)

// sameGraph requires the program FromDocument compiles of raw, when it
// compiles one, to be what the validator's compiler makes of it: a
// compilation that succeeds, programs that are structurally equal, the
// same cost analysis, and the same verdicts and explanations for values.
// It reports whether a program was compiled from the document.
func sameGraph(t *testing.T, raw []byte, values [][]byte, where string) bool {
	t.Helper()
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return false
	}
	built, compiled, ok, err := Compilations(tree)
	if !ok {
		return false
	}
	require.NoError(t, err, "%s: built, but the validator refuses it", where)
	require.Empty(t, Diff(built, compiled), where)
	fastBuilt, fastCompiled := built.Checker(), compiled.Checker()
	require.Equal(t, summary(compiled.Analyze(MaxSchemaVisits, strictjson.MaxDepth)), summary(built.Analyze(MaxSchemaVisits, strictjson.MaxDepth)), where)
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
		want, got := fastCompiled.Check(tree, MaxValidationWork), fastBuilt.Check(tree, MaxValidationWork)
		require.Equal(t, [2]bool{want.Valid, want.Exhausted}, [2]bool{got.Valid, got.Exhausted}, at)
		require.Equal(t, explained(fastCompiled.Explain(tree, MaxValidationWork)), explained(fastBuilt.Explain(tree, MaxValidationWork)), at)
		require.Equal(t, fastCompiled.CheckJSON(v, MaxValidationWork, 1<<20), fastBuilt.CheckJSON(v, MaxValidationWork, 1<<20), at)
	}
	return true
}

// summary is an Analysis with its patterns named by location.
func summary(a Analysis) string {
	patterns := make([]string, len(a.Patterns))
	for i, p := range a.Patterns {
		patterns[i] = p.Location + " " + p.String()
	}
	return fmt.Sprintf("visits %d, located %d, bounded %v, largest enum %d, patterns %q", a.Visits, a.Located, a.Bounded, a.LargestEnum, patterns)
}

// explained renders a Report with its violations' messages. Its work is
// left out: a match of the backtracking engine is charged the time it
// takes.
func explained(r Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "valid %v, exhausted %v, where %q, total %d", r.Valid, r.Exhausted, r.Where, r.Total)
	for _, v := range r.Violations {
		fmt.Fprintf(&b, "; %q: %s", v.Location, v.Kind.LocalizedString(english))
	}
	return b.String()
}

var english = message.NewPrinter(language.English)

func values(texts ...string) [][]byte {
	out := make([][]byte, len(texts))
	for i, s := range texts {
		out[i] = []byte(s)
	}
	return out
}

// TestSchemaGraphSuite compiles every schema of JSON-Schema-Test-Suite
// (and every test value, a schema too for the tests of the meta-schema)
// both ways and requires the same programs, costs and verdicts.
func TestSchemaGraphSuite(t *testing.T) {
	dir := "../../../shared/corpora/JSON-Schema-Test-Suite/tests"
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("JSON-Schema-Test-Suite not found beside the repository (../shared/corpora): %v", err)
	}
	documents, built := 0, 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var groups []struct {
			Description string
			Schema      json.RawMessage
			Tests       []struct{ Data json.RawMessage }
		}
		require.NoError(t, json.Unmarshal(data, &groups), path)
		for _, g := range groups {
			var data [][]byte
			for _, c := range g.Tests {
				data = append(data, c.Data)
				documents++
				if sameGraph(t, c.Data, nil, path+": "+g.Description+": data") {
					built++
				}
			}
			documents++
			if sameGraph(t, g.Schema, data, path+": "+g.Description) {
				built++
			}
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("%d documents, %d built", documents, built)
	require.Greater(t, built, documents/4)
}

// TestSchemaGraph holds documents at the edges of what FromDocument
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
		got := sameGraph(t, []byte(c.schema), values(`null`, `"ab"`, `1`, `[1,"a"]`, `{"a":1}`), c.schema)
		require.Equal(t, c.built, got, c.schema)
	}
}

// FuzzSchemaGraph mutates schema documents and requires every program
// FromDocument compiles to be what the validator compiles (see sameGraph).
func FuzzSchemaGraph(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","minimum":1},"b":{"type":"array","items":{"type":"string","maxLength":3}}},"required":["a"],"additionalProperties":false}`,
		`{"$defs":{"n":{"anyOf":[{"type":"null"},{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}]}},"$ref":"#/$defs/n"}`,
		`{"patternProperties":{"^x-":{"pattern":"^[a-z]+$"}},"dependentRequired":{"a":["b"]},"multipleOf":0.5,"format":"date-time"}`,
		`{"enum":["a",1,null],"const":"a","not":{"type":"boolean"},"if":{"minLength":2},"then":{"maxLength":4}}`,
		`{"$ref":"#"}`,
		`{"prefixItems":[{"type":"string"}],"items":{"$ref":"#/prefixItems/0"},"contains":{"const":1},"minContains":1}`,
	} {
		f.Add([]byte(seed))
	}
	values := values(`null`, `true`, `1`, `2.5`, `"ab"`, `"2024-01-02T03:04:05Z"`, `[]`, `["a",1]`, `{}`, `{"a":1,"b":["xyz"]}`, `{"next":{"next":null}}`, `{"x-a":"b"}`)
	f.Fuzz(func(t *testing.T, schema []byte) {
		if len(schema) > 1<<12 {
			return
		}
		sameGraph(t, schema, values, string(schema))
	})
}
