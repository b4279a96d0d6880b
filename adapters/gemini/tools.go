package toolgemini

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/internal/errprefix"
	"google.golang.org/genai"
)

// Config says how definitions ([tool.Definition]) are projected by [Project]
// and [Tools]. The zero Config projects every
// schema on the JSON path (parametersJsonSchema and responseJsonSchema), the
// path Gemini prefers.
type Config struct {
	// OpenAPI, when true, projects input schemas into
	// FunctionDeclaration.Parameters and output schemas into Response: the
	// OpenAPI 3.0 subset (*genai.Schema) that older models and Vertex AI
	// endpoints read. $refs are inlined, so recursive schemas are refused,
	// and parameter names must match ^[A-Za-z_][A-Za-z0-9_]{0,63}$.
	//
	// The two paths lose different constraints. The JSON path (false)
	// keeps additionalProperties (a closed object stays closed) and drops
	// pattern, minLength, maxLength, minProperties, maxProperties and
	// allOf; the OpenAPI path (true) keeps those and drops
	// additionalProperties, false included, so Gemini may add members the
	// schema forbids. Either way the dropped constraint is written into
	// the description, reported as a Lint, and still enforced by
	// tool.Contract.Prepare. Prefer the JSON path unless the model or
	// endpoint reads only parameters, or the patterns and lengths matter
	// more to the model than closed objects.
	OpenAPI bool
}

// Projection is a list of definitions as Gemini tools, made by [Project] or
// [Tools]: a [genai.Tool] for [genai.GenerateContentConfig].Tools, and the
// [Lint] findings of the lowering. The zero Projection
// offers no tools. It is the caller's: nothing in it is shared with the
// Definitions it came from.
type Projection struct {
	// Tools holds one genai.Tool whose FunctionDeclarations are the
	// Definitions in the order given; nil when there were none. Put it in
	// GenerateContentConfig.Tools.
	Tools []*genai.Tool
	// Lints lists, per tool and JSON pointer, what Gemini receives in a
	// looser form than the canonical schema says. Empty when every schema
	// was projected exactly.
	Lints []Lint
}

// Tools projects the definitions of reg ([tool.Registry.Definitions]), in
// name order; see [Project]. A nil reg is an error wrapping [ErrProjection].
func Tools(reg *tool.Registry, config Config) (Projection, error) {
	if reg == nil {
		return Projection{}, errprefix.Errorf("%w: nil registry", ErrProjection)
	}
	return Project(reg.Definitions(), config)
}

// Project turns definitions into Gemini function declarations
// ([genai.FunctionDeclaration]), lowering each
// schema to what Gemini can express (see the package documentation). defs is
// not retained; the Projection shares no memory with it.
//
// It fails, with a [*ProjectionError] (which wraps [ErrProjection]) that
// names every tool and JSON pointer at fault, when a name is one Gemini
// refuses (it must start with a letter or an underscore) or breaks the core's
// rule, when two Definitions share a name, when a schema is not a JSON
// document, or when a schema needs what Gemini cannot express at all. Project
// does not compile the schemas ([tool.Bind] does, and the definitions of a
// [tool.Registry] are valid); a definition Bind would refuse may project
// without error. Looser projections are not errors: they are listed in
// [Projection].Lints. A schema shared by several Definitions (byte for byte)
// is lowered once and copied for each.
func Project(defs []tool.Definition, config Config) (Projection, error) {
	var p Projection
	var refusals []Lint
	seen := make(map[string]bool, len(defs))
	decls := make([]*genai.FunctionDeclaration, 0, len(defs))
	lowerings := memo{}
	for _, d := range defs {
		if msg := checkName(d.Name); msg != "" {
			refusals = append(refusals, Lint{Tool: d.Name, Rule: msg})
			continue
		}
		if seen[d.Name] {
			refusals = append(refusals, Lint{Tool: d.Name, Rule: "the name is used by two definitions"})
			continue
		}
		seen[d.Name] = true
		decl, lints, refused := declare(d, config, lowerings)
		refusals = append(refusals, refused...)
		p.Lints = append(p.Lints, lints...)
		decls = append(decls, decl)
	}
	if len(refusals) > 0 {
		return Projection{}, &ProjectionError{Problems: refusals}
	}
	if len(decls) > 0 {
		p.Tools = []*genai.Tool{{FunctionDeclarations: decls}}
	}
	return p, nil
}

// ProjectionError lists every reason a projection failed, one [Lint] each: a
// refused name (Schema and Pointer empty) or a schema Gemini cannot take.
// [errors.Is](err, [ErrProjection]) holds for it. Safe on a nil receiver.
type ProjectionError struct {
	// Problems are in the order of the Definitions.
	Problems []Lint
}

// Error lists the problems on one line, separated by semicolons.
func (e *ProjectionError) Error() string {
	if e == nil {
		return ErrProjection.Error()
	}
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return ErrProjection.Error() + ": " + strings.Join(parts, "; ")
}

// Unwrap returns [ErrProjection].
func (e *ProjectionError) Unwrap() error { return ErrProjection }

// checkName says why a function name is refused, or "" when Gemini takes
// it: the core's rule, [A-Za-z0-9_-]{1,64}, and Gemini's, that the first
// character is a letter or an underscore.
func checkName(name string) string {
	if len(name) == 0 || len(name) > 64 {
		return "a tool name has 1 to 64 characters"
	}
	for i := range len(name) {
		if c := name[i]; !isLetter(c) && c != '_' && c != '-' && (c < '0' || c > '9') {
			return "a tool name has only the characters A-Z, a-z, 0-9, _ and -"
		}
	}
	if !isLetter(name[0]) && name[0] != '_' {
		return "Gemini requires a function name to start with a letter or an underscore"
	}
	return ""
}

func isLetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

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
// by clone (while [Project] runs, before the caller can change the first), so
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
