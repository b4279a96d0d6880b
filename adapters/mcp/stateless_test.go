package toolmcp_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// On a stateless server with the handler options AddTools documents, a
// call the client gives up on is cancelled: the tool's ctx ends, and the
// tool does not run on.
func TestStatelessCancellation(t *testing.T) {
	gate := newSlowGate()
	server := newServer(t, registry(t, nil, gate))
	srv := serveHTTP(t, server, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})
	cs := connectURL(t, srv.URL, nil, modern)

	ctx, cancel := context.WithCancel(t.Context())
	errs := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		errs <- err
	}()
	<-gate.entered
	cancel()
	require.Error(t, <-errs)
	select {
	case <-gate.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the tool ran on after the client gave up")
	}
}
