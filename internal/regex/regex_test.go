package regex_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/regex"
)

// zodEmail is the pattern zod v4 writes into the JSON Schema of every
// z.string().email(): RE2 refuses its lookaheads.
const zodEmail = `^(?!\.)(?!.*\.\.)([A-Za-z0-9_'+\-\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\-]*\.)+[A-Za-z]{2,}$`

func TestZodEmailMatchesAsJavaScriptDoes(t *testing.T) {
	re, err := regex.Parse(zodEmail)
	require.NoError(t, err)
	cases := []struct {
		address string
		matches bool
		why     string
	}{
		{"user@example.com", true, "plain address"},
		{"first.last+tag@sub.example.co", true, "dots, plus and a subdomain"},
		{"o'brien@example.ie", true, "an apostrophe is allowed before the last character"},
		{"a@b.io", true, "shortest parts"},
		{".user@example.com", false, "the first lookahead: no leading dot"},
		{"us..er@example.com", false, "the second lookahead: no two dots in a row"},
		{"user.@example.com", false, "the local part cannot end with a dot"},
		{"user@example", false, "no top-level domain"},
		{"user@example.c", false, "a top-level domain of one letter"},
		{"user@-example.com", false, "a label cannot start with a hyphen"},
		{"user@example.com\n", false, "$ matches only at the very end, as in JavaScript without the m flag"},
		{"user@exa_mple.com", false, "no underscore in the domain"},
		{"user name@example.com", false, "no space"},
		{"", false, "empty"},
	}
	for _, c := range cases {
		require.Equal(t, c.matches, re.MatchString(c.address), "%q: %s", c.address, c.why)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		source string
		ok     bool
		why    string
	}{
		{`^[a-z]+$`, true, "RE2"},
		{`\pL`, true, "RE2 accepts it, so RE2 compiles it"},
		{`(?<=a)b`, true, "lookbehind: ECMAScript"},
		{`(a)\1`, true, "a backreference: ECMAScript"},
		{`[a-z]{0,1000}[0-9]`, true, "about two thousand instructions"},
		{`(?:a{0,1000}b){0,1000}`, true, "RE2 refuses a million instructions; the backtracking engine does not expand them"},
		{strings.Repeat(`[a-z]{0,1000}`, 4), false, "RE2 accepts it, but its program is over MaxProgram"},
		{`\pL{1000}{1000}`, false, "neither engine: nested repetition"},
		{`(`, false, "neither engine: unbalanced"},
		{`(?=`, false, "neither engine"},
	}
	for _, c := range cases {
		_, err := regex.Parse(c.source)
		if c.ok {
			require.NoError(t, err, "%s: %s", c.source, c.why)
		} else {
			require.Error(t, err, "%s: %s", c.source, c.why)
		}
	}
}

func TestMatchCostGrowsWithProgramAndLength(t *testing.T) {
	small, err := regex.Parse(`^a+$`)
	require.NoError(t, err)
	large, err := regex.Parse(`[a-z]{0,1000}[0-9]`)
	require.NoError(t, err)
	require.Less(t, small.MatchCost(100), large.MatchCost(100))
	require.Equal(t, 2*small.MatchCost(99), small.MatchCost(199), "linear in the length")
	require.Greater(t, large.MatchCost(1<<20), 1<<30, "a megabyte against two thousand instructions is billions of steps")
}

// FuzzParse: whatever a model sends as a "regex" value, Parse returns or
// refuses without panicking, and a pattern it accepts compiles and
// matches.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{`^[a-z]+$`, `(?=a)b`, `\pL{700}`, `(a)\1`, `[`, `(?<n>x)\k<n>`, `a{0,1000}{2}`, `\u{1F600}`} {
		f.Add(seed, "abc")
	}
	f.Fuzz(func(t *testing.T, source, subject string) {
		re, err := regex.Parse(source)
		if err != nil {
			return
		}
		require.LessOrEqual(t, re.Size(), regex.MaxProgram)
		require.NoError(t, re.Compile(), "a pattern Parse accepts compiles")
		re.MatchString(subject)
	})
}
