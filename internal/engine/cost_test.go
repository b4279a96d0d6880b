package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/regex"
)

const base = "https://schema.invalid/schema.json"

// compile compiles one draft 2020-12 document held in memory.
func compile(t *testing.T, doc string) *jsonschema.Schema {
	t.Helper()
	var tree any
	require.NoError(t, json.Unmarshal([]byte(doc), &tree))
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseRegexpEngine(regex.Engine)
	require.NoError(t, c.AddResource(base, tree))
	s, err := c.Compile(base)
	require.NoError(t, err)
	return s
}

// doubling is a definition whose items and contains both refer back to
// it: every level of an array doubles what its items meet.
const doubling = `{"$defs":{"n":{"items":{"$ref":"#/$defs/n"},"contains":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}`

func TestAnalyzeBounds(t *testing.T) {
	tests := []struct {
		name            string
		schema          string
		limit, maxDepth int
		visits, located int
	}{
		{"true", `true`, 10, 8, 1, 1},
		{"empty object", `{}`, 10, 8, 1, 1},
		{"allOf adds its branches", `{"allOf":[{},{}]}`, 10, 8, 3, 3},
		{"two references to one definition count twice",
			`{"$defs":{"a":{}},"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]}`, 10, 8, 5, 5},
		{"a reference cycle on one location counts once", `{"$ref":"#"}`, 10, 8, 2, 2},
		{"items and contains add up on an item",
			`{"$defs":{"a":{"allOf":[{},{}]}},"items":{"$ref":"#/$defs/a"},"contains":{"$ref":"#/$defs/a"}}`, 10, 8, 4, 8},
		{"properties and patternProperties add up on a member",
			`{"properties":{"ab":{"allOf":[{}]}},"patternProperties":{"^a":{"allOf":[{}]}}}`, 10, 8, 2, 4},
		{"prefix items and contains add up on an item",
			`{"prefixItems":[{"allOf":[{}]}],"contains":{"allOf":[{},{}]}}`, 10, 8, 3, 5},
		{"counts multiply level after level, saturating", doubling, 10, 8, 2, 11},
		{"the walk stops at the nesting bound", doubling, 10, 2, 2, 8},
		{"a count past the limit saturates, Located is not counted",
			`{"$defs":{"a":{},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]},"c":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]}},"$ref":"#/$defs/c"}`,
			10, 8, 11, 0},
		{"the same schema under a higher limit",
			`{"$defs":{"a":{},"b":{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}]},"c":{"anyOf":[{"$ref":"#/$defs/b"},{"$ref":"#/$defs/b"}]}},"$ref":"#/$defs/c"}`,
			100, 8, 14, 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := FromValidator(compile(t, tt.schema)).Analyze(tt.limit, tt.maxDepth)
			require.Equal(t, tt.visits, a.Visits, "Visits")
			require.Equal(t, tt.located, a.Located, "Located")
			require.True(t, a.Bounded)
		})
	}
}

func TestProgramListsEverySubschemaOnce(t *testing.T) {
	root := compile(t, `{"$defs":{"a":{"type":"string","pattern":"^a"},"unused":{}},"properties":{"x":{"$ref":"#/$defs/a"},"y":{"$ref":"#/$defs/a"}},"items":{"$ref":"#"}}`)
	p := FromValidator(root)
	require.Equal(t, p.root, p.nodes[0], "the root comes first")
	seen := map[*node]bool{}
	locations := []string{}
	for _, n := range p.nodes {
		require.False(t, seen[n], "listed twice: %s", n.location)
		seen[n] = true
		locations = append(locations, strings.TrimPrefix(n.location, base))
	}
	require.ElementsMatch(t, []string{"#", "#/properties/x", "#/properties/y", "#/$defs/a", "#/items"}, locations,
		"a definition nothing reaches is not listed")
	a := p.Analyze(1000, 128)
	require.Len(t, a.Patterns, 1, "a pattern is listed once, however many reach it")
	require.Equal(t, base+"#/$defs/a", a.Patterns[0].Location)
}

// TestAnalyzeGivesUpPastMaxWork: 2200 members each reach 998
// alternatives; every member is within the limit, but counting them all
// would take more than MaxWork steps. A thousand of them are counted.
func TestAnalyzeGivesUpPastMaxWork(t *testing.T) {
	alternatives := strings.TrimSuffix(strings.Repeat(`{"type":"string"},`, 997), ",")
	schema := func(n int) string {
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprintf(`"m%d":{"$ref":"#/$defs/many"}`, i)
		}
		return `{"properties":{` + strings.Join(members, ",") + `},"$defs":{"many":{"anyOf":[` + alternatives + `]}}}`
	}
	a := FromValidator(compile(t, schema(2200))).Analyze(1000, 128)
	require.False(t, a.Bounded)
	require.Equal(t, 999, a.Visits)

	a = FromValidator(compile(t, schema(1000))).Analyze(1000, 128)
	require.True(t, a.Bounded)
	require.Equal(t, 999, a.Visits)
	require.Equal(t, 999, a.Located)
}

func TestChildMultisets(t *testing.T) {
	root := compile(t, `{"properties":{"a":{}},"patternProperties":{"^a":{}},"additionalProperties":{},"propertyNames":{},"prefixItems":[{}],"items":{}}`)
	p := FromValidator(root)
	kids := childMultisets(multiset{p.root: 3}, 5)
	byLocation := func(m multiset) map[string]int {
		out := map[string]int{}
		for s, n := range m {
			out[strings.TrimPrefix(s.location, base+"#")] = n
		}
		return out
	}
	got := make([]map[string]int, len(kids))
	for i, m := range kids {
		got[i] = byLocation(m)
	}
	require.Equal(t, []map[string]int{
		{"/properties/a": 3, "/patternProperties/%5Ea": 3},         // member "a"
		{"/patternProperties/%5Ea": 3, "/additionalProperties": 3}, // any other member
		{"/propertyNames": 3}, // the names themselves
		{"/prefixItems/0": 3}, // item 0
		{"/items": 3},         // later items
	}, got)

	saturated := childMultisets(multiset{p.root: 7}, 5)
	require.Equal(t, 5, saturated[0][p.root.properties["a"]], "counts saturate")
}

// TestOneEachAgreesWithTheWalk compiles every schema of
// JSON-Schema-Test-Suite, and a few of the derived kind, and requires the
// shortcut for schemas oneEach accepts to give what the walk gives.
func TestOneEachAgreesWithTheWalk(t *testing.T) {
	docs := []string{
		`true`, `{}`, `{"type":"string"}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"b":{"type":"integer"}},"additionalProperties":false}},"c":{"enum":[1,2]}},"required":["a"],"additionalProperties":{"type":"string"},"propertyNames":{"maxLength":3}}`,
		`{"prefixItems":[{"type":"string"},{"type":"integer"}],"items":{"type":"boolean"}}`,
		`{"properties":{"a":{}},"patternProperties":{"^a":{}}}`,
		`{"items":{},"contains":{}}`,
	}
	root := "../../../shared/corpora/JSON-Schema-Test-Suite/tests/draft2020-12"
	files, _ := filepath.Glob(filepath.Join(root, "*.json"))
	if len(files) == 0 {
		t.Skip("JSON-Schema-Test-Suite not found beside the repository (../shared/corpora)")
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		require.NoError(t, err)
		var groups []struct {
			Schema json.RawMessage `json:"schema"`
		}
		require.NoError(t, json.Unmarshal(data, &groups), path)
		for _, g := range groups {
			docs = append(docs, string(g.Schema))
		}
	}
	accepted := 0
	for _, doc := range docs {
		var tree any
		require.NoError(t, json.Unmarshal([]byte(doc), &tree))
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseRegexpEngine(regex.Engine)
		if c.AddResource(base, tree) != nil {
			continue
		}
		s, err := c.Compile(base)
		if err != nil {
			continue
		}
		for _, limit := range []int{0, 1, 1000} {
			p := FromValidator(s)
			fast, walked := p.analyze(limit, 128, true), p.analyze(limit, 128, false)
			require.Equal(t, [3]any{walked.Visits, walked.Located, walked.Bounded}, [3]any{fast.Visits, fast.Located, fast.Bounded}, "%s, limit %d", doc, limit)
			require.Equal(t, walked.Patterns, fast.Patterns, "%s: the same patterns in the same order", doc)
		}
		if oneEach(FromValidator(s).nodes) {
			accepted++
		}
	}
	require.Greater(t, accepted, 50)
}
