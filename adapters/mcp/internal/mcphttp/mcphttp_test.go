package mcphttp_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/mcp/internal/mcphttp"
)

// Serve answers at /mcp only, says where once, and returns nil when its
// context ends.
func TestServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	var log bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- mcphttp.Serve(ctx, ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "mcp") }), &log)
	}()
	base := "http://" + ln.Addr().String()
	res, err := http.Get(base + "/mcp")
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	require.NoError(t, err)
	require.Equal(t, "mcp", string(body))
	res, err = http.Get(base + "/other")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
	cancel()
	require.NoError(t, <-done)
	require.Equal(t, "serving MCP on "+base+"/mcp\n", log.String())
}
