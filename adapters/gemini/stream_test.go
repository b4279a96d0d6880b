package toolgemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/dispatch"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// TestStream reads a turn streamed by the Gemini API (server-sent events)
// through the SDK's GenerateContentStream: text split over chunks, a thought
// signature on its own chunk, and two calls.
func TestStream(t *testing.T) {
	chunks := []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me "}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"check.","thoughtSignature":"c2ln"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}},
			{"functionCall":{"id":"b","name":"get_weather","args":{"city":""}}}]},"finishReason":"STOP"}]}`,
	}
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path + "?" + r.URL.RawQuery
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\r\n\r\n", compact(t, c))
		}
	}))
	defer srv.Close()
	client := newClient(t, srv.URL)

	var got []*genai.GenerateContentResponse
	for chunk, err := range client.Models.GenerateContentStream(context.Background(), "m", genai.Text("weather?"), nil) {
		require.NoError(t, err)
		got = append(got, chunk)
	}
	require.Equal(t, "/v1beta/models/m:streamGenerateContent?alt=sse", path)
	turn, err := toolgemini.NewStreamTurn(got)
	require.NoError(t, err)
	replay, err := json.Marshal(turn.Content())
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"model","parts":[{"text":"Let me "},{"text":"check.","thoughtSignature":"c2ln"},
		{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}},{"functionCall":{"id":"b","name":"get_weather","args":{"city":""}}}]}`, string(replay))
	require.Equal(t, []dispatch.Call{
		{ID: "a", Request: tool.Request{Name: "get_weather", Arguments: `{"city":"Oslo"}`}},
		{ID: "b", Request: tool.Request{Name: "get_weather", Arguments: `{"city":""}`}},
	}, turn.Calls())
}

func compact(t *testing.T, s string) string {
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

func TestNewStreamTurnRefuses(t *testing.T) {
	_, err := toolgemini.NewStreamTurn(nil)
	require.EqualError(t, err, "tool: invalid reply from Gemini: no candidate content in 0 chunks")
	partial := &genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{
		{FunctionCall: &genai.FunctionCall{Name: "f", WillContinue: genai.Ptr(true)}}}}}}}
	_, err = toolgemini.NewStreamTurn([]*genai.GenerateContentResponse{nil, {Candidates: []*genai.Candidate{{Content: &genai.Content{Parts: []*genai.Part{nil}}}}}, partial})
	require.ErrorIs(t, err, toolgemini.ErrInvalidReply)
	require.EqualError(t, err, `tool: invalid reply from Gemini: function call "f" has streamed arguments, which this package does not assemble`)
}

// streamServer serves chunks as the streamGenerateContent method does.
func streamServer(t *testing.T, chunks []string) *genai.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range chunks {
			fmt.Fprintf(w, "data: %s\r\n\r\n", compact(t, c))
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)
	return newClient(t, srv.URL)
}

// readStream reads a streamed turn into a Stream and returns, chunk by
// chunk, the calls Add completed, and the first error Add returned.
func readStream(t *testing.T, client *genai.Client, s *toolgemini.Stream) ([][]dispatch.Call, error) {
	t.Helper()
	var got [][]dispatch.Call
	for chunk, err := range client.Models.GenerateContentStream(t.Context(), "m", genai.Text("weather?"), nil) {
		require.NoError(t, err)
		calls, err := s.Add(chunk)
		if err != nil {
			return got, err
		}
		got = append(got, calls)
	}
	return got, nil
}

// TestStreamAddsWholeCalls runs each call as soon as its chunk came, and
// answers the turn once it finished.
func TestStreamAddsWholeCalls(t *testing.T) {
	client := streamServer(t, []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"Let me check."}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"c2ln"}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"b","name":"get_weather","args":{"city":""}}}]},"finishReason":"STOP"}]}`,
		`{"usageMetadata":{"promptTokenCount":10,"candidatesTokenCount":5}}`,
	})
	reg := newRegistry(t)
	d, err := dispatch.New(dispatch.Config{Registry: reg})
	require.NoError(t, err)
	var s toolgemini.Stream
	got, err := readStream(t, client, &s)
	require.NoError(t, err)
	require.Equal(t, [][]dispatch.Call{
		nil,
		{{ID: "a", Request: tool.Request{Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		{{ID: "b", Request: tool.Request{Name: "get_weather", Arguments: `{"city":""}`}}},
		nil,
	}, got, "each call as its chunk came")
	outcomes := []dispatch.Outcome{d.Run(t.Context(), got[1][0]), d.Run(t.Context(), got[2][0])}
	require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind)
	require.Equal(t, dispatch.KindRejected, outcomes[1].Kind)

	turn, err := s.Turn()
	require.NoError(t, err)
	require.Equal(t, append(got[1], got[2]...), turn.Calls())
	replay, err := json.Marshal(turn.Content())
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"model","parts":[{"text":"Let me check."},{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}},"thoughtSignature":"c2ln"},
		{"functionCall":{"id":"b","name":"get_weather","args":{"city":""}}}]}`, string(replay))
	reply, err := turn.Reply(outcomes)
	require.NoError(t, err)
	require.Len(t, reply.Parts, 2)
}

// TestStreamCutShort: the calls that came whole were whole, but a turn
// whose candidate never finished cannot be answered as it is.
func TestStreamCutShort(t *testing.T) {
	client := streamServer(t, []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}}]}}]}`,
	})
	var s toolgemini.Stream
	got, err := readStream(t, client, &s)
	require.NoError(t, err)
	require.Len(t, got[0], 1)
	_, err = s.Turn()
	require.EqualError(t, err, "tool: invalid reply from Gemini: the stream ended before the candidate finished: the turn may be cut short")
}

// TestStreamDisagrees refuses a turn whose final chunk contradicts what
// came before: the same call again with other arguments, or a finish that
// says a call was malformed.
func TestStreamDisagrees(t *testing.T) {
	client := streamServer(t, []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}}]}}]}`,
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Rome"}}}]},"finishReason":"STOP"}]}`,
	})
	var s toolgemini.Stream
	got, err := readStream(t, client, &s)
	require.EqualError(t, err, `tool: invalid reply from Gemini: function call "a" came twice`)
	require.Len(t, got, 1)
	_, err = s.Turn()
	require.ErrorIs(t, err, toolgemini.ErrInvalidReply)

	client = streamServer(t, []string{
		`{"candidates":[{"content":{"role":"model","parts":[{"functionCall":{"id":"a","name":"get_weather","args":{"city":"Oslo"}}}]}}]}`,
		`{"candidates":[{"finishReason":"MALFORMED_FUNCTION_CALL","finishMessage":"Malformed function call"}]}`,
	})
	s = toolgemini.Stream{}
	_, err = readStream(t, client, &s)
	require.NoError(t, err)
	_, err = s.Turn()
	require.EqualError(t, err, "tool: invalid reply from Gemini: the candidate finished with MALFORMED_FUNCTION_CALL: the turn is not complete")

	var zero toolgemini.Stream
	_, err = zero.Add(nil)
	require.ErrorIs(t, err, toolgemini.ErrInvalidReply)
	_, err = (&toolgemini.Stream{}).Turn()
	require.EqualError(t, err, "tool: invalid reply from Gemini: no candidate content")
}
