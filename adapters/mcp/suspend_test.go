package toolmcp_test

import (
	"context"
	"encoding/base64"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

// Both paths: a 2026-07-28 client retries with its answer and the sealed
// state (multi-round-trip requests); an older client is asked by a
// server-initiated elicitation and the handler runs again.
func TestSuspendAnswered(t *testing.T) {
	for _, version := range []string{modern, legacy} {
		for _, tc := range []struct {
			name, why string
			answer    *mcp.ElicitResult
			twice     bool
			isError   bool
			text      string
			asked     int32
			calls     int32
		}{
			{
				name: "accept", why: "the form's content is the tool's answer",
				answer: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "note": "ok"}},
				text:   `answer {"approve":true,"note":"ok"} state {"step":1}`, asked: 1, calls: 2,
			},
			{
				name: "accept twice", why: "a second question of the same call is asked as the first",
				answer: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, twice: true,
				text: `answer {"approve":true} state {"step":2}`, asked: 2, calls: 3,
			},
			{
				name: "decline", why: "a declined request is final and does not continue the tool",
				answer: &mcp.ElicitResult{Action: "decline"}, isError: true,
				text: `The person declined the call to "approve".`, asked: 1, calls: 1,
			},
			{
				name: "cancel", why: "a dismissed request does not continue the tool",
				answer: &mcp.ElicitResult{Action: "cancel"}, isError: true,
				text: "The person dismissed the request for input of approve; the call was not continued.", asked: 1, calls: 1,
			},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				var calls, asked atomic.Int32
				reg := &tool.Registry{}
				b, err := tool.Bind(approve(&calls, tc.twice))
				require.NoError(t, err)
				require.NoError(t, reg.Register(b))
				var prompts []string
				opts := &mcp.ClientOptions{ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					prompts = append(prompts, req.Params.Message)
					require.JSONEq(t, approvalForm, wire(t, req.Params.RequestedSchema))
					return answering(tc.answer, &asked)(ctx, req)
				}}
				cs := connect(t, newServer(t, reg), opts, version)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "approve", Arguments: map[string]any{"order": "7"}})
				require.NoError(t, err, tc.why)
				require.Equal(t, tc.isError, res.IsError, tc.why)
				require.JSONEq(t, `[{"type":"text","text":`+wire(t, tc.text)+`}]`, wire(t, res.Content), tc.why)
				require.Equal(t, tc.asked, asked.Load(), tc.why)
				require.Equal(t, tc.calls, calls.Load(), tc.why)
				require.Equal(t, "Refund order 7 for 12.50 EUR?", prompts[0])
			})
		}
	}
}

// suspended calls approve with the SDK's automatic retries off and
// returns the input-required result.
func suspended(t *testing.T, cs *mcp.ClientSession) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "approve", Arguments: map[string]any{"order": "7"}})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	require.Empty(t, res.Content)
	require.Len(t, res.InputRequests, 1)
	require.NotEmpty(t, res.RequestState)
	return res
}

// manual is a client that retries calls itself and declares that it can
// put forms to a person.
func manual() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	}
}

func retry(state string, answer mcp.InputResponse) *mcp.CallToolParams {
	return &mcp.CallToolParams{
		Name:           "approve",
		Arguments:      map[string]any{"order": "7"},
		InputResponses: mcp.InputResponseMap{"input": answer},
		RequestState:   state,
	}
}

var yes = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}

// The state is the sealed checkpoint: a second server built from scratch
// (same seal key, new registry, new dispatcher) continues the call.
func TestSuspendResumedElsewhere(t *testing.T) {
	var calls atomic.Int32
	first := connect(t, newServer(t, registry(t, &calls, nil)), manual(), modern)
	res := suspended(t, first)
	require.JSONEq(t, `{"input":{"method":"elicitation/create","params":{"mode":"form","message":"Refund order 7 for 12.50 EUR?","requestedSchema":`+approvalForm+`}}}`, wire(t, res.InputRequests))

	second := connect(t, newServer(t, registry(t, &calls, nil)), manual(), modern)
	done, err := second.CallTool(t.Context(), retry(res.RequestState, yes))
	require.NoError(t, err)
	require.False(t, done.IsError)
	require.False(t, done.NeedsInput())
	require.JSONEq(t, `[{"type":"text","text":"answer {\"approve\":true} state {\"step\":1}"}]`, wire(t, done.Content))
	require.Equal(t, int32(2), calls.Load())
}

func TestSuspendRetryRefused(t *testing.T) {
	var calls atomic.Int32
	cs := connect(t, newServer(t, registry(t, &calls, nil)), manual(), modern)
	state := suspended(t, cs).RequestState
	require.NotContains(t, state, "step", "the client cannot read the tool's state")
	require.NotContains(t, state, "Refund", "nor the prompt")

	// A state that decrypts, but whose checkpoint was edited: the seal
	// refuses it.
	keys := []dispatch.SealKey{{ID: "k1", Secret: secret}}
	plain, err := toolmcp.OpenState(keys, state)
	require.NoError(t, err)
	edited := strings.Replace(string(plain), `\"7\"`, `\"8\"`, 1)
	require.NotEqual(t, string(plain), edited)
	forged, err := toolmcp.SealState(keys, []byte(edited))
	require.NoError(t, err)
	parts := strings.Split(state, ".")
	require.Len(t, parts, 3)
	body, err := base64.RawURLEncoding.DecodeString(parts[2])
	require.NoError(t, err)
	body[len(body)/2] ^= 1
	flipped := parts[0] + "." + parts[1] + "." + base64.RawURLEncoding.EncodeToString(body)
	for _, tc := range []struct {
		name, why string
		params    *mcp.CallToolParams
		err       string
	}{
		{
			name: "flipped bit", why: "an altered byte of the encrypted state does not decrypt",
			params: retry(flipped, yes),
			err:    "tool: invalid checkpoint: the request state was altered or not issued with this server's keys",
		},
		{
			name: "edited checkpoint", why: "arguments edited in a checkpoint that was re-encrypted break its seal",
			params: retry(forged, yes),
			err:    "tool: invalid checkpoint: the seal does not match its content",
		},
		{
			name: "other keys", why: "a state from a server with other keys",
			params: func() *mcp.CallToolParams {
				other, err := toolmcp.SealState([]dispatch.SealKey{{ID: "k1", Secret: []byte("another secret of thirty-two bytes!")}}, plain)
				require.NoError(t, err)
				return retry(other, yes)
			}(),
			err: "tool: invalid checkpoint: the request state was altered or not issued with this server's keys",
		},
		{
			name: "garbage", why: "a state that is not a checkpoint",
			params: retry("not json", yes),
			err:    "tool: invalid checkpoint: the request state is not one this server issued",
		},
		{
			name: "other tool", why: "a state belongs to the tool that suspended",
			params: func() *mcp.CallToolParams { p := retry(state, yes); p.Name = "add"; return p }(),
			err:    `belongs to tool "approve", not "add"`,
		},
		{
			name: "bad answer", why: "an answer that breaks the response schema",
			params: retry(state, &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": "yes"}}),
			err:    "tool: invalid answer",
		},
		{
			name: "no answer", why: "a retry without the answer to the request",
			params: func() *mcp.CallToolParams { p := retry(state, yes); p.InputResponses = nil; return p }(),
			err:    "tool: invalid answer",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cs.CallTool(t.Context(), tc.params)
			require.ErrorContains(t, err, tc.err, tc.why)
		})
	}
	require.Equal(t, int32(1), calls.Load(), "nothing ran after the suspension")
}

func TestSuspendUnanswerable(t *testing.T) {
	// A client of either era that declared no elicitation capability, or
	// URL elicitation only, is not sent a form it cannot put to anyone.
	for _, version := range []string{legacy, modern} {
		for name, opts := range map[string]*mcp.ClientOptions{
			"without elicitation":        nil,
			"manual without elicitation": {MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}},
			"URL elicitation only":       {Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}}},
		} {
			t.Run(version+"/"+name, func(t *testing.T) {
				var calls atomic.Int32
				cs := connect(t, newServer(t, registry(t, &calls, nil)), opts, version)
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "approve", Arguments: map[string]any{"order": "7"}})
				require.NoError(t, err)
				require.False(t, res.NeedsInput())
				require.Empty(t, res.RequestState, "no checkpoint leaves the server")
				require.True(t, res.IsError)
				require.JSONEq(t, `[{"type":"text","text":"The tool approve needs an answer from a person, which this client cannot ask for; the call was not continued."}]`, wire(t, res.Content))
				require.Equal(t, int32(1), calls.Load())
			})
		}
	}
	t.Run("form outside the subset", func(t *testing.T) {
		nested := adaptertest.Object("nested", "", "", func(context.Context, tool.Invocation) (tool.Result, error) {
			return adaptertest.Ask(`"Where?"`, `{"type":"object","properties":{"address":{"type":"object"}}}`, "")
		})
		b, err := tool.Bind(nested)
		require.NoError(t, err)
		reg, err := tool.NewRegistry(b)
		require.NoError(t, err)
		cs := connect(t, newServer(t, reg, func(c *toolmcp.Config) { c.Tools = nil }), nil, modern)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nested", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.True(t, res.IsError)
		require.JSONEq(t, `[{"type":"text","text":"The tool nested asked for input in a form MCP cannot carry; the call was not continued."}]`, wire(t, res.Content))
	})
}

// The input-required result carries "content":[] on the wire, not null: a
// client that validates content as an array refuses null.
func TestSuspendContentIsArray(t *testing.T) {
	server := newServer(t, registry(t, nil, nil))
	var sent []string
	server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "tools/call" && err == nil {
				sent = append(sent, wire(t, res))
			}
			return res, err
		}
	})
	suspended(t, connect(t, server, manual(), modern))
	require.Len(t, sent, 1)
	require.Contains(t, sent[0], `"content":[]`)
}
