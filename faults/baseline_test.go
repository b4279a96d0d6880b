package faults

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// baselineRefund is the refund as code without this package has it: a
// function of its key that honours ctx before the effect; the injector's
// points before the record and after the record are its start, and
// those after the tool its return.
func baselineRefund(ctx context.Context, l *ledger, k kind, in *injector, key string) error {
	in.hit(ctx, beforeRecord)
	in.hit(ctx, afterRecord)
	in.hit(ctx, toolBeforeEffect)
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := l.apply(key, k == idempotent); err != nil {
		return err
	}
	in.hit(ctx, toolAfterEffect)
	in.hit(ctx, afterToolBeforeOutcome)
	in.hit(ctx, whileOutcome)
	return ctx.Err()
}

// plainCase serves the refund with a plain MCP handler (no bridge: a new
// key per call, as a handler without one draws), drops the client's
// connection at p, and retries the call.
func plainCase(t *testing.T, p point, k kind) result {
	l := &ledger{path: t.TempDir() + "/ledger"}
	d := &dropper{}
	// A plain handler's ctx does not end when the client goes: the call
	// runs on.
	in := newInjector(p, func(context.Context) { d.drop() })
	ended := make(chan struct{}, 2)
	server := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "v0"}, nil)
	server.AddTool(&mcp.Tool{Name: "refund", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer func() { ended <- struct{}{} }()
			if err := baselineRefund(ctx, l, k, in, "plain-"+rand.Text()); err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refunded"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(srv.Close)
	_, err := callMCP(t.Context(), srv.URL, d.client(), "")
	require.Error(t, err)
	<-ended
	res, err := callMCP(t.Context(), srv.URL, http.DefaultClient, "")
	require.NoError(t, err)
	require.False(t, res.IsError)
	return result{path: "baseline: plain MCP handler, connection dropped", at: p, kind: k, effects: l.count("") + l.countPrefix("plain-"), baseline: true}
}

// naiveCase calls the refund under one key and, on an error at p, calls
// it again: a retry loop with no record and no reconciliation.
func naiveCase(t *testing.T, p point, k kind) result {
	l := &ledger{path: t.TempDir() + "/ledger"}
	var lost context.CancelFunc
	in := newInjector(p, func(context.Context) { lost() })
	key := fmt.Sprintf("naive-%s", rand.Text())
	for attempt := 0; attempt < 3; attempt++ {
		ctx, cancel := context.WithCancel(t.Context())
		lost = cancel
		err := baselineRefund(ctx, l, k, in, key)
		cancel()
		if err == nil {
			break
		}
	}
	return result{path: "baseline: naive retry loop", at: p, kind: k, effects: l.count(key), baseline: true}
}

func TestBaselinePlainMCP(t *testing.T)   { runPath(t, plainCase) }
func TestBaselineNaiveRetry(t *testing.T) { runPath(t, naiveCase) }
