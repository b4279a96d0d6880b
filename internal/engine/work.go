package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// MaxValidationWork bounds the steps of checking one value against a
// schema: a step is one short operation, and every keyword is charged for
// what it costs (see the package documentation). The package tool
// documents it.
const MaxValidationWork = 12 << 20

// checkWork refuses, before the full validator runs, a value whose check
// could exceed MaxValidationWork by the cost model of the full validator;
// see fullValidatorWork.
func (s *Schema) checkWork(tree any) error {
	if work := s.fullValidatorWork(tree); work > MaxValidationWork {
		return tooCostly("at the root: checking the value against the schema could take %d steps of work, more than the limit of %d (MaxValidationWork); send fewer or shorter values", work, MaxValidationWork)
	}
	return nil
}

// workExhausted is the rejection of a value whose check ran out of steps.
// Where is the location the check had reached; the root stands for the
// whole value when it is not known.
func workExhausted(where []string) *Rejection {
	return tooCostly("at %s: checking the value against the schema takes more than the limit of %d steps of work (MaxValidationWork); send fewer or shorter values", clippedPointer(where), MaxValidationWork)
}

// tooCostly is the rejection of a value refused because checking it
// would take more than MaxValidationWork: the value may well satisfy the
// schema, and the message, made by format, says what would make it
// cheaper.
func tooCostly(format string, args ...any) *Rejection {
	r := reject(format, args...)
	r.Costly = true
	return r
}

// patternTooCostly is the rejection of a value holding, at where (the
// root when not known), a string of length bytes that one match of re
// alone would take more than MaxValidationWork to check. It says how long
// a string the pattern can check; when that is short, the pattern, not the value, is at fault.
func patternTooCostly(where []string, re *regex.Regexp, length int) *Rejection {
	longest := affordableLength(re, length)
	advice := fmt.Sprintf("send a string of at most %d bytes there", longest)
	if longest < ordinaryString {
		advice = "the pattern is too costly for strings of ordinary length, so only a cheaper pattern in the schema (fewer nested or alternative repetitions) can make such a value checkable"
	}
	return tooCostly("at %s: matching a string of %d bytes against the schema's pattern %q could take more than the limit of %d steps of work (MaxValidationWork), and the pattern can check strings of at most %d bytes: %s", clippedPointer(where), length, clipRunes(re.String(), maxQuoted), MaxValidationWork, longest, advice)
}

// ordinaryString is the length, in bytes, below which a string is too
// short to be at fault for the cost of matching it.
const ordinaryString = 256

// affordableLength returns the length of the longest string, shorter than
// length, that one match of re can check within MaxValidationWork.
func affordableLength(re *regex.Regexp, length int) int {
	lo, hi := 0, length // re.MatchCost(hi) exceeds the limit
	for hi-lo > 1 {
		if mid := lo + (hi-lo)/2; re.MatchCost(mid) > MaxValidationWork {
			hi = mid
		} else {
			lo = mid
		}
	}
	return lo
}

// keywordCosts are the figures of a schema the full validator's cost model
// needs: the steps one byte of a string may cost across all its patterns,
// the size of its largest enum, and its patterns of the backtracking
// engine, which are charged apart (see rehearseBacktracking).
type keywordCosts struct {
	patternPerByte int
	largestEnum    int
	backtracking   []*regex.Regexp
}

// keywordCostsOf gathers the keyword costs of all, every subschema of a
// schema.
func keywordCostsOf(a Analysis) keywordCosts {
	k := keywordCosts{largestEnum: a.LargestEnum}
	for _, re := range a.Patterns {
		if re.Backtracking() {
			k.backtracking = append(k.backtracking, re.Regexp)
			continue
		}
		k.patternPerByte += re.MatchCost(1) - re.MatchCost(0)
	}
	return k
}

func (c *Schema) fullValidatorWork(tree any) int {
	perValue := func(depth int) int { return c.visits * (4 + depth + c.costs.largestEnum) }
	perString := func(s string) int { return c.visits * (len(s) + 1) * (1 + c.costs.patternPerByte) }
	var walk func(v any, depth int) int
	walk = func(v any, depth int) int {
		work := perValue(depth)
		switch v := v.(type) {
		case string:
			work += perString(v)
		case json.Number:
			d := strictjson.ParseDecimal(string(v))
			work += c.visits * (len(v) + max(d.Exp, -d.Exp)/4)
		case []any:
			for _, item := range v {
				work += walk(item, depth+1)
			}
		case map[string]any:
			for name, member := range v {
				work += perString(name) + walk(member, depth+1)
			}
		}
		return min(work, MaxValidationWork+1)
	}
	return walk(tree, 0)
}

// rehearseBacktracking charges, before the full validator runs, every
// match of a pattern of the backtracking engine the validator may make,
// without running any:
// every string and member name of tree against every such pattern, each
// at its static cost (regex.Regexp.MatchCost), a function of the pattern
// and the length of the string only. The full validator cannot be stopped
// between matches, so a value whose matches would not fit
// MaxValidationWork is refused before it runs, and on every machine alike.
func (c *Schema) rehearseBacktracking(tree any) error {
	if len(c.costs.backtracking) == 0 {
		return nil
	}
	work := 0
	var costly *regex.Regexp
	costlyLength := 0
	charge := func(s string) bool {
		for _, re := range c.costs.backtracking {
			cost := re.MatchCost(len(s))
			if cost > MaxValidationWork {
				costly, costlyLength = re, len(s)
			}
			if work += cost; work > MaxValidationWork {
				return false
			}
		}
		return true
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return charge(v)
		case []any:
			for _, item := range v {
				if !walk(item) {
					return false
				}
			}
		case map[string]any:
			for name, member := range v {
				if !charge(name) || !walk(member) {
					return false
				}
			}
		}
		return true
	}
	switch {
	case walk(tree):
	case costly != nil:
		return patternTooCostly(nil, costly, costlyLength)
	default:
		return workExhausted(nil)
	}
	return nil
}

// matchStopped is the error of a check in which the backtracking engine
// stopped a match at its safety timeout (regex.SafetyTimeout): the match
// had no verdict, so neither has the value. The pattern's static bound
// admitted the match, so the bound, not the value, is at fault.
func matchStopped(err error) error {
	return fmt.Errorf("%w; its static bound admitted the match, so the value was neither admitted nor refused", err)
}

// checkByValidator checks tree with the validator, for a schema the
// program does not cover: after the cost model has bounded the work (see
// checkWork and rehearseBacktracking), and with the validator's
// violations worded as the program's are.
func (s *Schema) checkByValidator(tree any) error {
	if err := s.checkWork(tree); err != nil {
		return err
	}
	if err := s.rehearseBacktracking(tree); err != nil {
		return err
	}
	err := s.validateFully(tree)
	if err == nil {
		return nil
	}
	if errors.Is(err, regex.ErrStopped) {
		return matchStopped(err)
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return reject("value cannot be validated: %v", err)
	}
	violations := leafViolations(verr)
	return rejectViolations(violations, len(violations))
}

// validateFully runs the full validator on tree. A pattern's match that
// has no verdict stops it with a panic (see regex.Regexp.MatchString),
// recovered here as the error of the match.
func (s *Schema) validateFully(tree any) (err error) {
	defer regex.RecoverStopped(&err)
	return s.compiled.Validate(tree)
}
