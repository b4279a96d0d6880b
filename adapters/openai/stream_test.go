package toolopenai_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

// sse serves events as server-sent events on path, each as one data line,
// then, when done, the [DONE] line Chat Completions ends with; a stream
// without it ends as a connection cut short does. It counts the requests.
func sse(t *testing.T, path string, events []string, done bool) *openai.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.Error(w, "unexpected path "+r.URL.Path, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			var v any
			if err := json.Unmarshal([]byte(e), &v); err != nil {
				panic(fmt.Sprintf("event %s: %v", e, err))
			}
			compact, _ := json.Marshal(v)
			fmt.Fprintf(w, "data: %s\n\n", compact)
			w.(http.Flusher).Flush()
		}
		if done {
			fmt.Fprint(w, "data: [DONE]\n\n")
		}
	}))
	t.Cleanup(srv.Close)
	client := openai.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return &client
}

// chunk is a Chat Completions chunk with the given tool call deltas and
// finish reason ("" for none).
func chunk(finish string, deltas ...string) string {
	reason := "null"
	if finish != "" {
		reason = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764576000,"model":"gpt-5.5",
		"choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[` + strings.Join(deltas, ",") + `]},"finish_reason":` + reason + `}]}`
}

// start is the first delta of call index: its ID and name.
func start(index int, id, name string) string {
	return fmt.Sprintf(`{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":""}}`, index, id, name)
}

// args is a delta of the arguments of call index.
func args(index int, text string) string {
	quoted, _ := json.Marshal(text)
	return fmt.Sprintf(`{"index":%d,"function":{"arguments":%s}}`, index, quoted)
}

// readChat streams a chat completion into a ChatStream, and returns the
// number of chunks read and the first error Add returned (reading stops
// there).
func readChat(t *testing.T, client *openai.Client, s *toolopenai.ChatStream) (int, error) {
	t.Helper()
	stream := client.Chat.Completions.NewStreaming(t.Context(), openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_5,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(adaptertest.Prompt)},
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

func newTools(t *testing.T, strict bool) (*toolopenai.Tools, *tool.Registry) {
	t.Helper()
	reg := adaptertest.Registry(t)
	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: strict})
	require.NoError(t, err)
	return tools, reg
}

// TestChatStream reads two calls whose argument deltas interleave and cut
// tokens anywhere, and runs them.
func TestChatStream(t *testing.T) {
	tools, reg := newTools(t, false)
	client := sse(t, "/chat/completions", []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"ci`), start(1, "call_o", "search_orders")),
		chunk("", args(1, `{"customer":"ana@example.com"`), args(0, `ty":"Os`)),
		chunk("", args(0, `lo","unit":"celsius"}`), args(1, `,"limit":3}`)),
		chunk("tool_calls"),
	}, true)
	s := tools.ChatStream()
	n, err := readChat(t, client, s)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	calls, err := s.Calls()
	require.NoError(t, err)
	require.Equal(t, []dispatch.Call{
		{ID: "call_w", Request: tool.Request{Name: "get_weather", Arguments: `{"city":"Oslo","unit":"celsius"}`}},
		{ID: "call_o", Request: tool.Request{Name: "search_orders", Arguments: `{"customer":"ana@example.com","limit":3}`}},
	}, calls)
	outcomes := adaptertest.Dispatcher(t, reg).RunAll(t.Context(), calls)
	require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind, outcomes[0].Err)
	require.Equal(t, dispatch.KindCompleted, outcomes[1].Kind, outcomes[1].Err)
}

// TestChatStreamRefusesEarly stops reading at the chunk whose arguments
// can no longer be admitted, and answers the call with the refusal.
func TestChatStreamRefusesEarly(t *testing.T) {
	tools, reg := newTools(t, false)
	client := sse(t, "/chat/completions", []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"city":"Oslo",`)),
		chunk("", args(0, `"unit":"kelvin"`)),
		chunk("", args(0, `}`)),
		chunk("tool_calls"),
	}, true)
	s := tools.ChatStream()
	n, err := readChat(t, client, s)
	require.Equal(t, 3, n, "refused at the chunk that ends the bad value")
	var refused *dispatch.RefusedCall
	require.ErrorAs(t, err, &refused)
	require.Equal(t, "call_w", refused.Call.ID)
	require.Equal(t, `{"city":"Oslo","unit":"kelvin"`, refused.Call.Request.Arguments)
	rejection, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Contains(t, rejection.Message(), `arguments of "get_weather" do not match its input schema at /unit: value must be one of 'celsius', 'fahrenheit'`)

	// The stream was left: its calls are cut short, and the refused
	// call is answered with its refusal.
	_, err = s.Calls()
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
	o := adaptertest.Dispatcher(t, reg).Settle(refused.Call, "", "", tool.Result{}, refused.Err)
	require.Equal(t, dispatch.KindRejected, o.Kind)
	msgs, err := toolopenai.ChatResults([]dispatch.Outcome{o})
	require.NoError(t, err)
	require.Equal(t, toolopenai.ErrorMarker+rejection.Message(), msgs[0].OfTool.Content.OfString.Value)
}

// TestChatStreamReadToTheEnd reads a stream past a refusal: the call is
// returned whole, and Prepare refuses it.
func TestChatStreamReadToTheEnd(t *testing.T) {
	tools, reg := newTools(t, false)
	s := tools.ChatStream()
	var refusals int
	for _, c := range []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"city":"","unit":"kelvin"}`)),
		chunk("", args(0, ` `)),
		chunk("tool_calls"),
	} {
		var parsed openai.ChatCompletionChunk
		require.NoError(t, json.Unmarshal([]byte(c), &parsed))
		if err := s.Add(parsed); err != nil {
			require.ErrorAs(t, err, new(*dispatch.RefusedCall))
			refusals++
		}
	}
	require.Equal(t, 1, refusals, "a call is refused once")
	calls, err := s.Calls()
	require.NoError(t, err)
	require.Equal(t, `{"city":"","unit":"kelvin"} `, calls[0].Request.Arguments)
	o := adaptertest.Dispatcher(t, reg).Run(t.Context(), calls[0])
	require.Equal(t, dispatch.KindRejected, o.Kind)
}

// TestChatStreamCutShort never lets a call through whose stream ended
// before the choice finished, though its arguments parse.
func TestChatStreamCutShort(t *testing.T) {
	tools, _ := newTools(t, false)
	client := sse(t, "/chat/completions", []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"city":"Oslo"}`)),
	}, false)
	s := tools.ChatStream()
	_, err := readChat(t, client, s)
	require.NoError(t, err)
	calls, err := s.Calls()
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
	require.EqualError(t, err, "tool: invalid reply from OpenAI: the stream ended before the choice finished: its tool calls may be cut short")
	require.Nil(t, calls)
}

// TestChatStreamDisagrees refuses a stream whose last event contradicts
// its deltas: a choice finished for length although the arguments parse,
// and a call whose ID changes.
func TestChatStreamDisagrees(t *testing.T) {
	tools, _ := newTools(t, false)
	client := sse(t, "/chat/completions", []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"city":"Oslo"}`)),
		chunk("length"),
	}, true)
	s := tools.ChatStream()
	_, err := readChat(t, client, s)
	require.NoError(t, err)
	_, err = s.Calls()
	require.EqualError(t, err, `tool: invalid reply from OpenAI: the choice finished with "length": its tool calls may be cut short`)

	client = sse(t, "/chat/completions", []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"city":"Oslo"}`)),
		chunk("tool_calls", start(0, "call_x", "get_weather")),
	}, true)
	s = tools.ChatStream()
	_, err = readChat(t, client, s)
	require.EqualError(t, err, `tool: invalid reply from OpenAI: tool call 0 changed its ID from "call_w" to "call_x"`)
	_, err = s.Calls()
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
}

// TestChatStreamStrict leaves a strict tool's nulls to the end: they
// stand for absent members, which the canonical schema would refuse as
// nulls.
func TestChatStreamStrict(t *testing.T) {
	tools, reg := newTools(t, true)
	require.True(t, tools.Strict("get_weather"))
	s := tools.ChatStream()
	for _, c := range []string{
		chunk("", start(0, "call_w", "get_weather")),
		chunk("", args(0, `{"city":"Oslo","unit":null}`)),
		chunk("tool_calls"),
	} {
		var parsed openai.ChatCompletionChunk
		require.NoError(t, json.Unmarshal([]byte(c), &parsed))
		require.NoError(t, s.Add(parsed))
	}
	calls, err := s.Calls()
	require.NoError(t, err)
	require.Equal(t, `{"city":"Oslo"}`, calls[0].Request.Arguments)
	require.Equal(t, dispatch.KindCompleted, adaptertest.Dispatcher(t, reg).Run(t.Context(), calls[0]).Kind)
}

// item is a function_call output item.
func item(id, callID, name, arguments, status string) string {
	quoted, _ := json.Marshal(arguments)
	return fmt.Sprintf(`{"type":"function_call","id":%q,"call_id":%q,"name":%q,"arguments":%s,"status":%q}`, id, callID, name, quoted, status)
}

// responseEvents streams one function call of get_weather whose deltas
// are deltas, whose done events carry done, and which completes.
func responseEvents(deltas []string, done string) []string {
	events := []string{
		`{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`,
		`{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":` + item("fc_1", "call_1", "get_weather", "", "in_progress") + `}`,
	}
	for i, d := range deltas {
		quoted, _ := json.Marshal(d)
		events = append(events, fmt.Sprintf(`{"type":"response.function_call_arguments.delta","sequence_number":%d,"item_id":"fc_1","output_index":0,"delta":%s}`, i+2, quoted))
	}
	quoted, _ := json.Marshal(done)
	return append(events,
		`{"type":"response.function_call_arguments.done","sequence_number":90,"item_id":"fc_1","output_index":0,"arguments":`+string(quoted)+`}`,
		`{"type":"response.output_item.done","sequence_number":91,"output_index":0,"item":`+item("fc_1", "call_1", "get_weather", done, "completed")+`}`,
		`{"type":"response.completed","sequence_number":92,"response":{"id":"resp_1","object":"response","status":"completed","output":[`+item("fc_1", "call_1", "get_weather", done, "completed")+`]}}`,
	)
}

// readResponse streams a response into a ResponseStream, as readChat does.
func readResponse(t *testing.T, client *openai.Client, s *toolopenai.ResponseStream) (int, error) {
	t.Helper()
	stream := client.Responses.NewStreaming(t.Context(), responses.ResponseNewParams{
		Model: openai.ChatModelGPT5_5,
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(adaptertest.Prompt)},
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

func TestResponseStream(t *testing.T) {
	tools, reg := newTools(t, false)
	client := sse(t, "/responses", responseEvents([]string{`{"city"`, `:"Li`, `sbon"}`}, `{"city":"Lisbon"}`), false)
	s := tools.ResponseStream()
	_, err := readResponse(t, client, s)
	require.NoError(t, err)
	calls, err := s.Calls()
	require.NoError(t, err)
	require.Equal(t, []dispatch.Call{{ID: "call_1", Request: tool.Request{Name: "get_weather", Arguments: `{"city":"Lisbon"}`}}}, calls)
	require.Equal(t, dispatch.KindCompleted, adaptertest.Dispatcher(t, reg).Run(t.Context(), calls[0]).Kind)
}

func TestResponseStreamRefusesEarly(t *testing.T) {
	tools, _ := newTools(t, false)
	events := responseEvents([]string{`{"city":"Lisbon",`, `"country":"PT"`, `}`}, `{"city":"Lisbon","country":"PT"}`)
	client := sse(t, "/responses", events, false)
	s := tools.ResponseStream()
	n, err := readResponse(t, client, s)
	require.Equal(t, 4, n, "refused at the name of the unknown member")
	var refused *dispatch.RefusedCall
	require.ErrorAs(t, err, &refused)
	require.Equal(t, "call_1", refused.Call.ID)
	require.Contains(t, err.Error(), `additional properties 'country' not allowed`)
}

// TestResponseStreamCutShort never lets a call through whose stream ended
// before the response completed: neither when its arguments were not
// done, nor when they were.
func TestResponseStreamCutShort(t *testing.T) {
	tools, _ := newTools(t, false)
	events := responseEvents([]string{`{"city":"Oslo"}`}, `{"city":"Oslo"}`)
	for _, cut := range []int{3, 5} {
		client := sse(t, "/responses", events[:cut], false)
		s := tools.ResponseStream()
		_, err := readResponse(t, client, s)
		require.NoError(t, err)
		_, err = s.Calls()
		require.EqualError(t, err, "tool: invalid reply from OpenAI: the stream ended before response.completed: its function calls may be cut short")
	}
}

// TestResponseStreamDisagrees refuses a call whose done event carries
// other arguments than its deltas made, though both parse and each alone
// would be admitted.
func TestResponseStreamDisagrees(t *testing.T) {
	tools, _ := newTools(t, false)
	client := sse(t, "/responses", responseEvents([]string{`{"city":"Oslo"}`}, `{"city":"Bergen"}`), false)
	s := tools.ResponseStream()
	_, err := readResponse(t, client, s)
	require.ErrorIs(t, err, toolopenai.ErrInvalidReply)
	require.ErrorIs(t, err, dispatch.ErrInvalidStream)
	require.EqualError(t, err, `tool: invalid reply from OpenAI: function call "call_1": invalid argument stream: the completion event of the call of "get_weather" carries 17 bytes of arguments that differ from the 15 bytes its deltas made`)
	_, err2 := s.Calls()
	require.True(t, errors.Is(err2, toolopenai.ErrInvalidReply))

	// The item of output_item.done disagrees with the deltas and the done
	// event, which agree.
	events := responseEvents([]string{`{"city":"Oslo"}`}, `{"city":"Oslo"}`)
	events[4] = `{"type":"response.output_item.done","sequence_number":91,"output_index":0,"item":` + item("fc_1", "call_1", "get_weather", `{"city":"Rome"}`, "completed") + `}`
	s = tools.ResponseStream()
	_, err = readResponse(t, sse(t, "/responses", events, false), s)
	require.ErrorIs(t, err, dispatch.ErrInvalidStream)
}
