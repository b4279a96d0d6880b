package toolgemini_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// turnOf decodes a generateContent response in the wire format, as the SDK
// does, and reads its turn.
func turnOf(t *testing.T, parts string) toolgemini.Turn {
	t.Helper()
	var resp genai.GenerateContentResponse
	require.NoError(t, json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":`+parts+`}}]}`), &resp))
	turn, err := toolgemini.NewTurn(&resp)
	require.NoError(t, err)
	return turn
}

func TestCalls(t *testing.T) {
	for _, tc := range []struct {
		name, parts string
		want        []dispatch.Call
	}{
		{"ids and args as sent", `[{"functionCall":{"id":"a","name":"f","args":{"x":1,"y":"<&>"}}}]`,
			[]dispatch.Call{{ID: "a", Request: tool.Request{Name: "f", Arguments: `{"x":1,"y":"<&>"}`}}}},
		{"missing args are an empty object", `[{"functionCall":{"name":"f"}}]`,
			[]dispatch.Call{{Request: tool.Request{Name: "f", Arguments: `{}`}}}},
		{"text and thoughts are not calls", `[{"text":"hm","thought":true},{"text":"ok"},{"functionCall":{"name":"g","args":{}}}]`,
			[]dispatch.Call{{Request: tool.Request{Name: "g", Arguments: `{}`}}}},
		{"no call: the model answered", `[{"text":"done"}]`, []dispatch.Call{}},
		// What the SDK's map[string]any decoding loses, pinned so that
		// a change shows: member order (sorted), number text (1.50 and
		// 1e2 read as float64), integers beyond 2^53 (rounded), and
		// duplicate members (the last wins, where Prepare would have
		// refused the text).
		{"what the SDK's decoding loses", `[{"functionCall":{"name":"f","args":{"z":1.50,"a":1e2,"big":9007199254740993,"d":1,"d":2}}}]`,
			[]dispatch.Call{{Request: tool.Request{Name: "f", Arguments: `{"a":100,"big":9007199254740992,"d":2,"z":1.5}`}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, turnOf(t, tc.parts).Calls())
		})
	}
}

func TestNewTurnRefuses(t *testing.T) {
	for _, resp := range []*genai.GenerateContentResponse{
		nil,
		{},
		{Candidates: []*genai.Candidate{nil}},
		{Candidates: []*genai.Candidate{{FinishReason: genai.FinishReasonSafety}}},
	} {
		_, err := toolgemini.NewTurn(resp)
		require.ErrorIs(t, err, toolgemini.ErrInvalidReply)
		require.EqualError(t, err, "tool: invalid reply from Gemini: no candidate content")
	}
	var zero toolgemini.Turn
	require.Empty(t, zero.Calls())
	reply, err := zero.Reply(nil)
	require.NoError(t, err)
	require.Nil(t, reply)
	next, err := zero.Next(nil, nil)
	require.NoError(t, err)
	require.Empty(t, next)
}

func partJSON(t *testing.T, o dispatch.Outcome) string {
	t.Helper()
	p, err := part(o)
	require.NoError(t, err)
	b, err := json.Marshal(p)
	require.NoError(t, err)
	return string(b)
}

func TestPart(t *testing.T) {
	png := tool.NewMediaBlock("image/png", []byte{1, 2, 3})
	for _, tc := range []struct {
		name string
		o    dispatch.Outcome
		want string
	}{
		{"text output", dispatch.Outcome{CallID: "a", Tool: "f", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("hi")},
			`{"functionResponse":{"id":"a","name":"f","response":{"output":"hi"}}}`},
		{"details as JSON when there is no content, numbers as written", dispatch.Outcome{Tool: "f", Kind: dispatch.KindCompleted,
			Output: tool.Output{Details: json.RawMessage(`{"n":1.50}`)}},
			`{"functionResponse":{"name":"f","response":{"output":{"n":1.50}}}}`},
		{"empty output", dispatch.Outcome{Tool: "f", Kind: dispatch.KindCompleted},
			`{"functionResponse":{"name":"f","response":{"output":""}}}`},
		{"an error for the model", dispatch.Outcome{CallID: "b", Tool: "f", Kind: dispatch.KindRejected, IsError: true, Output: tool.NewTextOutput("bad x")},
			`{"functionResponse":{"id":"b","name":"f","response":{"error":"bad x"}}}`},
		{"inline image in parts, unsupported media announced", dispatch.Outcome{Tool: "f", Kind: dispatch.KindCompleted,
			Output: tool.Output{Content: []tool.Block{tool.NewTextBlock("see"), png, tool.NewMediaBlock("video/mp4", []byte{9})}}},
			`{"functionResponse":{"name":"f","parts":[{"inlineData":{"data":"AQID","mimeType":"image/png"}}],
			"response":{"output":"see\n[attachment 1: image/png]\n[attachment video/mp4, 1 bytes]"}}}`},
		{"media by URI is announced with its address", dispatch.Outcome{Tool: "f", Kind: dispatch.KindFailed, IsError: true,
			Output: tool.Output{Content: []tool.Block{tool.NewMediaURIBlock("application/pdf", "https://example.com/r.pdf")}}},
			`{"functionResponse":{"name":"f","response":{"error":"[attachment application/pdf at https://example.com/r.pdf]"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.JSONEq(t, tc.want, partJSON(t, tc.o))
		})
	}
}

func TestPartCopiesMedia(t *testing.T) {
	data := []byte{1, 2, 3}
	o := dispatch.Outcome{Tool: "f", Kind: dispatch.KindCompleted, Output: tool.Output{Content: []tool.Block{tool.NewMediaBlock("image/png", data)}}}
	p, err := part(o)
	require.NoError(t, err)
	data[0] = 9
	require.Equal(t, []byte{1, 2, 3}, p.FunctionResponse.Parts[0].InlineData.Data)
}

func TestPartRefusesSuspended(t *testing.T) {
	_, err := part(dispatch.Outcome{CallID: "a", Tool: "f", Kind: dispatch.KindSuspended})
	require.ErrorIs(t, err, toolgemini.ErrInvalidOutcome)
	require.EqualError(t, err, `tool: invalid outcome for Gemini: call "a" of f is suspended: it waits for a person; give the calls a dispatch.Call.TurnID (or save the turn with Dispatcher.SaveTurn), wait for it with Dispatcher.WaitTurn, and send its outcomes then`)
	_, err = part(dispatch.Outcome{CallID: "a"})
	require.EqualError(t, err, `tool: invalid outcome for Gemini: outcome of call "a" has no kind`)
}

func TestReplyCorrelates(t *testing.T) {
	turn := turnOf(t, `[{"functionCall":{"name":"f","args":{"n":1}}},{"functionCall":{"id":"x","name":"g"}},{"functionCall":{"name":"f","args":{"n":2}}}]`)
	done := func(id, name, text string) dispatch.Outcome {
		return dispatch.Outcome{CallID: id, Tool: name, Kind: dispatch.KindCompleted, Output: tool.NewTextOutput(text)}
	}
	// Out of order: the call with an ID by ID, the others by name and order.
	reply, err := turn.Reply([]dispatch.Outcome{done("x", "g", "G"), done("", "f", "F1"), done("", "f", "F2")})
	require.NoError(t, err)
	b, err := json.Marshal(reply)
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"user","parts":[
		{"functionResponse":{"name":"f","response":{"output":"F1"}}},
		{"functionResponse":{"id":"x","name":"g","response":{"output":"G"}}},
		{"functionResponse":{"name":"f","response":{"output":"F2"}}}]}`, string(b))

	for _, tc := range []struct {
		name     string
		outcomes []dispatch.Outcome
		want     string
	}{
		{"a call without outcome", []dispatch.Outcome{done("x", "g", "G"), done("", "f", "F1")},
			`tool: invalid outcome for Gemini: no outcome for call 2 (f, id "")`},
		{"an outcome of another call", []dispatch.Outcome{done("x", "g", "G"), done("", "f", "F1"), done("", "f", "F2"), done("y", "g", "G")},
			`tool: invalid outcome for Gemini: outcome of g (id "y") answers no call of the turn`},
		{"a suspended outcome", []dispatch.Outcome{{CallID: "x", Tool: "g", Kind: dispatch.KindSuspended}, done("", "f", "F1"), done("", "f", "F2")},
			`tool: invalid outcome for Gemini: call "x" of g is suspended: it waits for a person; give the calls a dispatch.Call.TurnID (or save the turn with Dispatcher.SaveTurn), wait for it with Dispatcher.WaitTurn, and send its outcomes then`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := turn.Reply(tc.outcomes)
			require.ErrorIs(t, err, toolgemini.ErrInvalidOutcome)
			require.EqualError(t, err, tc.want)
		})
	}
}

// TestNextReplaysUnchanged checks that the model's content goes back as the
// SDK decoded it, thought signature included, after the history, which Next
// leaves as it was.
func TestNextReplaysUnchanged(t *testing.T) {
	turn := turnOf(t, `[{"functionCall":{"id":"a","name":"f"},"thoughtSignature":"c2ln"}]`)
	history := []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser)}
	outcomes := adaptertest.Dispatcher(t, newRegistry(t)).RunAll(context.Background(), turn.Calls())
	next, err := turn.Next(history, outcomes)
	require.NoError(t, err)
	require.Len(t, history, 1)
	require.Len(t, next, 3)
	require.Same(t, turn.Content(), next[1])
	require.Equal(t, []byte("sig"), next[1].Parts[0].ThoughtSignature)
	require.Equal(t, genai.RoleUser, next[2].Role)
	require.Equal(t, map[string]any{"error": `There is no tool named "f". Available tools: get_weather, refund_order, render_chart, search_orders.`},
		next[2].Parts[0].FunctionResponse.Response)
}

// TestToolsCallsAndResults: the shape the other adapters share, without a
// Turn: calls from a response, results in the order of the outcomes, and
// tools that are the caller's.
func TestToolsCallsAndResults(t *testing.T) {
	tools, err := toolgemini.New(toolgemini.Config{Definitions: []tool.Definition{adaptertest.Def("f", `{"type":"object","properties":{"a":{"type":"string"}}}`)}})
	require.NoError(t, err)
	first := tools.Tools()
	first[0].FunctionDeclarations[0].Name = "changed"
	first[0].FunctionDeclarations[0].ParametersJsonSchema.(map[string]any)["type"] = "array"
	again := tools.Tools()[0].FunctionDeclarations[0]
	require.Equal(t, "f", again.Name)
	require.Equal(t, "object", again.ParametersJsonSchema.(map[string]any)["type"])

	_, err = tools.Calls(nil)
	require.ErrorIs(t, err, toolgemini.ErrInvalidReply)
	resp := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{ID: "c1", Name: "f", Args: map[string]any{"a": "x"}}},
		{FunctionCall: &genai.FunctionCall{Name: "f"}},
	}}}}}
	calls, err := tools.Calls(resp)
	require.NoError(t, err)
	require.Equal(t, []dispatch.Call{
		{ID: "c1", Request: tool.Request{Name: "f", Arguments: `{"a":"x"}`}},
		{Request: tool.Request{Name: "f", Arguments: `{}`}},
	}, calls)

	content, err := toolgemini.Results([]dispatch.Outcome{
		{CallID: "c1", Tool: "f", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("ok")},
		{Tool: "f", Kind: dispatch.KindRejected, IsError: true, Output: tool.NewTextOutput("no")},
	})
	require.NoError(t, err)
	require.Equal(t, genai.RoleUser, content.Role)
	require.Len(t, content.Parts, 2)
	require.Equal(t, map[string]any{"output": "ok"}, content.Parts[0].FunctionResponse.Response)
	require.Equal(t, map[string]any{"error": "no"}, content.Parts[1].FunctionResponse.Response)
	require.Empty(t, content.Parts[1].FunctionResponse.ID)

	content, err = toolgemini.Results(nil)
	require.NoError(t, err)
	require.Nil(t, content)
	_, err = toolgemini.Results([]dispatch.Outcome{{CallID: "c1", Tool: "f", Kind: dispatch.KindCompleted}, {CallID: "c2", Tool: "f", Kind: dispatch.KindSuspended}})
	require.ErrorIs(t, err, toolgemini.ErrInvalidOutcome)
}
