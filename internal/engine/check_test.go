package engine_test

import (
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

type memoryLoader map[string][]byte

func (m memoryLoader) Load(url string) (any, error) {
	doc, ok := m[url]
	if !ok {
		return nil, fmt.Errorf("no remote %q", url)
	}
	return strictjson.Parse(doc)
}

func compile(t testing.TB, schema []byte, loader jsonschema.URLLoader) *jsonschema.Schema {
	t.Helper()
	tree, err := strictjson.Parse(schema)
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseRegexpEngine(regex.Engine)
	if loader != nil {
		c.UseLoader(loader)
	}
	if err := c.AddResource("https://schema.invalid/schema.json", tree); err != nil {
		return nil
	}
	s, err := c.Compile("https://schema.invalid/schema.json")
	if err != nil {
		return nil
	}
	return s
}

// agree requires the Checker's verdicts, with and without explanation, to
// equal the full validator's, and an explanation of an invalid value to
// hold at least one violation.
func agree(t *testing.T, s *jsonschema.Schema, checker *engine.Checker, value any, format string, args ...any) {
	t.Helper()
	where := fmt.Sprintf(format, args...)
	want := s.Validate(value) == nil
	checked := checker.Check(value, math.MaxInt)
	explained := checker.Explain(value, math.MaxInt)
	require.Equal(t, want, checked.Valid, where)
	require.Equal(t, want, explained.Valid, where)
	require.Equal(t, want, explained.Total == 0, where)
	require.LessOrEqual(t, len(explained.Violations), min(explained.Total, engine.MaxKept), where)
	require.False(t, checked.Exhausted || explained.Exhausted)
}

// TestAgreesWithValidatorOnSuite runs every draft 2020-12 test of
// JSON-Schema-Test-Suite, required and optional, through both the full
// validator and the Checker wherever the Checker accepts the schema, and
// requires the same answer.
func TestAgreesWithValidatorOnSuite(t *testing.T) {
	covered, total := 0, 0
	eachSuiteTest(t, func(tc suiteTest) {
		total++
		value, err := strictjson.Parse(tc.data)
		if err != nil || tc.checker == nil {
			return
		}
		covered++
		agree(t, tc.schema, tc.checker, value, "%s", tc.where)
	})
	t.Logf("checker covered %d of %d suite tests and agreed on all", covered, total)
	require.Greater(t, covered, total/2)
}

// suiteTest is one test of JSON-Schema-Test-Suite: its schema as written
// and compiled (nil when the compiler refuses it), the Checker of the
// schema (nil when it does not cover it) and the instance as written.
type suiteTest struct {
	where   string
	raw     []byte
	schema  *jsonschema.Schema
	checker *engine.Checker
	data    []byte
}

// eachSuiteTest calls fn with every draft 2020-12 test of
// JSON-Schema-Test-Suite whose schema compiles, skipping t when the suite
// is not beside the repository.
func eachSuiteTest(t *testing.T, fn func(suiteTest)) {
	root := "../../../shared/corpora/JSON-Schema-Test-Suite"
	if _, err := os.Stat(root); err != nil {
		t.Skipf("JSON-Schema-Test-Suite not found beside the repository (../shared/corpora): %v", err)
	}
	remotes := memoryLoader{}
	remoteDir := filepath.Join(root, "remotes")
	require.NoError(t, filepath.WalkDir(remoteDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(remoteDir, path)
		data, err := os.ReadFile(path)
		remotes["http://localhost:1234/"+filepath.ToSlash(rel)] = data
		return err
	}))
	var files []string
	require.NoError(t, filepath.WalkDir(filepath.Join(root, "tests", "draft2020-12"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(path) == ".json" {
			files = append(files, path)
		}
		return err
	}))
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		var groups []struct {
			Description string         `json:"description"`
			Schema      jsontext.Value `json:"schema"`
			Tests       []struct {
				Description string         `json:"description"`
				Data        jsontext.Value `json:"data"`
			} `json:"tests"`
		}
		require.NoError(t, jsonv2.Unmarshal(data, &groups))
		for _, g := range groups {
			s := compile(t, g.Schema, remotes)
			if s == nil {
				continue
			}
			checker := compileChecker(s)
			for _, tc := range g.Tests {
				fn(suiteTest{
					where:  fmt.Sprintf("%s: %s: %s", filepath.Base(file), g.Description, tc.Description),
					raw:    g.Schema,
					schema: s, checker: checker, data: tc.Data,
				})
			}
		}
	}
}

// FuzzAgreesWithValidator compares the Checker with the full validator on
// arbitrary schema and value pairs.
func FuzzAgreesWithValidator(f *testing.F) {
	seeds := [][2]string{
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":1,"maximum":9007199254740993}},"required":["a"],"additionalProperties":false}`, `{"a":9007199254740993}`},
		{`{"type":"array","items":{"enum":["x",1.0,null,{"k":[1]}]},"uniqueItems":true}`, `["x",1,null]`},
		{`{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}],"$defs":{"n":{"type":"number","multipleOf":0.5}}}`, `1.5`},
		{`{"type":"string","minLength":2,"maxLength":3,"pattern":"^a","format":"date"}`, `"2020-01-01"`},
		{`{"prefixItems":[{"const":1}],"items":false,"contains":{"type":"integer"},"minContains":1,"maxContains":2}`, `[1,2]`},
		{`{"if":{"required":["a"]},"then":{"required":["b"]},"else":{"not":{"type":"object"}},"dependentRequired":{"x":["y"]},"propertyNames":{"maxLength":2}}`, `{"a":1,"b":2}`},
		{`{"oneOf":[{"type":"integer"},{"exclusiveMinimum":0}],"exclusiveMaximum":10}`, `5`},
		{`{"minProperties":1,"maxProperties":2,"patternProperties":{"^x":{"type":"boolean"}},"additionalProperties":{"type":"string"}}`, `{"x1":true,"y":"s"}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, schema, value string) {
		s := compile(t, []byte(schema), nil)
		if s == nil {
			return
		}
		checker := compileChecker(s)
		if checker == nil {
			return
		}
		v, err := strictjson.Parse([]byte(value))
		if err != nil {
			return
		}
		agree(t, s, checker, v, "schema %s value %s", schema, value)
	})
}

// compileChecker returns the check of a schema the validator compiled, or
// nil where the check does not cover it.
func compileChecker(s *jsonschema.Schema) *engine.Checker {
	return engine.FromValidator(s).Checker()
}
