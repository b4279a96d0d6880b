package benchmarks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
)

// ---- mark3labs/mcp-go ---------------------------------------------------

// newMCPGoServer is an mcp-go server with the search tool, enforcing the
// same invopop-derived input schema as Naive and the MCP SDK paths (with
// santhosh-tekuri/jsonschema, through WithInputSchemaValidation) and the
// output schema mcp-go derives from SearchOutput (WithOutputSchema,
// WithOutputSchemaValidation).
func newMCPGoServer(tb testing.TB) *mcpgoserver.MCPServer {
	tb.Helper()
	schemaJSON, _ := mustReflectAndCompile(tb)
	server := mcpgoserver.NewMCPServer("bench-server", "v0.0.0",
		mcpgoserver.WithToolCapabilities(false),
		mcpgoserver.WithInputSchemaValidation(),
		mcpgoserver.WithOutputSchemaValidation())
	tool := mcpgo.NewToolWithRawSchema(mcpToolName, "Search documents.", schemaJSON)
	mcpgo.WithOutputSchema[SearchOutput]()(&tool)
	server.AddTool(tool, mcpgo.NewStructuredToolHandler(func(_ context.Context, _ mcpgo.CallToolRequest, in SearchInput) (SearchOutput, error) {
		return SearchOutput{Hits: len(in.Tags) + len(in.Nested)}, nil
	}))
	return server
}

// mcpGoMessage is the JSON-RPC tools/call request carrying data as the
// arguments.
func mcpGoMessage(data []byte) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, mcpToolName, data)
}

// callMCPGo hands one tools/call message to the server and returns the
// tool's result, or an error for a protocol error or a tool error result.
func callMCPGo(ctx context.Context, server *mcpgoserver.MCPServer, message []byte) (*mcpgo.CallToolResult, error) {
	switch resp := server.HandleMessage(ctx, message).(type) {
	case mcpgo.JSONRPCResponse:
		res, ok := resp.Result.(*mcpgo.CallToolResult)
		if !ok {
			return nil, fmt.Errorf("unexpected result %T", resp.Result)
		}
		if res.IsError {
			var msg strings.Builder
			for _, c := range res.Content {
				if t, ok := c.(mcpgo.TextContent); ok {
					msg.WriteString(t.Text)
				}
			}
			return nil, fmt.Errorf("tool error: %s", msg.String())
		}
		return res, nil
	case mcpgo.JSONRPCError:
		return nil, fmt.Errorf("JSON-RPC error: %v", resp.Error)
	default:
		return nil, fmt.Errorf("unexpected response %T", resp)
	}
}

// BenchmarkMCPGo measures mark3labs/mcp-go's handler path for a typed tool
// (mcp.NewStructuredToolHandler[SearchInput, SearchOutput]): MCPServer.
// HandleMessage with a tools/call message. mcp-go has no entry point below
// the JSON-RPC message, so, unlike MCPSDK/dispatch, this includes decoding
// the request envelope (encoding/json; the arguments become a
// map[string]any). Then: the tool lookup, validation of the arguments
// against the input schema (santhosh-tekuri/jsonschema, after re-marshalling
// them), binding them to SearchInput (encoding/json marshal of the map and
// unmarshal into the struct), the handler, the structured result and its
// text copy, and validation of the result against the output schema. No
// transport and no encoding of the response.
func BenchmarkMCPGo(b *testing.B) {
	server := newMCPGoServer(b)
	ctx := context.Background()
	forEachPayload(b, func(b *testing.B, data []byte) {
		message := mcpGoMessage(data)
		if _, err := callMCPGo(ctx, server, message); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := callMCPGo(ctx, server, message); err != nil {
				b.Fatal(err)
			}
		}
	})
}
