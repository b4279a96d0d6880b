package adapterkit_test

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
	"github.com/agentcontract/tool/dispatch"
)

var anyName = regexp.MustCompile(`^[a-z_]+$`)

func def(name, description, input, output string) tool.Definition {
	d := tool.Definition{Name: name, Description: description, InputSchema: json.RawMessage(input)}
	if output != "" {
		d.OutputSchema = json.RawMessage(output)
	}
	return d
}

// TestProject: the definitions in order, none strict until the adapter
// makes one so; MakeStrict records the lowering and its relaxed
// constraints; Strict and Request read the tools by name, and Request
// undoes a strict tool's nulls only.
func TestProject(t *testing.T) {
	schema := `{"type":"object","properties":{"a":{"type":"string","maxLength":3}}}`
	p, problems := adapterkit.Project(nil, []tool.Definition{def("b", "", schema, ""), def("a", "", schema, "")}, anyName, "lower case")
	require.Empty(t, problems)
	require.Equal(t, "b", p.Tools[0].Def.Name)
	require.Equal(t, "a", p.Tools[1].Def.Name)
	require.False(t, p.Strict("b"))

	var schemas adapterkit.Schemas
	p.Tools[0].MakeStrict(schemas.Lower(p.Tools[0].Def.InputSchema, strictschema.OpenAI))
	require.True(t, p.Strict("b"))
	require.False(t, p.Strict("a"))
	require.False(t, p.Strict("unknown"))
	require.NotNil(t, p.Tools[0].Tree)
	require.Equal(t, []adapterkit.Lint{{Tool: "b", Schema: "input", Pointer: "/properties/a/maxLength", Rule: "maxLength is not enforced in strict mode; moved into the description"}}, p.Tools[0].Relaxed)

	require.Equal(t, tool.Request{Name: "b", Arguments: `{}`}, p.Request("b", `{"a":null}`))
	require.Equal(t, tool.Request{Name: "a", Arguments: `{"a":null}`}, p.Request("a", `{"a":null}`))
	require.Equal(t, tool.Request{Name: "x", Arguments: `{"a":null}`}, p.Request("x", `{"a":null}`))

	var zero adapterkit.Projection
	require.False(t, zero.Strict("b"))
	require.Equal(t, tool.Request{Name: "b", Arguments: `{"a":null}`}, zero.Request("b", `{"a":null}`))
	require.Empty(t, adapterkit.ToolParams(&zero, func(adapterkit.Param) int { return 0 }))

	_, problems = adapterkit.Project(nil, []tool.Definition{def("B", "", schema, ""), def("a", "", schema, ""), def("a", "", schema, "")}, anyName, "lower case")
	require.Equal(t, []string{`name "B" is not lower case`, `name "a" is given twice`}, problems)
}

// lint is an adapter's own Lint type, as the adapters declare it.
type lint struct {
	Tool    string
	Schema  string
	Pointer string
	Rule    string
}

// TestLintsGathered: the findings of every tool, in the order of the
// definitions, as the adapter's type, in a slice of the caller's; nil for
// none.
func TestLintsGathered(t *testing.T) {
	p := adapterkit.Projection{Tools: []adapterkit.Projected{
		{Blocked: []adapterkit.Lint{{Tool: "a", Rule: "1"}}},
		{Relaxed: []adapterkit.Lint{{Tool: "b", Rule: "2"}}},
		{Blocked: []adapterkit.Lint{{Tool: "c", Rule: "3"}, {Tool: "c", Rule: "4"}}},
	}}
	blocked := adapterkit.BlockedLints[lint](&p)
	require.Equal(t, []lint{{Tool: "a", Rule: "1"}, {Tool: "c", Rule: "3"}, {Tool: "c", Rule: "4"}}, blocked)
	require.Equal(t, []lint{{Tool: "b", Rule: "2"}}, adapterkit.RelaxedLints[lint](&p))
	blocked[0].Tool = "changed"
	require.Equal(t, "a", p.Tools[0].Blocked[0].Tool)
	require.Nil(t, adapterkit.RelaxedLints[lint](&adapterkit.Projection{}))

	back := adapterkit.ConvertLints[adapterkit.Lint](blocked)
	require.Equal(t, adapterkit.Lint{Tool: "changed", Rule: "1"}, back[0])
	require.Nil(t, adapterkit.ConvertLints[lint]([]adapterkit.Lint{}))
}

// TestToolParams: one parameter per tool, in order, with its input schema
// (the lowering when strict) and, on demand, its output schema, each the
// caller's; NonEmpty leaves an empty description unset.
func TestToolParams(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`
	p, problems := adapterkit.Project(nil, []tool.Definition{
		def("lowered", "", schema, ""),
		def("written", "says", schema, `{"type":"object"}`),
		def("again", "", schema, ""),
	}, anyName, "lower case")
	require.Empty(t, problems)
	var schemas adapterkit.Schemas
	p.Tools[0].MakeStrict(schemas.Lower(p.Tools[0].Def.InputSchema, strictschema.OpenAI))

	type param struct {
		name, description *string
		strict            bool
		input, output     map[string]any
	}
	some := func(s string) *string { return &s }
	params := adapterkit.ToolParams(&p, func(x adapterkit.Param) param {
		return param{some(x.Name), adapterkit.NonEmpty(x.Description, some), x.Strict, x.Input, x.Output()}
	})
	require.Len(t, params, 3)
	require.Equal(t, "lowered", *params[0].name)
	require.Nil(t, params[0].description)
	require.Equal(t, "says", *params[1].description)
	require.True(t, params[0].strict)
	require.False(t, params[1].strict)
	require.Equal(t, adapterkit.SchemaMap(p.Tools[0].Tree), params[0].input)
	require.Equal(t, map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer", "minimum": int64(1)}}}, params[1].input)
	require.Equal(t, params[1].input, params[2].input)
	require.Equal(t, map[string]any{"type": "object"}, params[1].output)
	require.Nil(t, params[0].output)

	params[1].input["type"] = "changed"
	params[0].input["type"] = "changed"
	require.Equal(t, "object", params[2].input["type"])
	require.Equal(t, "object", p.Tools[0].Tree["type"])
}

// TestCalls: the items that are calls, in order; an empty slice when none
// is; a call without an ID stops the reading, and its index comes back.
func TestCalls(t *testing.T) {
	type item struct{ kind, id, name string }
	read := func(it *item) (dispatch.Call, bool) {
		if it.kind != "call" {
			return dispatch.Call{}, false
		}
		return dispatch.Call{ID: it.id, Request: tool.Request{Name: it.name}}, true
	}
	calls, missing := adapterkit.Calls([]item{{"text", "", ""}, {"call", "1", "a"}, {"call", "2", "b"}}, read)
	require.Equal(t, -1, missing)
	require.Equal(t, []dispatch.Call{{ID: "1", Request: tool.Request{Name: "a"}}, {ID: "2", Request: tool.Request{Name: "b"}}}, calls)

	calls, missing = adapterkit.Calls([]item{{"text", "", ""}}, read)
	require.Equal(t, -1, missing)
	require.NotNil(t, calls)
	require.Empty(t, calls)

	calls, missing = adapterkit.Calls([]item{{"call", "1", "a"}, {"text", "", ""}, {"call", "", "b"}}, read)
	require.Equal(t, 2, missing)
	require.Nil(t, calls)
}
