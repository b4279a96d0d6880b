// Package mcphttp serves an MCP handler over HTTP for the programs of this
// module (the example server and the conformance server): at /mcp on a
// listener, until a context ends.
package mcphttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
)

// Serve serves handler at /mcp on ln until ctx is done, and then closes
// the server, which closes ln. It writes the address it serves on to log
// once, before serving. It returns nil when ctx ended the serving, and
// the server's error otherwise.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler, log io.Writer) error {
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := &http.Server{Handler: mux}
	stop := context.AfterFunc(ctx, func() { _ = srv.Close() })
	defer stop()
	fmt.Fprintf(log, "serving MCP on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
