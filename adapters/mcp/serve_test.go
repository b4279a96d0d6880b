package toolmcp_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

const (
	modern = "2026-07-28"
	legacy = "2025-11-25"
)

func TestListTools(t *testing.T) {
	for _, version := range []string{modern, legacy} {
		t.Run(version, func(t *testing.T) {
			cs := connect(t, newServer(t, registry(t, nil, nil)), nil, version)
			res, err := cs.ListTools(t.Context(), nil)
			require.NoError(t, err)
			got := map[string]*mcp.Tool{}
			for _, tl := range res.Tools {
				got[tl.Name] = tl
			}
			require.Len(t, got, 7)

			// Every hint is explicit, from the Effect and the options.
			require.JSONEq(t, `{"title":"Approve a refund","readOnlyHint":false,"idempotentHint":true,"destructiveHint":true,"openWorldHint":true}`, wire(t, got["approve"].Annotations))
			require.JSONEq(t, `{"readOnlyHint":true,"idempotentHint":true,"destructiveHint":false,"openWorldHint":false}`, wire(t, got["add"].Annotations))
			require.JSONEq(t, `{"readOnlyHint":false,"idempotentHint":false,"destructiveHint":true,"openWorldHint":true}`, wire(t, got["flaky"].Annotations))
			require.Equal(t, "Approve a refund", got["approve"].Title)

			require.JSONEq(t, `{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}`, wire(t, got["approve"].InputSchema))
			require.Equal(t, "add two integers", got["add"].Description)
			require.Contains(t, wire(t, got["add"].OutputSchema), `"sum"`)

			// An array output schema only reaches clients whose protocol
			// allows one; older ones see it as the member of an object.
			if version == modern {
				require.JSONEq(t, `{"type":"array","items":{"type":"integer"}}`, wire(t, got["list"].OutputSchema))
			} else {
				require.JSONEq(t, `{"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"]}`, wire(t, got["list"].OutputSchema))
			}
		})
	}
}

func TestCallOutcomes(t *testing.T) {
	for _, version := range []string{modern, legacy} {
		cs := connect(t, newServer(t, registry(t, nil, nil)), nil, version)
		for _, tc := range []struct {
			name, why  string
			tool       string
			args       any
			isError    bool
			content    string
			structured string
		}{
			{
				name: "completed", why: "the Details are the structured content, and a text copy follows",
				tool: "add", args: map[string]any{"a": 2, "b": 3},
				content: `[{"type":"text","text":"{\"sum\":5}"}]`, structured: `{"sum":5}`,
			},
			{
				name: "completed array", why: "an array is structured content where the protocol allows it, else wrapped in an object",
				tool: "list", args: map[string]any{"n": 3},
				content: `[{"type":"text","text":"[1,4,9]"}]`, structured: map[string]string{modern: `[1,4,9]`, legacy: `{"result":[1,4,9]}`}[version],
			},
			{
				name: "media", why: "image and audio inline, other media embedded under its digest, a URI as a link",
				tool: "picture", args: map[string]any{},
				content: `[{"type":"text","text":"Here it is."},
					{"type":"image","mimeType":"image/png","data":"AQID"},
					{"type":"audio","mimeType":"audio/wav","data":"BAU="},
					{"type":"resource","resource":{"uri":"ni:///sha-256;MV1Cm3cUzttq0ErDEkAUUldpJjBFfzyIJTxb7OrHYCc","mimeType":"application/pdf","blob":"JVBERg=="}},
					{"type":"resource_link","uri":"https://example.com/reports/r.csv","name":"r.csv","mimeType":"text/csv"}]`,
			},
			{
				name: "failed", why: "the Failure's public output, never its cause",
				tool: "fail", args: map[string]any{}, isError: true,
				content: `[{"type":"text","text":"the order is closed"}]`,
			},
			{
				name: "rejected by schema", why: "the public message says which member is wrong",
				tool: "add", args: map[string]any{"a": "two", "b": 3}, isError: true,
				content: `[{"type":"text","text":"arguments of \"add\" do not match its input schema at /a: got string, want integer"}]`,
			},
			{
				name: "rejected duplicate", why: "the raw text reaches Prepare: a duplicate member is judged, not merged",
				tool: "add", args: json.RawMessage(`{"a":1,"a":2,"b":3}`), isError: true,
				content: `[{"type":"text","text":"arguments of \"add\" are not valid JSON at /a (byte 7): duplicate member name \"a\""}]`,
			},
			{
				name: "rejected number text", why: "1.0 is not an integer to a strict decoder; a map round trip would have made it 1",
				tool: "add", args: json.RawMessage(`{"a":1.0,"b":3}`), isError: true,
				content: `[{"type":"text","text":"arguments cannot be decoded: value at /a must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or exponent, got 1.0"}]`,
			},
			{
				name: "unknown outcome", why: "a plain error of an unmarked tool is an unknown outcome: the fixed sentence only",
				tool: "flaky", args: map[string]any{}, isError: true,
				content: `[{"type":"text","text":"The call to \"flaky\" did not complete and its outcome is unknown."}]`,
			},
		} {
			t.Run(version+"/"+tc.name, func(t *testing.T) {
				res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
				require.NoError(t, err, tc.why)
				require.Equal(t, tc.isError, res.IsError, tc.why)
				require.JSONEq(t, tc.content, wire(t, res.Content), tc.why)
				if tc.structured == "" {
					require.Nil(t, res.StructuredContent, tc.why)
				} else {
					require.JSONEq(t, tc.structured, wire(t, res.StructuredContent), tc.why)
				}
				require.NotContains(t, wire(t, res), "10.0.", "no private detail reaches the client")
			})
		}
	}
}

func TestCallUnknownTool(t *testing.T) {
	cs := connect(t, newServer(t, registry(t, nil, nil)), nil, modern)
	_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}})
	require.ErrorContains(t, err, `unknown tool "nope"`)
}

func TestCallProgress(t *testing.T) {
	var got []string
	var n atomic.Int32
	done := make(chan struct{})
	opts := &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
		got = append(got, wire(t, req.Params))
		if n.Add(1) == 3 {
			close(done)
		}
	}}
	cs := connect(t, newServer(t, registry(t, nil, nil)), opts, modern)
	params := &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(t.Context(), params)
	require.NoError(t, err)
	require.False(t, res.IsError)
	<-done
	require.Equal(t, []string{
		`{"progressToken":"tok-1","message":"step 1","progress":1,"total":3}`,
		`{"progressToken":"tok-1","message":"step 2","progress":2,"total":3}`,
		`{"progressToken":"tok-1","message":"step 3","progress":3,"total":3}`,
	}, got)
}

func TestCallCancelled(t *testing.T) {
	gate := newSlowGate()
	cs := connect(t, newServer(t, registry(t, nil, gate)), nil, modern)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		errc <- err
	}()
	<-gate.entered
	cancel()
	// The client's cancellation reaches the tool's ctx.
	<-gate.cancelled
	require.ErrorIs(t, <-errc, context.Canceled)
}

type line struct {
	SKU string `json:"sku"`
}

// An output schema with references would change meaning one level down, so
// a client before 2026-07-28 is shown none and gets the output as text.
func TestLegacyOutputNotWrapped(t *testing.T) {
	lines, err := tool.NewFunc(tool.FuncConfig{Name: "lines", Effect: tool.EffectSafe},
		func(context.Context, struct{}) ([]line, error) { return []line{{SKU: "X-1"}}, nil })
	require.NoError(t, err)
	b, err := tool.Bind(lines)
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	require.Contains(t, string(b.Contract().Definition().OutputSchema), `"$ref"`)
	server := newServer(t, reg)
	for _, version := range []string{modern, legacy} {
		cs := connect(t, server, nil, version)
		list, err := cs.ListTools(t.Context(), nil)
		require.NoError(t, err)
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "lines", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.JSONEq(t, `[{"type":"text","text":"[{\"sku\":\"X-1\"}]"}]`, wire(t, res.Content))
		if version == modern {
			require.NotNil(t, list.Tools[0].OutputSchema)
			require.JSONEq(t, `[{"sku":"X-1"}]`, wire(t, res.StructuredContent))
		} else {
			require.Nil(t, list.Tools[0].OutputSchema)
			require.Nil(t, res.StructuredContent)
		}
	}
}

// A server of a registry alone serves every tool that does not ask a
// person; one that asks gets the isError result of an unknown outcome,
// and nobody is asked.
func TestServeRegistryAlone(t *testing.T) {
	server := newServer(t, registry(t, nil, nil), func(c *toolmcp.Config) {
		c.Dispatch = dispatch.Config{Registry: c.Dispatch.Registry}
		delete(c.Tools, "approve")
	})
	var asked atomic.Int32
	cs := connect(t, server, &mcp.ClientOptions{ElicitationHandler: answering(&mcp.ElicitResult{Action: "accept"}, &asked)}, modern)
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}})
	require.NoError(t, err)
	require.False(t, res.IsError)
	require.JSONEq(t, `{"sum":5}`, wire(t, res.StructuredContent))

	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "approve", Arguments: map[string]any{"order": "A-7"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.JSONEq(t, `[{"type":"text","text":"The call to \"approve\" did not complete and its outcome is unknown."}]`, wire(t, res.Content))
	require.Zero(t, asked.Load(), "nobody is asked")
}
