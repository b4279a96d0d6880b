package toolanthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
)

// sse serves events (JSON objects with their type) as the Messages API
// streams them: an event line naming the type, then a data line.
func sse(t *testing.T, events []string) *anthropic.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			var v struct {
				Type string `json:"type"`
			}
			if err := json.Unmarshal([]byte(e), &v); err != nil {
				panic(fmt.Sprintf("event %s: %v", e, err))
			}
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v.Type, e)
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return &client
}

const messageStart = `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-opus-4-7","content":[],"stop_reason":null,"usage":{"input_tokens":10,"output_tokens":1}}}`

func toolStart(index int, id, name string) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, index, id, name)
}

func inputDelta(index int, partial string) string {
	quoted, _ := json.Marshal(partial)
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%s}}`, index, quoted)
}

func blockStop(index int) string {
	return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, index)
}

func messageEnd(reason string) []string {
	return []string{
		`{"type":"message_delta","delta":{"stop_reason":"` + reason + `","stop_sequence":null},"usage":{"output_tokens":40}}`,
		`{"type":"message_stop"}`,
	}
}

// read streams a message into a Stream, and returns the number of events
// read and the first error Add returned (reading stops there).
func read(t *testing.T, client *anthropic.Client, s *toolanthropic.Stream) (int, error) {
	t.Helper()
	stream := client.Messages.NewStreaming(t.Context(), anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeOpus4_7,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(adaptertest.Prompt))},
	})
	defer stream.Close()
	n := 0
	for stream.Next() {
		n++
		if err := s.Add(stream.Current()); err != nil {
			return n, err
		}
	}
	require.NoError(t, stream.Err())
	return n, nil
}

func newTools(t *testing.T) (*toolanthropic.Tools, *tool.Registry) {
	t.Helper()
	reg := adaptertest.Registry(t)
	tools, err := toolanthropic.New(toolanthropic.Config{Registry: reg, Strict: true})
	require.NoError(t, err)
	return tools, reg
}

func TestStream(t *testing.T) {
	tools, reg := newTools(t)
	events := []string{messageStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking."}}`,
		blockStop(0),
		toolStart(1, "toolu_w", "get_weather"),
		inputDelta(1, ""), inputDelta(1, `{"city": "Pa`), inputDelta(1, `ris"}`),
		blockStop(1),
		toolStart(2, "toolu_o", "search_orders"),
		blockStop(2),
	}
	client := sse(t, append(events, messageEnd("tool_use")...))
	s := tools.Stream()
	_, err := read(t, client, s)
	require.NoError(t, err)
	calls, err := s.Calls()
	require.NoError(t, err)
	require.Equal(t, []dispatch.Call{
		{ID: "toolu_w", Request: tool.Request{Name: "get_weather", Arguments: `{"city": "Paris"}`}},
		{ID: "toolu_o", Request: tool.Request{Name: "search_orders", Arguments: `{}`}},
	}, calls, "a block without deltas is its start's input")
	outcomes := adaptertest.Dispatcher(t, reg).RunAll(t.Context(), calls)
	require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind, outcomes[0].Err)
	require.Equal(t, dispatch.KindRejected, outcomes[1].Kind, "search_orders requires a customer")
}

func TestStreamRefusesEarly(t *testing.T) {
	tools, reg := newTools(t)
	client := sse(t, append([]string{messageStart,
		toolStart(0, "toolu_w", "get_weather"),
		inputDelta(0, `{"city":`), inputDelta(0, `["Paris"`), inputDelta(0, `]}`),
		blockStop(0),
	}, messageEnd("tool_use")...))
	s := tools.Stream()
	n, err := read(t, client, s)
	require.Equal(t, 4, n, "refused at the first byte of the array")
	var refused *dispatch.RefusedCall
	require.ErrorAs(t, err, &refused)
	require.Equal(t, `{"city":["Paris"`, refused.Call.Request.Arguments, "the input as far as it came")
	rejection, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Equal(t, `arguments of "get_weather" do not match its input schema at /city: got array, want string (refused at byte 8)`, rejection.Message())

	o := adaptertest.Dispatcher(t, reg).Settle(refused.Call, "", "", tool.Result{}, refused.Err)
	results, err := toolanthropic.Results([]dispatch.Outcome{o})
	require.NoError(t, err)
	raw, err := json.Marshal(results)
	require.NoError(t, err)
	text, _ := json.Marshal(rejection.Message())
	require.JSONEq(t, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_w","is_error":true,"content":[{"type":"text","text":`+string(text)+`}]}]}`, string(raw))
}

// TestStreamCutShort never lets a call through whose stream ended before
// message_stop, though its input parses and its block stopped.
func TestStreamCutShort(t *testing.T) {
	tools, _ := newTools(t)
	for _, events := range [][]string{
		{messageStart, toolStart(0, "toolu_w", "get_weather"), inputDelta(0, `{"city":"Paris"}`)},
		{messageStart, toolStart(0, "toolu_w", "get_weather"), inputDelta(0, `{"city":"Paris"}`), blockStop(0)},
	} {
		s := tools.Stream()
		_, err := read(t, sse(t, events), s)
		require.NoError(t, err)
		calls, err := s.Calls()
		require.EqualError(t, err, "tool: invalid reply from Anthropic: the stream ended before message_stop: its tool_use blocks may be cut short")
		require.Nil(t, calls)
	}
}

// TestStreamDisagrees refuses a message whose final events contradict its
// deltas: a stop for max_tokens after a block whose input parses, and a
// block that started with an input and went on with deltas.
func TestStreamDisagrees(t *testing.T) {
	tools, _ := newTools(t)
	s := tools.Stream()
	_, err := read(t, sse(t, append([]string{messageStart,
		toolStart(0, "toolu_w", "get_weather"), inputDelta(0, `{"city":"Paris"}`), blockStop(0),
	}, messageEnd("max_tokens")...)), s)
	require.NoError(t, err)
	_, err = s.Calls()
	require.EqualError(t, err, `tool: invalid reply from Anthropic: the message stopped with "max_tokens": its tool_use blocks may be cut short`)

	s = tools.Stream()
	_, err = read(t, sse(t, []string{messageStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_w","name":"get_weather","input":{"city":"Rome"}}}`,
		inputDelta(0, `{"city":"Paris"}`),
	}), s)
	require.EqualError(t, err, `tool: invalid reply from Anthropic: tool_use block "toolu_w" started with an input and continued with input_json_delta`)
	_, err = s.Calls()
	require.ErrorIs(t, err, toolanthropic.ErrInvalidReply)
}
