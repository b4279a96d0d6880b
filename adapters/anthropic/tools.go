package toolanthropic

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Errors returned by this package; every error wraps one of them. The
// other provider adapters (toolopenai, toolgemini) use the same names for
// the same meanings.
var (
	// ErrInvalidConfig: [New] was given a [Config] Anthropic would refuse:
	// both a Registry and Definitions, a definition that does not
	// validate, a name Anthropic refuses or a name given twice, or a
	// StrictFirst that names no tool or one tool twice.
	ErrInvalidConfig = errprefix.New("invalid config for Anthropic")
	// ErrInvalidReply: a reply of the model whose calls cannot be
	// answered: a tool_use block without the ID its result must echo.
	ErrInvalidReply = errprefix.New("invalid reply from Anthropic")
	// ErrInvalidOutcome: an outcome that has no result to send yet (a
	// suspended call, or the zero [dispatch.Outcome]) or no call ID.
	ErrInvalidOutcome = errprefix.New("invalid outcome for Anthropic")
)

// Budgets of one request in strict mode, summed over every strict tool:
// [New] spends them first on the tools [Config].StrictFirst names, then in
// the order of the definitions, and a tool that would overspend one is sent
// non-strict, with a [Lint] that names the budget.
const (
	MaxStrictTools = 20
	MaxOptional    = 24
	MaxUnions      = 16
)

var namePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// Config says which tools to offer and how.
type Config struct {
	// Registry, when not nil, holds the tools to offer: its definitions
	// at the time of New, which were validated when they were registered.
	Registry *tool.Registry
	// Definitions are the tools to offer when Registry is nil. New copies
	// them and validates each, which compiles its schemas.
	Definitions []tool.Definition
	// Strict asks for strict tool use for every tool whose input schema
	// can be lowered to Anthropic's strict subset, as long as the
	// request-wide budgets last; the others are sent with strict set to
	// false, and Tools.Lints says why. When Strict is false every tool is
	// sent with strict set to false.
	Strict bool
	// StrictFirst names the tools that matter most in strict mode: the
	// request-wide budgets are spent on them first, in this order, and
	// then on the other tools in the order of the definitions. It changes
	// which tools are strict when the budgets do not last for all, never
	// the order in which the tools are sent. Each name must be one of the
	// tools, given once; New copies the slice. Nil spends the budgets in
	// the order of the definitions.
	StrictFirst []string
}

// Lint is one finding about a tool's input schema: what blocks strict mode
// ([Tools.Lints]), or a constraint Anthropic does not enforce that was moved
// into the description ([Tools.Relaxed]). A Lint is a value, safe to copy
// and to share; the zero Lint is a finding about no tool. The other
// provider adapters of this repository (toolopenai, toolgemini) have a
// Lint of the same fields.
type Lint struct {
	// Tool is the name of the definition.
	Tool string
	// Schema is "input", the schema Pointer is in; empty for a
	// request-wide budget, which concerns the tool as a whole.
	Schema string
	// Pointer is the JSON pointer (RFC 6901) of the keyword in the tool's
	// canonical input schema; "" is the root, and a budget has none.
	Pointer string
	// Rule says what Anthropic cannot take there, or which budget would
	// be exceeded, and what was done.
	Rule string
}

// String renders l on one line: `get_weather input schema at
// /properties/unit: rule`, the root written "(root)", or, for a budget,
// `tool "get_weather": rule`.
func (l Lint) String() string { return adapterkit.Lint(l).String() }

// Tools is a set of tool definitions projected for the Messages API: the
// tool parameters, the strict-mode findings, and what it takes to turn the
// model's tool_use blocks into requests. It is made by [New], is immutable
// and safe for concurrent use; the parameters it returns are fresh on
// every call and belong to the caller. The zero Tools offers no tools.
//
// [Tools.Tools] goes out with the request, [Tools.Calls] reads the
// model's reply, and [Results] answers its calls.
type Tools struct {
	// registry is Config.Registry, whose contracts check streamed
	// arguments; nil with Definitions.
	registry *tool.Registry
	// projection holds the tools, which of them are strict, and the
	// findings.
	projection adapterkit.Projection
}

// New projects the definitions of [Config].Registry or [Config].Definitions.
// Errors wrap [ErrInvalidConfig]: both given, a definition that does not
// validate, a name Anthropic refuses (it allows 1 to 64 of a-z, A-Z, 0-9, _
// and -), or a name given twice; every such definition is named in the one
// error. A schema that cannot be strict is not an error: see [Tools.Lints].
// Tools that share an input schema (byte for byte, as those [tool.NewFunc]
// derives from one Go type do) share its lowering, which New computes once.
//
// The request-wide budgets of strict mode ([MaxStrictTools] strict tools,
// [MaxOptional] optional members and [MaxUnions] anyOf or multi-type members,
// summed over the strict tools) are spent first on the tools
// [Config].StrictFirst names, then in the order of the definitions: a tool
// that would overspend one is sent non-strict, with a lint that names the
// budget. A name of StrictFirst that is not one of the tools, or is given
// twice, is an error wrapping [ErrInvalidConfig].
func New(config Config) (*Tools, error) {
	projection, problems := adapterkit.Project(config.Registry, config.Definitions, namePattern, "1 to 64 of a-z, A-Z, 0-9, _ and -")
	if len(problems) > 0 {
		return nil, errprefix.Errorf("%w: %s", ErrInvalidConfig, strings.Join(problems, "; "))
	}
	order, err := spendingOrder(projection.Tools, config.StrictFirst)
	if err != nil {
		return nil, err
	}
	t := &Tools{registry: config.Registry, projection: projection}
	if !config.Strict {
		return t, nil
	}
	// The findings of each tool are its own, so they are listed in the
	// order of the definitions, whatever the order the budgets are spent
	// in.
	strictTools, optional, unions := 0, 0, 0
	var schemas adapterkit.Schemas
	for _, i := range order {
		p := &t.projection.Tools[i]
		if strictTools == MaxStrictTools {
			// No budget left for any tool: lowering would change nothing.
			p.Blocked = append(p.Blocked, adapterkit.Lint{Tool: p.Def.Name, Rule: fmt.Sprintf(
				"the request-wide budget of %d strict tools would be exceeded: the strict tools before this one use %d and this one needs 1",
				MaxStrictTools, strictTools)})
			continue
		}
		res := schemas.Lower(p.Def.InputSchema, strictschema.Anthropic)
		if len(res.Blocked) > 0 {
			p.Blocked = adapterkit.InputLints(p.Blocked, p.Def.Name, res.Blocked)
			continue
		}
		for _, b := range []struct {
			used, add, max int
			what           string
		}{
			{strictTools, 1, MaxStrictTools, "strict tools"},
			{optional, res.Optional, MaxOptional, "optional members"},
			{unions, res.Unions, MaxUnions, "anyOf or multi-type members"},
		} {
			if b.used+b.add > b.max {
				// A budget concerns the tool as a whole: no schema, no
				// pointer.
				p.Blocked = append(p.Blocked, adapterkit.Lint{Tool: p.Def.Name, Rule: fmt.Sprintf(
					"the request-wide budget of %d %s would be exceeded: the strict tools before this one use %d and this one needs %d",
					b.max, b.what, b.used, b.add)})
			}
		}
		if len(p.Blocked) > 0 {
			continue
		}
		strictTools, optional, unions = strictTools+1, optional+res.Optional, unions+res.Unions
		p.MakeStrict(res)
	}
	return t, nil
}

// spendingOrder returns the indexes of tools in the order the strict
// budgets are spent: the tools named by first, in its order, then the
// others in the order of tools. A name of first that is not a tool's, or is
// given twice, is an error wrapping [ErrInvalidConfig].
func spendingOrder(tools []adapterkit.Projected, first []string) ([]int, error) {
	order := make([]int, 0, len(tools))
	taken := make([]bool, len(tools))
	var problems []string
	for _, name := range first {
		i := slices.IndexFunc(tools, func(p adapterkit.Projected) bool { return p.Def.Name == name })
		switch {
		case i < 0:
			problems = append(problems, fmt.Sprintf("StrictFirst names %q, which is not one of the tools", name))
		case taken[i]:
			problems = append(problems, fmt.Sprintf("StrictFirst names %q twice", name))
		default:
			taken[i] = true
			order = append(order, i)
		}
	}
	if len(problems) > 0 {
		return nil, errprefix.Errorf("%w: %s", ErrInvalidConfig, strings.Join(problems, "; "))
	}
	for i := range tools {
		if !taken[i] {
			order = append(order, i)
		}
	}
	return order, nil
}

// Lints lists, tool by tool and place by place, why a tool is sent with
// strict set to false although [Config].Strict asked for strict mode. The
// slice is the caller's.
func (t *Tools) Lints() []Lint { return adapterkit.BlockedLints[Lint](&t.projection) }

// Relaxed lists the constraints of strict tools that Anthropic does not
// enforce (numeric bounds, string lengths, maxItems, …): they were moved into
// the description of their member, and [tool.Contract.Prepare] still enforces
// them, so a model that breaks one gets a rejection it can correct. The slice
// is the caller's.
func (t *Tools) Relaxed() []Lint { return adapterkit.RelaxedLints[Lint](&t.projection) }

// Strict reports whether the tool named name is sent in strict mode.
func (t *Tools) Strict(name string) bool { return t.projection.Strict(name) }

// Tools returns the tools as Messages API tool parameters, for
// [anthropic.MessageNewParams].Tools, in the order of the definitions (a
// [tool.Registry] lists its own sorted by name), each with strict set
// explicitly.
func (t *Tools) Tools() []anthropic.ToolUnionParam {
	return adapterkit.ToolParams(&t.projection, func(p adapterkit.Param) anthropic.ToolUnionParam {
		return anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{
			Name:        p.Name,
			Description: adapterkit.NonEmpty(p.Description, anthropic.String),
			InputSchema: inputSchema(p.Input),
			Strict:      anthropic.Bool(p.Strict),
		}}
	})
}

// inputSchema is schema as the SDK's input schema parameter: its properties
// and required members in their fields, every other keyword but type in
// ExtraFields. schema is the caller's and is changed.
func inputSchema(schema map[string]any) anthropic.ToolInputSchemaParam {
	in := anthropic.ToolInputSchemaParam{Properties: schema["properties"]}
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				in.Required = append(in.Required, s)
			}
		}
	}
	delete(schema, "type")
	delete(schema, "properties")
	delete(schema, "required")
	if len(schema) > 0 {
		in.ExtraFields = schema
	}
	return in
}

// Calls returns the tool_use blocks of an assistant message as
// [dispatch.Call] values for [dispatch.Dispatcher.RunAll], in order, with the
// tool_use ID as the correlation ID and the input, as the model wrote it, as
// the argument text. Strict lowering for Anthropic keeps optional members
// optional, so there is nothing to undo. A message without tool_use blocks
// has no calls: an empty slice.
//
// A tool_use block without an ID cannot be answered ([Results] must echo
// it): it is an error wrapping [ErrInvalidReply], and no calls are
// returned.
func (t *Tools) Calls(message anthropic.Message) ([]dispatch.Call, error) {
	calls, missing := adapterkit.Calls(message.Content, func(b *anthropic.ContentBlockUnion) (dispatch.Call, bool) {
		if b.Type != "tool_use" {
			return dispatch.Call{}, false
		}
		// The union's own fields, not AsToolUse, which decodes the block
		// again.
		return dispatch.Call{ID: b.ID, Request: tool.Request{Name: b.Name, Arguments: string(b.Input)}}, true
	})
	if missing >= 0 {
		return nil, errprefix.Errorf("%w: tool_use block %d (%q) has no ID", ErrInvalidReply, missing, message.Content[missing].Name)
	}
	return calls, nil
}
