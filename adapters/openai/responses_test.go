package toolopenai_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

// TestResponsesConversation replays the conversation of
// TestChatConversation through the real Responses client, chaining turns
// with previous_response_id.
func TestResponsesConversation(t *testing.T) {
	replay := adaptertest.NewReplay(t, "/responses", "responses_conversation.json")
	client := openai.NewClient(option.WithBaseURL(replay.Server.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))

	tools, err := toolopenai.New(toolopenai.Config{Registry: replay.Registry, Strict: true})
	require.NoError(t, err)

	params := responses.ResponseNewParams{
		Model: openai.ChatModelGPT5_5,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(adaptertest.Prompt)},
		Tools: tools.ResponseTools(),
	}
	var resp *responses.Response
	reqs := replay.Converse(t, "responses_requests.golden.json", func() ([]dispatch.Call, string) {
		resp, err = client.Responses.New(t.Context(), params)
		require.NoError(t, err)
		calls, err := tools.ResponseCalls(resp)
		require.NoError(t, err)
		return calls, resp.OutputText()
	}, func(outcomes []dispatch.Outcome) {
		items, err := toolopenai.ResponseResults(outcomes)
		require.NoError(t, err)
		params.PreviousResponseID = openai.String(resp.ID)
		params.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: items}
	})

	first := reqs[0]
	require.Equal(t, "function", adaptertest.Field(t, first, "tools.1.type"))
	require.Equal(t, "get_weather", adaptertest.Field(t, first, "tools.1.name"))
	require.Equal(t, true, adaptertest.Field(t, first, "tools.1.strict"))
	require.Equal(t, []any{"customer", "limit", "status"}, adaptertest.Field(t, first, "tools.3.parameters.required"))
	require.Equal(t, "object", adaptertest.Field(t, first, "tools.3.output_schema.type"))

	second := reqs[1]
	require.Equal(t, "resp_68af1c0a3e1", adaptertest.Field(t, second, "previous_response_id"))
	require.Equal(t, "function_call_output", adaptertest.Field(t, second, "input.0.type"))
	require.Equal(t, "call_Aq1weather", adaptertest.Field(t, second, "input.0.call_id"))
	require.Contains(t, adaptertest.Field(t, second, "input.0.output"), "minLength")
	require.Equal(t, "call_Aq2orders", adaptertest.Field(t, second, "input.1.call_id"))

	// Turn 4: the Failure's text; the chart as input_text, input_image
	// and a note for the CSV.
	fourth := reqs[3]
	require.Equal(t, toolopenai.ErrorMarker+`the tool "flaky_lookup" failed`, adaptertest.Field(t, fourth, "input.0.output"))
	require.Equal(t, "input_text", adaptertest.Field(t, fourth, "input.1.output.0.type"))
	require.Equal(t, "input_image", adaptertest.Field(t, fourth, "input.1.output.1.type"))
	require.Contains(t, adaptertest.Field(t, fourth, "input.1.output.1.image_url"), "data:image/png;base64,")
	require.Equal(t, "[not delivered: attachment text/csv, 28 bytes]", adaptertest.Field(t, fourth, "input.1.output.2.text"))
}

// responseWithCall decodes a response with one function_call item, as the
// SDK would from the wire.
func responseWithCall(t testing.TB, name, args string) *responses.Response {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"id": "resp_1", "object": "response", "status": "completed", "output": []any{
		map[string]any{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": name, "arguments": args, "status": "completed"},
	}})
	require.NoError(t, err)
	var resp responses.Response
	require.NoError(t, json.Unmarshal(raw, &resp))
	return &resp
}
