package toolmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

// On a stateless server with the handler options AddTools documents, a
// call the client gives up on is cancelled: the tool's ctx ends, and the
// tool does not run on.
func TestStatelessCancellation(t *testing.T) {
	gate := &slowGate{entered: make(chan struct{}), cancelled: make(chan struct{})}
	server := newServer(t, registry(t, nil, gate))
	opts := &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true}
	srv := httptest.NewServer(toolmcp.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)))
	t.Cleanup(srv.Close)
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, &mcp.ClientSessionOptions{ProtocolVersion: modern})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

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
