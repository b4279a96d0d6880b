// Command agentloop-mcp serves a small shop's tools over MCP with
// [toolmcp.AddTools], through the trust boundary of package
// [github.com/agentcontract/tool]: a weather lookup, an order search, a
// report export with progress and an attachment, and a refund that a person
// approves through an elicitation form.
//
// By default it speaks MCP over stdin and stdout, for any MCP client that
// starts servers as subprocesses:
//
//	go run ./examples/shop/cmd/agentloop-mcp
//
// With -http it serves streamable HTTP instead, and prints the endpoint on
// stderr:
//
//	go run ./examples/shop/cmd/agentloop-mcp -http 127.0.0.1:8080
//
// With -stateless as well, the HTTP server keeps no sessions: each request
// stands alone, which is how the SDK offers protocol 2026-07-28 (and so the
// multi-round-trip path, where a refund waiting for approval travels to the
// client as sealed state and comes back with the answer), and a client's
// cancellation, or a dropped request, cancels the call:
//
//	go run ./examples/shop/cmd/agentloop-mcp -http 127.0.0.1:8080 -stateless
//
// A refund waiting for approval travels to the client as sealed state. The
// seal key comes from AGENTLOOP_MCP_SEAL_KEY (at least 64 hex digits), so
// that several server processes can continue each other's calls; without
// it each process makes its own, and only that process can continue the
// refunds it suspended.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agentloop-mcp:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) error {
	flags := flag.NewFlagSet("agentloop-mcp", flag.ContinueOnError)
	flags.SetOutput(stderr)
	addr := flags.String("http", "", "serve streamable HTTP on this address (host:port) instead of stdio")
	stateless := flags.Bool("stateless", false, "with -http: keep no sessions (protocol 2026-07-28, multi-round-trip requests)")
	if err := flags.Parse(args); err != nil {
		return err
	}
	if *stateless && *addr == "" {
		return errors.New("-stateless needs -http")
	}
	secret, err := sealKey(os.Getenv("AGENTLOOP_MCP_SEAL_KEY"))
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(stderr, nil))
	reg, options, err := newTools()
	if err != nil {
		return err
	}
	// One process: its claims live in memory. Replicas would share a
	// store in a database.
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		return err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "agentloop-mcp", Version: "v1.0.0"}, &mcp.ServerOptions{Logger: logger})
	err = toolmcp.AddTools(server, toolmcp.Config{
		Dispatch: dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, Logger: logger},
		Tools:    options,
	})
	if err != nil {
		return err
	}
	if *addr == "" {
		return server.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout})
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	// Stateless: every request stands alone, and the end of the HTTP
	// request (the client gave up) cancels the call it carries.
	opts := &mcp.StreamableHTTPOptions{Stateless: *stateless, PropagateRequestCancellation: *stateless}
	handler := toolmcp.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts))
	return serve(ctx, ln, handler, stderr)
}

// serve serves handler at /mcp on ln until ctx is done, and then closes
// the server, which closes ln. It writes the address it serves on to log
// once, before serving (the tests read it there). It returns nil when ctx
// ended the serving, and the server's error otherwise.
func serve(ctx context.Context, ln net.Listener, handler http.Handler, log io.Writer) error {
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

// sealKey decodes the configured key, or makes a random one.
func sealKey(configured string) ([]byte, error) {
	if configured == "" {
		return []byte(rand.Text() + rand.Text()), nil
	}
	secret, err := hex.DecodeString(configured)
	if err != nil || len(secret) < 32 {
		return nil, errors.New("AGENTLOOP_MCP_SEAL_KEY must be at least 64 hex digits")
	}
	return secret, nil
}
