package faults

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

// dropper is an HTTP client whose connections the test drops.
type dropper struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *dropper) client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			d.mu.Lock()
			d.conns = append(d.conns, c)
			d.mu.Unlock()
		}
		return c, err
	}}}
}

func (d *dropper) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// callMCP calls refund on the server at url with key in _meta (none when
// empty), over a new session of client.
func callMCP(ctx context.Context, url string, client *http.Client, key string) (*mcp.CallToolResult, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "faults", Version: "v0"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "refund", Arguments: map[string]any{"cents": 1250}}
	if key != "" {
		params.SetMeta(mcp.Meta{toolmcp.IdempotencyMetaKey: key})
	}
	return cs.CallTool(ctx, params)
}

// mcpCase serves the refund tool of kind k through the bridge over
// streamable HTTP behind HTTPHandler, drops the client's connection at p,
// waits for the call to end on the server, and retries with the same key
// in _meta on a new connection.
func mcpCase(t *testing.T, p point, k kind) result {
	l := &ledger{path: t.TempDir() + "/ledger"}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	d := &dropper{}
	var callCtx context.Context
	var ctxMu sync.Mutex
	in := newInjector(p, func(context.Context) {
		d.drop()
		ctxMu.Lock()
		ctx := callCtx
		ctxMu.Unlock()
		<-ctx.Done() // the bridge saw the connection go
	})
	ended := make(chan struct{}, 2)
	observer := &dispatch.Observer{
		CallStart: func(ctx context.Context, info dispatch.CallInfo) context.Context {
			ctxMu.Lock()
			if callCtx == nil {
				callCtx = ctx
			}
			ctxMu.Unlock()
			return ctx
		},
		CallDone: func(context.Context, dispatch.CallInfo, dispatch.Outcome) { ended <- struct{}{} },
	}
	b, err := tool.Bind(&refundTool{kind: k, l: l, in: in})
	require.NoError(t, err)
	reg := &tool.Registry{}
	require.NoError(t, reg.Register(b))
	config := toolmcp.Config{Dispatch: dispatch.Config{
		Registry: reg, Store: &hookStore{CallStore: store, in: in},
		SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, Observer: observer,
	}}
	if k == reconciled {
		config.Dispatch.Reconcilers = map[string]dispatch.Reconciler{"refund": l.reconciler}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "faults", Version: "v0"}, nil)
	require.NoError(t, toolmcp.AddTools(server, config))
	srv := httptest.NewServer(toolmcp.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)))
	t.Cleanup(srv.Close)

	key := string(uniqueKey(t))
	key = fmt.Sprintf("k-%x", key)[:64]
	_, err = callMCP(t.Context(), srv.URL, d.client(), key)
	require.Error(t, err, "the client's connection was dropped")
	<-ended
	waitSettled(t, store, toolmcp.IdempotencyKeyFor("", key))

	res, err := callMCP(t.Context(), srv.URL, http.DefaultClient, key)
	require.NoError(t, err)
	retry := dispatch.Outcome{Kind: dispatch.KindCompleted}
	if res.IsError {
		retry.Kind = dispatch.Kind(fmt.Sprint(res.Meta[toolmcp.OutcomeMetaKey]))
	}
	mk := toolmcp.IdempotencyKeyFor("", key)
	r := result{path: "MCP over HTTP: connection dropped", at: p, kind: k, effects: l.count(string(mk))}
	return check(t, r, retry, recordState(t, store, "", mk))
}

// waitSettled waits until the record of key is not running: a tool the
// dropped call abandoned has returned and its outcome is recorded.
func waitSettled(t *testing.T, store dispatch.CallStore, key tool.IdempotencyKey) {
	t.Helper()
	for recordState(t, store, "", key) == dispatch.StateRunning {
		select {
		case <-t.Context().Done():
			t.Fatal("the record stayed running")
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestDroppedConnection(t *testing.T) { runPath(t, mcpCase) }
