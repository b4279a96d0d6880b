package toolmcp_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

// replica is one server instance of a deployment: its own registry,
// dispatcher and MCP server, with the store and the seal keys the
// deployment shares.
type replica struct {
	server *mcp.Server
}

// effects counts the runs of the approve tool that acted on an answer:
// every call but the one that suspended.
type effects struct{ calls atomic.Int32 }

func (e *effects) ran() int32 { return max(e.calls.Load()-1, 0) }

// byClient is the Principal of the attack tests: the client's name as it
// introduced itself, standing for the identity a real server takes from
// the request's authentication.
func byClient(_ context.Context, req *mcp.CallToolRequest) (string, error) {
	return req.Session.InitializeParams().ClientInfo.Name, nil
}

func newReplica(t *testing.T, store dispatch.Store, e *effects, clock func() time.Time) replica {
	t.Helper()
	reg := &tool.Registry{}
	b, err := tool.Bind(approve(&e.calls, false))
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	server := newServer(t, reg, func(c *toolmcp.Config) {
		c.Dispatch.Store = store
		c.Dispatch.Clock = clock
		c.Dispatch.CheckpointTTL = time.Hour
		c.Principal = byClient
	})
	return replica{server: server}
}

// connectAs connects a modern Go client named name, with its automatic
// retries off: the test plays the hostile client and sends each retry.
func connectAs(t *testing.T, r replica, name string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "v0"}, manual())
	cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: modern})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

var (
	no      = &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": false}}
	decline = &mcp.ElicitResult{Action: "decline"}
	cancel  = &mcp.ElicitResult{Action: "cancel"}
)

// TestReplayAttack plays a hostile client against a suspended refund: it
// keeps the request state and retries it every way it can. The tool acts
// on an answer at most once, never after a decline, and a resent
// identical answer gets the first outcome back.
func TestReplayAttack(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var clockMu sync.Mutex
	clock := func() time.Time { clockMu.Lock(); defer clockMu.Unlock(); return now }
	setClock := func(t time.Time) { clockMu.Lock(); defer clockMu.Unlock(); now = t }

	type step struct {
		replica int    // which server instance
		client  string // which client (a new session each step)
		answer  *mcp.ElicitResult
		err     string // a JSON-RPC error containing this, or "" for a result
		text    string // the result's text, when no error
	}
	approved := `answer {"approve":true} state {"step":1}`
	refused := "tool: checkpoint already answered"
	for _, tc := range []struct {
		name, why string
		advance   time.Duration // clock moved after the suspension
		steps     []step
		effects   int32
	}{
		{
			name: "decline then answer", why: "a decline is final",
			steps: []step{
				{answer: decline, text: `The person declined the call to "approve".`},
				{answer: yes, err: refused},
				{answer: no, err: refused},
				{answer: decline, text: `The person declined the call to "approve".`},
			},
			effects: 0,
		},
		{
			name: "answer twice", why: "a second, different answer is refused",
			steps: []step{
				{answer: no, text: `answer {"approve":false} state {"step":1}`},
				{answer: yes, err: refused},
				{answer: yes, err: refused},
				{answer: decline, err: refused},
			},
			effects: 1,
		},
		{
			name: "same answer resent", why: "a client that lost the response learns the first outcome, and nothing runs again",
			steps: []step{
				{answer: yes, text: approved},
				{answer: yes, text: approved},
				{answer: yes, text: approved},
			},
			effects: 1,
		},
		{
			name: "second session", why: "the claim is not bound to the session",
			steps: []step{
				{answer: yes, text: approved},
				{answer: yes, text: approved},
				{answer: no, err: refused},
			},
			effects: 1,
		},
		{
			name: "second replica", why: "replicas share the store and the seal keys: a claim on one holds on the other",
			steps: []step{
				{replica: 1, answer: yes, text: approved},
				{replica: 0, answer: yes, text: approved},
				{replica: 0, answer: no, err: refused},
				{replica: 1, answer: decline, err: refused},
			},
			effects: 1,
		},
		{
			name: "cancel is not a claim", why: "a request dismissed without a choice may still be answered, once",
			steps: []step{
				{answer: cancel, text: "The person dismissed the request for input of approve; the call was not continued."},
				{answer: yes, text: approved},
				{answer: cancel, text: "The person dismissed the request for input of approve; the call was not continued."},
				{answer: no, err: refused},
			},
			effects: 1,
		},
		{
			name: "expired", why: "an expired state is refused, answer or decline",
			advance: time.Hour,
			steps: []step{
				{answer: yes, err: "tool: checkpoint expired"},
				{answer: decline, err: "tool: checkpoint expired"},
				{replica: 1, answer: yes, err: "tool: checkpoint expired"},
			},
			effects: 0,
		},
		{
			name: "wrong principal", why: "only the client the call was made for may answer or decline",
			steps: []step{
				{client: "mallory", answer: yes, err: "tool: wrong principal"},
				{client: "mallory", answer: decline, err: "tool: wrong principal"},
				{replica: 1, client: "mallory", answer: yes, err: "tool: wrong principal"},
				{answer: yes, text: approved},
				{client: "mallory", answer: yes, err: "tool: wrong principal"},
			},
			effects: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			setClock(time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC))
			store := newStore()
			var e effects
			replicas := []replica{newReplica(t, store, &e, clock), newReplica(t, store, &e, clock)}
			state := suspended(t, connectAs(t, replicas[0], "alice")).RequestState
			setClock(clock().Add(tc.advance))
			for i, s := range tc.steps {
				client := s.client
				if client == "" {
					client = "alice"
				}
				cs := connectAs(t, replicas[s.replica], client)
				res, err := cs.CallTool(t.Context(), retry(state, s.answer))
				if s.err != "" {
					require.ErrorContains(t, err, s.err, "step %d: %s", i, tc.why)
					// A refusal tells no party whose call it is, nor who
					// the server took the client for.
					for _, name := range []string{"alice", "mallory"} {
						require.NotContains(t, err.Error(), name, "step %d: the refusal names a principal", i)
					}
					continue
				}
				require.NoError(t, err, "step %d: %s", i, tc.why)
				require.True(t, res.IsError == (s.answer != yes && s.answer != no), "step %d", i)
				require.JSONEq(t, `[{"type":"text","text":`+wire(t, s.text)+`}]`, wire(t, res.Content), "step %d: %s", i, tc.why)
			}
			require.Equal(t, tc.effects, e.ran(), tc.why)
		})
	}
}

// Many sessions on two replicas race to answer one state: the tool acts
// once.
func TestReplayAttackRace(t *testing.T) {
	store := newStore()
	var e effects
	replicas := []replica{newReplica(t, store, &e, nil), newReplica(t, store, &e, nil)}
	state := suspended(t, connectAs(t, replicas[0], "alice")).RequestState
	sessions := make([]*mcp.ClientSession, 16)
	for i := range sessions {
		sessions[i] = connectAs(t, replicas[i%2], "alice")
	}
	var wg sync.WaitGroup
	var completed, refused atomic.Int32
	for i, cs := range sessions {
		wg.Go(func() {
			answer := yes
			if i%3 == 0 {
				answer = no
			}
			res, err := cs.CallTool(context.Background(), retry(state, answer))
			switch {
			case err == nil && !res.IsError:
				completed.Add(1)
			case err != nil:
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), e.ran(), "the refund ran once")
	require.Equal(t, int32(16), completed.Load()+refused.Load())
}
