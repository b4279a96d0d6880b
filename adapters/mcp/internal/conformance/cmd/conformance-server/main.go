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
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"

	"github.com/agentcontract/tool/adapters/mcp/internal/conformance"
	"github.com/agentcontract/tool/adapters/mcp/internal/mcphttp"
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
	return mcphttp.Serve(ctx, ln, handler, os.Stderr)
}
