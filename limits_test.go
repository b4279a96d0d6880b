package tool_test

import (
	"encoding/json"
	"flag"
	"fmt"
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
		require.Equal(t, `arguments of "probe" do not match its input schema at /v`+strings.Repeat("/0", depth)+`: 'anyOf' failed`, rej.Message())
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
			n := min((size-2)/2, tool.MaxValidationWork/tool.MaxSchemaVisits-1)
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
				require.ErrorContains(t, err, "more than the limit of 1048576")
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
