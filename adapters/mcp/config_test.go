package toolmcp_test

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

func TestAddToolsRefuses(t *testing.T) {
	reg := registry(t, nil, nil)
	keys := []dispatch.SealKey{{ID: "k1", Secret: secret}}
	schema := func(raw string) tool.Schema {
		s, err := tool.ParseSchema([]byte(raw))
		require.NoError(t, err)
		return s
	}
	for _, tc := range []struct {
		name, why string
		server    *mcp.Server
		config    toolmcp.Config
		err       string
	}{
		{
			name: "nil server", why: "nothing to add to",
			config: toolmcp.Config{Dispatch: dispatch.Config{Registry: reg, Store: newStore(), SealKeys: keys}},
			err:    "tool: invalid mcp config: the server is nil",
		},
		{
			name: "no seal key", why: "a store without a seal key: a suspended call's state could not be sealed",
			config: toolmcp.Config{Dispatch: dispatch.Config{Registry: reg, Store: newStore()}},
			err:    "tool: invalid mcp config: invalid dispatch config: a Store but no seal key: checkpoints of suspended calls must be sealed",
		},
		{
			name: "options of a missing tool", why: "a misspelt name would silently serve defaults",
			config: toolmcp.Config{Dispatch: dispatch.Config{Registry: reg, Store: newStore(), SealKeys: keys}, Tools: map[string]toolmcp.ToolOptions{"ad": {}}},
			err:    `tool: invalid mcp config: tool "ad" has options but is not in the registry`,
		},
		{
			name: "forms outside the subset", why: "every problem is reported when the tool is served, not when it suspends",
			config: toolmcp.Config{Dispatch: dispatch.Config{Registry: reg, Store: newStore(), SealKeys: keys}, Tools: map[string]toolmcp.ToolOptions{"approve": {ResponseSchemas: []tool.Schema{
				schema(`{"type":"boolean"}`),
				schema(`{"type":"object","properties":{"address":{"type":"object","properties":{"city":{"type":"string"}}}}}`),
				schema(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[0-9]+$"}}}`),
				{},
			}}}},
			err: `tool: invalid mcp config: ` +
				`tool "approve": response schema 0 is not an elicitation form: the root must have "type":"object"; ` +
				`tool "approve": response schema 1 is not an elicitation form: property "address": type object is not one of string, number, integer, boolean, array; ` +
				`tool "approve": response schema 2 is not an elicitation form: property "code": keyword "pattern" is not allowed on a string in an elicitation form; ` +
				`tool "approve": response schema 3 is the zero Schema`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			server := tc.server
			if tc.name != "nil server" {
				server = mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
			}
			err := toolmcp.AddTools(server, tc.config)
			require.ErrorIs(t, err, toolmcp.ErrInvalidConfig, tc.why)
			if tc.name == "no seal key" {
				require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
			}
			require.EqualError(t, err, tc.err, tc.why)
		})
	}
}

func TestElicitationForms(t *testing.T) {
	for _, tc := range []struct {
		schema string
		err    string
	}{
		{`{"type":"object","properties":{"a":{"type":"string","format":"email","minLength":3,"default":"x@y.z"},"b":{"type":"integer","minimum":1},"c":{"type":"boolean","default":false}},"required":["a"]}`, ""},
		{`{"type":"object","additionalProperties":false,"properties":{"pick":{"type":"string","enum":["x","y"]},"one":{"type":"string","oneOf":[{"const":"x","title":"X"}]},"many":{"type":"array","items":{"type":"string","enum":["p","q"]},"maxItems":2}}}`, ""},
		{`{"type":"object","properties":{"many":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"}]}}}}`, ""},
		{`{"type":"object"}`, `the root must have "properties", an object`},
		{`{"type":"object","properties":{},"required":["x"]}`, `"required" names "x", which is not a property`},
		{`{"type":"object","properties":{"a":{"type":"string","format":"ipv4"}}}`, `property "a": format ipv4 is not one of email, uri, date, date-time`},
		{`{"type":"object","properties":{"a":{"type":"string","enum":[1]}}}`, `property "a": "enum" must hold strings only`},
		{`{"type":"object","properties":{"a":{"type":"array","items":{"type":"object"}}}}`, `property "a": the items of an array must be strings`},
		{`{"type":"object","properties":{"a":{"type":"array"}}}`, `property "a": a multi-select array needs "items" with an enum`},
		{`{"type":"object","properties":{"a":{"type":["string","null"]}}}`, `property "a": type [string null] is not one of string, number, integer, boolean, array`},
		{`{"type":"object","additionalProperties":true,"properties":{}}`, `the root may only have "additionalProperties":false`},
		{`{"type":"object","$defs":{},"properties":{}}`, `keyword "$defs" is not allowed on the root in an elicitation form`},
	} {
		t.Run(tc.schema, func(t *testing.T) {
			err := toolmcp.CheckElicitationForm([]byte(tc.schema))
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.err)
		})
	}
}

// 32 goroutines call every kind of tool through one server and one
// client session at once, under the race detector.
func TestConcurrentCalls(t *testing.T) {
	cs := connect(t, newServer(t, registry(t, nil, nil)), &mcp.ClientOptions{ElicitationHandler: answering(yes, new(atomic.Int32))}, modern)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Go(func() {
			for i := range 8 {
				name, args := "add", map[string]any{"a": g, "b": i}
				switch i % 4 {
				case 1:
					name, args = "approve", map[string]any{"order": fmt.Sprint(g)}
				case 2:
					name = "fail"
				case 3:
					name, args = "picture", map[string]any{}
				}
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
				if !assert.NoError(t, err) {
					return
				}
				want := fmt.Sprintf(`{"sum":%d}`, g+i)
				switch name {
				case "add":
					assert.Equal(t, want, wire(t, res.StructuredContent))
				case "approve":
					assert.Equal(t, `answer {"approve":true} state {"step":1}`, res.Content[0].(*mcp.TextContent).Text)
				case "fail":
					assert.Equal(t, true, res.IsError)
				case "picture":
					assert.Equal(t, 5, len(res.Content))
				}
			}
		})
	}
	wg.Wait()
}

// AddTools keeps nothing of the configuration it was given: changing the
// options afterwards changes nothing the client sees.
func TestAddToolsCopies(t *testing.T) {
	reg := registry(t, nil, nil)
	options := map[string]toolmcp.ToolOptions{"add": {Title: "Add", ClosedWorld: true}}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	keys := []dispatch.SealKey{{ID: "k1", Secret: append([]byte(nil), secret...)}}
	require.NoError(t, toolmcp.AddTools(server, toolmcp.Config{Dispatch: dispatch.Config{Registry: reg, Store: newStore(), SealKeys: keys}, Tools: options}))
	options["add"] = toolmcp.ToolOptions{Title: "Changed"}
	keys[0].Secret[0] ^= 0xff

	cs := connect(t, server, nil, modern)
	res, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	for _, tl := range res.Tools {
		if tl.Name == "add" {
			require.Equal(t, "Add", tl.Title)
			require.False(t, *tl.Annotations.OpenWorldHint)
		}
	}
	// The state sealed after the change opens: the keys were copied.
	var asked atomic.Int32
	cs2 := connect(t, server, &mcp.ClientOptions{ElicitationHandler: answering(yes, &asked)}, modern)
	out, err := cs2.CallTool(t.Context(), &mcp.CallToolParams{Name: "approve", Arguments: map[string]any{"order": "7"}})
	require.NoError(t, err)
	require.False(t, out.IsError)
}
