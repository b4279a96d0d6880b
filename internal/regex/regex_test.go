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
// refuses without panicking, and a pattern it accepts compiles and, on a
// string whose cost a budget would admit, matches with a verdict.
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
		if re.MatchCost(len(subject)) <= 1<<22 {
			_, err := re.Match(subject)
			require.NoError(t, err, "a match within its cost has a verdict")
		}
	})
}

// TestMatchCostOfBacktracking: the static bound of the backtracking
// engine, by how it grows with the length of the string. Growth is the
// ratio of the cost at 2n to the cost at n, for n = 200: about 2 for a
// linear bound, 4 for a quadratic one, 8 for a cubic one; 0 stands for a
// bound already saturated at n (exponential).
func TestMatchCostOfBacktracking(t *testing.T) {
	cases := []struct {
		source string
		growth float64
		why    string
	}{
		{`^(?=.*[A-Z])(?=.*\d).{8,}$`, 2, "anchored; each lookahead scans once, the last loop is followed by the end"},
		{`^(?!.*foo).*$`, 2, "anchored; a negative lookahead scans once"},
		{`^(?:ab|cd)*(?=x)`, 2, "alternatives with disjoint first characters: one way per iteration"},
		{`^(?:[a-z]+-)*(?=x)`, 4, "the inner loop cannot take the dash that follows, so each iteration ends in one place; " +
			"but each iteration's scan is costed at the whole length: quadratic, where the engine is linear"},
		{zodEmail, 4, "the domain loop gives back whole labels, each followed by a scan of the top-level domain"},
		{`(?=.*[A-Z])`, 4, "unanchored: every start scans to the end"},
		{`(a)\1`, 4, "unanchored, and a backreference may compare the rest of the string"},
		{`^a*a*a*(?=b)`, 8, "three loops over the same character: every split is tried"},
		{`^(a+)+(?=b)`, 0, "nested quantifiers: exponentially many splits"},
		{`^(?:a|ab)*(?=c)`, 0, "alternatives that start alike, repeated: exponentially many"},
		{`^(?i)a(?=b)`, 0, "inline options are not read: costed as exponential"},
	}
	for _, c := range cases {
		re, err := regex.Parse(c.source)
		require.NoError(t, err, c.source)
		require.True(t, re.Backtracking(), "%s: only RE2's refusals are costed statically", c.source)
		at, twice := re.MatchCost(200), re.MatchCost(400)
		if c.growth == 0 {
			require.Greater(t, at, 1<<40, "%s: %s", c.source, c.why)
			continue
		}
		ratio := float64(twice) / float64(at)
		require.InDelta(t, c.growth, ratio, c.growth/4, "%s: %s (cost %d at 200, %d at 400)", c.source, c.why, at, twice)
	}
}

// TestMatchCostIsAFunctionOfTheLength: the same pattern and length cost
// the same, every time, and more for a longer string.
func TestMatchCostIsAFunctionOfTheLength(t *testing.T) {
	re, err := regex.Parse(zodEmail)
	require.NoError(t, err)
	require.Equal(t, 2080844, re.MatchCost(254), "the longest address RFC 5321 allows")
	for n := range 300 {
		require.Less(t, re.MatchCost(n), re.MatchCost(n+1))
		require.Equal(t, re.MatchCost(n), re.MatchCost(n))
	}
	require.Greater(t, re.MatchCost(1<<20), 1<<40, "a megabyte against the e-mail pattern is far beyond any budget")
}

// TestBacktrackingStoppedIsNoVerdict: a match that runs past
// SafetyTimeout, as one its caller did not charge may, fails with
// ErrStopped (and MatchString panics with it), never reports a non-match.
// The match takes 2^40 steps, so it cannot end in time on any machine.
func TestBacktrackingStoppedIsNoVerdict(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for SafetyTimeout")
	}
	re, err := regex.Parse(`^(a+)+(?=b)`)
	require.NoError(t, err)
	catastrophic := strings.Repeat("a", 40) + "!"
	require.Greater(t, re.MatchCost(len(catastrophic)), 1<<40, "no caller would have charged it")
	matched, err := re.Match(catastrophic)
	require.ErrorIs(t, err, regex.ErrStopped)
	require.False(t, matched)
	require.EqualError(t, err, `the backtracking engine stopped the match at its safety timeout of 5s: pattern "^(a+)+(?=b)" on a string of 41 bytes`)
}

// FuzzMatchCost: whatever pattern a schema holds, reading it for its cost
// does not panic, and its cost never falls as the string grows.
func FuzzMatchCost(f *testing.F) {
	for _, seed := range []string{zodEmail, `^(a+)+(?=b)`, `(?<=a|bc)d`, `[^\d\s-]*(?!x)`, `(?<n>a)\k<n>{2,5}?`, `[a-\d]`, `\u00e9\x41\cJ(?:)`, `((a|b)*c)+$(?=)`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, source string) {
		re, err := regex.Parse(source)
		if err != nil || !re.Backtracking() {
			return
		}
		last := 0
		for _, n := range []int{0, 1, 2, 3, 5, 8, 13, 40, 100, 1000, 1 << 20} {
			cost := re.MatchCost(n)
			require.GreaterOrEqual(t, cost, max(last, 1), "%q at %d", source, n)
			last = cost
		}
	})
}
