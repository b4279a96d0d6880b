package strictschema_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

// corpusFile is one file of testdata/corpus: the tools one published
// package advertises, their input schemas as the package emitted them.
type corpusFile struct {
	Source  string `json:"source"`
	Version string `json:"version"`
	License string `json:"license"`
	Tools   []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

// corpusTool is one tool of the corpus.
type corpusTool struct {
	Source, Name string
	Schema       []byte
}

func loadCorpus(t testing.TB) []corpusTool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.json"))
	require.NoError(t, err)
	var out []corpusTool
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var cf corpusFile
		require.NoError(t, json.Unmarshal(raw, &cf), f)
		require.NotEmpty(t, cf.Source, f)
		for _, tl := range cf.Tools {
			out = append(out, corpusTool{cf.Source, tl.Name, tl.InputSchema})
		}
	}
	return out
}

// TestCorpusSources holds the corpus to its table: at least 100 tools, each
// file listed in SOURCES.md with its version, licence and tool count, and
// only permissive licences.
func TestCorpusSources(t *testing.T) {
	table, err := os.ReadFile(filepath.Join("testdata", "corpus", "SOURCES.md"))
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.json"))
	require.NoError(t, err)
	total := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var cf corpusFile
		require.NoError(t, json.Unmarshal(raw, &cf), f)
		require.Contains(t, []string{"MIT", "Apache-2.0", "Apache-2.0 AND MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC"}, cf.License, f)
		row := fmt.Sprintf("| `%s` | %s | %s |", cf.Source, cf.Version, cf.License)
		require.Contains(t, string(table), row, "SOURCES.md lacks the row of %s", f)
		line := string(table)[strings.Index(string(table), row):]
		line = line[:strings.IndexByte(line, '\n')]
		require.True(t, strings.HasSuffix(line, "| "+strconv.Itoa(len(cf.Tools))+" |"), "%s: SOURCES.md says %q, the file has %d tools", f, line, len(cf.Tools))
		names := map[string]bool{}
		for _, tl := range cf.Tools {
			require.False(t, names[tl.Name], "%s: tool %s twice", f, tl.Name)
			names[tl.Name] = true
			_, err := tool.ParseSchema(tl.InputSchema)
			require.NoError(t, err, "%s: %s", f, tl.Name)
		}
		total += len(cf.Tools)
	}
	require.GreaterOrEqual(t, total, 100)
}

// propertySchema is one schema the property runs on.
type propertySchema struct {
	name   string
	schema []byte
	corpus bool
}

// propertySchemas are the corpus, the schemas NewFunc derives and the
// hand-written ones, recursion included (it blocks where the rules refuse
// it).
func propertySchemas(t *testing.T) []propertySchema {
	var out []propertySchema
	for _, c := range loadCorpus(t) {
		out = append(out, propertySchema{c.Source + "/" + c.Name, c.Schema, true})
	}
	for name, s := range map[string]string{
		"derived order":    derived[orderInput](t),
		"derived flat":     derived[flat](t),
		"derived settings": derived[settings](t),
		"recursive":        recursive,
	} {
		out = append(out, propertySchema{name, []byte(s), false})
	}
	for name, s := range handWritten {
		out = append(out, propertySchema{name, []byte(s), false})
	}
	for name, s := range edgeSchemas {
		out = append(out, propertySchema{name, []byte(s), false})
	}
	slices.SortFunc(out, func(a, b propertySchema) int { return strings.Compare(a.name, b.name) })
	return out
}

// edgeSchemas are the shapes the findings of the strict-lowering review
// named, and the keywords real schemas use that the other schemas lack;
// some lower, some block, and the property holds either way.
var edgeSchemas = map[string]string{
	"edge: required names an undeclared member":    `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
	"edge: integer with a string enum":             `{"type":"object","properties":{"n":{"type":"integer","enum":["1","2"]}},"required":["n"]}`,
	"edge: optional member admitting null":         `{"type":"object","properties":{"manager":{"type":["string","null"]},"team":{"anyOf":[{"type":"string"},{"type":"null"}]},"name":{"type":"string"}},"required":["name"]}`,
	"edge: no arguments":                           `{"type":"object","properties":{}}`,
	"edge: no arguments, draft-07":                 `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
	"edge: draft-07 tuple":                         `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"type":"array","items":[{"type":"number"},{"type":"number"}]}}}`,
	"edge: draft-07 keyword beside $ref":           `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"p":{"$ref":"#/definitions/s","maxLength":3}},"definitions":{"s":{"type":"string"}}}`,
	"edge: allOf":                                  `{"type":"object","properties":{"a":{"allOf":[{"type":"string"},{"minLength":1}]}}}`,
	"edge: allOf of objects":                       `{"type":"object","properties":{"p":{"type":"object","allOf":[{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]},{"type":"object","properties":{"b":{"type":"integer","minimum":0}}}]}},"required":["p"]}`,
	"edge: allOf of strings":                       `{"type":"object","properties":{"a":{"type":"string","allOf":[{"type":"string","maxLength":5},{"type":"string","pattern":"^x"}]}},"required":["a"]}`,
	"edge: overlapping oneOf":                      `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"type":"string","minLength":3}]}}}`,
	"edge: anyOf of objects with optional members": `{"type":"object","properties":{"a":{"anyOf":[{"type":"object","properties":{"x":{"type":"string"}}},{"type":"object","properties":{"y":{"type":"integer"}}}]}},"required":["a"]}`,
	"edge: numbers":                                `{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0,"maximum":1,"multipleOf":0.25},"i":{"type":"integer","minimum":-3,"exclusiveMaximum":3}},"required":["n"]}`,
	"edge: pattern, lengths and items":             `{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{2,3}-[0-9]+$"},"word":{"type":"string","minLength":2,"maxLength":4},"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":2,"maxItems":3,"uniqueItems":true}},"required":["code","tags"]}`,
	"edge: formats":                                `{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"site":{"type":"string","format":"uri"},"id":{"type":"string","format":"uuid"},"mail":{"type":"string","format":"email"}},"required":["at"]}`,
}

type settings struct {
	Mode    string            `json:"mode" jsonschema:"enum=auto,enum=manual"`
	Retries *uint16           `json:"retries,omitempty" jsonschema:"maximum=10"`
	Labels  map[string]string `json:"labels,omitempty"`
	Paths   []string          `json:"paths" jsonschema:"minItems=1,uniqueItems=true"`
	Ratio   float64           `json:"ratio,omitempty" jsonschema:"exclusiveMinimum=0,maximum=1"`
}

var providerRules = []struct {
	name  string
	rules strictschema.Rules
}{{"OpenAI", strictschema.OpenAI}, {"Anthropic", strictschema.Anthropic}}

// knownDisagreements are the (provider, schema) pairs, keyed
// "Provider/schema name", on which the property fails for a lowering
// defect not fixed yet, each with the defect. TestLoweringProperty checks
// that each still fails, so that a fix shows up and the entry is removed.
// None is known today.
var knownDisagreements = map[string]string{}

// TestLoweringProperty is the lowering's contract, checked on every schema
// of propertySchemas for each provider's rules: either the schema is
// blocked, each finding pointing into the canonical schema and naming the
// rule, or
//   - for every generated argument object x in the lowered shape (a value
//     of the canonical schema, valid or a near miss, with a null added for
//     each absent member made nullable), Checked accepts x exactly when the
//     canonical schema accepts Undo.Apply(x), and Wire accepts what Checked
//     does, with one narrowing: members an object's schema does not
//     declare, which the lowered schema refuses (it closes every object)
//     and the canonical one may admit, so the canonical schema is taken
//     with its objects closed the same way;
//   - a value valid under the canonical schema so closed can be sent
//     (Checked accepts it lifted) and comes back from the round trip
//     unchanged, but for explicit nulls of optional members, which are cut
//     only when a relaxed finding says so;
//   - every value Checked accepts, generated from the lowered schema and
//     near misses of those, is valid under the canonical schema after Undo;
//   - the lowered schema admits some value.
func TestLoweringProperty(t *testing.T) {
	for _, p := range providerRules {
		for _, s := range propertySchemas(t) {
			key := p.name + "/" + s.name
			why, known := knownDisagreements[key]
			t.Run(key, func(t *testing.T) {
				t.Parallel()
				msg := checkLowering(s.schema, p.rules, samples(60))
				if known {
					require.NotEmpty(t, msg, "%s passes now (%s): remove it from knownDisagreements", key, why)
					return
				}
				if msg != "" {
					t.Fatal(msg)
				}
			})
		}
	}
}

// samples is n, or a quarter of it in -short mode, where the Go 1.27 run
// of .ci/run repeats the tests.
func samples(n int) int {
	if testing.Short() {
		return n / 4
	}
	return n
}

// checkLowering checks the property on one schema with n generated values
// each way; it returns what broke, or "".
func checkLowering(src []byte, rules strictschema.Rules, n int) string {
	res := strictschema.Lower(src, rules)
	var canonDoc any
	if err := json.Unmarshal(src, &canonDoc); err != nil {
		return err.Error()
	}
	if len(res.Blocked) > 0 {
		if res.Wire() != nil || strictschema.Checked(src, rules) != nil {
			return "blocked, yet a lowered schema comes back"
		}
		for _, f := range res.Blocked {
			if f.Rule == "" {
				return "a finding at " + f.Pointer + " names no rule"
			}
			if _, ok := pointer(canonDoc, f.Pointer); !ok {
				return fmt.Sprintf("the finding %q points at %s, which is not in the canonical schema", f.Rule, f.Pointer)
			}
		}
		return ""
	}
	canonical, err := tool.ParseSchema(src)
	if err != nil {
		return "canonical: " + err.Error()
	}
	checkedSrc := strictschema.Checked(src, rules)
	checked, err := tool.ParseSchema(checkedSrc)
	if err != nil {
		return "checked: " + err.Error()
	}
	wire, err := tool.ParseSchema(res.Wire())
	if err != nil {
		return "wire: " + err.Error()
	}
	closedSrc := mustJSON(closeObjects(canonDoc))
	closed, err := tool.ParseSchema(closedSrc)
	if err != nil {
		return "closed: " + err.Error()
	}
	var loweredDoc any
	if err := json.Unmarshal(checkedSrc, &loweredDoc); err != nil {
		return err.Error()
	}
	nullCut := slices.ContainsFunc(res.Relaxed, func(f strictschema.Finding) bool { return strings.Contains(f.Rule, "explicit null") })
	h := fnv.New64a()
	h.Write(src)
	rng := rand.New(rand.NewPCG(h.Sum64(), 25))
	valid := func(s tool.Schema, v []byte) bool { return s.Validate(v) == nil }
	report := func(what string, v []byte) string {
		return fmt.Sprintf("%s\ninstance: %s\ncanonical: %s\nchecked:   %s", what, v, src, checkedSrc)
	}
	admitted, roundTrips := 0, 0
	for range n {
		v := generate(rng, canonDoc, canonDoc, 0)
		for _, c := range []any{v, mutate(rng, v), mutate(rng, v)} {
			craw := mustJSON(c)
			x := mustJSON(lift(c, res.Undo))
			undone := []byte(res.Undo.Apply(string(x)))
			kv, av := valid(checked, x), valid(canonical, undone)
			// The lowered schema closes every object: a member that the
			// object's schema does not declare is refused even where the
			// canonical schema admits it, a narrowing that loses no
			// meaning. So Checked must agree exactly with the canonical
			// schema closed the same way, and never admit more than the
			// canonical schema itself.
			cl := valid(closed, undone)
			if kv != cl || kv && !av {
				return report(fmt.Sprintf("checked says %v of the lifted value %s; the canonical schema says %v of it undone, %s, and %v when its objects are closed", kv, x, av, undone, cl), craw)
			}
			if kv && !valid(wire, x) {
				return report("wire refuses what checked accepts: "+string(x), craw)
			}
			if kv {
				admitted++
			}
			if !valid(closed, craw) {
				continue
			}
			roundTrips++
			if !kv {
				return report("a valid canonical value cannot be sent: checked refuses "+string(x), craw)
			}
			if same(undone, craw) {
				continue
			}
			if !nullCut || !same(undone, mustJSON(undoReference(c, res.Undo))) {
				return report("the round trip changed the value to "+string(undone), craw)
			}
		}
	}
	for range n {
		w := generate(rng, loweredDoc, loweredDoc, 0)
		for _, c := range []any{w, mutate(rng, w), mutate(rng, w)} {
			x := mustJSON(c)
			if !valid(checked, x) {
				continue
			}
			admitted++
			if !valid(wire, x) {
				return report("wire refuses what checked accepts", x)
			}
			if undone := res.Undo.Apply(string(x)); !valid(canonical, []byte(undone)) {
				return report("checked accepts it, the canonical schema refuses it undone: "+undone, x)
			}
		}
	}
	if admitted == 0 {
		return report("no generated value is valid under the lowered schema", nil)
	}
	// Not the lowering's fault, but without valid canonical values the
	// round trip above checked nothing.
	if roundTrips < n/4 {
		return report(fmt.Sprintf("only %d of %d generated values are valid under the canonical schema: the generator misses what it asks for", roundTrips, 3*n), nil)
	}
	return ""
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// same reports whether two JSON texts hold equal values.
func same(a, b []byte) bool {
	var x, y any
	dx, dy := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	dx.UseNumber()
	dy.UseNumber()
	if dx.Decode(&x) != nil || dy.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// pointer resolves a JSON pointer in a decoded document.
func pointer(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, p := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		p = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[p]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// closeObjects returns a copy of a decoded schema with additionalProperties
// false on every object schema that says nothing of other members, as the
// lowering closes them. The object branches of an allOf stay open; their
// node is closed over the members all of them declare, as the lowering
// merges them.
func closeObjects(s any) any { return closeNode(s, true) }

func closeNode(s any, close bool) any {
	switch x := s.(type) {
	case map[string]any:
		out := make(map[string]any, len(x)+1)
		for k, v := range x {
			switch k {
			case "properties", "$defs", "definitions":
				if m, ok := v.(map[string]any); ok {
					sub := make(map[string]any, len(m))
					for name, e := range m {
						sub[name] = closeNode(e, true)
					}
					out[k] = sub
					continue
				}
			case "allOf":
				if br, ok := v.([]any); ok {
					sub := make([]any, len(br))
					for i, e := range br {
						sub[i] = closeNode(e, false)
					}
					out[k] = sub
					continue
				}
			case "items", "additionalProperties", "anyOf", "oneOf":
				out[k] = closeNode(v, true)
				continue
			}
			out[k] = v
		}
		names := map[string]any{}
		isObject := hasTypeObject(x["type"])
		for _, b := range append([]any{x}, sliceOf(x["allOf"])...) {
			bm, _ := b.(map[string]any)
			if p, ok := bm["properties"].(map[string]any); ok {
				isObject = true
				for name := range p {
					names[name] = true
				}
			}
		}
		if _, hasAP := x["additionalProperties"]; close && isObject && !hasAP {
			if _, ok := x["allOf"]; ok {
				// Declare the branches' members here, so that closing
				// this node refuses only the others.
				props, _ := out["properties"].(map[string]any)
				merged := maps.Clone(props)
				if merged == nil {
					merged = map[string]any{}
				}
				for name := range names {
					if _, ok := merged[name]; !ok {
						merged[name] = true
					}
				}
				out["properties"] = merged
			}
			out["additionalProperties"] = false
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = closeNode(e, true)
		}
		return out
	}
	return s
}

func sliceOf(v any) []any {
	s, _ := v.([]any)
	return s
}

func hasTypeObject(t any) bool {
	switch tt := t.(type) {
	case string:
		return tt == "object"
	case []any:
		return slices.Contains(tt, any("object"))
	}
	return false
}

// mutate returns a near miss of v: a copy with one place changed the way
// a model gets arguments wrong (a member added, dropped or null, a value of
// another kind or out of range, an array grown or emptied).
func mutate(rng *rand.Rand, v any) any {
	c := copyValue(v)
	type place struct {
		get func() any
		set func(any)
	}
	var places []place
	var walk func(get func() any, set func(any))
	walk = func(get func() any, set func(any)) {
		places = append(places, place{get, set})
		switch x := get().(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				walk(func() any { return x[k] }, func(n any) { x[k] = n })
			}
		case []any:
			for i := range x {
				walk(func() any { return x[i] }, func(n any) { x[i] = n })
			}
		}
	}
	walk(func() any { return c }, func(n any) { c = n })
	p := places[rng.IntN(len(places))]
	others := []any{nil, true, 0.0, -1.0, 1e9, 0.5, "", "zz", strings.Repeat("z", 300), []any{}, map[string]any{}}
	switch x := p.get().(type) {
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		switch op := rng.IntN(3); {
		case op == 0 || len(keys) == 0:
			x["zz_extra"] = "x"
		case op == 1:
			delete(x, keys[rng.IntN(len(keys))])
		default:
			x[keys[rng.IntN(len(keys))]] = nil
		}
	case []any:
		if rng.IntN(2) == 0 && len(x) > 0 {
			p.set(append(x, copyValue(x[0])))
		} else if len(x) > 0 {
			p.set([]any{})
		} else {
			p.set([]any{others[rng.IntN(len(others))]})
		}
	default:
		p.set(others[rng.IntN(len(others))])
	}
	return c
}

func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValue(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValue(e)
		}
		return out
	}
	return v
}

// quoted matches the quoted names inside a finding's rule, so that one
// rule reads the same for every schema.
var quoted = regexp.MustCompile(`"(\\.|[^"\\])*"`)

// TestCorpusSummary keeps testdata/corpus/summary.md, the table the README
// quotes, equal to what the lowering makes of the corpus today: per
// provider, how many tools go out strict and, for the rest, which rules
// block them. Run with -update to rewrite it.
func TestCorpusSummary(t *testing.T) {
	tools := loadCorpus(t)
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Written by `go test -run TestCorpusSummary -update` in adapters/internal/strictschema. -->\n\n")
	fmt.Fprintf(&b, "%d tools in the corpus.\n", len(tools))
	for _, p := range providerRules {
		strict := 0
		blockedBy := map[string]int{}
		relaxedBy := map[string]int{}
		for _, c := range tools {
			res := strictschema.Lower(c.Schema, p.rules)
			if len(res.Blocked) == 0 {
				strict++
				kinds := map[string]bool{}
				for _, f := range res.Relaxed {
					kind, _, _ := strings.Cut(f.Rule, " is not enforced")
					if strings.Contains(f.Rule, "explicit null") {
						kind = "an explicit null of an optional member (taken as not given)"
					}
					kinds[kind] = true
				}
				for k := range kinds {
					relaxedBy[k]++
				}
				continue
			}
			rules := map[string]bool{}
			for _, f := range res.Blocked {
				rules[quoted.ReplaceAllString(f.Rule, `"…"`)] = true
			}
			for r := range rules {
				blockedBy[r]++
			}
		}
		fmt.Fprintf(&b, "\n## %s\n\n%d of %d tools go out strict. The rest are sent non-strict, blocked by (a tool may count under several rules):\n\n", p.name, strict, len(tools))
		fmt.Fprintf(&b, "| tools | rule |\n|---:|---|\n")
		rules := sortedByCount(blockedBy)
		for _, r := range rules {
			fmt.Fprintf(&b, "| %d | %s |\n", blockedBy[r], strings.ReplaceAll(r, "|", `\|`))
		}
		fmt.Fprintf(&b, "\nOf the strict tools, these have a constraint the provider does not enforce, moved into the description and still enforced by Prepare:\n\n| tools | relaxed |\n|---:|---|\n")
		for _, r := range sortedByCount(relaxedBy) {
			fmt.Fprintf(&b, "| %d | %s |\n", relaxedBy[r], r)
		}
	}
	path := filepath.Join("testdata", "corpus", "summary.md")
	if *adaptertest.Update {
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(), "the lowering now treats the corpus differently: run `go test -run TestCorpusSummary -update` in adapters/internal/strictschema and update the README's figures")
}

// sortedByCount returns the keys of m, the largest count first.
func sortedByCount(m map[string]int) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.SortFunc(keys, func(a, b string) int {
		if m[a] != m[b] {
			return m[b] - m[a]
		}
		return strings.Compare(a, b)
	})
	return keys
}
