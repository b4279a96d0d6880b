package toolopenai_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

// TestChatConversation replays a whole tool-use conversation through the
// real Chat Completions client: two tools in one turn, one of them with an
// argument mistake that the model corrects in the next turn, a Failure and
// a media result, then the final answer. What the client sent is compared
// with testdata/chat_requests.golden.json (refresh with -update), and the
// points that matter are asserted one by one.
func TestChatConversation(t *testing.T) {
	replay := adaptertest.NewReplay(t, "/chat/completions", "chat_conversation.json")
	client := openai.NewClient(option.WithBaseURL(replay.Server.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))

	tools, err := toolopenai.New(toolopenai.Config{Registry: replay.Registry, Strict: true})
	require.NoError(t, err)
	require.Empty(t, tools.Lints())

	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_5,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(adaptertest.Prompt)},
		Tools:    tools.ChatTools(),
	}
	var msg openai.ChatCompletionMessage
	reqs := replay.Converse(t, "chat_requests.golden.json", func() ([]dispatch.Call, string) {
		completion, err := client.Chat.Completions.New(t.Context(), params)
		require.NoError(t, err)
		msg = completion.Choices[0].Message
		calls, err := tools.ChatCalls(msg)
		require.NoError(t, err)
		return calls, msg.Content
	}, func(outcomes []dispatch.Outcome) {
		answers, err := toolopenai.ChatResults(outcomes)
		require.NoError(t, err)
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, answers...)
	})

	first := reqs[0]
	require.Equal(t, "get_weather", adaptertest.Field(t, first, "tools.1.function.name"))
	require.Equal(t, true, adaptertest.Field(t, first, "tools.1.function.strict"))
	require.Equal(t, false, adaptertest.Field(t, first, "tools.1.function.parameters.additionalProperties"))
	require.Equal(t, []any{"city", "unit"}, adaptertest.Field(t, first, "tools.1.function.parameters.required"))
	require.Equal(t, []any{"string", "null"}, adaptertest.Field(t, first, "tools.1.function.parameters.properties.unit.type"))

	// Turn 2 answers both calls of turn 1, by ID, in order; the empty
	// city is refused by Prepare, the null limit was removed before it.
	second := reqs[1]
	require.Equal(t, "tool", adaptertest.Field(t, second, "messages.2.role"))
	require.Equal(t, "call_7Qm1weather", adaptertest.Field(t, second, "messages.2.tool_call_id"))
	require.Contains(t, adaptertest.Field(t, second, "messages.2.content"), "city")
	require.Equal(t, "call_7Qm2orders", adaptertest.Field(t, second, "messages.3.tool_call_id"))
	require.JSONEq(t, `{"orders":[{"id":"A-1001","status":"open"}]}`, adaptertest.Field(t, second, "messages.3.content").(string))

	// Turn 4: the Failure's public text, then the chart's text with notes,
	// then a user message carrying the image; the CSV is noted only.
	fourth := reqs[3]
	require.Equal(t, "call_9Sp1lookup", adaptertest.Field(t, fourth, "messages.7.tool_call_id"))
	require.Equal(t, "call_9Sp2chart", adaptertest.Field(t, fourth, "messages.8.tool_call_id"))
	require.True(t, strings.HasPrefix(adaptertest.Field(t, fourth, "messages.7.content").(string), toolopenai.ErrorMarker))
	require.Contains(t, adaptertest.Field(t, fourth, "messages.8.content"), "[not delivered: attachment text/csv, 28 bytes]")
	require.Contains(t, adaptertest.Field(t, fourth, "messages.8.content"), "[delivered: image/png, attachment 1, in the user message after the tool results]")
	require.Equal(t, "user", adaptertest.Field(t, fourth, "messages.9.role"))
	require.Equal(t, "image_url", adaptertest.Field(t, fourth, "messages.9.content.1.type"))
	require.Len(t, adaptertest.Field(t, fourth, "messages.9.content"), 2)
}

// TestResultsMarkErrorsAndDeliveries: an error's text starts with
// ErrorMarker and a success's does not, in both APIs; a delivered image and
// an undelivered attachment are noted differently.
func TestResultsMarkErrorsAndDeliveries(t *testing.T) {
	media := tool.Output{Content: []tool.Block{
		{Kind: tool.BlockText, Text: "chart"},
		{Kind: tool.BlockMedia, MediaType: "image/png", Data: []byte{1, 2}},
		{Kind: tool.BlockMedia, MediaType: "text/csv", Data: []byte("a,b")},
	}}
	for _, tc := range []struct {
		name    string
		outcome dispatch.Outcome
		chat    string
		resp    any
	}{
		{
			"failure", dispatch.Outcome{CallID: "c1", Tool: "t", Kind: dispatch.KindFailed, IsError: true, Output: tool.NewTextOutput("the store is closed")},
			"[tool error] the store is closed", "[tool error] the store is closed",
		},
		{
			"success", dispatch.Outcome{CallID: "c1", Tool: "t", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("the store is closed")},
			"the store is closed", "the store is closed",
		},
		{
			"success with media", dispatch.Outcome{CallID: "c1", Tool: "t", Kind: dispatch.KindCompleted, Output: media},
			"chart\n[delivered: image/png, attachment 1, in the user message after the tool results]\n[not delivered: attachment text/csv, 3 bytes]",
			[]any{
				map[string]any{"type": "input_text", "text": "chart"},
				map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AQI="},
				map[string]any{"type": "input_text", "text": "[not delivered: attachment text/csv, 3 bytes]"},
			},
		},
		{
			"failure with media", dispatch.Outcome{CallID: "c1", Tool: "t", Kind: dispatch.KindFailed, IsError: true, Output: media},
			"[tool error] chart\n[delivered: image/png, attachment 1, in the user message after the tool results]\n[not delivered: attachment text/csv, 3 bytes]",
			[]any{
				map[string]any{"type": "input_text", "text": "[tool error]"},
				map[string]any{"type": "input_text", "text": "chart"},
				map[string]any{"type": "input_image", "image_url": "data:image/png;base64,AQI="},
				map[string]any{"type": "input_text", "text": "[not delivered: attachment text/csv, 3 bytes]"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := toolopenai.ChatResults([]dispatch.Outcome{tc.outcome})
			require.NoError(t, err)
			raw, err := json.Marshal(msgs[0])
			require.NoError(t, err)
			require.Equal(t, tc.chat, adaptertest.Field(t, raw, "content"))
			items, err := toolopenai.ResponseResults([]dispatch.Outcome{tc.outcome})
			require.NoError(t, err)
			raw, err = json.Marshal(items[0])
			require.NoError(t, err)
			got := adaptertest.Field(t, raw, "output")
			if list, ok := got.([]any); ok {
				for _, item := range list {
					delete(item.(map[string]any), "detail")
				}
			}
			require.Equal(t, tc.resp, got)
		})
	}
}

func TestChatResultsRefuseSuspendedAndZero(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outcome dispatch.Outcome
		want    string
	}{
		{"suspended", dispatch.Outcome{CallID: "c1", Kind: dispatch.KindSuspended}, `tool: invalid outcome for OpenAI: outcome 0 (call "c1") is suspended: it waits for a person; give the calls a dispatch.Call.TurnID (or save the turn with Dispatcher.SaveTurn), wait for it with Dispatcher.WaitTurn, and send its outcomes then`},
		{"zero", dispatch.Outcome{}, `tool: invalid outcome for OpenAI: outcome 0 is the zero Outcome`},
		{"no call ID", dispatch.Outcome{Kind: dispatch.KindCompleted}, `tool: invalid outcome for OpenAI: outcome 0 has no call ID to answer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := toolopenai.ChatResults([]dispatch.Outcome{tc.outcome})
			require.ErrorIs(t, err, toolopenai.ErrInvalidOutcome)
			require.EqualError(t, err, tc.want)
			require.Nil(t, msgs)
			items, err := toolopenai.ResponseResults([]dispatch.Outcome{tc.outcome})
			require.ErrorIs(t, err, toolopenai.ErrInvalidOutcome)
			require.Nil(t, items)
		})
	}
}

// TestChatToolsAreFresh: the parameters belong to the caller; changing them
// changes nothing the next call returns.
func TestChatToolsAreFresh(t *testing.T) {
	tools, err := toolopenai.New(toolopenai.Config{Registry: adaptertest.Registry(t), Strict: true})
	require.NoError(t, err)
	first := tools.ChatTools()
	first[1].OfFunction.Function.Parameters["type"] = "array"
	first[1].OfFunction.Function.Name = "changed"
	again, err := json.Marshal(tools.ChatTools()[1])
	require.NoError(t, err)
	require.Equal(t, "object", adaptertest.Field(t, again, "function.parameters.type"))
	require.Equal(t, "get_weather", adaptertest.Field(t, again, "function.name"))
}

// chatMessage decodes an assistant message with one function call, as the
// SDK would from the wire.
func chatMessage(t testing.TB, name, args string) openai.ChatCompletionMessage {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
		map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": name, "arguments": args}},
	}})
	require.NoError(t, err)
	var msg openai.ChatCompletionMessage
	require.NoError(t, json.Unmarshal(raw, &msg))
	return msg
}

// chatCalls returns tools.ChatCalls(msg), which must not fail.
func chatCalls(t testing.TB, tools *toolopenai.Tools, msg openai.ChatCompletionMessage) []dispatch.Call {
	t.Helper()
	calls, err := tools.ChatCalls(msg)
	require.NoError(t, err)
	return calls
}
