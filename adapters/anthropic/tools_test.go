package toolanthropic_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
)

func TestNewRefusesWhatAnthropicRefuses(t *testing.T) {
	_, err := toolanthropic.New(toolanthropic.Config{Definitions: []tool.Definition{
		adaptertest.Def("ok", `{"type":"object"}`),
		adaptertest.Def("has.dot", `{"type":"object"}`),
		adaptertest.Def("ok", `{"type":"object"}`),
		adaptertest.Def("bad_schema", `{"type":"array"}`),
	}})
	require.ErrorIs(t, err, toolanthropic.ErrInvalidConfig)
	require.EqualError(t, err, `tool: invalid config for Anthropic: name "has.dot" is not 1 to 64 of a-z, A-Z, 0-9, _ and -; name "ok" is given twice; invalid definition: input schema of tool "bad_schema" must be a JSON object with "type":"object"`)
}

// TestBudgets: the request-wide budgets are spent in definition order; a
// tool that would overspend one is sent non-strict, with a lint naming the
// budget.
func TestBudgets(t *testing.T) {
	optional := func(n int) string {
		props := ""
		for i := range n {
			if i > 0 {
				props += ","
			}
			props += fmt.Sprintf(`"p%d":{"type":"string"}`, i)
		}
		return `{"type":"object","properties":{` + props + `}}`
	}
	unions := `{"type":"object","properties":{` +
		`"a":{"type":["string","null"]},"b":{"type":["string","null"]},"c":{"type":["string","null"]},"d":{"type":["string","null"]},` +
		`"e":{"type":["string","null"]},"f":{"type":["string","null"]},"g":{"type":["string","null"]},"h":{"type":["string","null"]},` +
		`"i":{"type":["string","null"]}},"required":["a","b","c","d","e","f","g","h","i"]}`

	t.Run("optional members", func(t *testing.T) {
		tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{
			adaptertest.Def("first", optional(20)), adaptertest.Def("second", optional(5)), adaptertest.Def("third", optional(4)),
		}})
		require.NoError(t, err)
		require.Equal(t, []toolanthropic.Lint{{Tool: "second", Rule: "the request-wide budget of 24 optional members would be exceeded: the strict tools before this one use 20 and this one needs 5"}}, tools.Lints())
		require.True(t, tools.Strict("first"))
		require.False(t, tools.Strict("second"))
		require.True(t, tools.Strict("third"))
	})
	t.Run("unions", func(t *testing.T) {
		tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{
			adaptertest.Def("u1", unions), adaptertest.Def("u2", unions),
		}})
		require.NoError(t, err)
		require.Equal(t, []toolanthropic.Lint{{Tool: "u2", Rule: "the request-wide budget of 16 anyOf or multi-type members would be exceeded: the strict tools before this one use 9 and this one needs 9"}}, tools.Lints())
	})
	t.Run("strict tools", func(t *testing.T) {
		var defs []tool.Definition
		for i := range 22 {
			defs = append(defs, adaptertest.Def(fmt.Sprintf("t%02d", i), `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
		}
		tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: defs})
		require.NoError(t, err)
		require.Len(t, tools.Lints(), 2)
		require.Equal(t, "t20", tools.Lints()[0].Tool)
		require.Equal(t, "the request-wide budget of 20 strict tools would be exceeded: the strict tools before this one use 20 and this one needs 1", tools.Lints()[0].Rule)
		params, err := json.Marshal(tools.Tools())
		require.NoError(t, err)
		var sent []struct {
			Name   string `json:"name"`
			Strict *bool  `json:"strict"`
		}
		require.NoError(t, json.Unmarshal(params, &sent))
		for i, s := range sent {
			require.NotNil(t, s.Strict, "strict is always sent")
			require.Equal(t, i < 20, *s.Strict, s.Name)
		}
	})
	t.Run("StrictFirst", func(t *testing.T) {
		var defs []tool.Definition
		for i := range 22 {
			defs = append(defs, adaptertest.Def(fmt.Sprintf("t%02d", i), `{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}`))
		}
		defs = append(defs, adaptertest.Def("opt", optional(20)), adaptertest.Def("late", optional(5)))
		tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: defs, StrictFirst: []string{"t21", "late", "t20"}})
		require.NoError(t, err)
		// t21, late and t20 first, then t00…t16 fill the 20; opt needs 20
		// optional members where 19 are left.
		for _, name := range []string{"t21", "late", "t20", "t00", "t16"} {
			require.True(t, tools.Strict(name), name)
		}
		for _, name := range []string{"t17", "t18", "t19", "opt"} {
			require.False(t, tools.Strict(name), name)
		}
		var linted []string
		for _, l := range tools.Lints() {
			linted = append(linted, l.Tool)
		}
		require.Equal(t, []string{"t17", "t18", "t19", "opt"}, linted, "in the order of the definitions")
		var sent []struct {
			Name string `json:"name"`
		}
		params, err := json.Marshal(tools.Tools())
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(params, &sent))
		require.Equal(t, "t00", sent[0].Name, "the tools are sent in the order of the definitions")
		require.Equal(t, "late", sent[23].Name)
	})
	t.Run("StrictFirst names an unknown tool", func(t *testing.T) {
		_, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{adaptertest.Def("a", optional(1))}, StrictFirst: []string{"b", "a", "a"}})
		require.ErrorIs(t, err, toolanthropic.ErrInvalidConfig)
		require.EqualError(t, err, `tool: invalid config for Anthropic: StrictFirst names "b", which is not one of the tools; StrictFirst names "a" twice`)
	})
}

func TestNotStrict(t *testing.T) {
	tools, err := toolanthropic.New(toolanthropic.Config{Definitions: []tool.Definition{
		adaptertest.Def("free", `{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}`),
	}})
	require.NoError(t, err)
	require.Empty(t, tools.Lints())
	raw, err := json.Marshal(tools.Tools()[0])
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"free","strict":false,"input_schema":{"type":"object","properties":{"n":{"type":"integer","minimum":1}}}}`, string(raw))
}

func TestRecursiveSchemaIsNotStrict(t *testing.T) {
	tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{
		adaptertest.Def("tree", `{"type":"object","properties":{"children":{"type":"array","items":{"$ref":"#"}}},"required":["children"]}`),
	}})
	require.NoError(t, err)
	require.Equal(t, []toolanthropic.Lint{{Tool: "tree", Schema: "input", Pointer: "/properties/children/items/$ref", Rule: "a recursive schema (a reference to the root) cannot be strict here"}}, tools.Lints())
	require.Equal(t, "tree input schema at /properties/children/items/$ref: a recursive schema (a reference to the root) cannot be strict here", tools.Lints()[0].String())
}

func TestResults(t *testing.T) {
	out := tool.Output{Content: []tool.Block{
		tool.NewTextBlock("report"),
		tool.NewMediaBlock("application/pdf", []byte("%PDF-1.7")),
		tool.NewMediaURIBlock("image/jpeg", "https://example.com/a.jpg"),
		tool.NewMediaBlock("audio/wav", []byte("RIFF")),
	}}
	msg, err := toolanthropic.Results([]dispatch.Outcome{
		{CallID: "toolu_1", Tool: "report", Kind: dispatch.KindCompleted, Output: out},
		{CallID: "toolu_2", Tool: "stats", Kind: dispatch.KindCompleted, Output: tool.Output{Details: json.RawMessage(`{"n":1}`)}},
		{CallID: "toolu_3", Tool: "nope", Kind: dispatch.KindUnknownTool, IsError: true, Output: tool.NewTextOutput("no tool nope")},
	})
	require.NoError(t, err)
	raw, err := json.Marshal(msg)
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"toolu_1","content":[
			{"type":"text","text":"report"},
			{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0xLjc="}},
			{"type":"image","source":{"type":"url","url":"https://example.com/a.jpg"}},
			{"type":"text","text":"[attachment audio/wav, 4 bytes]"}]},
		{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"{\"n\":1}"}]},
		{"type":"tool_result","tool_use_id":"toolu_3","is_error":true,"content":[{"type":"text","text":"no tool nope"}]}]}`, string(raw))

	_, err = toolanthropic.Results([]dispatch.Outcome{{CallID: "toolu_1", Kind: dispatch.KindSuspended}})
	require.ErrorIs(t, err, toolanthropic.ErrInvalidOutcome)
	require.EqualError(t, err, `tool: invalid outcome for Anthropic: outcome 0 (call "toolu_1") is suspended: it waits for a person; give the calls a dispatch.Call.TurnID (or save the turn with Dispatcher.SaveTurn), wait for it with Dispatcher.WaitTurn, and send its outcomes then`)
}

// TestZeroTools: the zero Tools offers nothing and passes calls through.
func TestZeroTools(t *testing.T) {
	var zero toolanthropic.Tools
	require.Empty(t, zero.Tools())
	require.Empty(t, zero.Lints())
	require.Empty(t, zero.Relaxed())
	require.False(t, zero.Strict("x"))
}

// TestUnsatisfiableIsNotStrict: a closed schema that still requires a
// member it does not declare admits no call, so it is sent non-strict with
// a lint naming the rule.
func TestUnsatisfiableIsNotStrict(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		lint         toolanthropic.Lint
	}{
		{"undeclared_required", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
			toolanthropic.Lint{Tool: "undeclared_required", Schema: "input", Pointer: "/required/1", Rule: `required names the member "b", which properties does not declare: a closed strict schema would refuse every call or admit none`}},
		{"string_enum_integer", `{"type":"object","properties":{"n":{"type":"integer","enum":["1","2"]}},"required":["n"]}`,
			toolanthropic.Lint{Tool: "string_enum_integer", Schema: "input", Pointer: "/properties/n/enum", Rule: "no value of enum has the declared type, so no value is valid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{adaptertest.Def(tc.name, tc.schema)}})
			require.NoError(t, err)
			require.False(t, tools.Strict(tc.name))
			require.Equal(t, []toolanthropic.Lint{tc.lint}, tools.Lints())
		})
	}
}

// TestNoArgumentsStrict: a tool without arguments is sent strict, closed
// with no members.
func TestNoArgumentsStrict(t *testing.T) {
	for _, tc := range []struct{ name, schema string }{
		{"empty_properties", `{"type":"object","properties":{}}`},
		{"type_only", `{"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{adaptertest.Def(tc.name, tc.schema)}})
			require.NoError(t, err)
			require.Empty(t, tools.Lints())
			raw, err := json.Marshal(tools.Tools()[0])
			require.NoError(t, err)
			require.JSONEq(t, `{"name":"`+tc.name+`","strict":true,"input_schema":{"type":"object","properties":{},"additionalProperties":false}}`, string(raw))
		})
	}
}

// TestDraft07: see adaptertest.CheckDraft07.
func TestDraft07(t *testing.T) { adaptertest.CheckDraft07(t, projectStrict) }

// TestOneOfOfDisjointTypes: see adaptertest.CheckOneOfOfDisjointTypes.
func TestOneOfOfDisjointTypes(t *testing.T) { adaptertest.CheckOneOfOfDisjointTypes(t, projectStrict) }

// projectStrict projects defs in strict mode, for adaptertest's checks.
func projectStrict(t testing.TB, defs ...tool.Definition) adaptertest.Projection {
	tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: defs})
	require.NoError(t, err)
	return adaptertest.Projection{
		Lints:   adapterkit.ConvertLints[adapterkit.Lint](tools.Lints()),
		Strict:  tools.Strict,
		Tools:   adaptertest.MarshalJSON(t, tools.Tools()),
		Request: func(_ testing.TB, name, args string) tool.Request { return tool.Request{Name: name, Arguments: args} },
	}
}

// calls returns tools.Calls(msg), which must not fail.
func calls(t testing.TB, tools *toolanthropic.Tools, msg anthropic.Message) []dispatch.Call {
	t.Helper()
	calls, err := tools.Calls(msg)
	require.NoError(t, err)
	return calls
}

// TestCallsRefuseAToolUseWithoutID: its result could not echo the ID.
func TestCallsRefuseAToolUseWithoutID(t *testing.T) {
	tools, err := toolanthropic.New(toolanthropic.Config{Definitions: []tool.Definition{adaptertest.Def("a", `{"type":"object"}`)}})
	require.NoError(t, err)
	var msg anthropic.Message
	require.NoError(t, json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"x"},{"type":"tool_use","id":"","name":"a","input":{}}]}`), &msg))
	got, err := tools.Calls(msg)
	require.ErrorIs(t, err, toolanthropic.ErrInvalidReply)
	require.EqualError(t, err, `tool: invalid reply from Anthropic: tool_use block 1 ("a") has no ID`)
	require.Nil(t, got)
}

// TestLintIsThisPackages: Lint is a type of this package, not an alias of
// an internal one, so that its documentation shows its whole contract;
// its fields are read and written as before, and String renders it, a
// budget (no schema) as a finding about the tool.
func TestLintIsThisPackages(t *testing.T) {
	require.Equal(t, "github.com/agentcontract/tool/adapters/anthropic", reflect.TypeFor[toolanthropic.Lint]().PkgPath())
	for _, tc := range []struct {
		lint toolanthropic.Lint
		want string
	}{
		{toolanthropic.Lint{Tool: "w", Schema: "input", Pointer: "/properties/a", Rule: "r"}, "w input schema at /properties/a: r"},
		{toolanthropic.Lint{Tool: "w", Rule: "budget"}, `tool "w": budget`},
	} {
		require.Equal(t, tc.want, tc.lint.String())
		require.Equal(t, "w", tc.lint.Tool)
	}
}
