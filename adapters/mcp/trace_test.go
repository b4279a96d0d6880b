package toolmcp_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

type traceKey struct{}

// The trace context hooks: an imported tool's call writes the caller's
// context into the request's _meta, the served tool reads it back before
// the call runs, and the tool sees it; a call without one sends none.
func TestTraceContextHooks(t *testing.T) {
	var mu sync.Mutex
	var received []map[string]any
	echo := adaptertest.Object("trace_echo", "", tool.EffectSafe, func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
		v, _ := ctx.Value(traceKey{}).(string)
		return tool.Result{Output: tool.NewTextOutput("trace=" + v)}, nil
	})
	served := &tool.Registry{}
	b, err := tool.Bind(echo)
	require.NoError(t, err)
	require.NoError(t, served.Register(b))
	server := newServer(t, served, func(c *toolmcp.Config) {
		c.TraceContext.Extract = func(ctx context.Context, meta map[string]any) context.Context {
			mu.Lock()
			received = append(received, meta)
			mu.Unlock()
			if tp, ok := meta["traceparent"].(string); ok {
				return context.WithValue(ctx, traceKey{}, tp)
			}
			return ctx
		}
	})
	cs := connect(t, server, nil, modern)
	res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{TraceContext: toolmcp.TraceContext{
		Inject: func(ctx context.Context, meta map[string]any) {
			if v, ok := ctx.Value(traceKey{}).(string); ok {
				meta["traceparent"] = v
			}
		},
	}})
	require.NoError(t, err)
	require.Len(t, res.Tools, 1)
	reg := &tool.Registry{}
	b, err = tool.Bind(res.Tools[0])
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)

	const tp = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx := context.WithValue(context.Background(), traceKey{}, tp)
	o := d.Run(ctx, dispatch.Call{Request: tool.Request{Name: "trace_echo", Arguments: `{}`}})
	require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
	require.Equal(t, "trace="+tp, o.Text())

	o = d.Run(context.Background(), dispatch.Call{Request: tool.Request{Name: "trace_echo", Arguments: `{}`}})
	require.Equal(t, "trace=", o.Text())

	mu.Lock()
	defer mu.Unlock()
	require.Len(t, received, 2)
	require.Equal(t, tp, received[0]["traceparent"])
	require.NotContains(t, received[1], "traceparent", "no trace context is sent without one")
}
