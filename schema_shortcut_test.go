package tool_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// sameParse requires ParseSchema to give raw the same outcome with the
// meta-schema shortcut as without it: the same error text, or schemas with
// the same document that give every value the same verdict and message.
// It reports whether ParseSchema took the shortcut.
func sameParse(t *testing.T, raw []byte, values []jsontext.Value, where string) bool {
	t.Helper()
	fast, fastErr := tool.ParseSchema(raw)
	slow, slowErr := tool.ParseSchemaWithoutShortcut(raw)
	if slowErr != nil || fastErr != nil {
		require.Error(t, fastErr, where)
		require.Error(t, slowErr, where)
		require.Equal(t, slowErr.Error(), fastErr.Error(), where)
		return false
	}
	require.Equal(t, string(slow.JSON()), string(fast.JSON()), where)
	for i, v := range values {
		want, got := slow.Validate(v), fast.Validate(v)
		if want == nil {
			require.NoError(t, got, "%s: value %d", where, i)
			continue
		}
		require.Error(t, got, "%s: value %d", where, i)
		require.Equal(t, want.Error(), got.Error(), "%s: value %d", where, i)
	}
	return tool.TookShortcut(fast)
}

// TestSchemaShortcutSuite compiles every schema of JSON-Schema-Test-Suite
// with and without the meta-schema shortcut and requires the same errors,
// and the same verdicts and messages for every value the suite tests.
func TestSchemaShortcutSuite(t *testing.T) {
	schemas, shortcuts := eachSuiteDocument(t, sameParse)
	t.Logf("%d documents, %d compiled with the shortcut", schemas, shortcuts)
	require.Greater(t, shortcuts, schemas/4)
}

// eachSuiteDocument calls compare on every schema of JSON-Schema-Test-Suite
// with the values its tests give it, and on every one of those values with
// none (a value of a test of the meta-schema is a schema too). It returns
// how many documents it passed and for how many compare returned true.
func eachSuiteDocument(t *testing.T, compare func(t *testing.T, doc []byte, values []jsontext.Value, where string) bool) (documents, hits int) {
	dir := corpus(t, "JSON-Schema-Test-Suite")
	err := filepath.WalkDir(filepath.Join(dir, "tests"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var groups []suiteGroup
		require.NoError(t, jsonv2.Unmarshal(data, &groups), path)
		for _, g := range groups {
			values := make([]jsontext.Value, 0, len(g.Tests))
			for _, c := range g.Tests {
				values = append(values, c.Data)
				if compare(t, c.Data, nil, path+": "+g.Description+": data") {
					hits++
				}
				documents++
			}
			if compare(t, g.Schema, values, path+": "+g.Description) {
				hits++
			}
			documents++
		}
		return nil
	})
	require.NoError(t, err)
	return documents, hits
}

// TestSchemaShortcut holds documents at the edges of the shortcut: each
// must be refused, or admitted, exactly as without it.
func TestSchemaShortcut(t *testing.T) {
	for _, c := range []struct {
		schema   string
		shortcut bool
		values   []string
	}{
		{`{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false}`, true, []string{`{"a":1}`, `{"a":"x"}`, `{}`, `{"a":1,"b":2}`}},
		{`{"pattern":"("}`, false, nil},
		{`{"properties":{"a":{"pattern":"[a-z]("}}}`, false, nil},
		{`{"patternProperties":{"(":true}}`, false, nil},
		{`{"$defs":{"a":{"pattern":"("}}}`, false, nil},
		{`{"pattern":"^(?=a)b"}`, true, []string{`"ab"`, `"b"`}},
		{`{"format":"date-time"}`, true, []string{`"2024-01-02T03:04:05Z"`, `"yesterday"`}},
		{`{"format":"email"}`, true, []string{`"a@b.example"`, `"not an address"`}},
		{`{"format":"regex"}`, true, []string{`"^a+$"`, `"("`}},
		// A reference cycle that stays at one location is not covered by
		// the fast check, and the full validator's message about it names
		// the URL: compiled the ordinary way.
		{`{"$ref":"#"}`, false, []string{`1`, `{}`}},
		{`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, false, []string{`1`}},
		{`{"anyOf":[{"type":"null"},{"type":"object","properties":{"a":{"$ref":"#"}}}]}`, true, []string{`null`, `1`, `{"a":{"a":2}}`}},
		{`{"$ref":"#/$defs/missing"}`, false, nil},
		{`{"$ref":"#/properties/a/enum/0","properties":{"a":{"enum":[{"type":"string"}]}}}`, true, []string{`"x"`, `1`}},
		{`{"$ref":"#/properties/a/enum/0","properties":{"a":{"enum":[{"type":5}]}}}`, false, nil},
		{`{"$ref":"#node","$defs":{"n":{"$anchor":"node","type":"string"}}}`, true, []string{`"x"`, `1`}},
		{`{"$anchor":"a","$defs":{"n":{"$anchor":"a"}}}`, false, nil},
		{`{"$ref":"https://example.invalid/s.json"}`, false, nil},
		{`{"$defs":{"x":{"$ref":"other.json"}}}`, false, nil},
		{`{"minLength":-1}`, false, nil},
		{`{"multipleOf":1e-400}`, false, nil},
		{`{"x-extension":{"nested":[1,2,{"$comment":5}]},"type":"string"}`, true, []string{`"x"`, `1`}},
	} {
		sameParse(t, []byte(c.schema), valuesOf(c.values), c.schema)
		if s, err := tool.ParseSchema([]byte(c.schema)); err == nil {
			require.Equal(t, c.shortcut, tool.TookShortcut(s), c.schema)
		} else {
			require.False(t, c.shortcut, "%s: %v", c.schema, err)
		}
	}
}

func valuesOf(texts []string) []jsontext.Value {
	out := make([]jsontext.Value, len(texts))
	for i, s := range texts {
		out[i] = jsontext.Value(s)
	}
	return out
}

// schemaSeeds are schema documents that start the fuzzing of schema
// handling: object members, recursion through $defs, keywords of every
// kind of value, and a document that refers to itself.
var schemaSeeds = []string{
	`{"type":"object","properties":{"a":{"type":"integer","minimum":1},"b":{"type":"array","items":{"type":"string","maxLength":3}}},"required":["a"],"additionalProperties":false}`,
	`{"$defs":{"n":{"anyOf":[{"type":"null"},{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}]}},"$ref":"#/$defs/n"}`,
	`{"patternProperties":{"^x-":{"pattern":"^[a-z]+$"}},"dependentRequired":{"a":["b"]},"multipleOf":0.5,"format":"date-time"}`,
	`{"enum":["a",1,null],"const":"a","not":{"type":"boolean"},"if":{"minLength":2},"then":{"maxLength":4}}`,
	`{"$ref":"#"}`,
}

// FuzzSchemaShortcut mutates schema documents and requires ParseSchema to
// give each the same outcome with the meta-schema shortcut as without it,
// and the same verdict and message for a few values of every type.
func FuzzSchemaShortcut(f *testing.F) {
	for _, seed := range append(schemaSeeds, `{"pattern":"("}`) {
		f.Add([]byte(seed))
	}
	values := valuesOf([]string{`null`, `true`, `1`, `2.5`, `"ab"`, `"2024-01-02T03:04:05Z"`, `[]`, `["a",1]`, `{}`, `{"a":1,"b":["xyz"]}`, `{"next":{"next":null}}`, `{"x-a":"b"}`})
	f.Fuzz(func(t *testing.T, schema []byte) {
		sameParse(t, schema, values, string(schema))
	})
}

// TestSchemaGraphCatalogue requires ParseSchema to compile every schema of
// the large catalogue benchmark straight from its document.
func TestSchemaGraphCatalogue(t *testing.T) {
	for i, raw := range registrySchemas(200) {
		where := fmt.Sprintf("catalogue schema %d", i)
		s, err := tool.ParseSchema(raw)
		require.NoError(t, err, where)
		require.True(t, tool.Built(s), where)
	}
}
