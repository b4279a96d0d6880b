package toolmcp_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

// charges is a tool with an effect that records the idempotency key of
// every run.
type charges struct {
	mu   sync.Mutex
	keys []tool.IdempotencyKey
}

func (c *charges) ran() []tool.IdempotencyKey {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]tool.IdempotencyKey(nil), c.keys...)
}

// chargeServer serves the charge tool, with a store, and the principal
// each request names in its _meta under "test/principal".
func chargeServer(t *testing.T, c *charges) *mcp.ClientSession {
	t.Helper()
	var n atomic.Int32
	charge := adaptertest.Object("charge", "charges a card", "", func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
		c.mu.Lock()
		c.keys = append(c.keys, inv.IdempotencyKey())
		c.mu.Unlock()
		return tool.Result{Output: tool.NewTextOutput("charge " + string(rune('0'+n.Add(1))))}, nil
	})
	reg := &tool.Registry{}
	b, err := tool.Bind(charge)
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	server := newServer(t, reg, func(config *toolmcp.Config) {
		config.Principal = func(_ context.Context, req *mcp.CallToolRequest) (string, error) {
			p, _ := req.Params.GetMeta()["test/principal"].(string)
			return p, nil
		}
	})
	return connect(t, server, nil, modern)
}

func chargeCall(principal string, key any) *mcp.CallToolParams {
	p := &mcp.CallToolParams{Name: "charge", Arguments: map[string]any{"cents": 1250}}
	meta := mcp.Meta{"test/principal": principal}
	if key != nil {
		meta[toolmcp.IdempotencyMetaKey] = key
	}
	p.SetMeta(meta)
	return p
}

// A first call retried with the same key in _meta runs once: the retry
// gets the first outcome. Without a key, a retry is a new call; the same
// client key from another principal is another call, under another key.
func TestIdempotencyMetaKey(t *testing.T) {
	c := &charges{}
	cs := chargeServer(t, c)
	call := func(principal string, key any) string {
		res, err := cs.CallTool(t.Context(), chargeCall(principal, key))
		require.NoError(t, err)
		require.False(t, res.IsError, wire(t, res.Content))
		return wire(t, res.Content)
	}
	first := call("alice", "order-7/refund-1")
	require.Equal(t, first, call("alice", "order-7/refund-1"), "the retry gets the first outcome")
	require.Len(t, c.ran(), 1, "the retry did not run the tool")
	require.Equal(t, toolmcp.IdempotencyKeyFor("alice", "order-7/refund-1"), c.ran()[0], "the key is bound to the principal")
	require.NotContains(t, string(c.ran()[0]), "order-7", "the client's text is not the key")

	require.NotEqual(t, first, call("bob", "order-7/refund-1"), "another principal's key is another call")
	require.Len(t, c.ran(), 2)
	require.Equal(t, toolmcp.IdempotencyKeyFor("bob", "order-7/refund-1"), c.ran()[1])
	require.NotEqual(t, c.ran()[0], c.ran()[1])

	call("alice", nil)
	call("alice", nil)
	require.Len(t, c.ran(), 4, "without a key, a retried first call is a new call")
	require.NotEqual(t, c.ran()[2], c.ran()[3])
}

// A key that breaks the bounds refuses the request before anything runs.
func TestIdempotencyMetaKeyRefused(t *testing.T) {
	c := &charges{}
	cs := chargeServer(t, c)
	for _, tc := range []struct {
		name string
		key  any
		err  string
	}{
		{name: "not a string", key: 42, err: "is a float64, want a string"},
		{name: "empty", key: "", err: "is 0 bytes, want 1 to 128"},
		{name: "too long", key: strings.Repeat("k", toolmcp.MaxIdempotencyKeyBytes+1), err: "is 129 bytes"},
		{name: "space", key: "order 7", err: "has the byte 0x20 at offset 5"},
		{name: "not ASCII", key: "ordér", err: "has the byte 0xc3 at offset 3"},
		{name: "control", key: "a\nb", err: "has the byte 0xa at offset 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cs.CallTool(t.Context(), chargeCall("alice", tc.key))
			require.ErrorContains(t, err, "tool: invalid mcp idempotency key: _meta \""+toolmcp.IdempotencyMetaKey+"\" "+tc.err)
		})
	}
	_, err := cs.CallTool(t.Context(), chargeCall("alice", strings.Repeat("k", toolmcp.MaxIdempotencyKeyBytes)))
	require.NoError(t, err, "a key of the bound is taken")
	require.Len(t, c.ran(), 1, "no refused request ran the tool")
}

// The retry of a resumed call is keyed by its request state: the same
// answer resent gets the first outcome, and the tool is not continued
// again.
func TestIdempotencyResumedRetry(t *testing.T) {
	var calls atomic.Int32
	cs := connect(t, newServer(t, registry(t, &calls, nil)), manual(), modern)
	state := suspended(t, cs).RequestState
	first, err := cs.CallTool(t.Context(), retry(state, yes))
	require.NoError(t, err)
	require.False(t, first.IsError)
	again, err := cs.CallTool(t.Context(), retry(state, yes))
	require.NoError(t, err)
	require.Equal(t, wire(t, first.Content), wire(t, again.Content))
	require.Equal(t, int32(2), calls.Load(), "the suspension and one continuation: the resent answer ran nothing")
}
