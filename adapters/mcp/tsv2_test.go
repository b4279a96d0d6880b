package toolmcp_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/adapters/mcp/internal/interop"
	"github.com/agentcontract/tool/dispatch"
)

// The TypeScript v2 client, speaking protocol 2026-07-28 to a stateless
// handler with the options AddTools documents: the approval the tool asks
// for goes through multi-round-trip requests (approved once, declined
// once), a client without the elicitation capability gets an isError
// result instead of a form, and a call the client abandons is cancelled in
// the tool.
func TestTypeScriptV2Client(t *testing.T) {
	pkgs := interop.Require(t)
	var calls atomic.Int32
	reg := &tool.Registry{}
	a, err := tool.Bind(approve(&calls, false))
	require.NoError(t, err)
	require.NoError(t, reg.Register(a))
	entered, cancelled := make(chan struct{}), make(chan error, 1)
	wait, err := tool.NewFunc(tool.FuncConfig{Name: "wait", Description: "waits until cancelled", Effect: tool.EffectSafe},
		func(ctx context.Context, _ struct{}) (string, error) {
			close(entered)
			select {
			case <-ctx.Done():
				cancelled <- context.Cause(ctx)
				return "", ctx.Err()
			case <-time.After(30 * time.Second):
				cancelled <- nil
				return "ran on", nil
			}
		})
	require.NoError(t, err)
	b, err := tool.Bind(wait)
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	server := mcp.NewServer(&mcp.Implementation{Name: "tsv2", Version: "v1"}, nil)
	require.NoError(t, toolmcp.AddTools(server, toolmcp.Config{
		Dispatch: dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}},
		Tools:    map[string]toolmcp.ToolOptions{"approve": {ResponseSchemas: []tool.Schema{form(t)}}},
	}))
	srv := serveHTTP(t, server, &mcp.StreamableHTTPOptions{Stateless: true, PropagateRequestCancellation: true})

	cmd := exec.CommandContext(t.Context(), pkgs.Node, "v2client.mjs", srv.URL)
	cmd.Dir = pkgs.Dir
	raw, err := cmd.Output()
	require.NoError(t, err, "%s", stderrOf(err))
	var out struct {
		Version   string              `json:"version"`
		Approved  *mcp.CallToolResult `json:"approved"`
		Declined  *mcp.CallToolResult `json:"declined"`
		CannotAsk *mcp.CallToolResult `json:"cannotAsk"`
		Asked     []string            `json:"asked"`
		Abandoned string              `json:"abandoned"`
	}
	require.NoError(t, json.Unmarshal(raw, &out), "%s", raw)
	require.Equal(t, "2026-07-28", out.Version)
	require.False(t, out.Approved.IsError)
	require.Equal(t, `answer {"approve":true,"note":"from TypeScript v2"} state {"step":1}`, out.Approved.Content[0].(*mcp.TextContent).Text)
	require.True(t, out.Declined.IsError)
	require.Equal(t, `The person declined the call to "approve".`, out.Declined.Content[0].(*mcp.TextContent).Text)
	require.Equal(t, []string{"Refund order 7 for 12.50 EUR?", "Refund order 7 for 12.50 EUR?"}, out.Asked, "one form per call")
	require.True(t, out.CannotAsk.IsError, "a client without elicitation is not sent a form")
	require.Equal(t, "The tool approve needs an answer from a person, which this client cannot ask for; the call was not continued.", out.CannotAsk.Content[0].(*mcp.TextContent).Text)
	require.Equal(t, "aborted", out.Abandoned)
	<-entered
	select {
	case cause := <-cancelled:
		require.Error(t, cause, "the tool's ctx ended when the client gave up")
	case <-time.After(20 * time.Second):
		t.Fatal("the tool ran on after the client gave up")
	}
}

// stderrOf returns what a command that failed printed on stderr.
func stderrOf(err error) string {
	if exit, ok := err.(*exec.ExitError); ok {
		return string(exit.Stderr)
	}
	return ""
}
