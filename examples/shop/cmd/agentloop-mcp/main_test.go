package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// modern is the MCP protocol version of stateless servers, which carries
// multi-round-trip requests.
const modern = "2026-07-28"

// manual is a client that retries calls itself and declares that it can
// put forms to a person.
func manual() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
	}
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// exampleServer builds this command once per test run.
func exampleServer(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agentloop-mcp")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "agentloop-mcp")
		out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput()
		if err != nil {
			buildErr = &buildError{out: string(out), err: err}
		}
	})
	require.NoError(t, buildErr)
	return binary
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

func TestMain(m *testing.M) {
	code := m.Run()
	if binary != "" {
		_ = os.RemoveAll(filepath.Dir(binary))
	}
	os.Exit(code)
}

// approver answers every elicitation: it approves with a note, or
// declines when the message names order A-1002.
func approver(asked *atomic.Int32) *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		if strings.Contains(req.Params.Message, "A-1002") {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true, "note": "thanks for your patience"}}, nil
	}}
}

// exerciseExample lists and calls the example server's tools as an agent
// would, over whatever transport cs uses.
func exerciseExample(t *testing.T, cs *mcp.ClientSession, asked *atomic.Int32) {
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	require.ElementsMatch(t, []string{"export_report", "get_weather", "refund_order", "search_orders"}, names)

	for _, tc := range []struct {
		tool    string
		args    map[string]any
		isError bool
		text    string
	}{
		{"get_weather", map[string]any{"city": "Oslo"}, false, `{"city":"Oslo","temp_c":-3.5,"conditions":"snow"}`},
		{"get_weather", map[string]any{"city": "Atlantis"}, true, `No weather station for "Atlantis"; try Oslo, Lisbon or Lima.`},
		{"search_orders", map[string]any{"customer": "C-042", "status": "open"}, false, `{"orders":[{"id":"A-1001","status":"open","total_eur":42.5}]}`},
		{"search_orders", map[string]any{"customer": "42"}, true, `arguments of "search_orders" do not match its input schema at /customer: '42' does not match pattern '^C-[0-9]{3}$'`},
		{"export_report", map[string]any{"month": "2026-11"}, false, "Sales report for 2026-11: 3 orders, 1012.40 EUR gross. The CSV is attached."},
		{"refund_order", map[string]any{"order_id": "A-1001", "amount": 12.5}, false, "Refunded 12.50 EUR on order A-1001, reference R-0001. Note: thanks for your patience"},
		{"refund_order", map[string]any{"order_id": "A-1002", "amount": 20}, true, `The person declined the call to "refund_order".`},
	} {
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		require.NoError(t, err, tc.tool)
		require.Equal(t, tc.isError, res.IsError, tc.tool)
		require.Equal(t, tc.text, res.Content[0].(*mcp.TextContent).Text, tc.tool)
	}
	require.Equal(t, int32(2), asked.Load(), "each refund asked the person once")
}

func TestExampleServerStdio(t *testing.T) {
	bin := exampleServer(t)
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, approver(&asked))
	cs, err := client.Connect(t.Context(), &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	exerciseExample(t, cs, &asked)
}

func TestExampleServerHTTP(t *testing.T) {
	endpoint := startExample(t, "-http", "127.0.0.1:0")
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, approver(&asked))
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	exerciseExample(t, cs, &asked)
}

// With -stateless, a client speaks protocol 2026-07-28: the refund's
// approval travels as sealed request state and comes back with the
// answer (multi-round-trip requests), which the client's own retry carries.
func TestExampleServerStateless(t *testing.T) {
	endpoint := startExample(t, "-http", "127.0.0.1:0", "-stateless")
	var asked atomic.Int32
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, approver(&asked))
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: modern})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	exerciseExample(t, cs, &asked)

	// The same refund, retried by hand: the server answered with sealed
	// request state, which only protocol 2026-07-28 carries.
	manualClient := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, manual())
	ms, err := manualClient.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: modern})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ms.Close() })
	args := map[string]any{"order_id": "A-1001", "amount": 1}
	res, err := ms.CallTool(t.Context(), &mcp.CallToolParams{Name: "refund_order", Arguments: args})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	require.NotEmpty(t, res.RequestState)
	done, err := ms.CallTool(t.Context(), &mcp.CallToolParams{
		Name: "refund_order", Arguments: args, RequestState: res.RequestState,
		InputResponses: mcp.InputResponseMap{"input": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}},
	})
	require.NoError(t, err)
	require.False(t, done.IsError)
	require.Contains(t, done.Content[0].(*mcp.TextContent).Text, "Refunded 1.00 EUR on order A-1001")
}

// startExample starts the example server with args and returns its
// endpoint.
func startExample(t *testing.T, args ...string) string {
	bin := exampleServer(t)
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	lines := bufio.NewScanner(stderr)
	require.True(t, lines.Scan(), "the server prints its endpoint")
	endpoint, ok := strings.CutPrefix(lines.Text(), "serving MCP on ")
	require.True(t, ok, lines.Text())
	go func() {
		for lines.Scan() {
		}
	}()
	return endpoint
}
