package bridgetest

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

const form = `{"type":"object","properties":{"approve":{"type":"boolean"}},"required":["approve"]}`

// approval asks for approval, then completes with the answer.
var approval = adaptertest.Approval{
	Name: "approve", Prompt: `"Refund?"`, Form: form,
	Done: func(c tool.Continuation) string { return "answer " + string(c.Response()) },
}

// A call suspended on one server replica and resumed on another: the two
// replicas share a Links (as they share the claim store), so the
// resumption's span links to the suspension's; and nothing the client
// receives (the request state included) holds the trace or span ID.
func TestSuspensionAcrossReplicas(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	links := toolotel.NewMemoryLinks(0)
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	replica := func() *mcp.ClientSession {
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
		tel, err := toolotel.New(toolotel.Config{TracerProvider: tp, Links: links})
		require.NoError(t, err)
		reg := &tool.Registry{}
		b, err := tool.Bind(approval)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
		schema, err := tool.ParseSchema([]byte(form))
		require.NoError(t, err)
		server := mcp.NewServer(&mcp.Implementation{Name: "server", Version: "v0"}, nil)
		require.NoError(t, toolmcp.AddTools(server, toolmcp.Config{
			Dispatch:     dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, Observer: tel.Observer()},
			Tools:        map[string]toolmcp.ToolOptions{"approve": {ResponseSchemas: []tool.Schema{schema}}},
			TraceContext: toolmcp.TraceContext{Extract: tel.ExtractMeta},
		}))
		st, ct := mcp.NewInMemoryTransports()
		ss, err := server.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = ss.Close() })
		client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"},
			&mcp.ClientOptions{
				MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
				// It puts forms to a person itself, and says so.
				Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}}},
			})
		cs, err := client.Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}

	first, second := replica(), replica()
	res, err := first.CallTool(t.Context(), &mcp.CallToolParams{Name: "approve", Arguments: map[string]any{"order": "7"}})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	suspendedSpans := spans.GetSpans()
	require.Len(t, suspendedSpans, 1)
	sc := suspendedSpans[0].SpanContext
	received, err := json.Marshal(res)
	require.NoError(t, err)
	require.NotContains(t, string(received), sc.TraceID().String())
	require.NotContains(t, string(received), sc.SpanID().String())

	done, err := second.CallTool(t.Context(), &mcp.CallToolParams{
		Name:           "approve",
		Arguments:      map[string]any{"order": "7"},
		InputResponses: mcp.InputResponseMap{"input": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}},
		RequestState:   res.RequestState,
	})
	require.NoError(t, err)
	require.False(t, done.IsError)
	all := spans.GetSpans()
	require.Len(t, all, 2)
	resumed := all[1]
	require.Equal(t, "execute_tool approve", resumed.Name)
	require.Len(t, resumed.Links, 1)
	require.Equal(t, sc.SpanID(), resumed.Links[0].SpanContext.SpanID())
	received, err = json.Marshal(done)
	require.NoError(t, err)
	require.NotContains(t, string(received), resumed.SpanContext.TraceID().String())
}
