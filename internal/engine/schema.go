package engine

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/strictjson"
)

// MaxInputBytes bounds a value Check reads, and a schema document; the
// package tool documents it.
const MaxInputBytes = 1 << 20

// Schema is a compiled schema: the engine's program where it covers the
// schema, the validator's compilation where it does not, and the bounds
// of what checking one value may cost. A Schema is immutable and safe for
// concurrent use.
type Schema struct {
	compiled *jsonschema.Schema // nil when built
	built    bool               // compiled straight from the document: fast is non-nil, and the validator never runs
	fast     *Checker           // nil when the schema needs the validator
	interned map[string]string  // short strings of the document, for interning
	visits   int                // the most subschemas one location of a value can meet
	costs    keywordCosts       // for the validator's cost model
}

// Built reports whether s was compiled straight from its document, the
// validator never compiling it.
func (s *Schema) Built() bool { return s.built }

// Shortcut reports whether s was compiled without the validator's pass
// over the meta-schema.
func (s *Schema) Shortcut() bool {
	return s.built || strings.HasPrefix(s.compiled.Location, shortcutBase)
}

// Check reports whether value, one RFC 7493 JSON document of at most
// MaxInputBytes, satisfies s, within MaxValidationWork: nil when it does,
// a *Rejection when it does not (or is not valid JSON, or would cost too
// much to check), and another error when the schema is at fault (a
// pattern's match had no verdict). Value is only read.
func (s *Schema) Check(value []byte) error {
	if len(value) > MaxInputBytes {
		tooLarge := fmt.Errorf("value is %d bytes, more than the limit of %d", len(value), MaxInputBytes)
		return &Rejection{Message: tooLarge.Error(), Syntax: tooLarge}
	}
	if s.ShownValid(value) {
		return nil
	}
	return s.checkParsed(value)
}

// CheckDecode is Check that also decodes value into *into, which must
// point to the zero value of d's type, in the read that checks it:
// decoded reports that *into holds what the codec makes of value. It is
// false when err is not nil, and when the check could not read value
// directly or d could not decode it (see Decoder); *into is then in any
// state, and the codec must decode value afresh. Value is only read.
func (s *Schema) CheckDecode(value []byte, d *Decoder, into any) (decoded bool, err error) {
	at, ok := d.address(into)
	if !ok || s.fast == nil || len(value) > MaxInputBytes {
		return false, s.Check(value)
	}
	defer func() {
		// A decoder's defect must not crash the check: the value is then
		// checked alone, and left to the codec.
		if recover() != nil {
			decoded, err = false, s.Check(value)
		}
	}()
	streamed, decoded := s.fast.checkJSON(value, streamWork, s.maxStreamValues(), slot{p: d.root, at: at})
	if streamed.Valid {
		return decoded, nil
	}
	return false, s.checkParsed(value)
}

// checkParsed is Check on the tree of value, at most MaxInputBytes.
func (s *Schema) checkParsed(value []byte) error {
	tree, values, err := strictjson.ParseInterning(value, s.interned)
	if err != nil {
		return &Rejection{Message: OneLine(fmt.Sprintf("invalid JSON %v", err)), Syntax: err}
	}
	return s.checkTree(tree, values)
}

// ShownValid reports whether the fast check shows value, read directly,
// to be one I-JSON document that passes every check Check makes of its
// tree. False means only that Check must decide, and explain.
func (s *Schema) ShownValid(value []byte) bool {
	fast := s.fast
	if fast == nil {
		return false
	}
	return fast.CheckJSON(value, streamWork, s.maxStreamValues()).Valid
}

// maxStreamValues is the most values a document read directly may hold:
// as many as checking the tree may visit.
func (s *Schema) maxStreamValues() int {
	return MaxValidationWork / (max(1, s.visits) * CostPerApplication)
}

// streamWork is the budget of reading a value directly. A value that needs
// more, valid or not, is decided on the tree: an eighth of the budget keeps
// what a costly value spends here small beside what the tree then spends,
// and is still twice what a megabyte of small objects needs.
const streamWork = MaxValidationWork / 8

// checkTree checks an already parsed value holding values JSON values.
// Where the fast check covers the schema it decides and explains, within
// MaxValidationWork; the full validator runs only for the schemas it does
// not cover, after checkWork.
func (s *Schema) checkTree(tree any, values int) error {
	if work := values * s.visits * CostPerApplication; work > MaxValidationWork {
		return tooCostly("at the root: the value holds %d JSON values and each may meet %d subschemas: checking it could take %d steps of work, more than the limit of %d (MaxValidationWork); send at most %d values", values, s.visits, work, MaxValidationWork, MaxValidationWork/(s.visits*CostPerApplication))
	}
	if fast := s.fast; fast != nil {
		checked := fast.Check(tree, MaxValidationWork)
		switch {
		case checked.Valid:
			return nil
		case checked.Stopped != nil:
			return matchStopped(checked.Stopped)
		case checked.Exhausted && checked.Costly == nil:
			return workExhausted(nil)
		}
		// The explanation gets what the check left of the budget, and at
		// least a quarter of it: it visits in a fixed order, and may need
		// more to reach a violation the check met early, or the location
		// of a pattern one match of which exceeds the budget.
		report := fast.Explain(tree, max(MaxValidationWork-checked.Work, MaxValidationWork/4))
		switch {
		case report.Valid:
			return nil
		case report.Stopped != nil:
			return matchStopped(report.Stopped)
		case report.Total == 0 && report.Costly != nil:
			return patternTooCostly(report.Where, report.Costly, report.CostlyLength)
		case report.Total == 0:
			return workExhausted(report.Where)
		}
		// Violations found before the budget ran out are certain.
		return rejectViolations(report.Violations, report.Total)
	}
	return s.checkByValidator(tree)
}
