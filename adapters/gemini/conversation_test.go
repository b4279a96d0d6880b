package toolgemini_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

type conversation struct {
	Model     string `json:"model"`
	Prompt    string `json:"prompt"`
	Exchanges []struct {
		Response json.RawMessage `json:"response"`
	} `json:"exchanges"`
}

func loadConversation(t *testing.T) conversation {
	t.Helper()
	b, err := os.ReadFile("testdata/conversation.json")
	require.NoError(t, err)
	var c conversation
	require.NoError(t, json.Unmarshal(b, &c))
	return c
}

// TestConversation replays a whole tool-use conversation through the real
// SDK client: two calls in one turn, an argument mistake corrected in the
// next turn, calls without IDs, a Failure, a media result and a final answer.
// It checks what the SDK sent at every step against the fixtures.
func TestConversation(t *testing.T) {
	conv := loadConversation(t)
	responses := make([]json.RawMessage, len(conv.Exchanges))
	for i, ex := range conv.Exchanges {
		responses[i] = ex.Response
	}
	srv := newGeminiServer(t, responses...)
	client := newClient(t, srv.URL)
	reg := newRegistry(t)
	d := adaptertest.Dispatcher(t, reg)
	ctx := context.Background()

	tools, err := toolgemini.New(toolgemini.Config{Registry: reg})
	require.NoError(t, err)
	config := &genai.GenerateContentConfig{Tools: tools.Tools()}
	contents := []*genai.Content{genai.NewContentFromText(conv.Prompt, genai.RoleUser)}

	var kinds [][]dispatch.Kind
	var replies []json.RawMessage
	var final string
	for i := range conv.Exchanges {
		resp, err := client.Models.GenerateContent(ctx, conv.Model, contents, config)
		require.NoError(t, err, "exchange %d", i)
		turn, err := toolgemini.NewTurn(resp)
		require.NoError(t, err)
		calls := turn.Calls()
		if len(calls) == 0 {
			final = resp.Text()
			break
		}
		outcomes := d.RunAll(ctx, calls)
		var k []dispatch.Kind
		for _, o := range outcomes {
			k = append(k, o.Kind)
		}
		kinds = append(kinds, k)
		contents, err = turn.Next(contents, outcomes)
		require.NoError(t, err)
	}
	require.Equal(t, [][]dispatch.Kind{
		{dispatch.KindCompleted, dispatch.KindRejected},
		{dispatch.KindCompleted, dispatch.KindFailed},
		{dispatch.KindCompleted},
	}, kinds)
	require.Contains(t, final, "refunded already")

	// Every request went to generateContent of the model with the key,
	// and carried the same tools.
	for i := range conv.Exchanges {
		req, body := srv.request(t, i)
		require.Equal(t, "/v1beta/models/"+conv.Model+":generateContent", req.Path)
		require.Equal(t, "test-key", req.APIKey)
		adaptertest.Golden(t, "tools.json", body["tools"])
		var sent []json.RawMessage
		require.NoError(t, json.Unmarshal(body["contents"], &sent))
		require.Len(t, sent, 1+2*i)
		if i == 0 {
			continue
		}
		// The model's turn is replayed unchanged, thought signatures
		// included; then come the function responses.
		var prev struct {
			Candidates []struct {
				Content json.RawMessage `json:"content"`
			} `json:"candidates"`
		}
		require.NoError(t, json.Unmarshal(conv.Exchanges[i-1].Response, &prev))
		require.JSONEq(t, string(prev.Candidates[0].Content), string(sent[len(sent)-2]))
		replies = append(replies, sent[len(sent)-1])
	}
	adaptertest.Golden(t, "replies.json", replies)
}

// TestWhatTheSDKSends pins what the SDK's encoding (by way of
// map[string]any) does to the numbers of a request, as the package
// documentation says: they are written as float64.
func TestWhatTheSDKSends(t *testing.T) {
	srv := newGeminiServer(t, json.RawMessage(`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]}}]}`))
	client := newClient(t, srv.URL)
	p, err := project([]tool.Definition{adaptertest.Def("big",
		`{"type":"object","properties":{"n":{"type":"integer","minimum":0,"maximum":18446744073709551615}}}`)}, toolgemini.Config{})
	require.NoError(t, err)
	part, err := part(dispatch.Outcome{CallID: "c", Tool: "big", Kind: dispatch.KindCompleted,
		Output: tool.Output{Details: json.RawMessage(`{"total":1.50}`)}})
	require.NoError(t, err)
	contents := []*genai.Content{genai.NewContentFromText("hi", genai.RoleUser), {Role: genai.RoleUser, Parts: []*genai.Part{part}}}
	_, err = client.Models.GenerateContent(context.Background(), "m", contents, &genai.GenerateContentConfig{Tools: p.Tools()})
	require.NoError(t, err)
	_, body := srv.request(t, 0)
	require.JSONEq(t, `[{"functionDeclarations":[{"name":"big","parametersJsonSchema":{"type":"object",
		"properties":{"n":{"type":"integer","minimum":0,"maximum":1.8446744073709552e+19}}}}]}]`, string(body["tools"]))
	require.Contains(t, string(body["contents"]), `"response":{"output":{"total":1.5}}`)
}
