// Package regex compiles the regular expressions of JSON Schema documents
// with a known, bounded cost: the size of every program is estimated from
// its syntax tree before anything is compiled, so a short pattern that
// expands into a huge program is refused, not built, and matching a string
// is charged its length times the size of the program.
//
// JSON Schema asks for ECMA-262 regular expressions; neither engine here
// reads exactly that dialect (the tool package's documentation says how
// each differs). A pattern RE2 accepts is compiled by Go's regexp, with
// RE2's meaning (\s is ASCII, (?i) is accepted), and matches in linear
// time. A pattern it refuses, such as one with lookahead or a
// backreference, is compiled by a backtracking engine in ECMAScript mode,
// whose matches may take time polynomial or exponential in the length of
// the string. Such a match is charged, up front, a static bound on the
// steps it may take: a function of the pattern and the length of the
// string only (see MatchCost), never of the time it takes, so a caller
// that refuses a string whose cost exceeds its budget gives the same
// verdict on every machine under any load.
//
// The engine also has a clock: a match that runs past SafetyTimeout, far
// beyond the time any match within a budget takes, is stopped and fails
// with ErrStopped. That is a last resort against a bound that is wrong,
// never a verdict: a stopped match is neither a match nor a non-match.
package regex

import (
	"errors"
	"fmt"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	syntax2 "github.com/dlclark/regexp2/syntax"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxProgram is the largest program one pattern may compile to, in
// estimated instructions. Go's own limit is far higher; a program this size
// already takes a millisecond to compile.
const MaxProgram = 10_000

// Regexp is a compiled pattern. It compiles on first use, so that checking
// a string's syntax (the "regex" format) never builds its program. It is
// safe for concurrent use.
type Regexp struct {
	source    string
	size      int  // estimated instructions, at least 1
	ecma      bool // compiled by the backtracking engine
	ecmaFlags regexp2.RegexOptions
	bound     *tree // the backtracking engine's patterns: read for costing

	once sync.Once
	re   *regexp.Regexp
	back *regexp2.Regexp
	// failure is why compiling failed, kept as text so that a Regexp
	// holds data only.
	failure string
}

// SafetyTimeout stops one match of the backtracking engine. A match
// whose static bound fits the budget of one check ends in a small
// fraction of it even on a loaded machine; the timeout fires only if the
// bound is wrong, and the match then fails with ErrStopped.
const SafetyTimeout = 5 * time.Second

// ErrStopped is the error of a match of the backtracking engine stopped
// by SafetyTimeout: neither a match nor a non-match.
var ErrStopped = errors.New("the backtracking engine stopped the match at its safety timeout")

// ParseCost is the steps Parse takes on source, at most: a few per byte,
// and thousands for each Unicode class escape (\pL, \P{Greek}), whose
// table Go's parser builds afresh every time: 80 µs for \pL here.
func ParseCost(source string) int {
	return 8*len(source) + UnicodeClassCost*(strings.Count(source, `\p`)+strings.Count(source, `\P`))
}

// UnicodeClassCost is the steps of building the table of one Unicode class.
const UnicodeClassCost = 5000

// Parse checks source and estimates its program, without compiling it.
// It refuses a pattern neither RE2 nor ECMAScript accepts, and one whose
// program would exceed MaxProgram instructions.
func Parse(source string) (*Regexp, error) {
	tree, err := syntax.Parse(source, syntax.Perl)
	if err != nil {
		// Not RE2: perhaps ECMAScript, with lookaround or backreferences.
		// Its size is taken from its text: a backtracking engine does not
		// expand counted repetitions.
		flags := regexp2.RegexOptions(regexp2.ECMAScript)
		ecmaTree, ecmaErr := syntax2.Parse(source, syntax2.RegexOptions(flags))
		if ecmaErr != nil {
			return nil, fmt.Errorf("neither RE2 nor ECMAScript accepts it: %v", err)
		}
		r, err := sized(&Regexp{source: source, size: max(1, len(source)), ecma: true, ecmaFlags: flags})
		if err != nil {
			return nil, err
		}
		// The engine tries a pattern anchored at the beginning at the
		// first position only; it knows which are, from its own tree.
		anchored := false
		if code, err := syntax2.Write(ecmaTree); err == nil {
			anchored = code.Anchors&syntax2.AnchorBeginning != 0 && !code.RightToLeft
		}
		r.bound = newTree(source, anchored)
		return r, nil
	}
	return sized(&Regexp{source: source, size: Size(tree)})
}

func sized(r *Regexp) (*Regexp, error) {
	if r.size > MaxProgram {
		return nil, fmt.Errorf("the pattern expands to about %d instructions, more than the limit of %d", r.size, MaxProgram)
	}
	return r, nil
}

// Size estimates the instructions of the program tree compiles to, as
// Go's compiler counts them, but weighting a character class by the steps
// of its binary search. It saturates beyond MaxProgram.
func Size(tree *syntax.Regexp) int {
	return min(1+size(tree), MaxProgram+1)
}

func size(tree *syntax.Regexp) int {
	const saturated = MaxProgram + 1
	sum := 0
	for _, s := range tree.Sub {
		sum = min(sum+size(s), saturated)
	}
	switch tree.Op {
	case syntax.OpLiteral:
		return max(1, len(tree.Rune))
	case syntax.OpCharClass:
		return 1 + bits.Len(uint(len(tree.Rune)))
	case syntax.OpCapture:
		return min(2+sum, saturated)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return min(1+sum, saturated)
	case syntax.OpRepeat:
		copies := tree.Max
		if copies < 0 {
			copies = tree.Min + 1
		}
		return min(max(copies, 1)*(1+sum), saturated)
	case syntax.OpConcat:
		return sum
	case syntax.OpAlternate:
		return min(len(tree.Sub)-1+sum, saturated)
	}
	return 1
}

// Backtracking reports whether the pattern is matched by the backtracking
// engine, whose matches are charged a static bound that grows faster than
// the length of the string (see MatchCost).
func (r *Regexp) Backtracking() bool { return r.ecma }

// Size returns the estimated instructions of the pattern's program.
func (r *Regexp) Size() int { return r.size }

// String returns the source of the pattern.
func (r *Regexp) String() string { return r.source }

// MatchCost returns the most steps Match takes on a string of length
// bytes, a function of the pattern and the length only. RE2 visits every
// instruction at most once per byte. The backtracking engine is bounded
// by reading the pattern (see bound.go): polynomial in the length for
// most patterns, such as zod's e-mail pattern, and exponential for nested
// quantifiers that can split a string in many ways, such as (a+)+, or for
// a construct the reading does not understand. The cost saturates far
// above any budget rather than overflow; a caller charges it, and
// refuses a string whose cost exceeds its budget, before calling Match.
func (r *Regexp) MatchCost(length int) int {
	if r.ecma {
		return r.bound.cost(length)
	}
	return (length + 1) * r.size
}

// MatchString reports whether s contains a match of the pattern, for the
// validator, whose hook cannot return an error. A match the backtracking
// engine stops at SafetyTimeout is no verdict, so MatchString panics with
// a *Stopped, which the caller of the validator recovers (see
// RecoverStopped). It panics likewise if the pattern did not compile.
func (r *Regexp) MatchString(s string) bool {
	matched, err := r.Match(s)
	if err != nil {
		panic(&Stopped{Err: err})
	}
	return matched
}

// Stopped is the value MatchString panics with when a match has no
// verdict. Err is what Match returned.
type Stopped struct{ Err error }

// RecoverStopped, deferred, turns a panic of MatchString into *err, and
// lets any other panic go on.
func RecoverStopped(err *error) {
	if v := recover(); v != nil {
		s, ok := v.(*Stopped)
		if !ok {
			panic(v)
		}
		*err = s.Err
	}
}

// Match reports whether s contains a match of the pattern. Its cost is
// MatchCost(len(s)), which the caller charges first. It fails, with no
// verdict, when the backtracking engine was stopped at SafetyTimeout (the
// error wraps ErrStopped), or when the pattern did not compile (see
// Compile).
func (r *Regexp) Match(s string) (matched bool, err error) {
	if err := r.Compile(); err != nil {
		return false, err
	}
	if !r.ecma {
		return r.re.MatchString(s), nil
	}
	matched, err = r.back.MatchString(s)
	if err != nil {
		return false, fmt.Errorf("%w of %v: pattern %q on a string of %d bytes", ErrStopped, SafetyTimeout, clip(r.source), len(s))
	}
	return matched, nil
}

// Compile builds the program now rather than on first use. Parse
// accepted the source and a program within MaxProgram is within each
// engine's own bounds, so it does not fail in practice; if it does, the
// error is kept and every match fails with it.
func (r *Regexp) Compile() error {
	r.once.Do(func() {
		var err error
		if r.ecma {
			r.back, err = regexp2.Compile(r.source, r.ecmaFlags)
			if err == nil {
				r.back.MatchTimeout = SafetyTimeout
			}
		} else {
			r.re, err = regexp.Compile(r.source)
		}
		if err != nil {
			r.failure = err.Error()
		}
	})
	if r.failure != "" {
		return errors.New(r.failure)
	}
	return nil
}

// Engine is Parse as the validator's regexp-engine hook wants it.
func Engine(source string) (jsonschema.Regexp, error) {
	r, err := Parse(source)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// clip shortens a pattern quoted in an error to 64 bytes, on a character
// boundary.
func clip(s string) string {
	if len(s) <= 64 {
		return s
	}
	end := 64
	for end > 0 && !utf8.RuneStart(s[end]) {
		end--
	}
	return s[:end] + "…"
}
