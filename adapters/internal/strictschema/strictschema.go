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
package strictschema

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/keyword"
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

// annotations are keywords that do not constrain a value: dropped when the
// provider may not accept them, never a reason to block.
var annotations = map[string]bool{
	"title": true, "$comment": true, "examples": true, "deprecated": true,
	"readOnly": true, "writeOnly": true, "$id": true, "$schema": true,
	"contentSchema": true,
}

// unsupported reports whether no provider's strict mode accepts keyword k;
// each such keyword blocks.
func unsupported(k string) bool {
	switch k {
	case "allOf", "not", "if", "then", "else", "dependentRequired",
		"dependentSchemas", "patternProperties", "propertyNames",
		"unevaluatedProperties", "unevaluatedItems", "prefixItems", "contains",
		"minContains", "maxContains", "$dynamicRef", "$dynamicAnchor",
		"$anchor", "$recursiveRef", "$recursiveAnchor", "$vocabulary",
		"dependencies", "additionalItems":
		return true
	}
	return false
}

// hasAny reports whether m holds one of keys.
func hasAny(m map[string]any, keys ...string) bool {
	for _, k := range keys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

// describesObject reports whether schema m says something of an object's
// members or declares the type object.
func describesObject(m map[string]any) bool {
	return hasType(m, "object") || hasAny(m, "properties", "required", "additionalProperties", "minProperties",
		"maxProperties", "patternProperties", "propertyNames", "unevaluatedProperties", "dependentRequired", "dependentSchemas")
}

// misplaced blocks keyword k of the node at ptr when no strict mode takes
// it there: an unsupported keyword, or definitions below the root. It
// reports whether it did.
func (l *lowerer) misplaced(k, ptr string, root bool) bool {
	switch {
	case unsupported(k):
		l.block(ptr+"/"+escape(k), k+" is not supported in strict mode")
	case !root && (k == "$defs" || k == "definitions"):
		l.block(ptr+"/"+k, "definitions are lowered only at the root")
	default:
		return false
	}
	return true
}

const dialect2020 = "https://json-schema.org/draft/2020-12/schema"

// draft07 are the names of draft-07, without the empty fragment.
var draft07 = map[string]bool{
	"http://json-schema.org/draft-07/schema":  true,
	"https://json-schema.org/draft-07/schema": true,
}

// draft07Differences appends to out a finding for each place of node, a
// schema declaring draft-07, whose meaning differs under 2020-12, the
// dialect of the lowered schema: a keyword beside $ref (ignored in
// draft-07, applied in 2020-12; annotations and definitions aside, which
// mean the same in both), items as an array (a tuple), additionalItems and
// dependencies. A draft-07 schema with none of them means the same under
// 2020-12 once definitions is read as $defs, which the lowering does.
func draft07Differences(node any, ptr string, out *[]Finding) {
	add := func(at, rule string) { *out = append(*out, Finding{at, rule}) }
	keyword.Walk(node, ptr, func(ptr string, node any) bool {
		m, ok := node.(map[string]any)
		if !ok {
			return true
		}
		if _, ok := m["$ref"]; ok {
			for _, k := range keyword.SortedNames(m) {
				switch {
				case k == "$ref", k == "description", k == "default", k == "$defs", k == "definitions", annotations[k]:
				default:
					add(keyword.Append(ptr, k), "draft-07 ignores "+k+" beside $ref, 2020-12 applies it: the draft-07 schema is not lowered")
				}
			}
		}
		if _, isArr := m["items"].([]any); isArr {
			add(ptr+"/items", "items as an array is a tuple in draft-07 (prefixItems in 2020-12): the draft-07 schema is not lowered")
		}
		if _, ok := m["additionalItems"]; ok {
			add(ptr+"/additionalItems", "additionalItems is the rest of a draft-07 tuple (items in 2020-12): the draft-07 schema is not lowered")
		}
		if _, ok := m["dependencies"]; ok {
			add(ptr+"/dependencies", "dependencies is draft-07's dependentRequired and dependentSchemas in one: the draft-07 schema is not lowered")
		}
		return true
	})
}

type defState struct {
	name   string
	raw    any
	out    map[string]any
	undo   *Undo
	done   bool
	active bool
	height int
	// recursive: some reference to this definition was met while it was
	// being lowered.
	recursive bool
}

type lowerer struct {
	rules   Rules
	defs    map[string]*defState
	defKey  string
	res     *Result
	keep    bool
	rootRec bool
	root    any
	rootU   *Undo
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

// lower runs one pass; keep keeps the relaxed constraints in place.
func lower(schema []byte, rules Rules, keep bool) Result {
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
	l := &lowerer{rules: rules, defs: map[string]*defState{}, res: &res, keep: keep, root: root, rootU: &Undo{}}
	if s, ok := obj["$schema"].(string); ok {
		switch d := strings.TrimSuffix(s, "#"); {
		case d == dialect2020:
		case draft07[d]:
			draft07Differences(root, "", &res.Blocked)
			if len(res.Blocked) > 0 {
				slices.SortStableFunc(res.Blocked, func(a, b Finding) int { return strings.Compare(a.Pointer, b.Pointer) })
				return res
			}
		default:
			l.block("/$schema", "only JSON Schema 2020-12 and draft-07 are lowered; the schema declares "+strconv.Quote(s))
		}
	}
	for _, key := range []string{"$defs", "definitions"} {
		defs, ok := obj[key]
		if !ok {
			continue
		}
		m, ok := defs.(map[string]any)
		if !ok {
			l.block("/"+key, key+" is not an object")
			continue
		}
		if l.defKey != "" {
			l.block("/"+key, "both $defs and definitions are present")
			continue
		}
		l.defKey = key
		for name, d := range m {
			l.defs[name] = &defState{name: name, raw: d, undo: &Undo{}}
		}
	}
	if _, ok := obj["anyOf"]; ok {
		l.block("/anyOf", "the root of a strict schema cannot be anyOf")
	}
	out, u, height := l.walk(root, "", true)
	*l.rootU = *u
	res.Depth = height
	l.finish(l.rootU)
	byPointer := func(a, b Finding) int { return strings.Compare(a.Pointer, b.Pointer) }
	slices.SortStableFunc(res.Blocked, byPointer)
	slices.SortStableFunc(res.Relaxed, byPointer)
	if len(res.Blocked) > 0 {
		return res
	}
	outObj := out.(map[string]any)
	var usedDefs map[string]any
	for name, d := range l.defs {
		if !d.done {
			continue
		}
		if usedDefs == nil {
			usedDefs = map[string]any{}
		}
		usedDefs[name] = d.out
		res.StringChars += len(name)
	}
	if usedDefs != nil {
		outObj["$defs"] = usedDefs
	}
	res.Undo = l.rootU
	res.Tree = outObj
	return res
}

func (l *lowerer) block(ptr, rule string) {
	l.res.Blocked = append(l.res.Blocked, Finding{ptr, rule})
}

// relaxed moves keyword of out (lowered) into a note for its description,
// unless the pass keeps relaxed constraints: the provider will not enforce
// it.
func (l *lowerer) relaxed(out map[string]any, notes *[]string, ptr, keyword string, value any) {
	if l.keep {
		return
	}
	delete(out, keyword)
	*notes = append(*notes, keyword+": "+string(Encode(value)))
	l.res.Relaxed = append(l.res.Relaxed, Finding{ptr + "/" + escape(keyword), keyword + " is not enforced in strict mode; moved into the description"})
}

// lazyPath is the JSON pointer of a keyword, built only when needed.
type lazyPath struct{ parent, key string }

func (p lazyPath) String() string { return p.parent + "/" + escape(p.key) }

func escape(s string) string { return keyword.Escape(s) }

// unescape unescapes a reference token; a token with a bad escape is kept
// as it is, and then names no definition.
func unescape(s string) string {
	if u, err := keyword.Unescape(s); err == nil {
		return u
	}
	return s
}

// walk lowers one subschema. It returns the lowered node, its undo node and
// its height (object nesting levels).
func (l *lowerer) walk(node any, ptr string, root bool) (any, *Undo, int) {
	m, ok := node.(map[string]any)
	if !ok {
		l.notAnObject(node, ptr)
		return nil, noUndo, 0
	}
	if ref, ok := m["$ref"]; ok {
		for k := range m {
			l.misplaced(k, ptr, root)
		}
		return l.walkRef(m, ref, ptr)
	}
	if all, ok := m["allOf"]; ok && l.rules.AllOf {
		if m, ok = l.mergeAllOf(m, all, ptr); !ok {
			return nil, noUndo, 0
		}
	}
	// The node is lowered in place: the tree is this lowering's own
	// decoded copy, and each node of it is walked once (definitions are
	// memoized, the root is referred to, never walked again). What the
	// checks after the keywords need of the original is kept first.
	orig := origOf(m)
	n := nodeWalk{out: m, ptr: ptr, root: root}
	// Keys in map order: the findings are sorted at the end, the notes
	// of a node in endNode, and the output is a map.
	for k, v := range m {
		l.walkKeyword(&n, k, v)
	}
	l.endNode(&n, orig)
	return n.out, n.u.node(ptr), n.height
}

// nodeWalk is what the steps of one node's walk share: the node, lowered
// in place, and what its keywords have found so far.
type nodeWalk struct {
	// out is the node, lowered keyword by keyword in place.
	out  map[string]any
	ptr  string
	root bool
	// u is built here and moved to the heap at the end only when it holds
	// something: most nodes are leaves, which share noUndo.
	u      Undo
	height int
	// typed: a keyword bounds the value's JSON type (type, enum, const,
	// anyOf, or oneOf, which is either lowered or blocked).
	typed bool
	// notes are the relaxed keywords, for the description.
	notes []string
	// oneOf is the lowered oneOf, renamed anyOf by endNode.
	oneOf []any
}

// notAnObject blocks a subschema that is not a JSON object: true, false or
// a value that is no schema.
func (l *lowerer) notAnObject(node any, ptr string) {
	if b, isBool := node.(bool); isBool && b {
		l.block(ptr, "the schema true admits any value, which strict mode cannot express")
	} else if isBool {
		l.block(ptr, "the schema false admits no value, which strict mode cannot express")
	} else {
		l.block(ptr, "a subschema is not a JSON object")
	}
}

// mergeAllOf returns a copy of node m, which holds allOf (all), prepared
// for rules that take allOf; m itself is not changed. A branch that
// describes an object (properties, required, additionalProperties or
// "type":"object") is merged into the copy: its properties and required
// names join m's, which is what the conjunction
// means as long as no member is declared twice and no branch closes the
// object on its own. The other branches stay in allOf. It blocks, and
// returns false, when a branch holds $ref, is not an object schema, or
// cannot be merged so.
func (l *lowerer) mergeAllOf(m map[string]any, all any, ptr string) (map[string]any, bool) {
	at := ptr + "/allOf"
	branches, ok := all.([]any)
	if !ok || len(branches) == 0 {
		l.block(at, "allOf is not a non-empty array")
		return nil, false
	}
	mg, ok := l.startMerge(m, ptr)
	if !ok {
		return nil, false
	}
	for i, b := range branches {
		bp := at + "/" + strconv.Itoa(i)
		bm, ok := b.(map[string]any)
		if !ok {
			l.block(bp, "a branch of allOf is not a JSON object")
			return nil, false
		}
		if _, ok := bm["$ref"]; ok {
			l.block(bp+"/$ref", "allOf with $ref is not supported in strict mode")
			return nil, false
		}
		if !describesObject(bm) {
			mg.rest = append(mg.rest, bm)
			continue
		}
		if !l.mergeBranch(&mg, bm, bp) {
			return nil, false
		}
	}
	return mg.end(), true
}

// allOfMerge is a node while mergeAllOf merges the object branches of its
// allOf into it.
type allOfMerge struct {
	// node is a copy of the node without allOf.
	node map[string]any
	// ptr is the node's JSON pointer.
	ptr string
	// props and required are the node's, joined by the branches'.
	props    map[string]any
	required []any
	// rest are the branches that describe no object, left in allOf.
	rest []any
}

// startMerge copies m without its allOf; it blocks, and returns false,
// when m's properties is not an object.
func (l *lowerer) startMerge(m map[string]any, ptr string) (allOfMerge, bool) {
	mg := allOfMerge{node: make(map[string]any, len(m)+2), ptr: ptr}
	for k, v := range m {
		if k != "allOf" {
			mg.node[k] = v
		}
	}
	mg.props, _ = mg.node["properties"].(map[string]any)
	if _, ok := mg.node["properties"]; ok && mg.props == nil {
		l.block(ptr+"/properties", "properties is not an object")
		return allOfMerge{}, false
	}
	mg.required, _ = mg.node["required"].([]any)
	return mg, true
}

// mergeBranch merges bm, the object branch at bp, into mg: its type,
// properties and required names; its annotations are dropped. Any other
// keyword keeps it from being merged: it blocks, and returns false.
func (l *lowerer) mergeBranch(mg *allOfMerge, bm map[string]any, bp string) bool {
	for k, v := range bm {
		var ok bool
		switch k {
		case "type":
			ok = l.mergeType(mg, v, bp)
		case "properties":
			ok = l.mergeProperties(mg, v, bp)
		case "required":
			ok = l.mergeRequired(mg, v, bp)
		case "description", "title", "$comment", "examples":
			ok = true
		default:
			l.block(bp+"/"+escape(k), "an allOf branch that describes an object is merged only when it holds type, properties, required and annotations; "+k+" keeps it from being merged")
		}
		if !ok {
			return false
		}
	}
	return true
}

// mergeType merges the type t of the object branch at bp: it must be
// object, and so must the node's, if it has one.
func (l *lowerer) mergeType(mg *allOfMerge, t any, bp string) bool {
	if t != "object" {
		l.block(bp+"/type", "an allOf branch that describes an object must have type object to be merged")
		return false
	}
	if nt, ok := mg.node["type"]; ok && nt != "object" {
		l.block(mg.ptr+"/type", "allOf merges object branches into a node of another type")
		return false
	}
	mg.node["type"] = "object"
	return true
}

// mergeProperties adds the properties v of the object branch at bp to the
// node's; a member declared twice blocks.
func (l *lowerer) mergeProperties(mg *allOfMerge, v any, bp string) bool {
	bprops, ok := v.(map[string]any)
	if !ok {
		l.block(bp+"/properties", "properties is not an object")
		return false
	}
	if mg.props == nil {
		mg.props = make(map[string]any, len(bprops))
	}
	for name, s := range bprops {
		if _, dup := mg.props[name]; dup {
			l.block(bp+"/properties/"+escape(name), "allOf declares the member "+strconv.Quote(name)+" twice; the merged object could hold only one of its schemas")
			return false
		}
		mg.props[name] = s
	}
	return true
}

// mergeRequired adds the required names v of the object branch at bp to
// the node's, each once.
func (l *lowerer) mergeRequired(mg *allOfMerge, v any, bp string) bool {
	names, ok := v.([]any)
	if !ok {
		l.block(bp+"/required", "required is not an array")
		return false
	}
	for _, n := range names {
		if !slices.Contains(mg.required, n) {
			mg.required = append(mg.required, n)
		}
	}
	return true
}

// end returns the merged node: the joined properties and required names,
// and in allOf the branches left.
func (mg *allOfMerge) end() map[string]any {
	if mg.props != nil {
		mg.node["properties"] = mg.props
	}
	if mg.required != nil {
		mg.node["required"] = mg.required
	}
	if len(mg.rest) > 0 {
		mg.node["allOf"] = mg.rest
	}
	return mg.node
}

// walkKeyword lowers keyword k, of value v, of the node n walks, handing
// it to the step of its family.
func (l *lowerer) walkKeyword(n *nodeWalk, k string, v any) {
	switch k {
	case "$defs", "definitions":
		// Lowered on demand, by reference; only the used ones are put
		// back, at the root.
		l.misplaced(k, n.ptr, n.root)
		delete(n.out, k)
	case "type", "enum", "const":
		l.walkValueKeyword(n, k, v)
	case "anyOf", "allOf", "oneOf":
		l.walkCombination(n, k, v)
	case "properties", "additionalProperties":
		l.walkObjectKeyword(n, k, v)
	case "items":
		lv, iu, h := l.walk(v, n.ptr+"/items", false)
		n.out[k] = lv
		n.u.Items = iu
		n.height = max(n.height, h)
	default:
		// The keywords with no handling of their own: the rule set says
		// whether each is sent, relaxed, dropped or blocks.
		switch l.rules.Action(k, v) {
		case Relax:
			l.relaxed(n.out, &n.notes, n.ptr, k, v)
		case Block:
			l.misplaced(k, n.ptr, n.root)
			delete(n.out, k)
		case Drop:
			delete(n.out, k)
		}
	}
}

// walkValueKeyword lowers type, enum or const: each is kept, and bounds
// the node's JSON type; a value of enum or const that is no primitive
// blocks.
func (l *lowerer) walkValueKeyword(n *nodeWalk, k string, v any) {
	n.typed = true
	kp := lazyPath{n.ptr, k}
	switch k {
	case "type":
		if types, isArr := v.([]any); isArr && len(types) > 1 {
			l.res.Unions++
		}
	case "enum":
		vals, isArr := v.([]any)
		if !isArr {
			l.block(kp.String(), "enum is not an array")
			return
		}
		chars := 0
		for i, e := range vals {
			if !primitive(e) {
				l.block(kp.String()+"/"+strconv.Itoa(i), "enum values must be strings, numbers, booleans or null")
			}
			chars += primitiveChars(e)
		}
		l.res.EnumValues += len(vals)
		l.res.StringChars += chars
		if len(vals) > 250 {
			l.res.LargeEnumChars += chars
		}
	case "const":
		if !primitive(v) {
			l.block(kp.String(), "const must be a string, number, boolean or null")
		}
		l.res.StringChars += primitiveChars(v)
	}
	n.out[k] = v
}

// walkCombination lowers anyOf, allOf or oneOf.
func (l *lowerer) walkCombination(n *nodeWalk, k string, v any) {
	kp := lazyPath{n.ptr, k}
	switch k {
	case "anyOf":
		n.typed = true
		if lowered, ok := l.branches(v, kp.String(), &n.u, &n.height); ok {
			n.out[k] = lowered
		}
	case "allOf":
		if !l.rules.AllOf {
			l.misplaced(k, n.ptr, n.root)
			delete(n.out, k)
			return
		}
		n.out[k] = l.walkAllOf(n, v, kp.String())
	case "oneOf":
		// Either way the node is bounded: by the anyOf the oneOf means,
		// or by the finding that blocks it.
		n.typed = true
		if lowered, ok := l.oneOfAsAnyOf(n, v, kp.String()); ok {
			n.oneOf = lowered
		}
	}
}

// walkAllOf lowers the branches of the allOf at ptr that mergeAllOf left:
// those of rules that take allOf, when no branch describes an object. The
// branches constrain the same value, and nothing of them is undone.
func (l *lowerer) walkAllOf(n *nodeWalk, v any, ptr string) []any {
	branches := v.([]any)
	lowered := make([]any, len(branches))
	for i, b := range branches {
		// A branch constrains the value the node typed: it is given the
		// node's type, which changes nothing the conjunction admits, so
		// that it is not read as admitting any value.
		if bm := b.(map[string]any); !hasAny(bm, "type", "enum", "const", "anyOf") {
			if t, ok := n.out["type"]; ok {
				bm["type"] = t
			}
		}
		var h int
		lowered[i], _, h = l.walk(b, ptr+"/"+strconv.Itoa(i), false)
		n.height = max(n.height, h)
	}
	return lowered
}

// oneOfAsAnyOf lowers the oneOf at ptr as the anyOf it means when its
// branches admit disjoint JSON types: a value is valid under at most one.
// The caller renames it after the node's keywords, whose walk must not
// meet the key it adds. Otherwise it blocks, and returns false.
func (l *lowerer) oneOfAsAnyOf(n *nodeWalk, v any, ptr string) ([]any, bool) {
	if _, both := n.out["anyOf"]; both {
		l.block(ptr, "oneOf beside anyOf is not supported in strict mode")
		return nil, false
	}
	if !l.disjoint(v) {
		l.block(ptr, "oneOf is not supported in strict mode unless its branches admit disjoint JSON types, so that it means anyOf")
		return nil, false
	}
	if n.root {
		l.block(ptr, "the root of a strict schema cannot be anyOf, which this oneOf would be")
		return nil, false
	}
	return l.branches(v, ptr, &n.u, &n.height)
}

// branches lowers the branches of an anyOf (or of a oneOf that means
// anyOf) at ptr, recording their undo in u; false when v is not a
// non-empty array.
func (l *lowerer) branches(v any, ptr string, u *Undo, height *int) ([]any, bool) {
	branches, isArr := v.([]any)
	if !isArr || len(branches) == 0 {
		l.block(ptr, "the branches are not a non-empty array")
		return nil, false
	}
	l.res.Unions++
	lowered := make([]any, len(branches))
	for i, b := range branches {
		lb, bu, h := l.walk(b, ptr+"/"+strconv.Itoa(i), false)
		lowered[i] = lb
		u.Branches = append(u.Branches, Branch{Undo: bu, node: lb})
		*height = max(*height, h)
	}
	return lowered, true
}

// walkObjectKeyword lowers properties, each member in place, or drops
// additionalProperties, which closeObject sets for every object; a map of
// additional members blocks.
func (l *lowerer) walkObjectKeyword(n *nodeWalk, k string, v any) {
	kp := lazyPath{n.ptr, k}
	if k == "additionalProperties" {
		delete(n.out, k)
		if _, isObj := v.(map[string]any); isObj {
			l.block(kp.String(), "additionalProperties with a schema (a map) cannot be strict: every member must be named")
		}
		return
	}
	props, isObj := v.(map[string]any)
	if !isObj {
		l.block(kp.String(), "properties is not an object")
		return
	}
	base := kp.String()
	if len(props) > 0 {
		n.u.Props = make(map[string]*Undo, len(props))
	}
	for name, pv := range props {
		lv, pu, h := l.walk(pv, base+"/"+escape(name), false)
		props[name] = lv
		n.u.Props[name] = pu
		n.height = max(n.height, h)
		l.res.Properties++
		l.res.StringChars += len(name)
	}
}

// endNode finishes the node n walked, after its keywords: it renames a
// oneOf lowered as anyOf, writes the notes into the description, closes an
// object and blocks a node that admits any value or none, properties off
// an object, an array without items and a root that is no object.
func (l *lowerer) endNode(n *nodeWalk, orig original) {
	m, ptr := n.out, n.ptr
	if n.oneOf != nil {
		delete(m, "oneOf")
		m["anyOf"] = n.oneOf
	}
	slices.Sort(n.notes)
	describe(m, n.notes)
	if !n.typed {
		l.block(ptr, "a schema without type, enum, const, anyOf or $ref admits any value, which strict mode cannot express")
	}
	l.unsatisfiable(m, ptr)
	if hasType(m, "object") {
		n.height++
		l.closeObject(orig, m, &n.u, ptr, n.root)
	} else if _, ok := m["properties"]; ok {
		l.block(ptr+"/properties", "properties on a schema whose type does not include object")
	}
	if hasType(m, "array") && (!orig.hasItems || orig.itemsTrue) {
		l.block(ptr, "an array must declare the schema of its items")
	}
	if n.root && !hasType(m, "object") {
		l.block(ptr, "the root must be of type object")
	}
}

// JSON types as bits; integer is counted as number, of which it is a part.
const (
	tObject = 1 << iota
	tArray
	tString
	tNumber
	tBoolean
	tNull
)

func typeBit(name any) int {
	switch name {
	case "object":
		return tObject
	case "array":
		return tArray
	case "string":
		return tString
	case "number", "integer":
		return tNumber
	case "boolean":
		return tBoolean
	case "null":
		return tNull
	}
	return 0
}

func valueBit(v any) int {
	switch v.(type) {
	case map[string]any:
		return tObject
	case []any:
		return tArray
	case string:
		return tString
	case json.Number:
		return tNumber
	case bool:
		return tBoolean
	case nil:
		return tNull
	}
	return 0
}

// disjoint reports whether v, the branches of a oneOf of the canonical
// schema, admit pairwise disjoint sets of JSON types, each bounded by its
// type, enum, const, branches or the definition it refers to.
func (l *lowerer) disjoint(v any) bool {
	branches, isArr := v.([]any)
	if !isArr || len(branches) == 0 {
		return false
	}
	seen := 0
	for _, b := range branches {
		t := l.typesOf(b, 0)
		if t == 0 || seen&t != 0 {
			return false
		}
		seen |= t
	}
	return true
}

// typesOf returns the JSON types a canonical subschema can admit at most,
// as bits; 0 when it cannot tell.
func (l *lowerer) typesOf(node any, depth int) int {
	m, ok := node.(map[string]any)
	if !ok || depth > 32 {
		return 0
	}
	if ref, ok := m["$ref"].(string); ok {
		if ref == "#" {
			return l.typesOf(l.root, depth+1)
		}
		prefix := "#/" + l.defKey + "/"
		if l.defKey == "" || !strings.HasPrefix(ref, prefix) {
			return 0
		}
		d, ok := l.defs[unescape(ref[len(prefix):])]
		if !ok {
			return 0
		}
		return l.typesOf(d.raw, depth+1)
	}
	switch t := m["type"].(type) {
	case string:
		return typeBit(t)
	case []any:
		bits := 0
		for _, name := range t {
			b := typeBit(name)
			if b == 0 {
				return 0
			}
			bits |= b
		}
		return bits
	}
	if e, ok := m["enum"].([]any); ok {
		bits := 0
		for _, v := range e {
			bits |= valueBit(v)
		}
		return bits
	}
	if c, ok := m["const"]; ok {
		return valueBit(c)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if br, ok := m[k].([]any); ok && len(br) > 0 {
			bits := 0
			for _, b := range br {
				t := l.typesOf(b, depth+1)
				if t == 0 {
					return 0
				}
				bits |= t
			}
			return bits
		}
	}
	return 0
}

// noUndo is the undo node of every subschema under which nothing is
// undone: a leaf. It is shared and never modified (finish and markNeed
// change only nodes with members, items or branches).
var noUndo = &Undo{}

// node returns u on the heap, its pointer at, or noUndo when u is empty.
func (u *Undo) node(at string) *Undo {
	if u.Items == noUndo {
		u.Items = nil
	}
	if u.Props == nil && u.Nullable == nil && u.Items == nil && u.Branches == nil {
		return noUndo
	}
	h := new(Undo)
	*h = *u
	h.at = at
	return h
}

// original is what the checks after a node's walk need of the node as it
// was.
type original struct {
	props               map[string]any
	required            any
	addProps            any
	hasAddProps         bool
	hasItems, itemsTrue bool
	// minProps is minProperties when it is an integer, -1 when it is
	// absent, 1 when it is not an integer.
	minProps int64
}

func origOf(m map[string]any) original {
	o := original{required: m["required"]}
	o.props, _ = m["properties"].(map[string]any)
	o.addProps, o.hasAddProps = m["additionalProperties"]
	var items any
	items, o.hasItems = m["items"]
	o.itemsTrue = items == true
	o.minProps = -1
	if v, ok := m["minProperties"]; ok {
		o.minProps = 1
		if n, isNum := v.(json.Number); isNum {
			if i, err := n.Int64(); err == nil {
				o.minProps = i
			}
		}
	}
	return o
}

// closeObject makes the lowered object closed and, under RequireAll, every
// member required, optional ones nullable.
//
// A root that declares no properties and says nothing of others is a tool
// without arguments: it is closed with no members, so the provider sends
// {}, which the canonical schema admits. Below the root such an object is
// free-form data, and closing it would leave the model nothing to say.
func (l *lowerer) closeObject(m original, out map[string]any, u *Undo, ptr string, root bool) {
	props := m.props
	if len(props) == 0 {
		switch ap, ok := m.addProps, m.hasAddProps; {
		case ok && ap == false:
		case root && !ok && m.minProps <= 0:
			out["properties"] = map[string]any{}
			if l.rules.RequireAll {
				out["required"] = []any{}
			}
		case root && !ok:
			l.block(ptr+"/minProperties", "a tool without declared arguments that requires some cannot be strict: the closed object admits only {}")
			return
		default:
			l.block(ptr, "an object that declares no properties and does not forbid others is free-form, which strict mode cannot express")
			return
		}
	}
	out["additionalProperties"] = false
	rs, _ := m.required.([]any)
	for i, r := range rs {
		if name, ok := r.(string); ok && props[name] == nil {
			l.block(ptr+"/required/"+strconv.Itoa(i), "required names the member "+strconv.Quote(name)+", which properties does not declare: a closed strict schema would refuse every call or admit none")
		}
	}
	names := keyword.SortedNames(props)
	lp, _ := out["properties"].(map[string]any)
	isRequired := func(name string) int {
		return slices.IndexFunc(rs, func(r any) bool { s, ok := r.(string); return ok && s == name })
	}
	var optional []string
	for _, name := range names {
		if isRequired(name) < 0 {
			optional = append(optional, name)
		}
	}
	if !l.rules.RequireAll {
		l.res.Optional += len(optional)
		return
	}
	all := make([]any, len(names))
	for i, name := range names {
		// A required name is taken as the required list holds it,
		// already an interface value.
		if j := isRequired(name); j >= 0 {
			all[i] = rs[j]
		} else {
			all[i] = name
		}
	}
	if len(names) > 0 {
		out["required"] = all
	}
	for _, name := range optional {
		if u.Nullable == nil {
			u.Nullable = map[string]bool{}
		}
		u.Nullable[name] = true
		if lp[name] == nil {
			continue
		}
		member := lp[name].(map[string]any)
		if !l.keep && admitsNull(member, l.defs, 0) {
			// The null this lowering adds and the member's own null read
			// the same on the wire; Undo takes both as "not given".
			l.res.Relaxed = append(l.res.Relaxed, Finding{ptr + "/properties/" + escape(name), "an explicit null for this optional member cannot be sent: strict mode requires every member and sends null for one not given, so a null is taken as not given"})
		}
		lp[name] = l.nullable(member)
	}
}

// nullable returns s, lowered, made to admit null as well.
func (l *lowerer) nullable(s map[string]any) map[string]any {
	if admitsNull(s, l.defs, 0) {
		return s
	}
	_, hasRef := s["$ref"]
	_, hasAnyOf := s["anyOf"]
	_, hasConst := s["const"]
	t, hasType := s["type"]
	enum, hasEnum := s["enum"].([]any)
	if hasRef || hasAnyOf || hasConst || !hasType && !hasEnum {
		l.res.Unions++
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	// s is this lowering's own node, held by its parent only (a walked
	// node of the decoded tree, or a map walkRef made): it changes in
	// place.
	c := s
	if hasType {
		switch tt := t.(type) {
		case string:
			c["type"] = []any{tt, "null"}
			l.res.Unions++
		case []any:
			c["type"] = append(slices.Clone(tt), "null")
		}
	}
	if hasEnum {
		c["enum"] = append(slices.Clone(enum), nil)
		l.res.EnumValues++
	}
	return c
}

// walkRef lowers a node holding $ref.
func (l *lowerer) walkRef(m map[string]any, ref any, ptr string) (any, *Undo, int) {
	for k := range m {
		if k != "$ref" && k != "description" && k != "default" && !annotations[k] {
			l.block(ptr+"/"+escape(k), "$ref with the sibling keyword "+k+" cannot be strict")
		}
	}
	s, _ := ref.(string)
	if s == "#" {
		l.rootRec = true
		if !l.rules.Recursion {
			l.block(ptr+"/$ref", "a recursive schema (a reference to the root) cannot be strict here")
			return nil, &Undo{}, 0
		}
		return map[string]any{"$ref": "#"}, l.rootU, 0
	}
	prefix := "#/" + l.defKey + "/"
	if l.defKey == "" || !strings.HasPrefix(s, prefix) || strings.Contains(s[len(prefix):], "/") {
		l.block(ptr+"/$ref", "only references to the root or to a definition of the root's $defs can be strict; found "+strconv.Quote(s))
		return nil, &Undo{}, 0
	}
	name := unescape(s[len(prefix):])
	d, ok := l.defs[name]
	if !ok {
		l.block(ptr+"/$ref", "the reference "+strconv.Quote(s)+" names no definition")
		return nil, &Undo{}, 0
	}
	target := "#/$defs/" + escape(name)
	if d.active {
		d.recursive = true
		if !l.rules.Recursion {
			l.block(ptr+"/$ref", "a recursive schema (through "+strconv.Quote(s)+") cannot be strict here")
			return nil, &Undo{}, 0
		}
		return map[string]any{"$ref": target}, d.undo, 0
	}
	if !d.done {
		d.active = true
		out, u, h := l.walk(d.raw, "/"+l.defKey+"/"+escape(name), false)
		d.active = false
		d.done = true
		*d.undo = *u
		d.height = h
		if o, ok := out.(map[string]any); ok {
			d.out = o
		} else {
			d.out = map[string]any{}
		}
	}
	desc, hasDesc := m["description"].(string)
	if hasDesc && !d.recursive {
		// Inline, so that the member keeps its own description.
		c := make(map[string]any, len(d.out)+1)
		for k, v := range d.out {
			c[k] = v
		}
		c["description"] = desc
		return c, d.undo, d.height
	}
	return map[string]any{"$ref": target}, d.undo, d.height
}

func primitive(v any) bool {
	switch v.(type) {
	case string, json.Number, bool, nil:
		return true
	}
	return false
}

func primitiveChars(v any) int {
	switch x := v.(type) {
	case string:
		return len(x)
	case json.Number:
		return len(x)
	}
	return 0
}

func hasType(m map[string]any, want string) bool {
	switch t := m["type"].(type) {
	case string:
		return t == want
	case []any:
		return slices.Contains(t, any(want))
	}
	return false
}

// admitsNull reports whether the lowered schema s surely admits null.
func admitsNull(s map[string]any, defs map[string]*defState, depth int) bool {
	if depth > 32 {
		return false
	}
	if _, ok := s["$ref"]; ok {
		return false
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		return false
	}
	if c, ok := s["const"]; ok && c != nil {
		return false
	}
	if _, ok := s["type"]; ok {
		return hasType(s, "null")
	}
	if b, ok := s["anyOf"].([]any); ok {
		for _, x := range b {
			if xm, ok := x.(map[string]any); ok && admitsNull(xm, defs, depth+1) {
				return true
			}
		}
	}
	return false
}

// unsatisfiable blocks a node whose type admits none of its enum values,
// or not its const value: no value is valid under it, so a strict schema
// would force the provider to produce a call that Prepare refuses.
func (l *lowerer) unsatisfiable(m map[string]any, ptr string) {
	if _, ok := m["type"]; !ok {
		return
	}
	if e, ok := m["enum"].([]any); ok && !slices.ContainsFunc(e, func(v any) bool { return ofType(m, v) }) {
		l.block(ptr+"/enum", "no value of enum has the declared type, so no value is valid")
	}
	if c, ok := m["const"]; ok && !ofType(m, c) {
		l.block(ptr+"/const", "the value of const does not have the declared type, so no value is valid")
	}
}

// ofType reports whether the primitive value v has a type of the node m.
func ofType(m map[string]any, v any) bool {
	switch x := v.(type) {
	case string:
		return hasType(m, "string")
	case bool:
		return hasType(m, "boolean")
	case nil:
		return hasType(m, "null")
	case json.Number:
		if hasType(m, "number") {
			return true
		}
		f, err := strconv.ParseFloat(string(x), 64)
		return hasType(m, "integer") && (err != nil || f == math.Trunc(f))
	}
	return true // not primitive: blocked already
}
