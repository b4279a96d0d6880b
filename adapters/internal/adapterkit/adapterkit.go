// Package adapterkit holds the steps every provider adapter under adapters/
// takes the same way: checking the definitions it is given, projecting them
// (which tools are strict, what the lowering found: [Projection]), listing
// the tool parameters ([ToolParams]) and reading the calls of a reply
// ([Calls]), checking the outcomes it is asked to send back, and decoding a
// schema for an SDK's map-typed parameters. What differs by provider (the
// SDK's types, the strict-mode limits and budgets, the sentinel errors)
// stays in the adapter. The adapters are separate modules and import it by
// path; it has no dependency beyond the core's.
package adapterkit

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Lint is one finding about a tool, made when an adapter projects its
// definitions: what keeps a tool from strict mode, a constraint the provider
// does not enforce (moved into the description, still enforced by
// tool.Contract.Prepare), or a refusal. Each adapter declares a Lint of its
// own with the same fields (see [LintType]) and documents it, so that its
// users never meet this package; it converts this one with [ConvertLints]
// and renders its own with String. The zero Lint is a finding about no
// tool; a Lint is a value, safe to copy and to share.
type Lint struct {
	// Tool is the name of the definition.
	Tool string
	// Schema is "input" or "output", the schema Pointer is in; empty for
	// a finding about the tool as a whole (its name, a request-wide
	// budget).
	Schema string
	// Pointer is the JSON pointer (RFC 6901) of the keyword in the
	// canonical schema; "" is the root.
	Pointer string
	// Rule says what the provider cannot take there and what was done.
	Rule string
}

// String renders l on one line: `get_weather input schema at
// /properties/unit: rule`, the root written "(root)", or, for a finding
// about the tool as a whole, `tool "get_weather": rule`.
func (l Lint) String() string {
	if l.Schema == "" {
		return fmt.Sprintf("tool %q: %s", l.Tool, l.Rule)
	}
	p := l.Pointer
	if p == "" {
		p = "(root)"
	}
	return l.Tool + " " + l.Schema + " schema at " + p + ": " + l.Rule
}

// LintType is the type set of the adapters' Lint types: a struct of
// exactly the fields of [Lint], in its order, so that each converts to the
// others.
type LintType interface {
	~struct {
		Tool    string
		Schema  string
		Pointer string
		Rule    string
	}
}

// ConvertLints returns lints as L, in a new slice; nil for none.
func ConvertLints[L, From LintType](lints []From) []L {
	if len(lints) == 0 {
		return nil
	}
	out := make([]L, len(lints))
	for i, l := range lints {
		out[i] = L(l)
	}
	return out
}

// InputLints returns fs as lints of the input schema of tool, appended to
// dst, which grows once.
func InputLints(dst []Lint, tool string, fs []strictschema.Finding) []Lint {
	dst = slices.Grow(dst, len(fs))
	for _, f := range fs {
		dst = append(dst, Lint{Tool: tool, Schema: "input", Pointer: f.Pointer, Rule: f.Rule})
	}
	return dst
}

// Definitions returns the definitions to project: registry's, when it is
// not nil (they were validated when registered), or copies of defs, each
// validated here (which compiles its schemas); and a problem for each
// definition a provider would refuse: both sources given, a name that does
// not match name (described by nameRule), a definition that does not
// validate, a name given twice. A definition with a problem is left out.
func Definitions(registry *tool.Registry, defs []tool.Definition, name *regexp.Regexp, nameRule string) ([]tool.Definition, []string) {
	validate := true
	if registry != nil {
		if len(defs) > 0 {
			return nil, []string{"both a Registry and Definitions are given"}
		}
		defs, validate = registry.Definitions(), false
	}
	out := make([]tool.Definition, 0, len(defs))
	var problems []string
	seen := make(map[string]bool, len(defs))
	for _, d := range defs {
		if validate {
			d = d.Clone()
		}
		if !name.MatchString(d.Name) {
			problems = append(problems, fmt.Sprintf("name %q is not %s", d.Name, nameRule))
			continue
		}
		if validate {
			if err := d.Validate(); err != nil {
				problems = append(problems, errprefix.Body(err))
				continue
			}
		}
		if seen[d.Name] {
			problems = append(problems, fmt.Sprintf("name %q is given twice", d.Name))
			continue
		}
		seen[d.Name] = true
		out = append(out, d)
	}
	return out, problems
}

// OutcomeProblem says why outcomes cannot be sent back to a provider yet,
// or returns "": a suspended outcome (it has no result until resumed), the
// zero Outcome, an outcome without a call ID.
func OutcomeProblem(outcomes []dispatch.Outcome) string {
	for i := range outcomes {
		switch o := &outcomes[i]; {
		case o.Kind == dispatch.KindSuspended:
			return fmt.Sprintf("outcome %d (call %q) is suspended: it waits for a person; give the calls a dispatch.Call.TurnID (or save the turn with Dispatcher.SaveTurn), wait for it with Dispatcher.WaitTurn, and send its outcomes then", i, o.CallID)
		case o.Kind == "":
			return fmt.Sprintf("outcome %d is the zero Outcome", i)
		case o.CallID == "":
			return fmt.Sprintf("outcome %d has no call ID to answer", i)
		}
	}
	return ""
}

// Schemas lowers each distinct schema once: tools of one projection often
// share an input schema (those NewFunc derives from one Go type do). What
// it returns is shared by every caller that passes the same bytes and must
// not be modified. The zero Schemas is ready to use; it is not safe for
// concurrent use.
type Schemas struct {
	lowered map[string]*strictschema.Result
}

// Lower returns strictschema.Lower(raw, rules), computed once per distinct
// raw; rules must be the same on every call.
func (s *Schemas) Lower(raw []byte, rules strictschema.Rules) *strictschema.Result {
	if res, ok := s.lowered[string(raw)]; ok {
		return res
	}
	if s.lowered == nil {
		s.lowered = map[string]*strictschema.Result{}
	}
	res := strictschema.Lower(raw, rules)
	s.lowered[string(raw)] = &res
	return &res
}

// Tree decodes a schema for projection; a schema that does not decode
// (the callers pass only validated ones) gives an empty tree.
func Tree(raw []byte) map[string]any {
	v, err := strictschema.Decode(raw)
	if m, ok := v.(map[string]any); ok && err == nil {
		return m
	}
	return map[string]any{}
}

// SchemaMap returns a deep copy of a schema tree (see strictschema.Decode)
// for an SDK's map-typed parameters: integers become int64 and other
// numbers float64, which every encoder writes as numbers. The copy is the
// caller's.
func SchemaMap(tree map[string]any) map[string]any {
	return copyTree(tree, true).(map[string]any)
}

// Params builds the schemas of one list of tool parameters for an SDK's
// map-typed parameters. For a tool whose schema was lowered it copies the
// lowering (SchemaMap); a schema sent as written is decoded here (see
// Tree), numbers typed as SchemaMap types them, once per distinct schema
// of the list and copied for the other tools that share it, rather than
// decoded in New and copied for every tool. Every schema it returns is the
// caller's, none shares memory with another. The zero Params is ready to
// use; use one per list built, from one goroutine.
type Params struct {
	// decoded holds the schemas as written decoded so far, by their
	// bytes: handed out already, copied only while the list is built,
	// before the caller holds them.
	decoded map[string]map[string]any
}

// Schema returns the schema of one tool: SchemaMap(lowered) when it is not
// nil, and otherwise raw decoded.
func (p *Params) Schema(lowered map[string]any, raw []byte) map[string]any {
	if lowered != nil {
		return SchemaMap(lowered)
	}
	if tree, ok := p.decoded[string(raw)]; ok {
		return SchemaMap(tree)
	}
	tree := Tree(raw)
	typeNumbers(tree)
	if p.decoded == nil {
		p.decoded = map[string]map[string]any{}
	}
	p.decoded[string(raw)] = tree
	return tree
}

// typeNumbers replaces, in place, the json.Number values of v's maps and
// slices as SchemaMap types them.
func typeNumbers(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok {
				x[k] = typedNumber(n)
				continue
			}
			typeNumbers(e)
		}
	case []any:
		for i, e := range x {
			if n, ok := e.(json.Number); ok {
				x[i] = typedNumber(n)
				continue
			}
			typeNumbers(e)
		}
	}
}

// typedNumber is n as an int64 when it is an integer that fits, and
// otherwise as a float64 (n itself when it is neither).
func typedNumber(n json.Number) any {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	if f, err := n.Float64(); err == nil {
		return f
	}
	return n
}

// Clone returns a deep copy of a tree made by strictschema.Decode, or of
// the same types: its maps and slices are new, its leaves (immutable) the
// same, numbers still json.Number.
func Clone(v any) any {
	return copyTree(v, false)
}

// copyTree copies v's maps and slices; typed converts its numbers as
// SchemaMap says.
func copyTree(v any, typed bool) any {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return map[string]any{}
		}
		// A clone copies the map's storage as it is; only the members
		// that are not leaves kept as they are are then replaced.
		m := maps.Clone(x)
		for k, e := range x {
			switch e.(type) {
			case map[string]any, []any:
				m[k] = copyTree(e, typed)
			case json.Number:
				if typed {
					m[k] = copyTree(e, typed)
				}
			}
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = copyTree(e, typed)
		}
		return a
	case json.Number:
		if typed {
			return typedNumber(x)
		}
	}
	return v
}
