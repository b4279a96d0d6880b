package toolanthropic_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
)

// TestConversation replays a whole tool-use conversation through the real
// Messages client: two tools in one turn, one of them with an argument
// mistake that the model corrects in the next turn, a Failure and a media
// result, then the final answer. What the client sent is compared with
// testdata/requests.golden.json (refresh with -update), and the points that
// matter are asserted one by one.
func TestConversation(t *testing.T) {
	replay := adaptertest.NewReplay(t, "/v1/messages", "conversation.json")
	client := anthropic.NewClient(option.WithBaseURL(replay.Server.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))

	tools, err := toolanthropic.New(toolanthropic.Config{Registry: replay.Registry, Strict: true})
	require.NoError(t, err)
	require.Empty(t, tools.Lints())

	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(adaptertest.Prompt))},
		Tools:     tools.Tools(),
	}
	var message *anthropic.Message
	reqs := replay.Converse(t, "requests.golden.json", func() ([]dispatch.Call, string) {
		message, err = client.Messages.New(t.Context(), params)
		require.NoError(t, err)
		calls, err := tools.Calls(*message)
		require.NoError(t, err)
		if len(calls) > 0 {
			return calls, ""
		}
		return nil, message.Content[0].Text
	}, func(outcomes []dispatch.Outcome) {
		results, err := toolanthropic.Results(outcomes)
		require.NoError(t, err)
		params.Messages = append(params.Messages, message.ToParam(), results)
	})

	first := reqs[0]
	require.Equal(t, "get_weather", adaptertest.Field(t, first, "tools.1.name"))
	require.Equal(t, true, adaptertest.Field(t, first, "tools.1.strict"))
	require.Equal(t, false, adaptertest.Field(t, first, "tools.1.input_schema.additionalProperties"))
	require.Equal(t, []any{"city"}, adaptertest.Field(t, first, "tools.1.input_schema.required"))
	require.Equal(t, "City name (minLength: 1)", adaptertest.Field(t, first, "tools.1.input_schema.properties.city.description"))

	// Turn 2 answers both calls of turn 1, by ID, in order, in one user
	// message; the empty city is refused by Prepare and flagged as an error.
	second := reqs[1]
	require.Equal(t, "user", adaptertest.Field(t, second, "messages.2.role"))
	require.Equal(t, "tool_result", adaptertest.Field(t, second, "messages.2.content.0.type"))
	require.Equal(t, "toolu_01A09q90qw90lq917835lq9", adaptertest.Field(t, second, "messages.2.content.0.tool_use_id"))
	require.Equal(t, true, adaptertest.Field(t, second, "messages.2.content.0.is_error"))
	require.Contains(t, adaptertest.Field(t, second, "messages.2.content.0.content.0.text"), "minLength")
	require.Equal(t, "toolu_01B1kgmXLcxtaWJ8eoCfM2r", adaptertest.Field(t, second, "messages.2.content.1.tool_use_id"))
	require.Nil(t, adaptertest.Field(t, second, "messages.2.content.1.is_error"))

	// Turn 4: the Failure flagged as an error; the chart as text, an image
	// block and a note for the CSV.
	fourth := reqs[3]
	require.Equal(t, true, adaptertest.Field(t, fourth, "messages.6.content.0.is_error"))
	require.Equal(t, "toolu_01E5hnQ4pS7d3ZrB8vVAkWk", adaptertest.Field(t, fourth, "messages.6.content.1.tool_use_id"))
	require.Equal(t, "image", adaptertest.Field(t, fourth, "messages.6.content.1.content.1.type"))
	require.Equal(t, "image/png", adaptertest.Field(t, fourth, "messages.6.content.1.content.1.source.media_type"))
	require.Equal(t, "[attachment text/csv, 28 bytes]", adaptertest.Field(t, fourth, "messages.6.content.1.content.2.text"))
}
