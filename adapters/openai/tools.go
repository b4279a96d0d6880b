package toolopenai

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Errors returned by this package; every error wraps one of them. The
// other provider adapters (toolanthropic, toolgemini) use the same names
// for the same meanings.
var (
	// ErrInvalidConfig: [New] was given a [Config] OpenAI would refuse:
	// both a Registry and Definitions, a definition that does not
	// validate, a name OpenAI refuses or a name given twice.
	ErrInvalidConfig = errprefix.New("invalid config for OpenAI")
	// ErrInvalidReply: a reply of the model whose calls cannot be
	// answered: no response, or a function call without the ID its
	// result must echo.
	ErrInvalidReply = errprefix.New("invalid reply from OpenAI")
	// ErrInvalidOutcome: an outcome that has no result to send yet (a
	// suspended call, or the zero [dispatch.Outcome]) or no call ID.
	ErrInvalidOutcome = errprefix.New("invalid outcome for OpenAI")
)

// Limits of one strict schema, from the Structured Outputs documentation.
const (
	maxProperties     = 5000
	maxDepth          = 10
	maxStringChars    = 120000
	maxEnumValues     = 1000
	maxLargeEnumChars = 15000
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
	// Strict asks for strict mode (Structured Outputs) for every tool whose
	// input schema can be lowered to OpenAI's strict subset. A tool that
	// cannot is sent with strict set to false, and Tools.Lints says why.
	// When Strict is false every tool is sent with strict set to false.
	Strict bool
}

// Lint is one finding about a tool's input schema: what blocks strict mode
// ([Tools.Lints]), or a constraint OpenAI does not enforce that was moved
// into the description ([Tools.Relaxed]). A Lint is a value, safe to copy
// and to share; the zero Lint is a finding about no tool. The other
// provider adapters of this repository (toolanthropic, toolgemini) have a
// Lint of the same fields.
type Lint struct {
	// Tool is the name of the definition.
	Tool string
	// Schema is "input": the schema Pointer is in.
	Schema string
	// Pointer is the JSON pointer (RFC 6901) of the keyword in the tool's
	// canonical input schema; "" is the root.
	Pointer string
	// Rule says what OpenAI cannot take there and what was done.
	Rule string
}

// String renders l on one line: `get_weather input schema at
// /properties/unit: rule`, the root written "(root)".
func (l Lint) String() string { return adapterkit.Lint(l).String() }

// Tools is a set of tool definitions projected for OpenAI: the tool
// parameters of Chat Completions and Responses, the strict-mode findings,
// and what it takes to turn the model's calls back into canonical
// requests. It is made by [New], is immutable and safe for concurrent use;
// the parameters it returns are fresh on every call and belong to the
// caller. The zero Tools offers no tools.
//
// Each of the two APIs has the same three steps, named alike: the tools to
// advertise ([Tools.ChatTools], [Tools.ResponseTools]), the calls of the
// model's reply ([Tools.ChatCalls], [Tools.ResponseCalls]) and the results
// that answer them ([ChatResults], [ResponseResults]).
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
// validate, a name OpenAI refuses (it allows 1 to 64 of a-z, A-Z, 0-9, _ and
// -), or a name given twice; every such definition is named in the one error.
// A schema that cannot be strict is not an error: see [Tools.Lints]. Tools
// that share an input schema (byte for byte, as those [tool.NewFunc] derives
// from one Go type do) share its lowering, which New computes once.
func New(config Config) (*Tools, error) {
	projection, problems := adapterkit.Project(config.Registry, config.Definitions, namePattern, "1 to 64 of a-z, A-Z, 0-9, _ and -")
	if len(problems) > 0 {
		return nil, errprefix.Errorf("%w: %s", ErrInvalidConfig, strings.Join(problems, "; "))
	}
	t := &Tools{registry: config.Registry, projection: projection}
	if config.Strict {
		var schemas adapterkit.Schemas
		for i := range t.projection.Tools {
			lower(&t.projection.Tools[i], &schemas)
		}
	}
	return t, nil
}

// lower makes p strict, or records why it cannot be.
func lower(p *adapterkit.Projected, schemas *adapterkit.Schemas) {
	res := schemas.Lower(p.Def.InputSchema, strictschema.OpenAI)
	blocked := slices.Clip(res.Blocked)
	for _, limit := range []struct {
		n, max int
		what   string
	}{
		{res.Properties, maxProperties, "object members"},
		{res.Depth, maxDepth, "levels of object nesting"},
		{res.StringChars, maxStringChars, "characters of names, enum and const values"},
		{res.EnumValues, maxEnumValues, "enum values"},
		{res.LargeEnumChars, maxLargeEnumChars, "characters of string enums of more than 250 values"},
	} {
		if limit.n > limit.max {
			blocked = append(blocked, strictschema.Finding{Rule: fmt.Sprintf("%d %s exceed the strict limit of %d", limit.n, limit.what, limit.max)})
		}
	}
	if len(blocked) > 0 {
		p.Blocked = adapterkit.InputLints(p.Blocked, p.Def.Name, blocked)
		return
	}
	p.MakeStrict(res)
}

// Lints lists, tool by tool and place by place, why a tool is sent with
// strict set to false although [Config].Strict asked for strict mode. Empty
// when every tool is strict or strict mode was not asked for. The slice is
// the caller's.
func (t *Tools) Lints() []Lint { return adapterkit.BlockedLints[Lint](&t.projection) }

// Relaxed lists the constraints of strict tools that OpenAI does not enforce
// (string lengths, unsupported formats, …): they were moved into the
// description of their member, and [tool.Contract.Prepare] still enforces
// them, so a model that breaks one gets a rejection it can correct. It also
// lists each optional member whose own schema admits null: strictly, a null
// for it means "not given", so an explicit null cannot be sent. The slice
// is the caller's.
func (t *Tools) Relaxed() []Lint { return adapterkit.RelaxedLints[Lint](&t.projection) }

// Strict reports whether the tool named name is sent in strict mode.
func (t *Tools) Strict(name string) bool { return t.projection.Strict(name) }

// request turns a call of the model into a canonical request: for a strict
// tool, the nulls sent for absent optional members are removed; otherwise
// the argument text goes to Prepare as it came.
func (t *Tools) request(name, arguments string) tool.Request {
	return t.projection.Request(name, arguments)
}

// checkOutcomes refuses outcomes with nothing to send.
func checkOutcomes(outcomes []dispatch.Outcome) error {
	if problem := adapterkit.OutcomeProblem(outcomes); problem != "" {
		return errprefix.Errorf("%w: %s", ErrInvalidOutcome, problem)
	}
	return nil
}
