package strictschema

import (
	"bytes"
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

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
}

// Branch is one anyOf branch: the JSON kinds it admits ('{', '[', '"',
// '0' for numbers, 't' for booleans, 'n' for null; empty for any) and its
// undo.
type Branch struct {
	Kinds string
	Undo  *Undo
	node  any
}

// Apply undoes the lowering on args, the argument text a provider sent. It
// returns args itself, byte for byte, unless a null was removed; text that
// is not one well-formed JSON value with unique member names is returned
// unchanged, for Prepare to refuse.
func (u *Undo) Apply(args string) string {
	if u == nil || !u.needed(map[*Undo]bool{}) {
		return args
	}
	dec := jsontext.NewDecoder(strings.NewReader(args))
	var buf bytes.Buffer
	enc := jsontext.NewEncoder(&buf)
	changed, err := u.rewrite(dec, enc)
	if err != nil || !changed {
		return args
	}
	if _, err := dec.ReadToken(); err == nil {
		return args // trailing data: Prepare's to refuse
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// needed reports whether u can remove anything.
func (u *Undo) needed(seen map[*Undo]bool) bool {
	if u == nil || seen[u] {
		return false
	}
	seen[u] = true
	if len(u.Nullable) > 0 || u.Items.needed(seen) {
		return true
	}
	for _, p := range u.Props {
		if p.needed(seen) {
			return true
		}
	}
	for _, b := range u.Branches {
		if b.Undo.needed(seen) {
			return true
		}
	}
	return false
}

func kindOf(k jsontext.Kind) byte {
	switch k {
	case '{', '[', '"', 'n':
		return byte(k)
	case 't', 'f':
		return 't'
	}
	return '0'
}

// pick returns the branch undo for a value of kind k; nil when no branch, or
// more than one, claims it.
func (u *Undo) pick(k jsontext.Kind) *Undo {
	var found *Undo
	n := 0
	for _, b := range u.Branches {
		if b.Kinds == "" || strings.IndexByte(b.Kinds, kindOf(k)) >= 0 {
			found = b.Undo
			n++
		}
	}
	if n != 1 {
		return nil
	}
	return found
}

// rewrite copies one value from dec to enc, undoing u on it.
func (u *Undo) rewrite(dec *jsontext.Decoder, enc *jsontext.Encoder) (bool, error) {
	k := dec.PeekKind()
	if u != nil && len(u.Branches) > 0 {
		return u.pick(k).rewrite(dec, enc)
	}
	switch {
	case u != nil && k == '{':
		changed := false
		tok, err := dec.ReadToken()
		if err != nil {
			return false, err
		}
		if err := enc.WriteToken(tok); err != nil {
			return false, err
		}
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return false, err
			}
			if name.Kind() != '"' {
				return false, errNotObject
			}
			key := name.String()
			if u.Nullable[key] && dec.PeekKind() == 'n' {
				if _, err := dec.ReadValue(); err != nil {
					return false, err
				}
				changed = true
				continue
			}
			if err := enc.WriteToken(jsontext.String(key)); err != nil {
				return false, err
			}
			c, err := u.Props[key].rewrite(dec, enc)
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		tok, err = dec.ReadToken()
		if err != nil {
			return false, err
		}
		return changed, enc.WriteToken(tok)
	case u != nil && u.Items != nil && k == '[':
		changed := false
		tok, err := dec.ReadToken()
		if err != nil {
			return false, err
		}
		if err := enc.WriteToken(tok); err != nil {
			return false, err
		}
		for dec.PeekKind() != ']' {
			c, err := u.Items.rewrite(dec, enc)
			if err != nil {
				return false, err
			}
			changed = changed || c
		}
		tok, err = dec.ReadToken()
		if err != nil {
			return false, err
		}
		return changed, enc.WriteToken(tok)
	}
	v, err := dec.ReadValue()
	if err != nil {
		return false, err
	}
	return false, enc.WriteValue(v)
}

type undoError string

func (e undoError) Error() string { return string(e) }

const errNotObject = undoError("not an object member name")

// finish computes the kinds of every anyOf branch, now that every
// definition is lowered, and blocks a schema whose null removal would be
// ambiguous: a branch that removes nulls must admit kinds no other branch
// admits.
func (l *lowerer) finish(u *Undo, seen map[*Undo]bool) {
	if u == nil || seen[u] {
		return
	}
	seen[u] = true
	for i := range u.Branches {
		u.Branches[i].Kinds = l.kinds(u.Branches[i].node, 0)
		u.Branches[i].node = nil
	}
	if ambiguous(u.Branches) {
		l.block(u.at+"/anyOf", "anyOf branches with optional members must differ in JSON type from the other branches, so that a null sent for an absent member can be removed unambiguously")
	}
	for _, b := range u.Branches {
		l.finish(b.Undo, seen)
	}
	l.finish(u.Items, seen)
	for _, name := range slices.Sorted(maps.Keys(u.Props)) {
		l.finish(u.Props[name], seen)
	}
}

// ambiguous reports whether a branch that removes nulls shares a JSON kind
// with another branch.
func ambiguous(branches []Branch) bool {
	for i, b := range branches {
		if !b.Undo.needed(map[*Undo]bool{}) {
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
		if d, ok := l.defs[name]; ok {
			return l.kinds(d.out, depth+1)
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
