// This file holds the open lowering: the rule set Open and LowerOpen,
// which applies it.

package strictschema

import (
	"strings"

	"github.com/agentcontract/tool/internal/keyword"
)

// Open is the rule set of an open lowering: one for a provider that
// takes a schema as a hint to generation, not as a strict grammar (Gemini's
// parametersJsonSchema), so that nothing needs closing, requiring or
// undoing, and what the provider does not take is kept by Prepare alone.
// LowerOpen applies it; the walk, the notes and the findings are this
// package's, the decisions the rule set's.
//
// The zero Open drops every keyword. An Open is read, never changed, by
// LowerOpen, and may be shared by concurrent calls when its functions may.
type Open struct {
	// Action says what to do with keyword k of a node; nil drops every
	// keyword. A kept keyword's subschemas are lowered, keeping the shape
	// of its value (a list stays a list, a map a map); a value of another
	// shape is kept as it is.
	Action func(k string) Action
	// Rewrite lowers keyword k, of value v, of node n, when Action says
	// Rewrite: it may set members of n.Out, add notes and findings.
	Rewrite func(n *Node, k string, v any)
	// Finish is called on each node after its keywords, before its notes
	// join its description; nil for none.
	Finish func(n *Node)
	// Note renders a relaxed keyword and its value for the description.
	Note func(k string, v any) string
	// Relaxed and Blocked give the sentence of the finding for a relaxed
	// or blocked keyword k.
	Relaxed, Blocked func(k string) string
}

// Node is one schema node while LowerOpen lowers it.
type Node struct {
	// In is the node as the document has it; the rule set must not change
	// it.
	In map[string]any
	// Out is the lowered node, filled keyword by keyword in name order.
	Out map[string]any
	// Pointer is the JSON pointer of In in the document.
	Pointer string
	// Notes are written, joined, into Out's description after Finish.
	Notes []string
	// lowering is the run of LowerOpen the node belongs to, which records
	// the findings.
	lowering *openLowering
}

// Relax records a Relaxed finding at keyword k of n.
func (n *Node) Relax(k, rule string) {
	n.lowering.relaxed = append(n.lowering.relaxed, Finding{keyword.Append(n.Pointer, k), rule})
}

// Block records a Blocked finding at keyword k of n.
func (n *Node) Block(k, rule string) {
	n.lowering.blocked = append(n.lowering.blocked, Finding{keyword.Append(n.Pointer, k), rule})
}

// Lower returns the value v of keyword k of n lowered: its subschemas
// lowered by the same rule set, in a value of the same shape.
func (n *Node) Lower(k string, v any) any {
	return n.lowering.value(k, v, n.Pointer)
}

// OpenResult is the outcome of LowerOpen.
type OpenResult struct {
	// Tree is the lowered document, sharing no map or slice with the one
	// given, except the values of kept keywords that hold no subschema.
	Tree any
	// Relaxed lists what was dropped or weakened, in the order of the
	// walk; Blocked what cannot be expressed.
	Relaxed, Blocked []Finding
}

// openLowering is one run of LowerOpen: its rule set and the findings
// so far.
type openLowering struct {
	rules            Open
	relaxed, blocked []Finding
}

// LowerOpen lowers doc, a decoded schema document (see Decode), under
// rules. It never fails: what cannot be expressed is in Blocked. It walks
// the subschemas the keyword model names (internal/keyword), node by node,
// keywords in name order, and follows no $ref.
func LowerOpen(doc any, rules Open) OpenResult {
	l := &openLowering{rules: rules}
	tree := l.node(doc, "")
	return OpenResult{Tree: tree, Relaxed: l.relaxed, Blocked: l.blocked}
}

// node lowers v, the subschema at ptr: a schema object keyword by
// keyword, in name order; true or false as it is.
func (l *openLowering) node(v any, ptr string) any {
	in, ok := v.(map[string]any)
	if !ok {
		return v // true or false
	}
	n := &Node{In: in, Out: make(map[string]any, len(in)), Pointer: ptr, lowering: l}
	for _, k := range keyword.SortedNames(in) {
		val := in[k]
		action := Drop
		if l.rules.Action != nil {
			action = l.rules.Action(k)
		}
		switch action {
		case Keep:
			n.Out[k] = n.Lower(k, val)
		case Relax:
			n.Relax(k, l.rules.Relaxed(k))
			n.Notes = append(n.Notes, l.rules.Note(k, val))
		case Block:
			n.Block(k, l.rules.Blocked(k))
		case Rewrite:
			l.rules.Rewrite(n, k, val)
		}
	}
	if l.rules.Finish != nil {
		l.rules.Finish(n)
	}
	describe(n.Out, n.Notes)
	return n.Out
}

// value lowers the subschemas of v, the value of keyword k of the node at
// parent, in a
// value of the same shape; a value of another shape is returned as it is.
func (l *openLowering) value(k string, v any, parent string) any {
	switch keyword.Of(k) {
	case keyword.Schema:
		return l.node(v, keyword.Append(parent, k))
	case keyword.SchemaList:
		items, ok := v.([]any)
		if !ok {
			return v
		}
		out := make([]any, len(items))
		for c := range keyword.Each(k, items) {
			out[c.Index] = l.node(c.Schema, c.Pointer(parent))
		}
		return out
	case keyword.SchemaMap, keyword.PatternMap:
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := make(map[string]any, len(m))
		for c := range keyword.Each(k, m) {
			out[c.Name] = l.node(c.Schema, c.Pointer(parent))
		}
		return out
	}
	return v
}

// describe appends notes, joined, to the description of out: what a
// lowering took out of the node, for the model to read.
func describe(out map[string]any, notes []string) {
	if len(notes) == 0 {
		return
	}
	desc, _ := out["description"].(string)
	if desc != "" {
		desc += " "
	}
	out["description"] = desc + "(" + strings.Join(notes, "; ") + ")"
}
