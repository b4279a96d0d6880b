package toolgemini

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
	"google.golang.org/genai"
)

// Config says which tools to offer to Gemini and how. The zero Config
// offers no tools.
type Config struct {
	// Registry, when not nil, holds the tools to offer: its definitions
	// at the time of New, which were validated when they were registered.
	Registry *tool.Registry
	// Definitions are the tools to offer when Registry is nil. New copies
	// them and validates each, which compiles its schemas.
	Definitions []tool.Definition
	// OpenAPI, when true, projects input schemas into
	// FunctionDeclaration.Parameters and output schemas into Response: the
	// OpenAPI 3.0 subset (*genai.Schema) that older models and Vertex AI
	// endpoints read. $refs are inlined, so recursive schemas are refused,
	// and parameter names must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$. When
	// false (the default), schemas go to parametersJsonSchema and
	// responseJsonSchema, the JSON Schema path Gemini prefers.
	//
	// The two paths lose different constraints. The JSON path (false)
	// keeps additionalProperties (a closed object stays closed) and drops
	// pattern, minLength, maxLength, minProperties, maxProperties and
	// allOf; the OpenAPI path (true) keeps those and drops
	// additionalProperties, false included, so Gemini may add members the
	// schema forbids. Either way the dropped constraint is written into
	// the description, listed by [Tools.Relaxed], and still enforced by
	// [tool.Contract.Prepare]. Prefer the JSON path unless the model or
	// endpoint reads only parameters, or the patterns and lengths matter
	// more to the model than closed objects.
	OpenAPI bool
}

// Lint is one thing Gemini cannot express in a tool's schema, found by
// [New]: a loss listed by [Tools.Relaxed] (the schema Gemini receives is
// looser than the canonical one there, and the constraint is written into
// the description), or, in the message of an error wrapping
// [ErrInvalidConfig], a refusal. A Lint is a value, safe to copy and to
// share; the zero Lint is a finding about no tool. The other provider
// adapters of this repository (toolopenai, toolanthropic) have a Lint of
// the same fields.
type Lint struct {
	// Tool is the name of the definition.
	Tool string
	// Schema is "input" or "output", the schema Pointer is in; empty for
	// a problem with the name.
	Schema string
	// Pointer is the JSON pointer (RFC 6901) of the keyword in the
	// canonical schema; "" is the root. On the OpenAPI path, which
	// inlines every $ref, it is the path as if the $refs were inlined:
	// /properties/a/x where /properties/a holds a $ref to a schema with
	// keyword x.
	Pointer string
	// Rule says what Gemini cannot express there and what was done.
	Rule string
}

// String renders l on one line: `get_weather input schema at
// /properties/unit: rule`, the root written "(root)", or, for a problem
// with the name, `tool "get_weather": rule`.
func (l Lint) String() string { return adapterkit.Lint(l).String() }

// Tools is a set of tool definitions projected for Gemini: the function
// declarations, the lints of the lowering, and the reading of the model's
// calls. It is made by [New], is immutable and safe for concurrent use;
// what its methods return is fresh on every call and belongs to the
// caller. The zero Tools, and a nil *Tools, offer no tools.
//
// [Tools.Tools] goes out with the request, [Tools.Calls] reads the model's
// reply, and [Results] answers its calls; [NewTurn] and [Turn] do the last
// two for a conversation whose model turns must be replayed.
type Tools struct {
	decls   []*genai.FunctionDeclaration
	relaxed []Lint
}

// namePattern is the core's rule for tool names and Gemini's, that the
// first character is a letter or an underscore.
var namePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// New projects the definitions of [Config].Registry or
// [Config].Definitions into Gemini function declarations
// ([genai.FunctionDeclaration]), lowering each schema to what Gemini can
// express (see the package documentation).
//
// Errors wrap [ErrInvalidConfig] and name every problem (the lints of the
// refusals among them): both a Registry and Definitions given, a
// definition that does not validate, a name Gemini refuses (1 to 64 of
// A-Z, a-z, 0-9, _ and -, starting with a letter or an underscore), a name
// given twice, or a schema that needs what Gemini cannot express at all.
// Looser projections are not errors: see [Tools.Relaxed]. A schema shared
// by several definitions (byte for byte) is lowered once.
func New(config Config) (*Tools, error) {
	defs, problems := adapterkit.Definitions(config.Registry, config.Definitions, namePattern,
		"1 to 64 of A-Z, a-z, 0-9, _ and -, starting with a letter or an underscore")
	t := &Tools{decls: make([]*genai.FunctionDeclaration, 0, len(defs))}
	lowerings := memo{}
	for _, d := range defs {
		decl, lints, refused := declare(d, config, lowerings)
		for _, r := range refused {
			problems = append(problems, r.String())
		}
		t.relaxed = append(t.relaxed, lints...)
		t.decls = append(t.decls, decl)
	}
	if len(problems) > 0 {
		return nil, errprefix.Errorf("%w: %s", ErrInvalidConfig, strings.Join(problems, "; "))
	}
	return t, nil
}

// Tools returns one [genai.Tool] whose FunctionDeclarations are the
// definitions, in their order (a [tool.Registry] lists its own sorted by
// name), for [genai.GenerateContentConfig].Tools; nil when there are none.
// It is a deep copy, the caller's.
func (t *Tools) Tools() []*genai.Tool {
	if t == nil || len(t.decls) == 0 {
		return nil
	}
	decls := make([]*genai.FunctionDeclaration, len(t.decls))
	for i, d := range t.decls {
		c := *d
		if d.ParametersJsonSchema != nil {
			c.ParametersJsonSchema = adapterkit.Clone(d.ParametersJsonSchema)
		}
		if d.ResponseJsonSchema != nil {
			c.ResponseJsonSchema = adapterkit.Clone(d.ResponseJsonSchema)
		}
		c.Parameters, c.Response = deepSchema(d.Parameters), deepSchema(d.Response)
		decls[i] = &c
	}
	return []*genai.Tool{{FunctionDeclarations: decls}}
}

// Relaxed lists, per tool and JSON pointer, what Gemini receives in a
// looser form than the canonical schema says: the constraint was written
// into the description there, and [tool.Contract.Prepare] still enforces
// it. Empty when every schema was projected exactly. Gemini has no strict
// mode, so there is no Lints or Strict as in the other adapters. The slice
// is the caller's.
func (t *Tools) Relaxed() []Lint {
	if t == nil {
		return nil
	}
	return slices.Clone(t.relaxed)
}

// Calls reads the model's turn from resp, as [NewTurn] does, and returns
// its function calls ([Turn.Calls]). Errors wrap [ErrInvalidReply]: resp is
// nil or its first candidate has no content. Use [NewTurn] instead when the
// turn must be replayed with the results ([Turn.Next]), as Gemini 3 needs.
func (t *Tools) Calls(resp *genai.GenerateContentResponse) ([]dispatch.Call, error) {
	turn, err := NewTurn(resp)
	if err != nil {
		return nil, err
	}
	return turn.Calls(), nil
}

// declare projects one valid [tool.Definition]; lowerings holds the lowerings
// of the schemas projected before.
func declare(d tool.Definition, config Config, lowerings memo) (*genai.FunctionDeclaration, []Lint, []Lint) {
	decl := &genai.FunctionDeclaration{Name: d.Name, Description: d.Description}
	in := &lowering{tool: d.Name, schema: "input"}
	out := &lowering{tool: d.Name, schema: "output"}
	if config.OpenAPI {
		decl.Parameters = lowerings.lower(in, d.InputSchema, lowerParameters, cloneSchema).(*genai.Schema)
		if len(d.OutputSchema) > 0 {
			decl.Response = lowerings.lower(out, d.OutputSchema, lowerResponse, cloneSchema).(*genai.Schema)
		}
	} else {
		decl.ParametersJsonSchema = lowerings.lower(in, d.InputSchema, lowerJSON, adapterkit.Clone)
		if len(d.OutputSchema) > 0 {
			decl.ResponseJsonSchema = lowerings.lower(out, d.OutputSchema, lowerJSON, adapterkit.Clone)
		}
	}
	return decl, append(in.losses, out.losses...), append(in.refusals, out.refusals...)
}

// memo holds, per schema text and role ("input" or "output"), a lowered
// schema and what its lowering found: tools of one projection often share a
// schema (those [tool.NewFunc] derives from one Go type do), and a copy costs
// less than a lowering. One memo serves one path (JSON or OpenAPI).
type memo map[[2]string]*lowered

// lowered is one schema lowered, and its findings.
type lowered struct {
	schema           any
	losses, refusals []Lint
}

// lower returns lowerDoc(l, raw), computed once per schema text and role:
// the first tool gets the lowered schema, the later ones copies of it made
// by clone (while [New] runs, before the caller can change the first), so
// that no two share memory; the findings are the memoized ones, told of l's
// tool.
func (m memo) lower(l *lowering, raw json.RawMessage, lowerDoc func(*lowering, json.RawMessage) any, clone func(any) any) any {
	key := [2]string{l.schema, string(raw)}
	if prev, ok := m[key]; ok {
		l.losses = retold(l.losses, prev.losses, l.tool)
		l.refusals = retold(l.refusals, prev.refusals, l.tool)
		return clone(prev.schema)
	}
	first := &lowering{tool: l.tool, schema: l.schema}
	schema := lowerDoc(first, raw)
	m[key] = &lowered{schema: schema, losses: first.losses, refusals: first.refusals}
	l.losses = append(l.losses, first.losses...)
	l.refusals = append(l.refusals, first.refusals...)
	return schema
}

// retold appends lints ([Lint]) to dst, each told of tool.
func retold(dst, lints []Lint, tool string) []Lint {
	for _, x := range lints {
		x.Tool = tool
		dst = append(dst, x)
	}
	return dst
}

func lowerJSON(l *lowering, raw json.RawMessage) any { return l.lowerJSONDoc(raw) }

func lowerParameters(l *lowering, raw json.RawMessage) any { return l.lowerOpenAPIDoc(raw, true) }

func lowerResponse(l *lowering, raw json.RawMessage) any { return l.lowerOpenAPIDoc(raw, false) }

// cloneSchema is a deep copy of an OpenAPI schema.
func cloneSchema(v any) any {
	return deepSchema(v.(*genai.Schema))
}

func deepSchema(s *genai.Schema) *genai.Schema {
	if s == nil {
		return nil
	}
	c := *s
	if s.AnyOf != nil {
		c.AnyOf = make([]*genai.Schema, len(s.AnyOf))
		for i, b := range s.AnyOf {
			c.AnyOf[i] = deepSchema(b)
		}
	}
	c.Items = deepSchema(s.Items)
	if s.Properties != nil {
		c.Properties = make(map[string]*genai.Schema, len(s.Properties))
		for k, p := range s.Properties {
			c.Properties[k] = deepSchema(p)
		}
	}
	c.Default, c.Example = adapterkit.Clone(s.Default), adapterkit.Clone(s.Example)
	c.Enum, c.PropertyOrdering, c.Required = slices.Clone(s.Enum), slices.Clone(s.PropertyOrdering), slices.Clone(s.Required)
	for _, p := range []**int64{&c.MaxItems, &c.MaxLength, &c.MaxProperties, &c.MinItems, &c.MinLength, &c.MinProperties} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	for _, p := range []**float64{&c.Maximum, &c.Minimum} {
		if *p != nil {
			v := **p
			*p = &v
		}
	}
	if s.Nullable != nil {
		v := *s.Nullable
		c.Nullable = &v
	}
	return &c
}

// lowerJSONDoc lowers a raw schema for the JSON path. The result is the
// decoded document (maps, slices, strings, json.Number, bool, nil), which
// the SDK encodes with the request, number text unchanged.
func (l *lowering) lowerJSONDoc(raw json.RawMessage) any {
	doc, err := decodeSchema(raw)
	if err != nil {
		l.refuse("", "schema does not decode: %v", err)
		return nil
	}
	return l.lowerJSON(doc)
}
