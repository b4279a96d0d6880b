package engine

import (
	"encoding/json"
	"slices"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/strictjson"
)

// maxExpand bounds the chains of references, allOf, anyOf and oneOf a
// Feed follows from one subschema; beyond it, it applies less.
const maxExpand = 64

// expand adds n to the subschemas of a value of kind k, whose subschemas
// start at start in f.nodes, with every subschema that must hold with it:
// its reference, its allOf, and the one branch of an anyOf or oneOf that
// accepts k when only one does. It returns the violation when one of them
// refuses every value of kind k.
func (f *Feed) expand(n *node, k byte, start, depth int) jsonschema.ErrorKind {
	if n == nil || depth > maxExpand {
		return nil
	}
	if n.boolean != nil {
		if !*n.boolean {
			return &kind.FalseSchema{}
		}
		return nil
	}
	if n.hasType && !n.kindPossible(k) {
		return &kind.Type{Got: kindName(k), Want: n.types.ToStrings()}
	}
	if slices.Contains(f.nodes[start:], n) || len(f.nodes) >= feedNodes {
		return nil
	}
	f.nodes = append(f.nodes, n)
	f.bits = append(f.bits, 0)
	if v := f.expand(n.ref, k, start, depth+1); v != nil {
		return v
	}
	for _, m := range n.allOf {
		if v := f.expand(m, k, start, depth+1); v != nil {
			return v
		}
	}
	for i, alts := range [2][]*node{n.anyOf, n.oneOf} {
		if len(alts) == 0 {
			continue
		}
		var only *node
		count := 0
		for _, m := range alts {
			if possible(m, k, 0) {
				only = m
				count++
			}
		}
		switch {
		case count == 1:
			if v := f.expand(only, k, start, depth+1); v != nil {
				return v
			}
		case count == 0 && i == 1:
			return &kind.OneOf{}
		case count == 0:
			return &kind.AnyOf{}
		}
	}
	return nil
}

// possible reports whether n may accept some value of kind k: false only
// when its type, const, enum, the false schema, its reference or allOf,
// or every branch of an anyOf or oneOf, refuse every such value.
func possible(n *node, k byte, depth int) bool {
	if n == nil || depth > maxExpand {
		return true
	}
	switch {
	case n.boolean != nil:
		return *n.boolean
	case n.hasType && !n.kindPossible(k):
		return false
	case n.constant != nil && !sameKind(*n.constant, k):
		return false
	case n.enum != nil && !slices.ContainsFunc(n.enum.values, func(v any) bool { return sameKind(v, k) }):
		return false
	case !possible(n.ref, k, depth+1):
		return false
	}
	for _, m := range n.allOf {
		if !possible(m, k, depth+1) {
			return false
		}
	}
	for _, alts := range [2][]*node{n.anyOf, n.oneOf} {
		if len(alts) > 0 && !slices.ContainsFunc(alts, func(m *node) bool { return possible(m, k, depth+1) }) {
			return false
		}
	}
	return true
}

// sameKind reports whether the value v, from a schema, is of kind k (true
// and false being one kind).
func sameKind(v any, k byte) bool {
	switch v.(type) {
	case nil:
		return k == strictjson.KindNull
	case bool:
		return k == strictjson.KindTrue || k == strictjson.KindFalse
	case string:
		return k == strictjson.KindString
	case json.Number:
		return k == strictjson.KindNumber
	case []any:
		return k == strictjson.KindArray
	case map[string]any:
		return k == strictjson.KindObject
	}
	return true
}

// kindPossible is the type keyword of n on a value of kind k, an integer
// being possible for any number.
func (n *node) kindPossible(k byte) bool {
	if k == strictjson.KindNumber {
		return n.number || n.integer
	}
	var probe jsonschema.Types
	probe.Add(kindName(k))
	return n.types&probe != 0
}

// kindName is the JSON Schema type name of kind k.
func kindName(k byte) string {
	switch k {
	case strictjson.KindObject:
		return "object"
	case strictjson.KindArray:
		return "array"
	case strictjson.KindString:
		return "string"
	case strictjson.KindNumber:
		return "number"
	case strictjson.KindNull:
		return "null"
	}
	return "boolean"
}

// Growing checks maxLength while a string is read.
func (f *Feed) Growing(runes int) error {
	return f.lengths(runes, false, f.push.Pos())
}

// growing is maxLength broken by a string still being read, whose length
// is only known to be at least got.
type growing struct {
	got, want int
}

func (*growing) KeywordPath() []string { return []string{"maxLength"} }

func (k *growing) LocalizedString(p *message.Printer) string {
	return p.Sprintf("maxLength: got at least %d, want %d", k.got, k.want)
}

// String checks a string value at its end: its length, and every keyword
// when it was kept whole.
func (f *Feed) String(content []byte, whole bool, runes int) error {
	defer f.endScalar()
	if err := f.lengths(runes, true, f.push.Start()); err != nil {
		return err
	}
	if !whole {
		return nil
	}
	return f.checkScalar(strictjson.KindString, view(content))
}

// lengths checks maxLength, and at the end minLength, of the string being
// read, runes long so far.
func (f *Feed) lengths(runes int, end bool, offset int) error {
	for _, n := range f.nodes[f.scalar:] {
		switch {
		case n.maxLength >= 0 && runes > n.maxLength && !end:
			return f.violation(offset, f.tokens(true), &growing{got: runes, want: n.maxLength})
		case n.maxLength >= 0 && runes > n.maxLength:
			return f.violation(offset, f.tokens(true), &kind.MaxLength{Got: runes, Want: n.maxLength})
		case end && n.minLength >= 0 && runes < n.minLength:
			return f.violation(offset, f.tokens(true), &kind.MinLength{Got: runes, Want: n.minLength})
		}
	}
	return nil
}

// Number checks a number at its end.
func (f *Feed) Number(token []byte) error {
	defer f.endScalar()
	return f.checkScalar(strictjson.KindNumber, view(token))
}

// Literal checks true, false or null.
func (f *Feed) Literal(k byte) error {
	defer f.endScalar()
	return f.checkScalar(k, "")
}

// endScalar forgets the subschemas of the scalar just read.
func (f *Feed) endScalar() {
	clear(f.nodes[f.scalar:])
	f.nodes, f.bits = f.nodes[:f.scalar], f.bits[:f.scalar]
	clear(f.seeds)
	f.seeds = f.seeds[:0]
}

// checkScalar checks the scalar of kind k and text (a string's decoded
// content, a number's token), read whole, against every subschema that
// applies to it, as Check does: for the verdict, as CheckJSON reads a
// scalar, which allocates nothing unless a format is asserted; for the
// message, as Explain does. The checks spend the Feed's budget; once that
// is spent, nothing more is checked.
func (f *Feed) checkScalar(k byte, text string) error {
	if f.root == nil {
		return nil
	}
	t := target{kind: k, text: text}
	for _, s := range f.seeds {
		f.check.counted = "" // the scratch text is reused: never trust a count
		f.check.declined = false
		valid := f.check.scalarCheck(s.n, &t)
		switch {
		case f.check.exhausted:
			f.root = nil
			return nil
		case valid || f.check.declined:
			continue // valid, or no verdict
		}
		v := t.value(true)
		r := run{budget: MaxValidationWork / 4, explain: true, at: &location{}, sink: &sink{onlyType: true}}
		if v == nil && s.optional {
			r.optionalNull(s.n)
		} else {
			r.check(s.n, v)
		}
		if len(r.sink.kept) == 0 {
			return nil // no verdict within the budget
		}
		at := f.tokens(true)
		violations := make([]Violation, len(r.sink.kept))
		for i, found := range r.sink.kept {
			violations[i] = Violation{Location: append(slices.Clip(at), found.at.tokens()...), Kind: found.kind}
		}
		return &Refusal{Offset: f.push.Start(), Message: rejectViolations(violations, r.sink.total).Message}
	}
	return nil
}

// Close checks an array or object at its end: minItems, minProperties and
// required.
func (f *Feed) Close(k byte) error {
	top := &f.frames[len(f.frames)-1]
	if f.root != nil {
		offset := f.push.Pos() - 1
		for i, n := range f.nodes[top.nodes:] {
			var v jsonschema.ErrorKind
			switch {
			case k == strictjson.KindArray:
				if n.minItems >= 0 && top.count < n.minItems {
					v = &kind.MinItems{Got: top.count, Want: n.minItems}
				}
			case n.minProps >= 0 && top.count < n.minProps:
				v = &kind.MinProperties{Got: top.count, Want: n.minProps}
			case len(n.required) > 0 && len(n.required) <= 64 && !top.partial:
				if present := f.bits[top.nodes+i]; present != 1<<len(n.required)-1 {
					var missing []string
					for j, name := range n.required {
						if present&(1<<j) == 0 {
							missing = append(missing, name)
						}
					}
					v = &kind.Required{Missing: missing}
				}
			}
			if v != nil {
				return f.violation(offset, f.tokens(false), v)
			}
		}
	}
	clear(f.nodes[top.nodes:])
	f.nodes, f.bits = f.nodes[:top.nodes], f.bits[:top.nodes]
	from, _ := f.nameRange(len(f.frames) - 1)
	f.ends = f.ends[:from]
	f.names = f.names[:0]
	if from > 0 {
		f.names = f.names[:f.ends[from-1]]
	}
	top.seen = nil
	f.frames = f.frames[:len(f.frames)-1]
	return nil
}
