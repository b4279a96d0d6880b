package tool_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// The resource bounds of the package documentation, each tested at the
// limit and just beyond it, and the cost of the worst validations that stay
// within them. Times are logged, never asserted: run with -v to read them,
// and with -limits.full to measure at the full MaxInputBytes.

var limitsFull = flag.Bool("limits.full", false, "measure adversarial validation at the full MaxInputBytes (slow)")

// limitsObject returns a JSON object of exactly n bytes: {"pad":"aaa…"}.
func limitsObject(n int) string {
	const overhead = len(`{"pad":""}`)
	return `{"pad":"` + strings.Repeat("a", n-overhead) + `"}`
}

// limitsBinding binds a tool that echoes its arguments, with the given
// input schema.
func limitsBinding(t *testing.T, schema string) tool.Binding {
	t.Helper()
	b, err := tool.Bind(echoTool{definition: tool.Definition{Name: "probe", InputSchema: []byte(schema)}})
	require.NoError(t, err)
	return b
}

func TestLimitInputBytes(t *testing.T) {
	probe := limitsBinding(t, `{"type":"object"}`)
	schema, err := tool.ParseSchema([]byte(`{"type":"object"}`))
	require.NoError(t, err)
	request, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"answer"`), ResponseSchema: schema})
	require.NoError(t, err)

	cases := []struct {
		name     string
		sentinel error
		check    func(doc string) error
	}{
		{"Prepare arguments", tool.ErrInvalidInvocation, func(doc string) error { return prepareErr(probe, doc) }},
		{"Request.Validate", tool.ErrInvalidRequest, func(doc string) error { return tool.Request{Name: "probe", Arguments: doc}.Validate() }},
		{"Schema.Validate value", tool.ErrInvalidInvocation, func(doc string) error { return schema.Validate([]byte(doc)) }},
		{"ParseSchema document", tool.ErrInvalidSchema, func(doc string) error { _, err := tool.ParseSchema([]byte(doc)); return err }},
		{"InputRequest.Continuation answer", tool.ErrInvalidInputRequest, func(doc string) error { _, err := request.Continuation(json.RawMessage(doc)); return err }},
		{"NewJSONOutput details", tool.ErrInvalidOutput, func(doc string) error { _, err := tool.NewJSONOutput(json.RawMessage(doc)); return err }},
	}
	atLimit := limitsObject(tool.MaxInputBytes)
	beyond := limitsObject(tool.MaxInputBytes + 1)
	require.Len(t, atLimit, tool.MaxInputBytes)
	require.Len(t, beyond, tool.MaxInputBytes+1)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.check(atLimit), "exactly MaxInputBytes is within the bound")
			err := c.check(beyond)
			require.ErrorIs(t, err, c.sentinel, "one byte more than MaxInputBytes is refused")
			require.Contains(t, err.Error(), fmt.Sprintf("more than the limit of %d", tool.MaxInputBytes))
		})
	}

	// A refusal for size is a public rejection, so the model learns why.
	rej, ok := tool.ClassifyInputRejection(prepareErr(probe, beyond))
	require.True(t, ok)
	require.Equal(t, fmt.Sprintf(`arguments of "probe" are %d bytes, more than the limit of %d`, tool.MaxInputBytes+1, tool.MaxInputBytes), rej.Message())
}

// limitsNested returns {"a":[[…]]} nested to depth levels in all, the
// object being level 1.
func limitsNested(depth int) string {
	return `{"a":` + strings.Repeat("[", depth-1) + strings.Repeat("]", depth-1) + `}`
}

// limitsNestedObjects returns {"a":{"a":…{}}} nested to depth levels.
func limitsNestedObjects(depth int) string {
	return strings.Repeat(`{"a":`, depth-1) + `{}` + strings.Repeat(`}`, depth-1)
}

func TestLimitNestingDepth(t *testing.T) {
	probe := limitsBinding(t, `{"type":"object"}`)
	for _, c := range []struct {
		name  string
		build func(int) string
	}{
		{"arrays in an object", limitsNested},
		{"objects", limitsNestedObjects},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, prepareErr(probe, c.build(1000)), "1000 levels, the arguments object being level 1, are admitted")
			err := prepareErr(probe, c.build(1001))
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			rej, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok)
			require.Contains(t, rej.Message(), "nesting is deeper than 1000 levels")
		})
	}

	// A recursive schema follows the value all the way down.
	recursive := limitsBinding(t, `{"type":"object","properties":{"a":{"$ref":"#"}},"additionalProperties":false}`)
	require.NoError(t, prepareErr(recursive, limitsNestedObjects(1000)))
	err := prepareErr(recursive, strings.Replace(limitsNestedObjects(1000), `{}`, `{"b":1}`, 1))
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "%v", err)
	require.Contains(t, rej.Message(), "/a/a/a/")
}

// TestLimitDeepInputRefusedEverywhere feeds 100000 levels of nesting to
// every parser of untrusted input, with the stack limited far below what a
// parser recursing once per level would need: the bound is checked while
// parsing, so the input is refused at level 1001 whatever follows.
func TestLimitDeepInputRefusedEverywhere(t *testing.T) {
	const depth = 100000
	deepArgs := `{"a":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	deepObjects := strings.Repeat(`{"a":`, depth) + `1` + strings.Repeat(`}`, depth)
	unterminated := `{"a":` + strings.Repeat("[", depth)

	probe := limitsBinding(t, `{"type":"object"}`)
	schema, err := tool.ParseSchema([]byte(`true`))
	require.NoError(t, err)
	request, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"?"`), ResponseSchema: schema})
	require.NoError(t, err)

	entries := []struct {
		name     string
		sentinel error
		check    func(doc string) error
	}{
		{"Prepare", tool.ErrInvalidInvocation, func(doc string) error { return prepareErr(probe, doc) }},
		{"Schema.Validate", tool.ErrInvalidInvocation, func(doc string) error { return schema.Validate([]byte(doc)) }},
		{"ParseSchema", tool.ErrInvalidSchema, func(doc string) error { _, err := tool.ParseSchema([]byte(doc)); return err }},
		{"Continuation", tool.ErrInvalidInputRequest, func(doc string) error { _, err := request.Continuation(json.RawMessage(doc)); return err }},
		{"NewJSONOutput", tool.ErrInvalidOutput, func(doc string) error { _, err := tool.NewJSONOutput(json.RawMessage(doc)); return err }},
		{"Definition.UnmarshalJSON", tool.ErrInvalidDefinition, func(doc string) error { var d tool.Definition; return d.UnmarshalJSON([]byte(doc)) }},
		{"Output.UnmarshalJSON", tool.ErrInvalidOutput, func(doc string) error { var o tool.Output; return o.UnmarshalJSON([]byte(doc)) }},
		{"InputRequest.UnmarshalJSON", tool.ErrInvalidInputRequest, func(doc string) error { var r tool.InputRequest; return r.UnmarshalJSON([]byte(doc)) }},
	}

	// Limit this goroutine's stack to 4 MiB while the parsers run; recursing
	// 100000 levels deep would need far more and crash the test binary.
	defer debug.SetMaxStack(debug.SetMaxStack(4 << 20))
	for _, e := range entries {
		for name, doc := range map[string]string{"arrays": deepArgs, "objects": deepObjects, "unterminated": unterminated} {
			start := time.Now()
			err := e.check(doc)
			elapsed := time.Since(start)
			require.ErrorIs(t, err, e.sentinel, "%s, %s", e.name, name)
			require.Contains(t, err.Error(), "nesting is deeper than 1000 levels", "%s, %s", e.name, name)
			t.Logf("%s: %d levels of %s refused in %v", e.name, depth, name, elapsed)
		}
	}
}

func TestLimitNumberLength(t *testing.T) {
	probe := limitsBinding(t, `{"type":"object","properties":{"n":{"type":"number"}}}`)
	cases := []struct {
		name   string
		number func(n int) string // a number token of exactly n characters
	}{
		{"integer", func(n int) string { return "1" + strings.Repeat("0", n-1) }},
		{"negative integer", func(n int) string { return "-1" + strings.Repeat("0", n-2) }},
		{"fraction", func(n int) string { return "0." + strings.Repeat("0", n-3) + "1" }},
		{"mantissa and exponent", func(n int) string { return "1." + strings.Repeat("5", n-5) + "e-5" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			at, over := c.number(100), c.number(101)
			require.Len(t, at, 100)
			require.Len(t, over, 101)
			require.NoError(t, prepareErr(probe, `{"n":`+at+`}`), "a number token of 100 characters is admitted")
			err := prepareErr(probe, `{"n":`+over+`}`)
			rej, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok, "%v", err)
			require.Contains(t, rej.Message(), "number is longer than 100 characters")
		})
	}
}

func TestLimitExponentRange(t *testing.T) {
	plain := limitsBinding(t, `{"type":"object"}`)
	bounded := limitsBinding(t, `{"type":"object","properties":{"n":{"type":"number","minimum":-1.7976931348623157e308,"maximum":1.7976931348623157e308,"multipleOf":5e-324}}}`)
	positive := limitsBinding(t, `{"type":"object","properties":{"n":{"exclusiveMinimum":0}}}`)

	cases := []struct {
		number   string
		admitted bool
		why      string
	}{
		{"1e308", true, "within float64 range"},
		{"1.7976931348623157e308", true, "the largest float64"},
		{"-1e308", true, "within float64 range"},
		{"1e309", false, "overflows float64"},
		{"-1e309", false, "overflows float64"},
		{"1.7976931348623159e308", false, "rounds to infinity"},
		{"5e-324", true, "the smallest subnormal float64"},
		{"2e-324", false, "nonzero, rounds to zero"},
		{"1e-400", false, "nonzero, underflows to zero"},
		{"1e-999999", false, "nonzero, underflows to zero (and would cost the exact arithmetic tens of milliseconds)"},
		{"123e-10000000", false, "nonzero, underflows to zero (once crashed the validator against minimum)"},
		{"0e-999999999", true, "a zero, whatever its exponent"},
		{"-0.0e+999999999", true, "a zero, whatever its exponent"},
		{"0.000e99999", true, "a zero, whatever its exponent"},
	}
	for _, c := range cases {
		t.Run(c.number, func(t *testing.T) {
			args := `{"n":` + c.number + `}`
			start := time.Now()
			err := prepareErr(plain, args)
			if c.admitted {
				require.NoError(t, err, c.why)
			} else {
				rej, ok := tool.ClassifyInputRejection(err)
				require.True(t, ok, "%s: %v", c.why, err)
				require.Regexp(t, `too (large|small) for a 64-bit float`, rej.Message())
			}
			// Against a schema that does exact arithmetic on the number, the
			// outcome is the same and comes as quickly: the parser refuses
			// before the validator sees the value.
			err = prepareErr(bounded, args)
			if c.admitted {
				require.NoError(t, err, c.why)
			} else {
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			}
			t.Logf("%s: %v (%s) in %v", c.number, c.admitted, c.why, time.Since(start))
		})
	}

	// A zero written with a huge exponent is zero to the validator too.
	require.ErrorIs(t, prepareErr(positive, `{"n":0e-999999999}`), tool.ErrInvalidInvocation)
	require.NoError(t, prepareErr(positive, `{"n":5e-324}`))
	// The admitted bytes are kept exactly as proposed.
	inv, err := plain.Contract().Prepare(tool.Request{Name: "probe", Arguments: `{"n":0e-999999999}`}, tool.Admission{})
	require.NoError(t, err)
	require.Equal(t, `{"n":0e-999999999}`, string(inv.Arguments()))
}

// limitsExplosion returns a schema of levels definitions, each an anyOf of
// two references to the next: validation would apply about 2^levels
// subschemas to the same value.
func limitsExplosion(levels int) string {
	var defs []string
	for i := range levels {
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, levels))
	return `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `}}`
}

// limitsChain returns a schema that reaches {"type":"string"} through a
// linear chain of n references.
func limitsChain(n int) string {
	var defs []string
	for i := range n - 1 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, n-1))
	return `{"$ref":"#/$defs/d0","$defs":{` + strings.Join(defs, ",") + `}}`
}

func TestLimitSchemaVisits(t *testing.T) {
	for _, levels := range []int{10, 20, 30} {
		start := time.Now()
		_, err := tool.ParseSchema([]byte(limitsExplosion(levels)))
		elapsed := time.Since(start)
		require.ErrorIs(t, err, tool.ErrInvalidSchema, "%d levels", levels)
		require.Contains(t, err.Error(), fmt.Sprintf("more than the limit of %d", tool.MaxSchemaVisits))
		t.Logf("anyOf/$ref explosion of %d levels refused by ParseSchema in %v", levels, elapsed)
	}

	chain := limitsChain(500)
	start := time.Now()
	schema, err := tool.ParseSchema([]byte(chain))
	require.NoError(t, err, "a linear chain of 500 references costs about 500 visits")
	t.Logf("chain of 500 $refs compiled in %v", time.Since(start))
	require.NoError(t, schema.Validate([]byte(`"end of the chain"`)))
	require.ErrorIs(t, schema.Validate([]byte(`1`)), tool.ErrInvalidInvocation)
}

// TestLimitSchemaVisitsAcrossLevels covers schemas that stay within
// MaxSchemaVisits at every single subschema but make the members or items
// of a value receive subschemas through several keywords at once, so that
// the count multiplies at every level of the value. Before ParseSchema
// counted per location of the value, the first of these (47 bytes) took
// about a minute to validate a 40-byte array nested 20 deep, and twice as
// long for every further level.
func TestLimitSchemaVisitsAcrossLevels(t *testing.T) {
	fanOut := make([]string, 499)
	for i := range fanOut {
		fanOut[i] = `{"$ref":"#/$defs/level"}`
	}
	refused := []struct {
		name, schema string
	}{
		{"items and contains of the same schema", `{"items":{"$ref":"#"},"contains":{"$ref":"#"}}`},
		{"two branches with items of the same schema", `{"allOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}`},
		{"properties and patternProperties", `{"properties":{"a":{"$ref":"#"}},"patternProperties":{"^a":{"$ref":"#"}}}`},
		{"prefixItems and contains", `{"prefixItems":[{"$ref":"#"}],"contains":{"$ref":"#"}}`},
		{"two levels of 499 references each", `{"allOf":[` + strings.Join(fanOut, ",") + `],"$defs":{"level":{"items":{"allOf":[` + strings.Join(fanOut, ",") + `]}}}}`},
	}
	for _, c := range refused {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			_, err := tool.ParseSchema([]byte(c.schema))
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
			require.Contains(t, err.Error(), fmt.Sprintf("more than the limit of %d", tool.MaxSchemaVisits))
			t.Logf("refused in %v: %v", time.Since(start), err)
		})
	}

	// The count is itself bounded: a schema whose analysis would take
	// millions of steps is refused rather than analysed for seconds. Here
	// 2200 members each reach 998 alternatives: every member is within the
	// bound, but counting them all is not worth it.
	alternatives := strings.TrimSuffix(strings.Repeat(`{"type":"string"},`, tool.MaxSchemaVisits-3), ",")
	members := make([]string, 2200)
	for i := range members {
		members[i] = fmt.Sprintf(`"m%d":{"$ref":"#/$defs/many"}`, i)
	}
	start := time.Now()
	_, err := tool.ParseSchema([]byte(`{"type":"object","properties":{` + strings.Join(members, ",") + `},"$defs":{"many":{"anyOf":[` + alternatives + `]}}}`))
	require.ErrorIs(t, err, tool.ErrInvalidSchema)
	require.Contains(t, err.Error(), "counting the subschemas validating one value could apply would take more than")
	t.Logf("refused in %v: %v", time.Since(start), err)
	_, err = tool.ParseSchema([]byte(`{"type":"object","properties":{` + strings.Join(members[:1000], ",") + `},"$defs":{"many":{"anyOf":[` + alternatives + `]}}}`))
	require.NoError(t, err, "1000 such members are counted")

	accepted := []struct {
		name, schema string
	}{
		{"a recursive tree", `{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`},
		{"a linked list through $defs", `{"$ref":"#/$defs/node","$defs":{"node":{"type":["object","null"],"properties":{"next":{"$ref":"#/$defs/node"}}}}}`},
		{"items and contains of different schemas", `{"items":{"type":"array","items":{"$ref":"#"}},"contains":{"const":[]}}`},
		{"one level of 499 references", `{"allOf":[` + strings.Join(fanOut, ",") + `],"$defs":{"level":{"items":{"type":"integer"}}}}`},
		{"the search schema", fuzzSearchSchema},
	}
	for _, c := range accepted {
		t.Run(c.name, func(t *testing.T) {
			_, err := tool.ParseSchema([]byte(c.schema))
			require.NoError(t, err)
		})
	}
}

// TestLimitDeepViolationMessage covers the message of a value that fails
// deep inside a recursive anyOf, a generic JSON tree in this case. Finding
// the violation to report once searched every failed alternative twice at
// each level: 53 bytes of arguments 22 levels deep took four seconds, and
// each further level doubled it.
func TestLimitDeepViolationMessage(t *testing.T) {
	probe := limitsBinding(t, `{"type":"object","properties":{"v":{"$ref":"#/$defs/node"}},"$defs":{"node":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/node"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/node"}},{"type":"integer"}]}}}`)
	for _, depth := range []int{22, 998} {
		args := `{"v":` + strings.Repeat("[", depth) + `"x"` + strings.Repeat("]", depth) + `}`
		start := time.Now()
		err := prepareErr(probe, args)
		t.Logf("%d levels refused in %v", depth, time.Since(start))
		rej, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%v", err)
		location := "/v" + strings.Repeat("/0", depth)
		if depth < 500 {
			require.Equal(t, `arguments of "probe" do not match its input schema at `+location+`: 'anyOf' failed`, rej.Message())
			continue
		}
		// A location of two kilobytes is elided in the middle: its start
		// and its end stay.
		require.Regexp(t, `^arguments of "probe" do not match its input schema at /v(/0)+/?…[/0]+: 'anyOf' failed$`, rej.Message())
		require.Less(t, len(rej.Message()), 1200)
	}
}

// TestLimitUniqueItems checks uniqueItems over large arrays, where
// duplicates are found by hashing: equal numbers written differently and
// equal objects with members in another order still count as duplicates.
// The quick validity check once compared every pair of items, so that
// 65536 distinct integers took over ten minutes.
func TestLimitUniqueItems(t *testing.T) {
	schema, err := tool.ParseSchema([]byte(`{"type":"array","uniqueItems":true}`))
	require.NoError(t, err)
	numbers := make([]string, 65536)
	for i := range numbers {
		numbers[i] = fmt.Sprint(i)
	}
	objects := make([]string, 20000)
	for i := range objects {
		objects[i] = fmt.Sprintf(`{"k":%d,"v":[%d,"x"]}`, i, i)
	}
	list := func(items []string, extra ...string) []byte {
		return []byte("[" + strings.Join(append(slices.Clone(items), extra...), ",") + "]")
	}
	cases := []struct {
		name  string
		value []byte
		valid bool
	}{
		{"65536 distinct integers", list(numbers), true},
		{"an integer again, written as a decimal", list(numbers, "1.0e0"), false},
		{"an integer again, with an exponent", list(numbers, "655.35e2"), false},
		{"a near miss", list(numbers, "1.5"), true},
		{"20000 distinct objects", list(objects), true},
		{"an object again, members in another order", list(objects, `{"v":[7.0,"x"],"k":7}`), false},
		{"an object that differs inside an array", list(objects, `{"v":[7,"y"],"k":7}`), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			err := schema.Validate(c.value)
			t.Logf("%d bytes in %v", len(c.value), time.Since(start))
			if c.valid {
				require.NoError(t, err)
			} else {
				rej, ok := tool.ClassifyInputRejection(err)
				require.True(t, ok, "%v", err)
				require.Contains(t, rej.Message(), "items at")
			}
		})
	}
}

// limitsTime logs how long validate takes; it reports the outcome so the
// log says what was measured.
func limitsTime(t *testing.T, what string, validate func() error) {
	t.Helper()
	start := time.Now()
	err := validate()
	t.Logf("%s: valid=%v in %v", what, err == nil, time.Since(start))
}

// TestAdversarialValidationTime measures the slowest validations we could
// construct within the bounds. It asserts what the outcome is, never how
// long it takes; the figures are in the log. By default values are scaled
// down so that the test stays quick under the race detector; -limits.full
// measures at MaxInputBytes. The fan-out over an array is measured at the
// largest array MaxValidationWork admits (about a thousand items under
// 1000 subschemas each); a larger one is refused before validation.
func TestAdversarialValidationTime(t *testing.T) {
	size, uniques := 4<<10, []int{500, 2000}
	if *limitsFull {
		size, uniques = tool.MaxInputBytes, []int{1000, 4000, 16000, 65536}
	}

	t.Run("fan-out of 999 alternatives over a large array", func(t *testing.T) {
		for _, keyword := range []string{"allOf", "anyOf"} {
			alternatives := make([]string, tool.MaxSchemaVisits-1)
			for i := range alternatives {
				alternatives[i] = `{"items":{"type":"integer"}}`
			}
			schema, err := tool.ParseSchema([]byte(`{"` + keyword + `":[` + strings.Join(alternatives, ",") + `]}`))
			require.NoError(t, err, "1 + 999 visits is within the bound")
			n := min((size-2)/2, tool.MaxValidationWork/tool.MaxSchemaVisits/6-1)
			valid := "[" + strings.TrimSuffix(strings.Repeat("0,", n), ",") + "]"
			invalid := "[" + strings.TrimSuffix(strings.Repeat("0,", n-2), ",") + `,"x"]`
			require.LessOrEqual(t, len(valid), tool.MaxInputBytes)
			limitsTime(t, fmt.Sprintf("%s of 999 over %d integers (%d bytes), valid", keyword, n, len(valid)), func() error {
				err := schema.Validate([]byte(valid))
				require.NoError(t, err)
				return err
			})
			limitsTime(t, fmt.Sprintf("%s of 999 over %d integers (%d bytes), last item invalid", keyword, n, len(invalid)), func() error {
				err := schema.Validate([]byte(invalid))
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
				return err
			})
			larger := "[" + strings.TrimSuffix(strings.Repeat("0,", 2*n), ",") + "]"
			limitsTime(t, fmt.Sprintf("%s of 999 over %d integers, over the work bound", keyword, 2*n), func() error {
				err := schema.Validate([]byte(larger))
				require.ErrorContains(t, err, fmt.Sprintf("more than the limit of %d (MaxValidationWork)", tool.MaxValidationWork))
				return err
			})
		}
	})

	t.Run("catastrophic-looking pattern", func(t *testing.T) {
		schema, err := tool.ParseSchema([]byte(`{"type":"string","pattern":"^(a+)+$"}`))
		require.NoError(t, err)
		n := tool.MaxInputBytes - len(`"!"`)
		value := `"` + strings.Repeat("a", n) + `!"`
		limitsTime(t, fmt.Sprintf("^(a+)+$ against %d a's and a '!'", n), func() error {
			err := schema.Validate([]byte(value))
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			return err
		})
		limitsTime(t, fmt.Sprintf("^(a+)+$ against %d a's", n), func() error {
			err := schema.Validate([]byte(`"` + strings.Repeat("a", n) + `"`))
			require.NoError(t, err)
			return err
		})
	})

	t.Run("uniqueItems over an array of objects", func(t *testing.T) {
		schema, err := tool.ParseSchema([]byte(`{"type":"array","uniqueItems":true}`))
		require.NoError(t, err)
		for _, n := range uniques {
			items := make([]string, n)
			for i := range items {
				items[i] = fmt.Sprintf(`{"k":%d}`, i)
			}
			unique := "[" + strings.Join(items, ",") + "]"
			require.LessOrEqual(t, len(unique), tool.MaxInputBytes)
			limitsTime(t, fmt.Sprintf("uniqueItems over %d distinct objects (%d bytes)", n, len(unique)), func() error {
				err := schema.Validate([]byte(unique))
				require.NoError(t, err)
				return err
			})
			items[n-1] = items[0]
			duplicated := "[" + strings.Join(items, ",") + "]"
			limitsTime(t, fmt.Sprintf("uniqueItems over %d objects, first and last equal", n), func() error {
				err := schema.Validate([]byte(duplicated))
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
				return err
			})
		}
	})

	t.Run("compiling a document of many subschemas", func(t *testing.T) {
		for _, sub := range []string{`{}`, `{"$ref":"#/$defs/s"}`} {
			var members []string
			length := len(`{"properties":{},"$defs":{"s":{}}}`)
			for i := 0; ; i++ {
				m := fmt.Sprintf(`"p%d":%s`, i, sub)
				if length+len(m)+1 > size {
					break
				}
				members = append(members, m)
				length += len(m) + 1
			}
			doc := `{"properties":{` + strings.Join(members, ",") + `},"$defs":{"s":{}}}`
			require.LessOrEqual(t, len(doc), size)
			start := time.Now()
			_, err := tool.ParseSchema([]byte(doc))
			if len(members) > 4000 {
				// Beyond the bound on objects and booleans: refused up front.
				require.ErrorIs(t, err, tool.ErrInvalidSchema)
				require.ErrorContains(t, err, "more than the limit of 4096")
			} else {
				require.NoError(t, err)
			}
			t.Logf("ParseSchema of %d members %s (%d bytes) in %v (refused: %v)", len(members), sub, len(doc), time.Since(start), err != nil)
		}
	})

	t.Run("deep value against a recursive schema", func(t *testing.T) {
		schema, err := tool.ParseSchema([]byte(`{"$ref":"#/$defs/node","$defs":{"node":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/node"}},{"type":"object","additionalProperties":{"$ref":"#/$defs/node"}},{"type":"integer"}]}}}`))
		require.NoError(t, err)
		deep := strings.Repeat(`{"a":[`, 500) + `1` + strings.Repeat(`]}`, 500)
		limitsTime(t, "1000 levels of objects and arrays against a recursive anyOf, valid", func() error {
			err := schema.Validate([]byte(deep))
			require.NoError(t, err)
			return err
		})
		limitsTime(t, "1000 levels of objects and arrays against a recursive anyOf, leaf invalid", func() error {
			err := schema.Validate([]byte(strings.Replace(deep, `1`, `"x"`, 1)))
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			return err
		})
		wide := "[" + strings.Repeat(`{"a":[1,2,{"b":[3]}]},`, size/24) + "1]"
		require.LessOrEqual(t, len(wide), tool.MaxInputBytes)
		limitsTime(t, fmt.Sprintf("%d bytes of small nested values against a recursive anyOf", len(wide)), func() error {
			err := schema.Validate([]byte(wide))
			require.NoError(t, err)
			return err
		})
	})
}

// The attacks of a hostile model or client on the cost of one check, each
// at full size. Every one must stay within the budget the package
// documentation states, asserted as work the code charges, never as wall
// time (a loaded machine makes any clock bound flaky): it allocates at
// most attackAllocations bytes, and an attack the budget of steps must stop
// is refused with the MaxValidationWork message. A check whose steps are
// not bounded would not finish, and the test binary's timeout reports it.
// The time each attack took is logged; the figures for each family, timed
// on a quiet machine, are in benchmarks/README.md.

// attackAllocations is the most one attacked check may allocate: the
// budget's 64 MiB of peak heap, counted as every byte allocated.
const attackAllocations = 64 << 20

// attack runs f once, requires it to stay within the allocation bound,
// logs how long it took, and returns its error.
func attack(t *testing.T, what string, f func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := f()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("%s: %v in %v, %.1f MiB allocated", what, err, elapsed, float64(allocated)/(1<<20))
	require.LessOrEqual(t, allocated, uint64(attackAllocations), "%s allocated too much", what)
	return err
}

// fill returns prefix, as many copies of item as fit in MaxInputBytes
// with separators, and suffix.
func fill(prefix, item, separator, suffix string) string {
	n := (tool.MaxInputBytes - len(prefix) - len(suffix) + len(separator)) / (len(item) + len(separator))
	return prefix + strings.Repeat(item+separator, n-1) + item + suffix
}

// requireRejected requires err to be an InputRejection whose public message
// contains want and is at most a few KiB.
func requireRejected(t *testing.T, err error, want string) {
	t.Helper()
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "%v", err)
	require.Contains(t, rej.Message(), want)
	require.LessOrEqual(t, len(rej.Message()), 4<<10)
}

const workLimit = "steps of work (MaxValidationWork)"

func TestAttackSubnormalNumbers(t *testing.T) {
	args := fill(`{"n":[`, "3e-324", ",", "]}")
	probe := limitsBinding(t, `{"type":"object"}`)
	require.NoError(t, attack(t, "Prepare of 1 MiB of 3e-324", func() error { return prepareErr(probe, args) }))
	// The echo tool returns its arguments as details, which Binding.Call
	// checks again.
	inv, err := probe.Contract().Prepare(tool.Request{Name: "probe", Arguments: args}, tool.Admission{})
	require.NoError(t, err)
	require.NoError(t, attack(t, "Binding.Call returning 1 MiB of 3e-324 as details", func() error { _, err := probe.Call(t.Context(), inv); return err }))
	details := json.RawMessage(fill(`[`, "3e-324", ",", "]"))
	out, err := tool.NewJSONOutput(details)
	require.NoError(t, err)
	require.NoError(t, attack(t, "Output.MarshalJSON of 1 MiB of 3e-324", func() error { _, err := out.MarshalJSON(); return err }))
	bounded := limitsBinding(t, `{"type":"object","properties":{"n":{"items":{"minimum":0,"maximum":1e-300,"multipleOf":5e-324}}}}`)
	subnormals := fill(`{"n":[`, "5e-324", ",", "]}")
	require.NoError(t, attack(t, "Prepare of 1 MiB of 5e-324 against exact bounds", func() error { return prepareErr(bounded, subnormals) }))
	requireRejected(t, attack(t, "Prepare of 1 MiB of 3e-324 against exact bounds, every item invalid", func() error { return prepareErr(bounded, args) }),
		"at /n/4: multipleOf: got 3e-324, want 5e-324 (and 149790 more problems)")
}

func TestAttackPatterns(t *testing.T) {
	long := `{"s":"` + strings.Repeat("a", tool.MaxInputBytes-len(`{"s":""}`)) + `"}`

	probe := limitsBinding(t, `{"type":"object","properties":{"s":{"type":"string","pattern":"[a-z]{0,1000}[0-9]"}}}`)
	requireRejected(t, attack(t, "an 85-byte pattern against a 1 MiB string", func() error { return prepareErr(probe, long) }), "input schema at /s: matching a string of 1048568 bytes against the schema's pattern")

	probe = limitsBinding(t, `{"type":"object","properties":{"s":{"type":"string","maxLength":64,"pattern":"[a-z]{0,1000}[0-9]"}}}`)
	requireRejected(t, attack(t, "maxLength 64 and a pattern against a 1 MiB string", func() error { return prepareErr(probe, long) }), "at /s: maxLength: got 1,048,568, want 64")

	var patterns []string
	for i := range 400 {
		patterns = append(patterns, fmt.Sprintf(`"a{0,100}%d":true`, i))
	}
	probe = limitsBinding(t, `{"type":"object","patternProperties":{`+strings.Join(patterns, ",")+`}}`)
	var members []string
	for i := range 2500 {
		members = append(members, fmt.Sprintf(`"%s%05d":0`, strings.Repeat("a", 395), i))
	}
	args := "{" + strings.Join(members, ",") + "}"
	require.LessOrEqual(t, len(args), tool.MaxInputBytes)
	requireRejected(t, attack(t, "400 patternProperties against 2,500 names of 400 characters", func() error { return prepareErr(probe, args) }), workLimit)

	probe = limitsBinding(t, `{"type":"object","properties":{"r":{"items":{"format":"regex"}}}}`)
	args = fill(`{"r":[`, `"(?:a{0,1000}b){0,1}"`, ",", "]}")
	require.NoError(t, attack(t, "format regex over 1 MiB of (?:a{0,1000}b){0,1}", func() error { return prepareErr(probe, args) }))

	// A backtracking pattern is charged and stopped like any other; one
	// that cannot afford a string of 31 bytes is at fault itself.
	probe = limitsBinding(t, `{"type":"object","properties":{"s":{"items":{"pattern":"^(a+)+(?=b)"}}}}`)
	args = fill(`{"s":[`, `"`+strings.Repeat("a", 30)+`!"`, ",", "]}")
	requireRejected(t, attack(t, "catastrophic backtracking over 1 MiB of short strings", func() error { return prepareErr(probe, args) }),
		"at /s/0: matching a string of 31 bytes against the schema's pattern \"^(a+)+(?=b)\" could take")
}

func TestAttackEnums(t *testing.T) {
	values := make([]string, 100_000)
	for i := range values {
		values[i] = fmt.Sprintf(`"v%d"`, i)
	}
	probe := limitsBinding(t, `{"type":"object","properties":{"e":{"items":{"enum":[`+strings.Join(values, ",")+`]}}}}`)
	items := make([]string, 5000)
	for i := range items {
		items[i] = values[len(values)-1-i]
	}
	require.NoError(t, attack(t, "5,000 items against an enum of 100,000 strings", func() error {
		return prepareErr(probe, `{"e":[`+strings.Join(items, ",")+`]}`)
	}))
	// The message quotes a few of the values, not all of them.
	requireRejected(t, attack(t, "a 9-byte value outside an enum of 100,000 strings", func() error {
		return prepareErr(probe, `{"e":["x"]}`)
	}), `at /e/0: value must be one of 'v0', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7' (and 99992 more values)`)

	long := strings.Repeat("x", tool.MaxInputBytes-len(`{"c":""}`))
	probe = limitsBinding(t, `{"type":"object","properties":{"c":{"const":"y"},"f":{"format":"email"}}}`)
	requireRejected(t, attack(t, "const against a 1 MiB string", func() error { return prepareErr(probe, `{"c":"`+long+`"}`) }), "at /c: value must be 'y'")
	requireRejected(t, attack(t, "format against a 1 MiB string", func() error { return prepareErr(probe, `{"f":"`+long+`"}`) }), "at /f: 'xxxxxxxx")
}

func TestAttackErrorPaths(t *testing.T) {
	probe := limitsBinding(t, `{"type":"object","properties":{"v":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"integer"}]}}}}`)
	args := `{"v":` + strings.Repeat("[", 998) + strings.TrimSuffix(strings.Repeat("1.5,", 50_000), ",") + strings.Repeat("]", 998) + "}"
	err := attack(t, "998 nested arrays holding 50,000 invalid numbers", func() error { return prepareErr(probe, args) })
	requireRejected(t, err, "at /v/0/0/0/0")

	var defs []string
	for i := range 995 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	defs = append(defs, `"d995":{"type":"string"}`)
	probe = limitsBinding(t, `{"type":"object","additionalProperties":{"$ref":"#/$defs/d0"},"$defs":{`+strings.Join(defs, ",")+`}}`)
	valid, invalid := make([]string, 1049), make([]string, 1049)
	for i := range valid {
		valid[i] = fmt.Sprintf(`"m%d":"x"`, i)
		invalid[i] = fmt.Sprintf(`"m%d":1`, i)
	}
	require.NoError(t, attack(t, "996 chained references over 1,049 valid members", func() error { return prepareErr(probe, "{"+strings.Join(valid, ",")+"}") }))
	requireRejected(t, attack(t, "996 chained references over 1,049 invalid members", func() error {
		return prepareErr(probe, "{"+strings.Join(invalid, ",")+"}")
	}), "at /m0: got number, want string; at /m1: got number, want string; at /m10: got number, want string; at /m100: got number, want string; at /m1000: got number, want string (and 1044 more problems)")
}

func TestAttackLongStrings(t *testing.T) {
	long := `{"s":"` + strings.Repeat("é", (tool.MaxInputBytes-len(`{"s":""}`))/2) + `"}`
	subschemas := strings.TrimSuffix(strings.Repeat(`{"maxLength":1000000},`, 990), ",")
	probe := limitsBinding(t, `{"type":"object","properties":{"s":{"allOf":[`+subschemas+`]}}}`)
	require.NoError(t, attack(t, "990 maxLength subschemas over a 1 MiB string", func() error { return prepareErr(probe, long) }))
}

func TestAttackNumericArrays(t *testing.T) {
	cases := []struct {
		what, schema, item string
	}{
		{"minimum against 1 MiB of 1e308", `{"minimum":1e308}`, "1e308"},
		{"exclusiveMaximum against 1 MiB of 1.7976931348623157e308", `{"exclusiveMaximum":1.7976931348623158e308}`, "1.7976931348623157e308"},
		{"multipleOf 1e-300 against 1 MiB of 1e300", `{"multipleOf":1e-300}`, "1e300"},
		{"contains against 1 MiB of 1e308", `true,"contains":{"maximum":1e307}`, "1e308"},
	}
	for _, c := range cases {
		items := c.schema
		if strings.HasPrefix(c.schema, "true") {
			items = c.schema + `,"minContains":0`
		}
		probe := limitsBinding(t, `{"type":"object","properties":{"a":{"items":`+items+`}}}`)
		require.NoError(t, attack(t, c.what, func() error { return prepareErr(probe, fill(`{"a":[`, c.item, ",", "]}")) }))
	}
	probe := limitsBinding(t, `{"type":"object","properties":{"a":{"uniqueItems":true}}}`)
	var distinct []string
	for i, length := 1, len(`{"a":[]}`); ; i++ {
		item := fmt.Sprintf("%de300", i)
		if length += len(item) + 1; length > tool.MaxInputBytes {
			break
		}
		distinct = append(distinct, item)
	}
	require.NoError(t, attack(t, "uniqueItems over 1 MiB of distinct Ne300", func() error {
		return prepareErr(probe, `{"a":[`+strings.Join(distinct, ",")+`]}`)
	}))
}

func TestAttackSchemas(t *testing.T) {
	doc := `{"properties":{"p":{"pattern":"\\pL{1000}"}}}`
	_, err := tool.ParseSchema([]byte(doc))
	require.ErrorContains(t, err, "at /properties/p/pattern: ")
	require.ErrorContains(t, err, "more than the limit of 10000")

	var members []string
	for i := range 4000 {
		members = append(members, fmt.Sprintf(`"p%d":{"pattern":"\\pL{1000}"}`, i))
	}
	doc = `{"properties":{` + strings.Join(members, ",") + `}}`
	err = attack(t, "ParseSchema of 4,000 patterns \\pL{1000}", func() error { _, err := tool.ParseSchema([]byte(doc)); return err })
	require.ErrorContains(t, err, "the patterns of the schema would take")

	members = members[:0]
	for i := range 4000 {
		members = append(members, fmt.Sprintf(`"p%d":{"pattern":"\\pL{700}"}`, i))
	}
	doc = `{"properties":{` + strings.Join(members, ",") + `}}`
	require.LessOrEqual(t, len(doc), tool.MaxInputBytes)
	err = attack(t, "ParseSchema of 4,000 patterns \\pL{700}", func() error { _, err := tool.ParseSchema([]byte(doc)); return err })
	require.ErrorIs(t, err, tool.ErrInvalidSchema)
	require.ErrorContains(t, err, "the patterns of the schema would take")
	require.NotContains(t, err.Error(), "\n")

	// Patterns cheap to parse but large to compile are refused before
	// any is compiled.
	members = members[:0]
	for i := range 2000 {
		members = append(members, fmt.Sprintf(`"p%d":{"pattern":"[a-z]{0,1000}%d"}`, i, i))
	}
	doc = `{"properties":{` + strings.Join(members, ",") + `}}`
	err = attack(t, "ParseSchema of 2,000 patterns [a-z]{0,1000}N", func() error { _, err := tool.ParseSchema([]byte(doc)); return err })
	require.ErrorIs(t, err, tool.ErrInvalidSchema)
	require.ErrorContains(t, err, "(MaxSchemaPrograms)")
}

func TestAttackBigOutputs(t *testing.T) {
	megabyte := strings.Repeat("x", 1<<20)
	blocks := make([]tool.Block, 200)
	for i := range blocks {
		blocks[i] = tool.NewTextBlock(megabyte)
	}
	out := tool.Output{Content: blocks}
	err := attack(t, "Output.MarshalJSON of 200 blocks of 1 MiB", func() error { _, err := out.MarshalJSON(); return err })
	require.ErrorIs(t, err, tool.ErrInvalidOutput)
	require.ErrorContains(t, err, "(MaxOutputBytes)")

	b, err := tool.Bind(fixedTool{definition: tool.Definition{Name: "big", InputSchema: []byte(`{"type":"object"}`)}, output: out})
	require.NoError(t, err)
	inv, err := b.Contract().Prepare(tool.Request{Name: "big", Arguments: "{}"}, tool.Admission{})
	require.NoError(t, err)
	err = attack(t, "Binding.Call of a tool returning 200 blocks of 1 MiB", func() error { _, err := b.Call(t.Context(), inv); return err })
	require.ErrorIs(t, err, tool.ErrInvalidResult)

	huge := tool.NewTextOutput(strings.Repeat("y", 100<<20))
	err = attack(t, "NewFailure with 100 MB of public text", func() error {
		_, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected, Output: huge})
		return err
	})
	require.ErrorIs(t, err, tool.ErrInvalidFailure)
}

// fixedTool returns the same output on every call, without copying it.
type fixedTool struct {
	definition tool.Definition
	output     tool.Output
}

func (f fixedTool) Definition() tool.Definition { return f.definition.Clone() }

func (f fixedTool) Call(context.Context, tool.Invocation) (tool.Result, error) {
	return tool.Result{Output: f.output}, nil
}
