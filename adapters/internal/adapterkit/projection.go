package adapterkit

import (
	"regexp"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
	"github.com/agentcontract/tool/dispatch"
)

// Projected is one definition as an adapter projects it: whether it goes
// out in strict mode, the lowering that makes it strict, and what the
// lowering found.
type Projected struct {
	// Def is the definition: the registry's, or the adapter's validated
	// copy of the one it was given.
	Def tool.Definition
	// Strict reports whether the tool is sent in strict mode.
	Strict bool
	// Tree is the lowered input schema, decoded, when Strict (shared with
	// the other tools of the same schema: never modified); nil otherwise,
	// when the definition's schema is sent as written.
	Tree map[string]any
	// Undo turns the arguments of a strict call back into what the
	// canonical schema admits; nil when there is nothing to undo.
	Undo *strictschema.Undo
	// Blocked says why the tool is not strict although strict mode was
	// asked for; Relaxed lists the constraints of a strict tool the
	// provider does not enforce.
	Blocked, Relaxed []Lint
}

// MakeStrict marks p strict under the lowering res, whose relaxed
// constraints it records. res is shared, as Schemas hands it out.
func (p *Projected) MakeStrict(res *strictschema.Result) {
	p.Strict, p.Tree, p.Undo = true, res.Tree, res.Undo
	p.Relaxed = InputLints(p.Relaxed, p.Def.Name, res.Relaxed)
}

// Projection is the part of an adapter's projection of definitions that
// does not depend on the provider: the tools, in the order of the
// definitions, each with its strict state and findings. It is made by
// Project; the adapter then lowers the tools it makes strict. Once built
// it is read-only and safe for concurrent use. The zero Projection holds
// no tools.
type Projection struct {
	// Tools are the definitions, in order.
	Tools []Projected
	// byName is the index in Tools of each tool's name.
	byName map[string]int
}

// Project returns the definitions of registry, or copies of defs, as a
// Projection in which no tool is strict yet, and a problem for each
// definition a provider would refuse, as [Definitions] says (which names
// name allows, described by nameRule).
func Project(registry *tool.Registry, defs []tool.Definition, name *regexp.Regexp, nameRule string) (Projection, []string) {
	defs, problems := Definitions(registry, defs, name, nameRule)
	p := Projection{Tools: make([]Projected, len(defs)), byName: make(map[string]int, len(defs))}
	for i, d := range defs {
		p.Tools[i].Def = d
		p.byName[d.Name] = i
	}
	return p, problems
}

// Strict reports whether the tool named name is sent in strict mode.
func (p *Projection) Strict(name string) bool {
	i, ok := p.byName[name]
	return ok && p.Tools[i].Strict
}

// Request turns a call of the model into a canonical request: for a strict
// tool, what its lowering added is undone (the nulls sent for absent
// optional members are removed); otherwise the argument text goes to
// Prepare as it came.
func (p *Projection) Request(name, arguments string) tool.Request {
	if i, ok := p.byName[name]; ok && p.Tools[i].Strict {
		arguments = p.Tools[i].Undo.Apply(arguments)
	}
	return tool.Request{Name: name, Arguments: arguments}
}

// BlockedLints returns why tools of p are not strict although strict mode
// was asked for ([Projected].Blocked), tool by tool in the order of the
// definitions, as L: a new slice, nil for none.
func BlockedLints[L LintType](p *Projection) []L {
	return gather[L](p, func(t *Projected) []Lint { return t.Blocked })
}

// RelaxedLints returns the constraints of strict tools of p that the
// provider does not enforce ([Projected].Relaxed), tool by tool in the
// order of the definitions, as L: a new slice, nil for none.
func RelaxedLints[L LintType](p *Projection) []L {
	return gather[L](p, func(t *Projected) []Lint { return t.Relaxed })
}

// gather returns the lints of every tool of p, as of picks them, in one new
// slice of L.
func gather[L LintType](p *Projection, of func(*Projected) []Lint) []L {
	n := 0
	for i := range p.Tools {
		n += len(of(&p.Tools[i]))
	}
	if n == 0 {
		return nil
	}
	out := make([]L, 0, n)
	for i := range p.Tools {
		for _, l := range of(&p.Tools[i]) {
			out = append(out, L(l))
		}
	}
	return out
}

// Param is what every provider's tool parameter says of one tool: its
// name, its description (empty for none), whether it is strict, and its
// input schema for the SDK's map-typed parameters.
type Param struct {
	Name, Description string
	Strict            bool
	// Input is the input schema: the lowering when strict, the schema as
	// written otherwise (see [Params.Schema]). It is the caller's.
	Input map[string]any
	// output is the output schema as written; params decodes it.
	output []byte
	params *Params
}

// Output returns the tool's output schema for the SDK's map-typed
// parameters, the caller's, or nil when the tool has none.
func (p Param) Output() map[string]any {
	if len(p.output) == 0 {
		return nil
	}
	return p.params.Schema(nil, p.output)
}

// ToolParams returns one provider tool parameter per tool of p, in the
// order of the definitions, each made by param. Every schema param is
// given is its own (see [Params]).
func ToolParams[P any](p *Projection, param func(Param) P) []P {
	out := make([]P, len(p.Tools))
	var params Params
	for i := range p.Tools {
		t := &p.Tools[i]
		out[i] = param(Param{
			Name:        t.Def.Name,
			Description: t.Def.Description,
			Strict:      t.Strict,
			Input:       params.Schema(t.Tree, t.Def.InputSchema),
			output:      t.Def.OutputSchema,
			params:      &params,
		})
	}
	return out
}

// NonEmpty returns some(s), or the zero O when s is empty: an SDK's
// optional string, set only when there is something to say.
func NonEmpty[O any](s string, some func(string) O) O {
	if s == "" {
		var zero O
		return zero
	}
	return some(s)
}

// Calls returns the calls among items, in order, read by call, which says
// whether an item is a call of a tool and, when it is, its dispatch.Call.
// A call without an ID cannot be answered (its result must echo the ID):
// Calls then returns no calls and the index of the item (missing), for the
// caller's error; otherwise missing is -1. When no item is a call, calls
// is empty, not nil.
func Calls[T any](items []T, call func(*T) (dispatch.Call, bool)) (calls []dispatch.Call, missing int) {
	calls = make([]dispatch.Call, 0, len(items))
	for i := range items {
		c, ok := call(&items[i]) // an SDK's union of every item type: not copied
		if !ok {
			continue
		}
		if c.ID == "" {
			return nil, i
		}
		calls = append(calls, c)
	}
	return calls, -1
}
