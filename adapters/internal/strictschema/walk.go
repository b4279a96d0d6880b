// This file holds the walk of the strict lowering over one subschema:
// its keywords, each handed to the step of its family, and the checks on
// the node once they are lowered.

package strictschema

import (
	"slices"
	"strconv"
)

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
	n := nodeWalk{out: m, pointer: ptr, atRoot: root}
	// Keys in map order: the findings are sorted at the end, the notes
	// of a node in endNode, and the output is a map.
	for k, v := range m {
		l.walkKeyword(&n, k, v)
	}
	l.endNode(&n, orig)
	return n.out, n.undo.node(ptr), n.height
}

// nodeWalk is what the steps of one node's walk share: the node, lowered
// in place, and what its keywords have found so far.
type nodeWalk struct {
	// out is the node, lowered keyword by keyword in place.
	out map[string]any
	// pointer is the node's JSON pointer in the canonical schema.
	pointer string
	// atRoot: the node is the root of the schema.
	atRoot bool
	// undo is the node's undo, built here and moved to the heap at the end
	// only when it holds something: most nodes are leaves, which share
	// noUndo.
	undo Undo
	// height is the node's height in object nesting levels: the greatest
	// of its subschemas' so far, one more once endNode finds an object.
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

// walkKeyword lowers keyword k, of value v, of the node n walks, handing
// it to the step of its family.
func (l *lowerer) walkKeyword(n *nodeWalk, k string, v any) {
	switch k {
	case "$defs", "definitions":
		// Lowered on demand, by reference; only the used ones are put
		// back, at the root.
		l.misplaced(k, n.pointer, n.atRoot)
		delete(n.out, k)
	case "type", "enum", "const":
		l.walkValueKeyword(n, k, v)
	case "anyOf", "allOf", "oneOf":
		l.walkCombination(n, k, v)
	case "properties", "additionalProperties":
		l.walkObjectKeyword(n, k, v)
	case "items":
		lv, iu, h := l.walk(v, n.pointer+"/items", false)
		n.out[k] = lv
		n.undo.Items = iu
		n.height = max(n.height, h)
	default:
		// The keywords with no handling of their own: the rule set says
		// whether each is sent, relaxed, dropped or blocks.
		switch l.rules.Action(k, v) {
		case Relax:
			l.relaxed(n.out, &n.notes, n.pointer, k, v)
		case Block:
			l.misplaced(k, n.pointer, n.atRoot)
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
	kp := lazyPath{n.pointer, k}
	switch k {
	case "type":
		if types, isArr := v.([]any); isArr && len(types) > 1 {
			l.result.Unions++
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
		l.result.EnumValues += len(vals)
		l.result.StringChars += chars
		if len(vals) > 250 {
			l.result.LargeEnumChars += chars
		}
	case "const":
		if !primitive(v) {
			l.block(kp.String(), "const must be a string, number, boolean or null")
		}
		l.result.StringChars += primitiveChars(v)
	}
	n.out[k] = v
}

// walkObjectKeyword lowers properties, each member in place, or drops
// additionalProperties, which closeObject sets for every object; a map of
// additional members blocks.
func (l *lowerer) walkObjectKeyword(n *nodeWalk, k string, v any) {
	kp := lazyPath{n.pointer, k}
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
		n.undo.Props = make(map[string]*Undo, len(props))
	}
	for name, pv := range props {
		lv, pu, h := l.walk(pv, base+"/"+escape(name), false)
		props[name] = lv
		n.undo.Props[name] = pu
		n.height = max(n.height, h)
		l.result.Properties++
		l.result.StringChars += len(name)
	}
}

// endNode finishes the node n walked, after its keywords: it renames a
// oneOf lowered as anyOf, writes the notes into the description, closes an
// object and blocks a node that admits any value or none, properties off
// an object, an array without items and a root that is no object.
func (l *lowerer) endNode(n *nodeWalk, orig original) {
	m, ptr := n.out, n.pointer
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
		l.closeObject(orig, m, &n.undo, ptr, n.atRoot)
	} else if _, ok := m["properties"]; ok {
		l.block(ptr+"/properties", "properties on a schema whose type does not include object")
	}
	if hasType(m, "array") && (!orig.hasItems || orig.itemsTrue) {
		l.block(ptr, "an array must declare the schema of its items")
	}
	if n.atRoot && !hasType(m, "object") {
		l.block(ptr, "the root must be of type object")
	}
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
