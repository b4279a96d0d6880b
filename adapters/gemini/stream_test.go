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
