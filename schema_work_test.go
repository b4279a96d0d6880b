package tool_test

import (
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/regex"
)

// verdict is what Validate decided, as text: "admitted", or the error.
func verdict(s tool.Schema, value string) string {
	if err := s.Validate([]byte(value)); err != nil {
		if rej, ok := tool.ClassifyInputRejection(err); ok {
			return "refused: " + rej.Message()
		}
		return "error: " + err.Error()
	}
	return "admitted"
}

// TestBacktrackingVerdictsDoNotDependOnLoad: patterns only the
// backtracking engine compiles (lookaround, backreferences) are charged
// a static bound of the pattern and the length before they run, so the
// same value gets the same verdict on a quiet machine and on one whose
// every CPU is busy. The values sit on both sides of the bound, where a
// verdict charged by the clock flipped: a match that took a few
// milliseconds when quiet was stopped for time under load. Only verdicts
// are asserted, never durations.
//
// The race detector slows the engine about a hundredfold, and the load
// ninefold more, so that a match the budget admits near its limit (about
// 12 ms without either) could reach the engine's safety stop; under the
// race detector the values admitted at more than a sixteenth of the
// budget are left to the run without it.
func TestBacktrackingVerdictsDoNotDependOnLoad(t *testing.T) {
	patterns := []string{
		`^(a+)+(?=b)`,    // exponential
		`^a*a*(?=b)`,     // quadratic
		`(?=.*[A-Z])\d+`, // unanchored: quadratic
		`^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`, // zod's e-mail
	}
	var values []string
	for k := 8; k <= 24; k++ {
		values = append(values, strings.Repeat("a", k)+"!")
	}
	for _, k := range []int{400, 600, 800, 1000, 1200, 1400, 1600, 2000} {
		values = append(values, strings.Repeat("a", k), strings.Repeat("1", k)+"A")
	}
	for _, k := range []int{64, 254, 600, 900, 1200, 1500} {
		values = append(values, strings.Repeat("a", k)+"@example.com", "a@"+strings.Repeat("a.", k/2)+"1")
	}
	type check struct {
		schema tool.Schema
		value  string
	}
	var checks []check
	for _, pattern := range patterns {
		quoted := strings.ReplaceAll(strings.ReplaceAll(pattern, `\`, `\\`), `"`, `\"`)
		for _, doc := range []string{
			// The fast check decides this one.
			`{"type":"object","properties":{"s":{"type":"string","pattern":"` + quoted + `"}}}`,
			// Draft-07 takes the full validator.
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"s":{"type":"string","pattern":"` + quoted + `"}}}`,
		} {
			s, err := tool.ParseSchema([]byte(doc))
			require.NoError(t, err, doc)
			re, err := regex.Parse(pattern)
			require.NoError(t, err)
			for _, v := range values {
				if cost := re.MatchCost(len(v)); raceEnabled && cost > tool.MaxValidationWork/16 && cost <= tool.MaxValidationWork {
					continue
				}
				checks = append(checks, check{s, `{"s":"` + v + `"}`})
			}
		}
	}
	quiet := make([]string, len(checks))
	admitted, refused := 0, 0
	for i, c := range checks {
		quiet[i] = verdict(c.schema, c.value)
		switch {
		case quiet[i] == "admitted":
			admitted++
		case strings.Contains(quiet[i], "MaxValidationWork"):
			refused++
		}
		require.NotContains(t, quiet[i], "error:", "no match ran into the safety stop")
	}
	require.NotZero(t, admitted, "some values are within the bound")
	require.NotZero(t, refused, "some values are beyond it")

	// Load every CPU four times over.
	var stop atomic.Bool
	var spinners sync.WaitGroup
	for range runtime.GOMAXPROCS(0) * 4 {
		spinners.Add(1)
		go func() {
			defer spinners.Done()
			x := 0
			for !stop.Load() {
				for i := range 1 << 12 {
					x ^= i * x
				}
			}
			_ = x
		}()
	}
	defer func() {
		stop.Store(true)
		spinners.Wait()
	}()
	rounds := 3
	if testing.Short() {
		rounds = 1
	}
	for range rounds {
		for i, c := range checks {
			require.Equal(t, quiet[i], verdict(c.schema, c.value), "%.80s under load", c.value)
		}
	}
}

// TestCostlyValuesAreNotCalledMismatches: a value refused because checking
// it would take more than MaxValidationWork is told so, and what would make
// it cheaper, never that it breaks the schema; a pattern that cannot afford
// even a short string says that the pattern, not the string, is at fault.
func TestCostlyValuesAreNotCalledMismatches(t *testing.T) {
	const exponential, quadratic = `^(a+)+(?=b)`, `^a*a*(?=b)`
	properties := func(pattern string) string {
		return `"type":"object","properties":{"s":{"type":"string","pattern":"` + pattern + `"}}`
	}
	tests := []struct {
		name, schema, arguments string
		want                    []string
	}{{
		name:      "too many values for the subschemas",
		schema:    `{"type":"object","properties":{"n":{"type":"array","allOf":[` + strings.TrimSuffix(strings.Repeat(`{"items":{"type":"integer"}},`, 200), ",") + `]}}}`,
		arguments: `{"n":[` + strings.TrimSuffix(strings.Repeat("1,", 100_000), ",") + `]}`,
		want:      []string{`arguments of "costly" cost too much to check against its input schema at the root:`, "values and each may meet 201 subschemas", "; send at most "},
	}, {
		name:      "a short string and an exponential pattern",
		schema:    `{` + properties(exponential) + `}`,
		arguments: `{"s":"` + strings.Repeat("a", 31) + `!"}`,
		want:      []string{"cost too much to check against its input schema at /s: matching a string of 32 bytes", "only a cheaper pattern in the schema"},
	}, {
		name:      "a short string and an exponential pattern under the full validator",
		schema:    `{"$schema":"http://json-schema.org/draft-07/schema#",` + properties(exponential) + `}`,
		arguments: `{"s":"` + strings.Repeat("a", 31) + `!"}`,
		want:      []string{"cost too much to check against its input schema at the root: matching a string of 32 bytes", "only a cheaper pattern in the schema"},
	}, {
		name:      "a long string and a quadratic pattern",
		schema:    `{` + properties(quadratic) + `}`,
		arguments: `{"s":"` + strings.Repeat("a", 100_000) + `"}`,
		want:      []string{"cost too much to check against its input schema at /s: matching a string of 100000 bytes", "send a string of at most"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := mustBind(t, echoTool{definition: tool.Definition{Name: "costly", InputSchema: []byte(tt.schema)}})
			rej, ok := tool.ClassifyInputRejection(prepareErr(b, tt.arguments))
			require.True(t, ok)
			for _, want := range tt.want {
				require.Contains(t, rej.Message(), want)
			}
			require.NotContains(t, rej.Message(), "do not match")
			require.NotContains(t, rej.Message(), "fewer or shorter")
		})
	}
}
