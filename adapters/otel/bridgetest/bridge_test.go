package bridgetest

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

var secret = []byte("0123456789abcdef0123456789abcdef")

type addInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

func dispatchConfig(t *testing.T, reg *tool.Registry, observer *dispatch.Observer) dispatch.Config {
	t.Helper()
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	return dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, Observer: observer}
}

// A model's call of a tool imported over MCP, served by the bridge in
// another (here: in-memory) process: the client's execute_tool span, the
// server's execute_tool span as its child, all in one trace.
func TestTraceAcrossTheBridge(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	// Two providers, as two processes would have, exporting to one place.
	clientTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	serverTP := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	clientTel, err := toolotel.New(toolotel.Config{TracerProvider: clientTP})
	require.NoError(t, err)
	serverTel, err := toolotel.New(toolotel.Config{TracerProvider: serverTP})
	require.NoError(t, err)

	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(ctx context.Context, in addInput) (int, error) {
			// The tool runs inside the server's span.
			if !trace.SpanContextFromContext(ctx).IsValid() {
				t.Error("the served tool runs without a span")
			}
			return in.A + in.B, nil
		})
	require.NoError(t, err)
	served := &tool.Registry{}
	b, err := tool.Bind(add)
	require.NoError(t, err)
	require.NoError(t, served.Register(b))
	server := mcp.NewServer(&mcp.Implementation{Name: "server", Version: "v0"}, nil)
	require.NoError(t, toolmcp.AddTools(server, toolmcp.Config{
		Dispatch:     dispatchConfig(t, served, serverTel.Observer()),
		TraceContext: toolmcp.TraceContext{Extract: serverTel.ExtractMeta},
	}))

	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	// An in-memory session takes no bound on what it reads: said so.
	imported, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{UnboundedSession: true, TraceContext: toolmcp.TraceContext{Inject: clientTel.InjectMeta}})
	require.NoError(t, err)
	require.Len(t, imported.Tools, 1)
	local := &tool.Registry{}
	b, err = tool.Bind(imported.Tools[0])
	require.NoError(t, err)
	require.NoError(t, local.Register(b))
	d, err := dispatch.New(dispatchConfig(t, local, clientTel.Observer()))
	require.NoError(t, err)

	ctx, turn := clientTP.Tracer("agent").Start(context.Background(), "turn")
	o := d.Run(ctx, dispatch.Call{ID: "toolu_1", Request: tool.Request{Name: "add", Arguments: `{"a":2,"b":3}`}})
	turn.End()
	require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
	require.Equal(t, "5", o.Text())

	got := spans.GetSpans()
	require.Len(t, got, 3, "the turn, the client's call, the server's call")
	byScope := map[string][]tracetest.SpanStub{}
	for _, s := range got {
		require.Equal(t, turn.SpanContext().TraceID(), s.SpanContext.TraceID(), "%s is in the one trace", s.Name)
		byScope[s.InstrumentationScope.Name] = append(byScope[s.InstrumentationScope.Name], s)
	}
	var server0, client0 tracetest.SpanStub
	for _, s := range got {
		switch {
		case s.Name == "execute_tool add" && s.Parent.IsRemote():
			server0 = s
		case s.Name == "execute_tool add":
			client0 = s
		}
	}
	require.Equal(t, turn.SpanContext().SpanID(), client0.Parent.SpanID(), "the client's call is the turn's child")
	require.Equal(t, client0.SpanContext.SpanID(), server0.Parent.SpanID(), "the server's call is the client's call's child, across MCP")
	require.Len(t, byScope[toolotel.ScopeName], 2)
}
