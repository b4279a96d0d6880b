package toolmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

type payIn struct {
	Cents int    `json:"cents"`
	To    string `json:"to"`
}

// Harden an MCP server written directly on the go-sdk: one line, and every
// tools/call is admitted strictly against the advertised schema, a panic
// becomes an isError result, and a handler's private error text stays in
// the logs.
func ExampleHarden() {
	ctx := context.Background()
	server := mcp.NewServer(&mcp.Implementation{Name: "payments", Version: "v1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "pay", Description: "pay someone"},
		func(_ context.Context, _ *mcp.CallToolRequest, in payIn) (*mcp.CallToolResult, any, error) {
			if in.To == "mallory" {
				panic("unexpected payee")
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("paid %d cents to %s", in.Cents, in.To)}}}, nil, nil
		})
	if err := toolmcp.Harden(server, toolmcp.HardenConfig{}); err != nil {
		log.Fatal(err)
	}

	st, ct := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		log.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	for _, args := range []string{
		`{"cents":100,"to":"bob"}`,
		`{"cents":100,"to":"bob","cents":99999}`,
		`{"cents":1,"to":"mallory"}`,
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pay", Arguments: json.RawMessage(args)})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false paid 100 cents to bob
	// true arguments of "pay" are not valid JSON at /cents (byte 24): duplicate member name "cents"
	// true The call to pay failed.
}
