package toolmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

type transferIn struct {
	Amount int    `json:"amount" jsonschema:"amount in cents"`
	To     string `json:"to"`
}

// plainServer is an MCP server written directly on the go-sdk, as most
// are: a typed transfer, a handler that panics, one that returns private
// error text, and one that returns a tool.Failure.
func plainServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "plain", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "transfer", Description: "move money"},
		func(_ context.Context, _ *mcp.CallToolRequest, in transferIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("sent %d to %s", in.Amount, in.To)}}}, nil, nil
		})
	raw := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, h)
	}
	raw("boom", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		panic("ledger 3: invariant broken")
	})
	raw("leaky", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, errors.New("dial postgres://admin:hunter2@10.0.0.7: refused")
	})
	mcp.AddTool(s, &mcp.Tool{Name: "leaky_typed"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return nil, nil, errors.New("row 7 locked by pid 4242 on db-3")
	})
	raw("public", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, adaptertest.Failure(tool.FailureKindFailed, "The account is frozen.", errors.New("flag 0x20 on acct 99"))
	})
	return s
}

func TestHarden(t *testing.T) {
	var logs bytes.Buffer
	hardened := plainServer()
	require.NoError(t, toolmcp.Harden(hardened, toolmcp.HardenConfig{Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	for _, version := range []string{legacy, modern} {
		plain := connect(t, plainServer(), nil, version)
		cs := connect(t, hardened, nil, version)
		call := func(cs *mcp.ClientSession, name, args string) (*mcp.CallToolResult, error) {
			return cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
		}
		t.Run(version+"/duplicate member", func(t *testing.T) {
			args := `{"amount":1,"to":"bob","amount":100000}`
			res, err := call(plain, "transfer", args)
			require.NoError(t, err)
			require.Equal(t, "sent 100000 to bob", res.Content[0].(*mcp.TextContent).Text, "unhardened, the SDK keeps the last member unnoticed")
			res, err = call(cs, "transfer", args)
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Contains(t, res.Content[0].(*mcp.TextContent).Text, `duplicate`)
		})
		t.Run(version+"/schema", func(t *testing.T) {
			res, err := call(cs, "transfer", `{"amount":"lots","to":"bob"}`)
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "/amount")
		})
		t.Run(version+"/admitted", func(t *testing.T) {
			res, err := call(cs, "transfer", `{"amount":250,"to":"bob"}`)
			require.NoError(t, err)
			require.False(t, res.IsError)
			require.Equal(t, "sent 250 to bob", res.Content[0].(*mcp.TextContent).Text)
		})
		t.Run(version+"/panic", func(t *testing.T) {
			res, err := call(cs, "boom", `{}`)
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Equal(t, "The call to boom failed.", res.Content[0].(*mcp.TextContent).Text)
			res, err = call(cs, "transfer", `{"amount":1,"to":"bob"}`)
			require.NoError(t, err)
			require.False(t, res.IsError, "the server survived")
		})
		t.Run(version+"/private text", func(t *testing.T) {
			for _, name := range []string{"leaky", "leaky_typed"} {
				res, err := call(cs, name, `{}`)
				require.NoError(t, err)
				require.True(t, res.IsError)
				require.Equal(t, "The call to "+name+" failed.", res.Content[0].(*mcp.TextContent).Text)
			}
			res, err := call(cs, "public", `{}`)
			require.NoError(t, err)
			require.True(t, res.IsError)
			require.Equal(t, "The account is frozen.", res.Content[0].(*mcp.TextContent).Text, "a Failure's public output is shown")
		})
		t.Run(version+"/unknown tool", func(t *testing.T) {
			_, err := call(cs, "nope", `{}`)
			require.Error(t, err)
		})
	}
	require.Contains(t, logs.String(), "hunter2", "the private text is logged")
	require.Contains(t, logs.String(), "ledger 3: invariant broken", "the panic is logged")
	require.Error(t, toolmcp.Harden(nil, toolmcp.HardenConfig{}))
}
