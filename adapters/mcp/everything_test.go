package toolmcp_test

import (
	"context"
	"os/exec"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/adapters/mcp/internal/interop"
	"github.com/agentcontract/tool/dispatch"
)

// The reference server of MCP, server-everything (pinned by
// testdata/interop's lockfile), imported over stdio: every tool is
// imported or refused with a reason, a call of each outcome kind comes
// out as that kind, and the progress of a long operation reaches the
// reporter to its last step.
func TestImportEverything(t *testing.T) {
	pkgs := interop.Require(t)
	cmd := exec.Command(pkgs.Node, pkgs.Path("@modelcontextprotocol", "server-everything", "dist", "index.js"), "stdio")
	relay := &toolmcp.ProgressRelay{}
	var asked []string
	// The SDK's command transport takes no bound on a message: Connect is
	// told so, and bounds the elicitations.
	cs, err := toolmcp.Connect(t.Context(), toolmcp.ConnectConfig{
		Implementation: &mcp.Implementation{Name: "client", Version: "v0"},
		Options: &mcp.ClientOptions{
			ProgressNotificationHandler: relay.Handle,
			ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				asked = append(asked, req.Params.Message)
				return &mcp.ElicitResult{Action: "decline"}, nil
			},
		},
		Transport:       &mcp.CommandTransport{Command: cmd},
		MaxMessageBytes: toolmcp.NoLimit,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	imported, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{Progress: relay})
	require.NoError(t, err)

	var names []string
	reg := &tool.Registry{}
	for _, rt := range imported.Tools {
		names = append(names, rt.RemoteName())
		b, err := tool.Bind(rt)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	for _, r := range imported.Refused {
		require.ErrorIs(t, r.Err, toolmcp.ErrRemoteTool, "refused with a reason: %s", r.Name)
		names = append(names, r.Name)
	}
	sort.Strings(names)
	require.Equal(t, []string{
		"echo", "get-annotated-message", "get-env", "get-resource-links", "get-resource-reference", "get-roots-list",
		"get-structured-content", "get-sum", "get-tiny-image", "gzip-file-as-resource", "simulate-research-query",
		"toggle-simulated-logging", "toggle-subscriber-updates", "trigger-elicitation-request", "trigger-long-running-operation",
	}, names, "every tool of the listing is imported or refused")
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)
	run := func(name, args string) dispatch.Outcome {
		return d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: name, Arguments: args}})
	}

	t.Run("completed", func(t *testing.T) {
		o := run("echo", `{"message":"hello"}`)
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		require.Equal(t, "Echo: hello", o.Text())
		o = run("get-structured-content", `{"location":"Chicago"}`)
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		require.Contains(t, string(o.Output.Details), `"temperature"`)
		o = run("get-tiny-image", `{}`)
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		var media int
		for _, b := range o.Output.Content {
			if b.Kind == tool.BlockMedia && b.MediaType == "image/png" && len(b.Data) > 0 {
				media++
			}
		}
		require.Equal(t, 1, media, "the image arrives as inline media")
		o = run("get-resource-links", `{"count":2}`)
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		var links int
		for _, b := range o.Output.Content {
			if b.Kind == tool.BlockMedia && b.URI != "" {
				links++
			}
		}
		require.Equal(t, 2, links, "resource links arrive as media by URI")
	})
	t.Run("rejected", func(t *testing.T) {
		o := run("get-sum", `{"a":1,"b":"two"}`)
		require.Equal(t, dispatch.KindRejected, o.Kind, "the remote schema is enforced before anything is sent")
		o = run("get-sum", `{"a":1,"a":2,"b":3}`)
		require.Equal(t, dispatch.KindRejected, o.Kind, "a duplicate member is refused here, not collapsed by the server")
	})
	t.Run("failed", func(t *testing.T) {
		// The server requires task-augmented calls of this tool, which
		// the SDK cannot make: the server answers with an isError result.
		o := run("simulate-research-query", `{"topic":"tides"}`)
		require.Equal(t, dispatch.KindFailed, o.Kind, "%v", o.Err)
		require.NotEmpty(t, o.Text())
	})
	t.Run("elicitation declined", func(t *testing.T) {
		o := run("trigger-elicitation-request", `{}`)
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		require.Len(t, asked, 1, "the client's handler answered the server's question")
	})
	t.Run("unknown", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		o := d.Run(ctx, dispatch.Call{Request: tool.Request{Name: "trigger-long-running-operation", Arguments: `{"duration":5,"steps":5}`}})
		require.Equal(t, dispatch.KindUnknown, o.Kind, "a call abandoned in flight may have had its effect")
		require.False(t, o.Retryable)
	})
	t.Run("unknown tool", func(t *testing.T) {
		require.Equal(t, dispatch.KindUnknownTool, run("no-such-tool", `{}`).Kind)
	})
	t.Run("progress to the last step", func(t *testing.T) {
		var mu sync.Mutex
		var got []tool.Progress
		reporter := tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, p)
			return nil
		})
		o := d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: "trigger-long-running-operation", Arguments: `{"duration":1,"steps":4}`}, Progress: reporter})
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		mu.Lock()
		defer mu.Unlock()
		require.Len(t, got, 4)
		for i, p := range got {
			require.Equal(t, float64(i+1), p.Completed)
			require.Equal(t, float64(4), p.Total)
		}
	})
}
