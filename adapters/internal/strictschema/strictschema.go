// Package strictschema lowers a canonical input schema (JSON Schema 2020-12,
// or draft-07 where it means the same, as tool.Definition holds it) to the strict subset a model provider
// enforces while it generates arguments, and undoes the lowering on the
// arguments the provider sends back.
//
// It is shared by the provider adapters, which are separate modules under
// adapters/ and import it by path. Each adapter picks a rule set; the walk,
// the notes, the findings and the undo are the same for every provider.
// A rule set decides, keyword by keyword, an Action: keep, relax into the
// description, block, drop, or rewrite. Rules is the rule set of a strict
// mode (OpenAI, Anthropic), applied by Lower, which also closes objects,
// requires members and records the undo; Open is the rule set of an open
// lowering (Gemini's JSON path), applied by LowerOpen, which needs none of
// that. Which members of a node are subschemas comes from the core's
// keyword model (internal/keyword), not from lists kept here.
//
// The lowering keeps the canonical schema the only authority: it never
// admits, after Undo, a value the canonical schema refuses, except through a
// constraint it reports as relaxed (moved into the description because the
// provider cannot enforce it; Prepare still does). Checked is the lowered
// schema with those constraints kept, the schema for which that holds
// exactly.
//
// The strict lowering is split by concern: Lower and the state of its
// pass are in strictschema.go; the walk of one node in walk.go; anyOf and
// oneOf in combine.go; the merge of allOf in allof.go; closing objects in
// object.go; $ref and definitions in reference.go; the JSON types a node
// admits in jsontypes.go; what is known of keywords as such in
// keyword.go; the dialects in dialect.go. Undo and its reading of the
// arguments are in undo.go and scan.go, LowerOpen in open.go, the rule
// sets in rules.go, Decode and Encode in tree.go.
package strictschema

import (
	"slices"
	"strings"
)

// Rules says what one provider's strict mode accepts.
type Rules struct {
	// RequireAll: every member of an object must be listed in required,
	// so an optional member is sent as required and nullable, and a null
	// for it is removed again by Undo.
	RequireAll bool
	// Recursion: a $ref may lead back to a schema that contains it.
	Recursion bool
	// NumberBounds: minimum, maximum, exclusiveMinimum, exclusiveMaximum
	// and multipleOf are enforced.
	NumberBounds bool
	// MaxItems: maxItems is enforced.
	MaxItems bool
	// MinItemsUpTo is the largest minItems enforced; -1 for any.
	MinItemsUpTo int
	// Default: the default keyword may be sent.
	Default bool
	// AllOf: allOf may be sent, with no $ref in its branches. Branches
	// that describe objects are merged into their node instead (see
	// mergeAllOf): each closed object branch would refuse the members of
	// the others.
	AllOf bool
	// Formats lists the string formats the provider enforces.
	Formats []string
	// PatternProblem says why a pattern cannot be enforced, or "" when it
	// can.
	PatternProblem func(pattern string) string
}

// Finding is one place of a canonical input schema that blocks strict mode,
// or whose constraint was relaxed: Pointer is a JSON pointer into the
// canonical schema, Rule a sentence saying what and why.
type Finding struct {
	Pointer string
	Rule    string
}

// Result is the outcome of Lower.
type Result struct {
	// Tree is the lowered schema to send, decoded (see Decode); nil when
	// Blocked is not empty. It is the Result's own: callers that hand it
	// out copy it.
	Tree map[string]any
	// Blocked lists why the schema cannot be strict; empty when it can.
	Blocked []Finding
	// Relaxed lists the constraints moved into descriptions.
	Relaxed []Finding
	// Undo restores the canonical shape of arguments sent under Wire.
	Undo *Undo
	// Optional counts the members not required, and Unions the anyOf and
	// multi-type nodes, of the lowered schema (definitions counted once).
	Optional, Unions int
	// Properties counts the object members, EnumValues the enum values,
	// and StringChars the characters of member names, definition names,
	// enum values and const values.
	Properties, EnumValues, StringChars int
	// LargeEnumChars counts the characters of the string enums of more
	// than 250 values.
	LargeEnumChars int
	// Depth is the deepest nesting of objects, through references that do
	// not recur.
	Depth int
}

// lowerer is one strict lowering of one canonical schema, from Lower or
// Checked: what its walk reads and what it has found so far.
type lowerer struct {
	// rules is the rule set of the provider's strict mode.
	rules Rules
	// definitions are the root's definitions, by name, each lowered on
	// demand by the first reference to it (see walkRef).
	definitions map[string]*definition
	// definitionsKeyword is the keyword the root holds its definitions
	// under, "$defs" or "definitions"; "" when it holds none.
	definitionsKeyword string
	// result is the outcome being built: the findings and the counts.
	result *Result
	// keepRelaxed keeps the relaxed constraints in place of their
	// description notes (the pass of Checked).
	keepRelaxed bool
	// rootSchema is the canonical schema, decoded: a reference "#" leads
	// back to it.
	rootSchema any
	// rootUndo is the undo node of the root, allocated before the walk so
	// that a reference to the root, met during the walk, can return it.
	rootUndo *Undo
}

// Lower lowers schema, a canonical input schema, under rules. It never
// fails: what cannot be lowered is in Result.Blocked.
func Lower(schema []byte, rules Rules) Result {
	return lower(schema, rules, false)
}

// Checked returns the lowered schema with the relaxed constraints kept in
// place of their description notes: the schema under which a value, after
// Undo, is valid under the canonical schema. Nil when the schema cannot be
// lowered. It costs a second lowering, so Lower does not compute it.
func Checked(schema []byte, rules Rules) []byte {
	return lower(schema, rules, true).Wire()
}

// Wire is the lowered schema to send, as JSON; nil when Blocked is not
// empty.
func (r Result) Wire() []byte {
	if r.Tree == nil {
		return nil
	}
	return Encode(r.Tree)
}

// lower runs one pass; keepRelaxed keeps the relaxed constraints in
// place.
func lower(schema []byte, rules Rules, keepRelaxed bool) Result {
	res := Result{}
	root, err := Decode(schema)
	if err != nil {
		res.Blocked = append(res.Blocked, Finding{"", "the schema is not JSON: " + err.Error()})
		return res
	}
	obj, ok := root.(map[string]any)
	if !ok {
		res.Blocked = append(res.Blocked, Finding{"", "the schema is not a JSON object"})
		return res
	}
	l := &lowerer{rules: rules, definitions: map[string]*definition{}, result: &res, keepRelaxed: keepRelaxed, rootSchema: root, rootUndo: &Undo{}}
	if !l.readDialect(obj) {
		return res
	}
	l.collectDefinitions(obj)
	if _, ok := obj["anyOf"]; ok {
		l.block("/anyOf", "the root of a strict schema cannot be anyOf")
	}
	out, u, height := l.walk(root, "", true)
	*l.rootUndo = *u
	res.Depth = height
	l.finish(l.rootUndo)
	byPointer := func(a, b Finding) int { return strings.Compare(a.Pointer, b.Pointer) }
	slices.SortStableFunc(res.Blocked, byPointer)
	slices.SortStableFunc(res.Relaxed, byPointer)
	if len(res.Blocked) > 0 {
		return res
	}
	outObj := out.(map[string]any)
	if used := l.usedDefinitions(); used != nil {
		outObj["$defs"] = used
	}
	res.Undo = l.rootUndo
	res.Tree = outObj
	return res
}

// block records a Blocked finding: the node or keyword at ptr keeps the
// schema from being strict, for the reason rule gives.
func (l *lowerer) block(ptr, rule string) {
	l.result.Blocked = append(l.result.Blocked, Finding{ptr, rule})
}

// relaxed moves keyword of out (lowered) into a note for its description,
// unless the pass keeps relaxed constraints: the provider will not enforce
// it.
func (l *lowerer) relaxed(out map[string]any, notes *[]string, ptr, keyword string, value any) {
	if l.keepRelaxed {
		return
	}
	delete(out, keyword)
	*notes = append(*notes, keyword+": "+string(Encode(value)))
	l.result.Relaxed = append(l.result.Relaxed, Finding{ptr + "/" + escape(keyword), keyword + " is not enforced in strict mode; moved into the description"})
}
