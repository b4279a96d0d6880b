// Package regex compiles the regular expressions of JSON Schema documents
// with a known, bounded cost: the size of every program is estimated from
// its syntax tree before anything is compiled, so a short pattern that
// expands into a huge program is refused, not built, and matching a string
// is charged its length times the size of the program.
//
// JSON Schema patterns are ECMA-262 regular expressions. A pattern RE2
// accepts is compiled by Go's regexp, which matches in linear time. A
// pattern it refuses, such as one with lookahead, is compiled by a
// backtracking engine in ECMAScript mode; its matches are charged the same
// way up front, then for the time they actually take, and stopped after
// MatchTimeout.
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

	once sync.Once
	re   *regexp.Regexp
	back *regexp2.Regexp
	// failure is why compiling failed, kept as text so that a Regexp
	// holds data only.
	failure string
}

// MatchTimeout stops one match of the backtracking engine: the hard stop
// behind the charges of Match.
const MatchTimeout = 50 * time.Millisecond

// StepDuration is the time one step of work stands for: the backtracking
// engine's matches are charged their duration in these.
const StepDuration = 15 * time.Nanosecond

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
		if _, ecmaErr := syntax2.Parse(source, syntax2.RegexOptions(flags)); ecmaErr != nil {
			return nil, fmt.Errorf("neither RE2 nor ECMAScript accepts it: %v", err)
		}
		return sized(&Regexp{source: source, size: max(1, len(source)), ecma: true, ecmaFlags: flags})
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
// engine, whose matches are charged their time and stopped after
// MatchTimeout.
func (r *Regexp) Backtracking() bool { return r.ecma }

// Size returns the estimated instructions of the pattern's program.
func (r *Regexp) Size() int { return r.size }

// String returns the source of the pattern.
func (r *Regexp) String() string { return r.source }

// MatchCost returns the most steps MatchString takes on a string of length
// bytes: RE2 visits every instruction at most once per byte.
func (r *Regexp) MatchCost(length int) int { return (length + 1) * r.size }

// MatchString reports whether s contains a match of the pattern. A match
// the backtracking engine stops after MatchTimeout counts as none.
func (r *Regexp) MatchString(s string) bool {
	matched, _, err := r.Match(s)
	return matched && err == nil
}

// Match reports whether s contains a match of the pattern, and the steps
// the match took beyond MatchCost: none for RE2, the time taken in
// StepDuration for the backtracking engine. It fails when the backtracking
// engine was stopped after MatchTimeout, or when the pattern did not
// compile (see Compile).
func (r *Regexp) Match(s string) (matched bool, extra int, err error) {
	if err := r.Compile(); err != nil {
		return false, 0, err
	}
	if !r.ecma {
		return r.re.MatchString(s), 0, nil
	}
	start := time.Now()
	matched, err = r.back.MatchString(s)
	return matched, int(time.Since(start) / StepDuration), err
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
				r.back.MatchTimeout = MatchTimeout
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
