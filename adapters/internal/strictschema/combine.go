// This file holds the strict lowering of anyOf, oneOf and the allOf
// branches left once object branches are merged (see allof.go).

package strictschema

import "strconv"

// walkCombination lowers anyOf, allOf or oneOf.
func (l *lowerer) walkCombination(n *nodeWalk, k string, v any) {
	kp := lazyPath{n.pointer, k}
	switch k {
	case "anyOf":
		n.typed = true
		if lowered, ok := l.branches(v, kp.String(), &n.undo, &n.height); ok {
			n.out[k] = lowered
		}
	case "allOf":
		if !l.rules.AllOf {
			l.misplaced(k, n.pointer, n.atRoot)
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
	if n.atRoot {
		l.block(ptr, "the root of a strict schema cannot be anyOf, which this oneOf would be")
		return nil, false
	}
	return l.branches(v, ptr, &n.undo, &n.height)
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
	l.result.Unions++
	lowered := make([]any, len(branches))
	for i, b := range branches {
		lb, bu, h := l.walk(b, ptr+"/"+strconv.Itoa(i), false)
		lowered[i] = lb
		u.Branches = append(u.Branches, Branch{Undo: bu, node: lb})
		*height = max(*height, h)
	}
	return lowered, true
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
