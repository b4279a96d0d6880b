package toolopenai_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

func TestNewRefusesWhatOpenAIRefuses(t *testing.T) {
	_, err := toolopenai.New(toolopenai.Config{Definitions: []tool.Definition{
		adaptertest.Def("ok", `{"type":"object"}`),
		adaptertest.Def(strings.Repeat("x", 65), `{"type":"object"}`),
		adaptertest.Def("ok", `{"type":"object"}`),
		adaptertest.Def("bad_schema", `{"type":"object","properties":1}`),
	}})
	require.ErrorIs(t, err, toolopenai.ErrInvalidConfig)
	require.ErrorContains(t, err, `tool: invalid config for OpenAI: name "`+strings.Repeat("x", 65)+`" is not 1 to 64 of a-z, A-Z, 0-9, _ and -; name "ok" is given twice; invalid definition: `)
}

// TestStrictOrNot: every tool is sent with strict set explicitly; a tool
// whose schema cannot be strict is sent as written, with its lints.
func TestStrictOrNot(t *testing.T) {
	defs := []tool.Definition{
		adaptertest.Def("free", `{"type":"object","properties":{"meta":{"type":"object"}}}`),
		adaptertest.Def("closed", `{"type":"object","properties":{"q":{"type":"string","default":"x"}}}`),
	}
	for _, tc := range []struct {
		name      string
		strict    bool
		want      string
		lintCount int
	}{
		{"strict asked", true, `[
			{"type":"function","function":{"name":"free","strict":false,"parameters":{"type":"object","properties":{"meta":{"type":"object"}}}}},
			{"type":"function","function":{"name":"closed","strict":true,"parameters":{"type":"object","additionalProperties":false,"required":["q"],"properties":{"q":{"type":["string","null"]}}}}}]`, 1},
		{"strict not asked", false, `[
			{"type":"function","function":{"name":"free","strict":false,"parameters":{"type":"object","properties":{"meta":{"type":"object"}}}}},
			{"type":"function","function":{"name":"closed","strict":false,"parameters":{"type":"object","properties":{"q":{"type":"string","default":"x"}}}}}]`, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tools, err := toolopenai.New(toolopenai.Config{Definitions: defs, Strict: tc.strict})
			require.NoError(t, err)
			raw, err := json.Marshal(tools.ChatTools())
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(raw))
			require.Len(t, tools.Lints(), tc.lintCount)
			resp, err := json.Marshal(tools.ResponseTools())
			require.NoError(t, err)
			require.Contains(t, string(resp), `"strict":false`)
		})
	}
}

// TestChatCallsUndo: for a strict tool only the nulls of optional members
// go; a non-strict tool's text, and malformed text, reach Prepare as sent.
func TestChatCallsUndo(t *testing.T) {
	tools, err := toolopenai.New(toolopenai.Config{Strict: true, Definitions: []tool.Definition{
		adaptertest.Def("strict_one", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"}},"required":["a"]}`),
		adaptertest.Def("loose_one", `{"type":"object","properties":{"m":{"type":"object"}}}`),
	}})
	require.NoError(t, err)
	for _, tc := range []struct{ name, args, want string }{
		{"strict_one", `{"a":null,"b":null}`, `{"a":null}`},
		{"strict_one", `{"a":"x","b":null,`, `{"a":"x","b":null,`},
		{"loose_one", `{"m":null}`, `{"m":null}`},
		{"unknown", `{"b":null}`, `{"b":null}`},
	} {
		var msg = chatMessage(t, tc.name, tc.args)
		calls := chatCalls(t, tools, msg)
		require.Equal(t, []dispatch.Call{{ID: "call_1", Request: tool.Request{Name: tc.name, Arguments: tc.want}}}, calls)
	}
}

func TestResponseResultsMedia(t *testing.T) {
	items, err := toolopenai.ResponseResults([]dispatch.Outcome{{
		CallID: "call_1", Tool: "report", Kind: dispatch.KindCompleted,
		Output: tool.Output{Content: []tool.Block{
			tool.NewMediaBlock("application/pdf", []byte("%PDF-1.7")),
			tool.NewMediaURIBlock("image/png", "https://example.com/a.png"),
			tool.NewMediaURIBlock("video/mp4", "https://example.com/a.mp4"),
		}},
	}})
	require.NoError(t, err)
	raw, err := json.Marshal(items)
	require.NoError(t, err)
	require.JSONEq(t, `[{"type":"function_call_output","call_id":"call_1","output":[
		{"type":"input_file","filename":"report-1.pdf","file_data":"data:application/pdf;base64,JVBERi0xLjc="},
		{"type":"input_image","image_url":"https://example.com/a.png"},
		{"type":"input_text","text":"[not delivered: attachment video/mp4 at https://example.com/a.mp4]"}]}]`, string(raw))
}

// TestZeroToolsAndCopies: the zero Tools offers nothing and passes calls
// through; the lint slices are the caller's.
func TestZeroToolsAndCopies(t *testing.T) {
	var zero toolopenai.Tools
	require.Empty(t, zero.ChatTools())
	require.Empty(t, zero.ResponseTools())
	require.Empty(t, zero.Lints())
	require.False(t, zero.Strict("x"))
	require.Equal(t, []dispatch.Call{{ID: "call_1", Request: tool.Request{Name: "x", Arguments: `{"a":null}`}}},
		chatCalls(t, &zero, chatMessage(t, "x", `{"a":null}`)))

	tools, err := toolopenai.New(toolopenai.Config{Strict: true, Definitions: []tool.Definition{
		adaptertest.Def("free", `{"type":"object","additionalProperties":true}`),
		adaptertest.Def("bounded", `{"type":"object","properties":{"s":{"type":"string","maxLength":3}},"required":["s"]}`),
	}})
	require.NoError(t, err)
	lints, relaxed := tools.Lints(), tools.Relaxed()
	require.Len(t, lints, 1)
	require.Equal(t, []toolopenai.Lint{{Tool: "bounded", Schema: "input", Pointer: "/properties/s/maxLength", Rule: "maxLength is not enforced in strict mode; moved into the description"}}, relaxed)
	lints[0].Tool, relaxed[0].Tool = "changed", "changed"
	require.Equal(t, "free", tools.Lints()[0].Tool)
	require.Equal(t, "bounded", tools.Relaxed()[0].Tool)
}

// TestNeverStrictAgainstPrepare: a schema whose strict lowering would make
// the provider produce calls Prepare refuses is sent non-strict with a lint
// naming the rule; the call the provider produces reaches Prepare as
// written and is admitted.
func TestNeverStrictAgainstPrepare(t *testing.T) {
	for _, tc := range []struct {
		name, schema, args string
		lint               toolopenai.Lint
	}{
		{"undeclared_required", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`, `{"a":"x","b":1}`,
			toolopenai.Lint{Tool: "undeclared_required", Schema: "input", Pointer: "/required/1", Rule: `required names the member "b", which properties does not declare: a closed strict schema would refuse every call or admit none`}},
		{"string_enum_integer", `{"type":"object","properties":{"n":{"type":["integer","string"],"enum":["1","2"]},"m":{"type":"integer","enum":["1"]}},"required":["n"]}`, `{"n":"1"}`,
			toolopenai.Lint{Tool: "string_enum_integer", Schema: "input", Pointer: "/properties/m/enum", Rule: "no value of enum has the declared type, so no value is valid"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := adaptertest.Def(tc.name, tc.schema)
			tools, err := toolopenai.New(toolopenai.Config{Strict: true, Definitions: []tool.Definition{d}})
			require.NoError(t, err)
			require.False(t, tools.Strict(tc.name))
			require.Equal(t, []toolopenai.Lint{tc.lint}, tools.Lints())
			calls := chatCalls(t, tools, chatMessage(t, tc.name, tc.args))
			require.Equal(t, tc.args, calls[0].Request.Arguments, "the meaning is kept")
			b, err := tool.Bind(adaptertest.Func{Def: d})
			require.NoError(t, err)
			_, err = b.Contract().Prepare(calls[0].Request, tool.Admission{})
			require.NoError(t, err)
		})
	}
}

// TestNoArgumentsStrict: a tool without arguments is sent strict, closed
// with no members; the {} the provider then sends is admitted by Prepare.
func TestNoArgumentsStrict(t *testing.T) {
	for _, tc := range []struct{ name, schema string }{
		{"empty_properties", `{"type":"object","properties":{}}`},
		{"type_only", `{"type":"object"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := adaptertest.Def(tc.name, tc.schema)
			tools, err := toolopenai.New(toolopenai.Config{Strict: true, Definitions: []tool.Definition{d}})
			require.NoError(t, err)
			require.Empty(t, tools.Lints())
			require.True(t, tools.Strict(tc.name))
			raw, err := json.Marshal(tools.ChatTools())
			require.NoError(t, err)
			require.JSONEq(t, `[{"type":"function","function":{"name":"`+tc.name+`","strict":true,"parameters":{"type":"object","properties":{},"required":[],"additionalProperties":false}}}]`, string(raw))
			calls := chatCalls(t, tools, chatMessage(t, tc.name, `{}`))
			b, err := tool.Bind(adaptertest.Func{Def: d})
			require.NoError(t, err)
			_, err = b.Contract().Prepare(calls[0].Request, tool.Admission{})
			require.NoError(t, err)
		})
	}
}

// TestDraft07: see adaptertest.CheckDraft07.
func TestDraft07(t *testing.T) { adaptertest.CheckDraft07(t, projectStrict) }

// TestOneOfOfDisjointTypes: see adaptertest.CheckOneOfOfDisjointTypes.
func TestOneOfOfDisjointTypes(t *testing.T) { adaptertest.CheckOneOfOfDisjointTypes(t, projectStrict) }

// projectStrict projects defs in strict mode, for adaptertest's checks.
func projectStrict(t testing.TB, defs ...tool.Definition) adaptertest.Projection {
	tools, err := toolopenai.New(toolopenai.Config{Strict: true, Definitions: defs})
	require.NoError(t, err)
	return adaptertest.Projection{
		Lints:  adapterkit.ConvertLints[adapterkit.Lint](tools.Lints()),
		Strict: tools.Strict,
		Tools:  adaptertest.MarshalJSON(t, tools.ChatTools()),
		Request: func(t testing.TB, name, args string) tool.Request {
			return chatCalls(t, tools, chatMessage(t, name, args))[0].Request
		},
	}
}

// TestCallsRefuseWhatCannotBeAnswered: a call whose result could not echo
// its ID, and a nil response, are errors wrapping ErrInvalidReply.
func TestCallsRefuseWhatCannotBeAnswered(t *testing.T) {
	tools, err := toolopenai.New(toolopenai.Config{Registry: adaptertest.Registry(t)})
	require.NoError(t, err)
	var msg openai.ChatCompletionMessage
	require.NoError(t, json.Unmarshal([]byte(`{"role":"assistant","tool_calls":[{"id":"","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}`), &msg))
	calls, err := tools.ChatCalls(msg)
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
	require.EqualError(t, err, `tool: invalid reply from OpenAI: function call 0 ("get_weather") has no ID`)
	require.Nil(t, calls)

	calls, err = tools.ResponseCalls(nil)
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
	require.Nil(t, calls)
	resp := responseWithCall(t, "get_weather", `{}`)
	resp.Output[0].CallID = ""
	calls, err = tools.ResponseCalls(resp)
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
	require.EqualError(t, err, `tool: invalid reply from OpenAI: function_call item 0 ("get_weather") has no call_id`)
	require.Nil(t, calls)
}

// TestLintIsThisPackages: Lint is a type of this package, not an alias of
// an internal one, so that its documentation shows its whole contract;
// its fields are read and written as before, and String renders it.
func TestLintIsThisPackages(t *testing.T) {
	require.Equal(t, "github.com/agentcontract/tool/adapters/openai", reflect.TypeFor[toolopenai.Lint]().PkgPath())
	for _, tc := range []struct {
		lint toolopenai.Lint
		want string
	}{
		{toolopenai.Lint{Tool: "w", Schema: "input", Pointer: "/properties/a", Rule: "r"}, "w input schema at /properties/a: r"},
		{toolopenai.Lint{Tool: "w", Schema: "input", Rule: "r"}, "w input schema at (root): r"},
	} {
		require.Equal(t, tc.want, tc.lint.String())
		require.Equal(t, "w", tc.lint.Tool)
	}
}
