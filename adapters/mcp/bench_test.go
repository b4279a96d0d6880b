package toolmcp_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// One tools/call of the same tool — add two integers, typed input and
// output, structured result — over in-memory transports, through the
// bridge (AddTools: Prepare, dispatch, Binding, result mapping) and through
// the go-sdk's own typed handler (mcp.AddTool). The transport and the
// client dominate both; the difference is what each server does per call.
// Besides the wall clock it reports cpu-ns/op, the CPU time the process
// (client and server) spent per call, steadier on a shared machine.
func BenchmarkCall(b *testing.B) {
	args := map[string]any{"a": 2, "b": 3}
	run := func(b *testing.B, server *mcp.Server) {
		cs := connect(b, server, nil, modern)
		ctx := context.Background()
		b.ReportAllocs()
		start, measured := cpuTime()
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
		if end, ok := cpuTime(); measured && ok {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
	b.Run("bridge", func(b *testing.B) {
		add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
			func(_ context.Context, in addInput) (sum, error) { return sum{in.A + in.B}, nil })
		require.NoError(b, err)
		bound, err := tool.Bind(add)
		require.NoError(b, err)
		reg, err := tool.NewRegistry(bound)
		require.NoError(b, err)
		run(b, newServer(b, reg))
	})
	b.Run("sdk-typed", func(b *testing.B) {
		server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
		mcp.AddTool(server, &mcp.Tool{Name: "add", Description: "add two integers"},
			func(_ context.Context, _ *mcp.CallToolRequest, in addInput) (*mcp.CallToolResult, sum, error) {
				return nil, sum{in.A + in.B}, nil
			})
		run(b, server)
	})
}
