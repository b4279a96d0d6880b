// This file holds Undo: the graph the strict lowering builds beside the
// lowered schema (finish, kinds), and Apply, which reads the arguments
// with the scanner of scan.go.

package strictschema

import "strings"

// Undo restores the canonical shape of arguments sent under a lowered
// schema: a null for a member that was made required and nullable only
// because the provider wants every member listed is removed. It follows the
// value, so a recursive schema's Undo (a cyclic graph) is walked only as
// deep as the value goes. An Undo is immutable once Lower returns and safe
// for concurrent use.
type Undo struct {
	// Nullable names the members whose null means "absent".
	Nullable map[string]bool
	// Props holds the undo of each declared member.
	Props map[string]*Undo
	// Items is the undo of array items.
	Items *Undo
	// Branches are the undo of the anyOf branches, chosen by the JSON
	// kind of the value.
	Branches []Branch
	// at is the JSON pointer of the canonical subschema.
	at string
	// need: some value under this node can lose a member.
	need bool
	// members lists Props, with their Nullable flag, when there are few:
	// a search of a short list costs less than two map lookups.
	members []member
}

// member is one declared member of an object, for Apply.
type member struct {
	name     string
	nullable bool
	undo     *Undo
}

// fewMembers is the most members listed in Undo.members.
const fewMembers = 16

// member returns whether a null for the member key of an object stands for
// its absence, and the undo of its value.
func (u *Undo) member(key string) (bool, *Undo) {
	if len(u.Props) > fewMembers || len(u.members) < len(u.Props) {
		return u.Nullable[key], u.Props[key]
	}
	for i := range u.members {
		if u.members[i].name == key {
			return u.members[i].nullable, u.members[i].undo
		}
	}
	return false, nil
}

// Branch is one anyOf branch: the JSON kinds it admits ('{', '[', '"',
// '0' for numbers, 't' for booleans, 'n' for null; empty for any) and its
// undo.
type Branch struct {
	Kinds string
	Undo  *Undo
	// node is the lowered branch while the lowering runs, for finish to
	// compute Kinds from; nil once Lower returns.
	node any
}

// Apply undoes the lowering on args, the argument text a provider sent. It
// returns args itself, byte for byte, unless a null was removed, and then
// args with only the removed members cut out; text that is not one
// well-formed JSON value with unique member names is returned unchanged,
// for Prepare to refuse.
//
// It reads args once, byte by byte, without decoding it into values: when
// nothing is cut it allocates nothing, and otherwise only the result.
func (u *Undo) Apply(args string) string {
	if u == nil || !u.need || !strings.Contains(args, "null") {
		return args
	}
	sc := scanner{text: args}
	if !sc.value(u, 0) || !sc.end() || sc.cutCount == 0 {
		return args
	}
	return sc.result()
}

// span is a range of bytes cut out of the argument text.
type span struct{ from, to int }

// nodes appends u and every node it reaches, each once.
func (u *Undo) nodes(all []*Undo, seen map[*Undo]bool) []*Undo {
	if u == nil || seen[u] {
		return all
	}
	seen[u] = true
	all = append(all, u)
	all = u.Items.nodes(all, seen)
	for _, p := range u.Props {
		all = p.nodes(all, seen)
	}
	for _, b := range u.Branches {
		all = b.Undo.nodes(all, seen)
	}
	return all
}

// markNeed sets need on every node that can remove a member, itself or
// below; a fixpoint, because a recursive schema's graph has cycles.
func markNeed(all []*Undo) {
	for changed := true; changed; {
		changed = false
		for _, u := range all {
			if !u.need && u.below() {
				u.need, changed = true, true
			}
		}
	}
}

// below reports whether u, or a node one step below, can remove a member.
func (u *Undo) below() bool {
	if len(u.Nullable) > 0 || u.Items != nil && u.Items.need {
		return true
	}
	for _, p := range u.Props {
		if p != nil && p.need {
			return true
		}
	}
	for _, b := range u.Branches {
		if b.Undo != nil && b.Undo.need {
			return true
		}
	}
	return false
}

// kindOf is the JSON kind of a value that starts with c: '{', '[', '"',
// 'n', 't' for both booleans, '0' for numbers and anything else.
func kindOf(c byte) byte {
	switch c {
	case '{', '[', '"', 'n', 't':
		return c
	case 'f':
		return 't'
	}
	return '0'
}

// pick returns the branch undo for a value of kind k (see kindOf); nil
// when no branch, or more than one, claims it.
func (u *Undo) pick(k byte) *Undo {
	var found *Undo
	n := 0
	for _, b := range u.Branches {
		if b.Kinds == "" || strings.IndexByte(b.Kinds, k) >= 0 {
			found = b.Undo
			n++
		}
	}
	if n != 1 {
		return nil
	}
	return found
}

// finish computes the kinds of every anyOf branch, now that every
// definition is lowered, marks the nodes that can remove a member, and
// blocks a schema whose null removal would be ambiguous: a branch that
// removes nulls must admit kinds no other branch admits.
func (l *lowerer) finish(root *Undo) {
	all := root.nodes(nil, map[*Undo]bool{})
	markNeed(all)
	for _, u := range all {
		for i := range u.Branches {
			u.Branches[i].Kinds = l.kinds(u.Branches[i].node, 0)
			u.Branches[i].node = nil
		}
		if ambiguous(u.Branches) {
			l.block(u.at+"/anyOf", "anyOf branches with optional members must differ in JSON type from the other branches, so that a null sent for an absent member can be removed unambiguously")
		}
		if n := len(u.Props); u.need && n > 0 && n <= fewMembers && declared(u) {
			u.members = make([]member, 0, n)
			for name, p := range u.Props {
				u.members = append(u.members, member{name, u.Nullable[name], p})
			}
		}
	}
}

// declared reports whether every member of u.Nullable is in u.Props.
func declared(u *Undo) bool {
	for name := range u.Nullable {
		if _, ok := u.Props[name]; !ok {
			return false
		}
	}
	return true
}

// ambiguous reports whether a branch that removes nulls shares a JSON kind
// with another branch.
func ambiguous(branches []Branch) bool {
	for i, b := range branches {
		if b.Undo == nil || !b.Undo.need {
			continue
		}
		for j, o := range branches {
			if i != j && overlap(b.Kinds, o.Kinds) {
				return true
			}
		}
	}
	return false
}

// overlap reports whether the JSON kinds a and b share one; "" stands
// for every kind.
func overlap(a, b string) bool {
	if a == "" || b == "" {
		return true
	}
	for i := range len(a) {
		if strings.IndexByte(b, a[i]) >= 0 {
			return true
		}
	}
	return false
}

// kinds returns the JSON kinds a lowered node admits, "" for any.
func (l *lowerer) kinds(node any, depth int) string {
	m, ok := node.(map[string]any)
	if !ok || depth > 64 {
		return ""
	}
	if t, ok := m["type"]; ok {
		var names []any
		switch tt := t.(type) {
		case string:
			names = []any{tt}
		case []any:
			names = tt
		}
		var b strings.Builder
		for _, n := range names {
			switch n {
			case "object":
				b.WriteByte('{')
			case "array":
				b.WriteByte('[')
			case "string":
				b.WriteByte('"')
			case "number", "integer":
				b.WriteByte('0')
			case "boolean":
				b.WriteByte('t')
			case "null":
				b.WriteByte('n')
			}
		}
		return b.String()
	}
	if e, ok := m["enum"].([]any); ok {
		return valueKinds(e)
	}
	if c, ok := m["const"]; ok {
		return valueKinds([]any{c})
	}
	if ref, ok := m["$ref"].(string); ok {
		if ref == "#" {
			return "{"
		}
		name := unescape(strings.TrimPrefix(ref, "#/$defs/"))
		if d, ok := l.definitions[name]; ok {
			return l.kinds(d.lowered, depth+1)
		}
		return ""
	}
	if br, ok := m["anyOf"].([]any); ok {
		var b strings.Builder
		for _, x := range br {
			k := l.kinds(x, depth+1)
			if k == "" {
				return ""
			}
			b.WriteString(k)
		}
		return b.String()
	}
	return ""
}

// valueKinds returns the JSON kinds of vals, primitive values.
func valueKinds(vals []any) string {
	var b strings.Builder
	for _, v := range vals {
		switch v.(type) {
		case string:
			b.WriteByte('"')
		case bool:
			b.WriteByte('t')
		case nil:
			b.WriteByte('n')
		default:
			b.WriteByte('0')
		}
	}
	return b.String()
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
