package engine_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// suite is JSON-Schema-Test-Suite, beside the repository.
const suite = "../../../shared/corpora/JSON-Schema-Test-Suite"

func validRegex(s string) bool {
	_, err := regex.Engine(s)
	return err == nil
}

// metaSchema is the draft 2020-12 meta-schema as the validator applies it
// to a document it compiles: "format" asserted, patterns checked by the
// engine schemas are compiled with.
func metaSchema(tb testing.TB) *jsonschema.Schema {
	tb.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	c.UseRegexpEngine(regex.Engine)
	meta, err := c.Compile(engine.Draft2020)
	require.NoError(tb, err)
	return meta
}

// agreesWithMeta requires that Conforms accepts only what the meta-schema accepts,
// and reports whether it accepted.
func agreesWithMeta(t testing.TB, meta *jsonschema.Schema, doc any, where string) bool {
	t.Helper()
	if !engine.Conforms(doc, validRegex) {
		return false
	}
	require.NoError(t, meta.Validate(doc), "Conforms accepted %s, which the meta-schema refuses", where)
	return true
}

// suiteDocuments returns every schema of the suite and every value its
// tests validate (among which the documents the meta-schema's own tests
// check), as text, each with where it comes from. It skips tb when the
// suite is not there.
func suiteDocuments(tb testing.TB) (docs []jsontext.Value, where []string) {
	tb.Helper()
	if _, err := os.Stat(suite); err != nil {
		tb.Skipf("JSON-Schema-Test-Suite not found beside the repository (../shared/corpora): %v", err)
	}
	add := func(raw jsontext.Value, at string) {
		if len(raw) > 0 {
			docs, where = append(docs, raw), append(where, at)
		}
	}
	err := filepath.WalkDir(suite, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(path, "remotes") {
			add(data, path)
			return nil
		}
		var groups []struct {
			Description string         `json:"description"`
			Schema      jsontext.Value `json:"schema"`
			Tests       []struct {
				Description string         `json:"description"`
				Data        jsontext.Value `json:"data"`
			} `json:"tests"`
		}
		if err := jsonv2.Unmarshal(data, &groups); err != nil {
			return nil // not a file of test groups
		}
		for _, g := range groups {
			add(g.Schema, path+": "+g.Description)
			for _, c := range g.Tests {
				add(c.Data, path+": "+g.Description+": "+c.Description)
			}
		}
		return nil
	})
	require.NoError(tb, err)
	return docs, where
}

// TestConformsImpliesMetaSchema checks the one-sided promise over every
// schema and test value of JSON-Schema-Test-Suite: what Conforms accepts,
// the meta-schema accepts. It also requires the check to accept most of
// the suite's schemas, so that the promise is not kept by refusing
// everything.
func TestConformsImpliesMetaSchema(t *testing.T) {
	meta := metaSchema(t)
	docs, where := suiteDocuments(t)
	accepted, metaAccepted := 0, 0
	for i, raw := range docs {
		doc, err := strictjson.Parse(raw)
		if err != nil {
			continue
		}
		if agreesWithMeta(t, meta, doc, where[i]) {
			accepted++
		}
		if meta.Validate(doc) == nil {
			metaAccepted++
		}
	}
	t.Logf("%d documents: the meta-schema accepts %d, Conforms %d", len(docs), metaAccepted, accepted)
	require.Greater(t, len(docs), 2500)
	require.Greater(t, accepted, metaAccepted/2)
}

func TestConforms(t *testing.T) {
	meta := metaSchema(t)
	for _, c := range []struct {
		doc  string
		want bool
		why  string
	}{
		{`true`, true, "a boolean schema"},
		{`{}`, true, "the empty schema"},
		{`"object"`, false, "a string is no schema"},
		{`{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"required":["a"],"additionalProperties":false}`, true, "a derived schema"},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"string"}`, true, "the 2020-12 draft named"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#"}`, false, "another draft"},
		{`{"$id":"https://example.invalid/a"}`, false, "$id changes the base URL"},
		{`{"$vocabulary":{}}`, false, "$vocabulary is not understood"},
		{`{"$ref":"#/$defs/a","$defs":{"a":{"type":"string"}}}`, true, "a same-document reference"},
		{`{"$ref":"other.json"}`, false, "a relative reference depends on the base"},
		{`{"$ref":"#/a b"}`, false, "a space is no fragment character"},
		{`{"$ref":"#%zz"}`, false, "a broken percent-escape"},
		{`{"$anchor":"x-1.y"}`, true, "an anchor"},
		{`{"$anchor":"1x"}`, false, "an anchor starts with a letter or _"},
		{`{"$recursiveAnchor":true}`, false, "the 2020-12 meta-schema wants a string"},
		{`{"type":["string","string"]}`, false, "type names must be unique"},
		{`{"type":[]}`, false, "type needs at least one name"},
		{`{"type":"text"}`, false, "not a type name"},
		{`{"required":["a","a"]}`, false, "required names must be unique"},
		{`{"minLength":-1}`, false, "a negative length"},
		{`{"minLength":1.5}`, false, "a fractional length"},
		{`{"multipleOf":0}`, false, "multipleOf must be above zero"},
		{`{"multipleOf":0.5}`, true, "a fractional multipleOf"},
		{`{"pattern":"("}`, false, "not a regular expression"},
		{`{"patternProperties":{"(":true}}`, false, "a property pattern that is no regular expression"},
		{`{"allOf":[]}`, false, "allOf needs a subschema"},
		{`{"items":1}`, false, "a number is no schema"},
		{`{"dependencies":{"a":["b"],"c":{"type":"string"}}}`, true, "the deprecated dependencies, both forms"},
		{`{"dependencies":{"a":[1]}}`, false, "dependencies of non-strings"},
		{`{"definitions":{"a":3}}`, false, "a deprecated definition that is no schema"},
		{`{"x-vendor":{"$id":"https://example.invalid/"}}`, false, "an unknown keyword holding $id"},
		{`{"const":{"$ref":"elsewhere.json"}}`, false, "a const holding a reference outside"},
		{`{"enum":[1,{"a":2}],"default":{"b":3}}`, true, "plain values"},
		{`{"format":5}`, false, "format is a string"},
	} {
		tree, err := strictjson.Parse([]byte(c.doc))
		require.NoError(t, err, c.doc)
		require.Equal(t, c.want, engine.Conforms(tree, validRegex), "%s: %s", c.why, c.doc)
		agreesWithMeta(t, meta, tree, c.doc)
	}
}

// FuzzConforms mutates schema documents and requires that whatever
// Conforms accepts, the meta-schema accepts too.
func FuzzConforms(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","minimum":1},"b":{"type":"array","items":{"type":"string","maxLength":8}}},"required":["a"],"additionalProperties":false}`,
		`{"$defs":{"n":{"anyOf":[{"type":"null"},{"$ref":"#"}]}},"$ref":"#/$defs/n","$anchor":"top"}`,
		`{"patternProperties":{"^x-":{"type":"string","pattern":"^[a-z]+$"}},"dependentRequired":{"a":["b"]},"multipleOf":0.5}`,
		`{"dependencies":{"a":["b"]},"definitions":{"d":true},"$recursiveAnchor":"r","$dynamicRef":"#r"}`,
		`{"if":{"const":1},"then":{"enum":[1,2]},"else":false,"prefixItems":[true],"unevaluatedItems":false}`,
	} {
		f.Add([]byte(seed))
	}
	if _, err := os.Stat(suite); err == nil {
		docs, _ := suiteDocuments(f)
		for _, doc := range docs {
			f.Add([]byte(doc))
		}
	}
	meta := metaSchema(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := strictjson.Parse(data)
		if err != nil {
			return
		}
		agreesWithMeta(t, meta, tree, string(data))
	})
}
