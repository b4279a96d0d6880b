package toolmcp_test

import (
	"context"
	"fmt"
	"log"
	"net"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

type greetInput struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

// Serve a registry's tools on an MCP server, and call one from a client.
// A real server runs server.Run(ctx, &mcp.StdioTransport{}) instead of the
// in-memory transports.
func Example() {
	ctx := context.Background()
	greet, err := tool.NewFunc(tool.FuncConfig{Name: "greet", Description: "say hello", Effect: tool.EffectSafe},
		func(_ context.Context, in greetInput) (string, error) { return "Hello, " + in.Name + "!", nil })
	if err != nil {
		log.Fatal(err)
	}
	bound, err := tool.Bind(greet, tool.Recover)
	if err != nil {
		log.Fatal(err)
	}
	reg, err := tool.NewRegistry(bound)
	if err != nil {
		log.Fatal(err)
	}

	// One server instance: claims in memory. Instances behind a load
	// balancer share a store and the seal keys.
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		log.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "greeter", Version: "v1.0.0"}, nil)
	err = toolmcp.AddTools(server, toolmcp.Config{
		Dispatch: dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("use 32 random bytes, not a sentence")}}},
		Tools:    map[string]toolmcp.ToolOptions{"greet": {ClosedWorld: true}},
	})
	if err != nil {
		log.Fatal(err)
	}

	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer serverSession.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v1.0.0"}, nil)
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	for _, args := range []map[string]any{{"name": "Ada"}, {"name": ""}} {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "greet", Arguments: args})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.IsError, res.Content[0].(*mcp.TextContent).Text)
	}
	// Output:
	// false Hello, Ada!
	// true arguments of "greet" do not match its input schema at /name: minLength: got 0, want 1
}

// Import the tools of a remote MCP server and run them through the same
// boundary as local tools: here Prepare refuses arguments before anything
// is sent.
func ExampleImport() {
	ctx := context.Background()
	remote := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1.0.0"}, nil)
	mcp.AddTool(remote, &mcp.Tool{Name: "weather.current", Description: "current weather"},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, weatherOut, error) {
			return nil, weatherOut{TempC: 21.5}, nil
		})
	serverEnd, clientEnd := net.Pipe()
	serverSession, err := remote.Connect(ctx, &mcp.IOTransport{Reader: serverEnd, Writer: serverEnd}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer serverSession.Close()
	// Connect bounds what the server can make the client read and answer,
	// with the defaults.
	session, err := toolmcp.Connect(ctx, toolmcp.ConnectConfig{
		Implementation: &mcp.Implementation{Name: "client", Version: "v1.0.0"},
		Transport:      &mcp.IOTransport{Reader: clientEnd, Writer: clientEnd},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	imported, err := toolmcp.Import(ctx, session, toolmcp.ImportConfig{})
	if err != nil {
		log.Fatal(err)
	}
	reg := &tool.Registry{}
	for _, t := range imported.Tools {
		bound, err := tool.Bind(t)
		if err != nil {
			log.Fatal(err)
		}
		if err := reg.Register(bound); err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.Definition().Name, "calls", t.RemoteName())
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		log.Fatal(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("use 32 random bytes, not a sentence")}}})
	if err != nil {
		log.Fatal(err)
	}
	for _, args := range []string{`{"city":"Oslo"}`, `{"town":"Oslo"}`} {
		o := d.Run(ctx, dispatch.Call{Request: tool.Request{Name: "weather_current", Arguments: args}})
		fmt.Println(o.Kind, o.Text())
	}
	// Output:
	// weather_current calls weather.current
	// completed {"temp_c":21.5}
	// rejected arguments of "weather_current" do not match its input schema at the root: additional properties 'town' not allowed; at the root: missing property 'city'
}
