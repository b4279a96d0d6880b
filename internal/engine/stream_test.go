package engine_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// treeVerdict is what the tree path decides about data: parsed by
// strictjson, then checked.
func treeVerdict(checker *engine.Checker, data []byte, budget int) (valid bool, values, work int) {
	tree, values, err := strictjson.ParseInterning(data, nil)
	if err != nil {
		return false, 0, 0
	}
	r := checker.Check(tree, budget)
	return r.Valid, values, r.Work
}

// streamable reports whether CheckJSON reads data against schema without
// declining: the schema has no uniqueItems, no enum or const holding an
// array or object, and no format when data holds an array or object.
// Names are matched wherever they appear, so a property of such a name
// also counts: the answer errs towards false.
func streamable(schema, data []byte) bool {
	tree, err := strictjson.Parse(schema)
	if err != nil {
		return false
	}
	containers := strings.ContainsAny(string(data), "[{")
	ok := true
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, m := range v {
				switch k {
				case "uniqueItems":
					ok = ok && m != true
				case "pattern", "patternProperties":
					ok = ok && !backtracking(m)
				case "format":
					ok = ok && !containers && m != "regex"
				case "enum", "const":
					ok = ok && !strings.ContainsAny(fmt.Sprint(m), "[{") && !holdsContainer(m)
				}
				walk(m)
			}
		case []any:
			for _, m := range v {
				walk(m)
			}
		}
	}
	walk(tree)
	return ok
}

// backtracking reports whether v, a pattern or the patterns of
// patternProperties, needs the backtracking engine.
func backtracking(v any) bool {
	var sources []string
	switch v := v.(type) {
	case string:
		sources = append(sources, v)
	case map[string]any:
		for k := range v {
			sources = append(sources, k)
		}
	}
	for _, source := range sources {
		if re, err := regex.Engine(source); err == nil && re.(*regex.Regexp).Backtracking() {
			return true
		}
	}
	return false
}

// holdsContainer reports whether v is, or is an array holding, an array or
// object.
func holdsContainer(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return true
	case []any:
		for _, m := range v {
			switch m.(type) {
			case map[string]any, []any:
				return true
			}
		}
	}
	return false
}

// agreeStream requires CheckJSON to show data valid only when the tree path
// finds it valid, with the same count of values and at least the same
// work; and to show it valid whenever the tree path does, unless the
// schema uses what it declines.
func agreeStream(t *testing.T, checker *engine.Checker, schema, data []byte, where string) bool {
	t.Helper()
	want, values, work := treeVerdict(checker, data, math.MaxInt)
	got := checker.CheckJSON(data, math.MaxInt, math.MaxInt)
	if got.Valid {
		require.True(t, want, "stream shows valid what the tree refuses: %s", where)
		require.Equal(t, values, got.Values, where)
		if !strings.Contains(string(schema), "pattern") {
			// Matches of the backtracking engine are charged the time
			// they take, so only schemas without patterns cost the same
			// every time.
			require.GreaterOrEqual(t, got.Work, work, where)
		}
	} else if want && streamable(schema, data) {
		require.Fail(t, "stream fell back on a covered schema", where)
	}
	return got.Valid
}

// TestStreamAgreesOnSuite runs every test of JSON-Schema-Test-Suite the
// Checker covers through CheckJSON and the tree path, and requires the
// same verdict.
func TestStreamAgreesOnSuite(t *testing.T) {
	shown, covered := 0, 0
	eachSuiteTest(t, func(tc suiteTest) {
		if tc.checker == nil {
			return
		}
		covered++
		if agreeStream(t, tc.checker, tc.raw, tc.data, tc.where) {
			shown++
		}
	})
	t.Logf("CheckJSON showed valid %d of %d covered suite tests", shown, covered)
	require.Greater(t, shown, covered/3)
}

// streamSchemas are schemas of the kinds tool inputs use, for the tests and
// the fuzz target of CheckJSON.
var streamSchemas = []string{
	`{"type":"object","properties":{"query":{"type":"string","minLength":1},"mode":{"type":"string","enum":["fast","exact","fuzzy"]},"limit":{"type":"integer","minimum":1,"maximum":100},"offset":{"type":"integer","minimum":0},"filter":{"$ref":"#/$defs/f"},"tags":{"type":"array","items":{"type":"string"},"maxItems":8},"include_archived":{"type":"boolean"},"min_score":{"type":"number","exclusiveMinimum":0},"nested":{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/$defs/f"}}]}},"required":["query","mode","limit","offset","filter","tags","include_archived","min_score"],"additionalProperties":false,"$defs":{"f":{"type":"object","properties":{"field":{"type":"string","pattern":"^[a-z_]+$"},"op":{"enum":["eq","lt","gt"]},"weight":{"type":"integer","multipleOf":2}},"required":["field","op","weight"],"additionalProperties":false}}}`,
	`{"oneOf":[{"type":"object","required":["a"]},{"type":"object","required":["b"]}],"not":{"required":["c"]},"propertyNames":{"maxLength":3},"dependentRequired":{"a":["d"]},"dependentSchemas":{"b":{"properties":{"b":{"const":1}}}}}`,
	`{"type":"array","prefixItems":[{"type":"string","format":"date"},{"const":null}],"items":{"type":["integer","boolean"]},"contains":{"type":"boolean"},"minContains":1,"maxContains":2,"minItems":1}`,
	`{"allOf":[{"minProperties":1},{"maxProperties":40}],"patternProperties":{"^x":{"type":"string","maxLength":4},"y$":{"type":"number","maximum":1e300}},"additionalProperties":{"if":{"type":"string"},"then":{"pattern":"é"},"else":{"type":"object","additionalProperties":{"$ref":"#"}}}}`,
	`{"enum":[1,"two",true,null,2.5e3],"type":["number","string","boolean","null"]}`,
	`true`,
}

// streamInputs are documents for streamSchemas, valid and invalid.
var streamInputs = []string{
	`{"query":"q","mode":"fast","limit":25,"offset":0,"filter":{"field":"a_b","op":"eq","weight":4},"tags":["x","y"],"include_archived":false,"min_score":0.5,"nested":null}`,
	`{"query":"q","mode":"fast","limit":25,"offset":0,"filter":{"field":"a","op":"eq","weight":4},"tags":[],"include_archived":false,"min_score":0.5,"nested":[{"field":"a","op":"lt","weight":0}]}`,
	`{"a":1,"d":2}`, `{"b":1}`, `{"b":2}`, `{"a":1,"b":1,"d":3}`, `{"a":1,"c":1,"d":1}`, `{"abcd":1,"b":1}`,
	`["2020-01-01",null,1,true]`, `["2020-02-30",null,true]`, `["2020-01-01",null,true,false,true]`, `[]`,
	`{"x1":"abc","zy":3,"other":"é","deep":{"k":{"x":"a"}}}`, `{"x1":"abcde"}`, `{"q":"\u00e9"}`, `{"q":"e"}`,
	`1`, `2500`, `2.5e3`, `"two"`, `"tw\u006f"`, `null`, `false`, `3`,
	`{"a":1,"a":2}`, `"\ud800"`, `1e400`, `1e-400`, "\xef\xbb\xbf{}", `{"a":1} x`, `"\ufdd0"`,
}

// TestStreamAgreesOnToolSchemas compares CheckJSON with the tree path on
// every pair of streamSchemas and streamInputs, and requires CheckJSON to
// read each valid one directly.
func TestStreamAgreesOnToolSchemas(t *testing.T) {
	shown := 0
	for i, schema := range streamSchemas {
		checker := compileChecker(compile(t, []byte(schema), nil))
		require.NotNil(t, checker, schema)
		for _, data := range streamInputs {
			if agreeStream(t, checker, []byte(schema), []byte(data), fmt.Sprintf("schema %d, %s", i, data)) {
				shown++
			}
		}
	}
	require.Greater(t, shown, 20)
}

// TestStreamBounds checks that CheckJSON stops at its bound of values and
// its budget, and charges reading a value again.
func TestStreamBounds(t *testing.T) {
	checker := compileChecker(compile(t, []byte(streamSchemas[0]), nil))
	data := []byte(streamInputs[1])
	full := checker.CheckJSON(data, math.MaxInt, math.MaxInt)
	require.True(t, full.Valid)
	require.True(t, checker.CheckJSON(data, math.MaxInt, full.Values).Valid)
	require.False(t, checker.CheckJSON(data, math.MaxInt, full.Values-1).Valid)
	require.True(t, checker.CheckJSON(data, full.Work, math.MaxInt).Valid)
	require.False(t, checker.CheckJSON(data, full.Work-1, math.MaxInt).Valid)

	// Two subschemas over one long object: the second reads it again.
	twice := compileChecker(compile(t, []byte(`{"allOf":[{"type":"object"},{"minProperties":1}]}`), nil))
	long := []byte(`{"a":"` + strings.Repeat("x", 1600) + `"}`)
	_, _, work := treeVerdict(twice, long, math.MaxInt)
	got := twice.CheckJSON(long, math.MaxInt, math.MaxInt)
	require.True(t, got.Valid)
	require.GreaterOrEqual(t, got.Work, work+len(long)/16)

	// Reading a value again is bounded by a few times the document.
	many := compileChecker(compile(t, []byte(`{"allOf":[`+strings.TrimSuffix(strings.Repeat(`{"type":"object"},`, 20), ",")+`]}`), nil))
	valid, _, _ := treeVerdict(many, long, math.MaxInt)
	require.True(t, valid)
	require.False(t, many.CheckJSON(long, math.MaxInt, math.MaxInt).Valid)
	require.True(t, many.CheckJSON([]byte(`{"a":"x"}`), math.MaxInt, math.MaxInt).Valid)

	// Patterns of the backtracking engine are left to the tree.
	for schema, doc := range map[string]string{`{"pattern":"^(?=a)"}`: `"ab"`, `{"patternProperties":{"^(?=a)":true}}`: `{"ab":1}`} {
		back := compileChecker(compile(t, []byte(schema), nil))
		valid, _, _ := treeVerdict(back, []byte(doc), math.MaxInt)
		require.True(t, valid, schema)
		require.False(t, back.CheckJSON([]byte(doc), math.MaxInt, math.MaxInt).Valid, schema)
	}
}

// TestStreamAllocatesNothing checks the valid path of CheckJSON for a tool
// input, with escapes and a large object, allocates nothing.
func TestStreamAllocatesNothing(t *testing.T) {
	checker := compileChecker(compile(t, []byte(streamSchemas[0]), nil))
	data := []byte(streamInputs[1])
	require.True(t, checker.CheckJSON(data, math.MaxInt, math.MaxInt).Valid)
	requireNoAllocations(t, func() { checker.CheckJSON(data, math.MaxInt, math.MaxInt) })

	var b strings.Builder
	b.WriteString(`{"q\u00e9":{"k":"\ud83d\ude00\n"}`)
	for i := range 100 {
		fmt.Fprintf(&b, `,"m%d":{"k":"v\"%d"}`, i, i)
	}
	b.WriteString(`}`)
	open := compileChecker(compile(t, []byte(`{"type":"object","additionalProperties":{"type":"object","properties":{"k":{"type":"string","maxLength":8}}}}`), nil))
	big := []byte(b.String())
	require.True(t, open.CheckJSON(big, math.MaxInt, math.MaxInt).Valid)
	requireNoAllocations(t, func() { open.CheckJSON(big, math.MaxInt, math.MaxInt) })
}

// requireNoAllocations requires f to allocate nothing, on average; under
// the race detector, which makes sync.Pool drop a share of what it is
// given, no more than refilling the pool now and then costs.
func requireNoAllocations(t *testing.T, f func()) {
	t.Helper()
	allocs := testing.AllocsPerRun(200, f)
	if raceEnabled {
		require.LessOrEqual(t, allocs, 8.0)
		return
	}
	require.Zero(t, allocs)
}

// FuzzStreamAgrees compares CheckJSON with strictjson.Parse and Check on
// arbitrary bytes against each of streamSchemas.
func FuzzStreamAgrees(f *testing.F) {
	for i := range streamSchemas {
		for _, data := range streamInputs {
			f.Add(uint8(i), []byte(data))
		}
	}
	checkers := make([]*engine.Checker, len(streamSchemas))
	for i, schema := range streamSchemas {
		checkers[i] = compileChecker(compile(f, []byte(schema), nil))
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		i := int(which) % len(streamSchemas)
		agreeStream(t, checkers[i], []byte(streamSchemas[i]), data, fmt.Sprintf("schema %d, %q", i, data))
	})
}
