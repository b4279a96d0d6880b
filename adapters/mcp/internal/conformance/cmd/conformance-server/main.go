// Command conformance-server serves the conformance tools of package
// conformance over streamable HTTP at /mcp, for running the official MCP
// conformance suite by hand:
//
//	go run ./adapters/mcp/internal/conformance/cmd/conformance-server -addr 127.0.0.1:3001
//
// The tests of package conformance start the same server in process.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/agentcontract/tool/adapters/mcp/internal/conformance"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	addr := flag.String("addr", "127.0.0.1:3001", "listen on this address (host:port)")
	flag.Parse()
	if err := run(ctx, *addr); err != nil {
		fmt.Fprintln(os.Stderr, "conformance-server:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, addr string) error {
	handler, err := conformance.Handler(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := &http.Server{Handler: mux}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	fmt.Fprintf(os.Stderr, "serving MCP on http://%s/mcp\n", ln.Addr())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
