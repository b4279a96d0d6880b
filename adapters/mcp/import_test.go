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

type weatherIn struct {
	City string `json:"city" jsonschema:"the city"`
}

type weatherOut struct {
	TempC float64 `json:"temp_c"`
}

// remote is a server written directly against the go-sdk, as third-party
// MCP servers are: a dotted name, a schema the core refuses, names that
// collide once mapped, a tool error, a result breaking its own output
// schema, and a tool that hangs.
type remote struct {
	counted atomic.Int32
	entered chan struct{}
}

func (r *remote) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "weather.current", Description: "current weather", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in weatherIn) (*mcp.CallToolResult, weatherOut, error) {
			return nil, weatherOut{TempC: 21.5}, nil
		})
	raw := func(name, input, output string, h mcp.ToolHandler) {
		t := &mcp.Tool{Name: name, InputSchema: json.RawMessage(input)}
		if output != "" {
			t.OutputSchema = json.RawMessage(output)
		}
		s.AddTool(t, h)
	}
	text := func(s string, isError bool) mcp.ToolHandler {
		return func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}, IsError: isError}, nil
		}
	}
	raw("bad_pattern", `{"type":"object","properties":{"x":{"type":"string","pattern":"[z-a]"}}}`, "", text("unreachable", false))
	raw("a_b", `{"type":"object"}`, "", text("a_b ran", false))
	raw("a.b", `{"type":"object"}`, "", text("a.b ran", false))
	raw("c.d", `{"type":"object"}`, "", text("c.d ran", false))
	raw("c/d", `{"type":"object"}`, "", text("c/d ran", false))
	raw("oops", `{"type":"object"}`, "", text("order 7 not found", true))
	raw("counter", `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`, "",
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r.counted.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	raw("liar", `{"type":"object"}`, `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`,
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{StructuredContent: map[string]any{"n": "seven"}, Content: []mcp.Content{&mcp.TextContent{Text: `{"n":"seven"}`}}}, nil
		})
	raw("hang", `{"type":"object"}`, "", func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		close(r.entered)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	return s
}

func importRemote(t *testing.T, r *remote, config toolmcp.ImportConfig) (toolmcp.ImportResult, *dispatch.Dispatcher) {
	t.Helper()
	cs := connect(t, r.server(), nil, modern)
	res, err := toolmcp.Import(t.Context(), cs, config)
	require.NoError(t, err)
	reg := &tool.Registry{}
	for _, rt := range res.Tools {
		b, err := tool.Bind(rt)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)
	return res, d
}

func TestImportTools(t *testing.T) {
	res, _ := importRemote(t, &remote{}, toolmcp.ImportConfig{})
	local := map[string]string{}
	for _, rt := range res.Tools {
		local[rt.Definition().Name] = rt.RemoteName()
		require.Empty(t, rt.Definition().Effect, "annotations are untrusted by default")
	}
	require.Equal(t, map[string]string{
		"a_b": "a_b", "counter": "counter", "hang": "hang", "liar": "liar", "oops": "oops",
		"weather_current": "weather.current",
	}, local)

	refused := map[string]string{}
	for _, r := range res.Refused {
		require.ErrorIs(t, r.Err, toolmcp.ErrRemoteTool)
		refused[r.Name] = r.Err.Error()
		if r.Name == "bad_pattern" {
			require.ErrorIs(t, r.Err, tool.ErrInvalidDefinition, "the core's own sentinel is kept")
		}
	}
	require.Len(t, refused, 4)
	require.Equal(t, `tool: remote mcp tool refused: the remote tools "a.b", "a_b" all map to the local name "a_b"`, refused["a.b"])
	require.Equal(t, `tool: remote mcp tool refused: the remote tools "c.d", "c/d" all map to the local name "c_d"`, refused["c.d"])
	require.Equal(t, refused["c.d"], refused["c/d"])
	require.Contains(t, refused["bad_pattern"], "tool: remote mcp tool refused: invalid definition")

	weather := res.Tools[len(res.Tools)-1].Definition()
	require.Equal(t, "current weather", weather.Description)
	require.JSONEq(t, `{"type":"object","properties":{"city":{"type":"string","description":"the city"}},"required":["city"],"additionalProperties":false}`, string(weather.InputSchema))
	require.JSONEq(t, `{"type":"object","properties":{"temp_c":{"type":"number"}},"required":["temp_c"],"additionalProperties":false}`, string(weather.OutputSchema))

	trusted, _ := importRemote(t, &remote{}, toolmcp.ImportConfig{TrustAnnotations: true})
	require.Equal(t, tool.EffectSafe, trusted.Tools[len(trusted.Tools)-1].Definition().Effect)
}

func TestImportCalls(t *testing.T) {
	r := &remote{entered: make(chan struct{})}
	_, d := importRemote(t, r, toolmcp.ImportConfig{})
	for _, tc := range []struct {
		name, why  string
		tool, args string
		kind       dispatch.Kind
		text       string
		details    string
	}{
		{
			name: "completed", why: "structured content becomes Details; its text copy is not repeated",
			tool: "weather_current", args: `{"city":"Oslo"}`, kind: dispatch.KindCompleted,
			text: `{"temp_c":21.5}`, details: `{"temp_c":21.5}`,
		},
		{
			name: "admitted bytes", why: "the admitted arguments are sent as they were admitted: the number text survives",
			tool: "counter", args: `{"n": 12345678901234567890}`, kind: dispatch.KindCompleted,
			text: `{"n":12345678901234567890}`,
		},
		{
			name: "rejected before sending", why: "Prepare refuses the arguments; the server is never called",
			tool: "counter", args: `{"n":"x"}`, kind: dispatch.KindRejected,
			text: `arguments of "counter" do not match its input schema at /n: got string, want integer`,
		},
		{
			name: "is error", why: "an isError result is a definite failure with the server's public text",
			tool: "oops", args: `{}`, kind: dispatch.KindFailed, text: "order 7 not found",
		},
		{
			name: "breaks its own output schema", why: "a hostile result is contained: unknown outcome, fixed sentence",
			tool: "liar", args: `{}`, kind: dispatch.KindUnknown,
			text: `The call to "liar" did not complete and its outcome is unknown.`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: tc.tool, Arguments: tc.args}})
			require.Equal(t, tc.kind, o.Kind, "%s: %v", tc.why, o.Err)
			require.Equal(t, tc.text, o.Text(), tc.why)
			if tc.details != "" {
				require.JSONEq(t, tc.details, string(o.Output.Details), tc.why)
			}
		})
	}
	require.Equal(t, int32(1), r.counted.Load(), "only the admitted call reached the server")

	t.Run("hangs", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan dispatch.Outcome, 1)
		go func() { done <- d.Run(ctx, dispatch.Call{Request: tool.Request{Name: "hang", Arguments: `{}`}}) }()
		<-r.entered
		cancel()
		o := <-done
		require.Equal(t, dispatch.KindUnknown, o.Kind, "a server that hangs is left when the call's ctx ends")
		require.ErrorIs(t, o.Err, context.Canceled)
	})
}

func TestImportRefusesNilSession(t *testing.T) {
	_, err := toolmcp.Import(t.Context(), nil, toolmcp.ImportConfig{})
	require.ErrorIs(t, err, toolmcp.ErrInvalidConfig)
	require.EqualError(t, err, "tool: invalid mcp config: the session is nil")
}

// With the client's own multi-round-trip handling off, a remote request for
// input becomes the runtime's: the call suspends with a checkpoint, and
// resuming it (here through dispatch) sends the answer and the server's
// request state back.
func TestImportInputRequest(t *testing.T) {
	var seen atomic.Value
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ship", InputSchema: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}}}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			answer, ok := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if !ok {
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
						Message:         "Ship order 7 today?",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"today":{"type":"boolean"}},"required":["today"]}`),
					}},
					RequestState: "server-state-1",
				}, nil
			}
			seen.Store(req.Params.RequestState + " " + wire(t, answer.Content) + " " + string(req.Params.Arguments))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "shipped"}}}, nil
		})
	cs := connect(t, s, manual(), modern)
	imported, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
	require.NoError(t, err)
	b, err := tool.Bind(imported.Tools[0])
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)

	o := d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: "ship", Arguments: `{"order":"7"}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	ir := o.Checkpoint.InputRequest()
	require.JSONEq(t, `"Ship order 7 today?"`, string(ir.Prompt()))
	require.JSONEq(t, `{"type":"object","properties":{"today":{"type":"boolean"}},"required":["today"]}`, string(ir.ResponseSchema().JSON()))

	_, err = d.Resume(t.Context(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"today":"yes"}`)})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer, "the remote form's schema is the contract of the answer")

	done, err := d.Resume(t.Context(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"today":true}`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, done.Kind, "%v", done.Err)
	require.Equal(t, "shipped", done.Text())
	require.Equal(t, `server-state-1 {"today":true} {"order":"7"}`, seen.Load())
}

// The remote server's progress reaches the reporter of the dispatch call;
// the remote tool holds the call open until the reporter has seen it, so
// that no notification can arrive after the call ended.
func TestImportProgress(t *testing.T) {
	seenAll := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "long", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			token := req.Params.GetProgressToken()
			for i, msg := range []string{"half", "all"} {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: 2, Message: msg})
				if err != nil {
					return nil, err
				}
			}
			// A notification with values tool.Progress refuses is dropped.
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: 5, Total: 2})
			<-seenAll
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	relay := &toolmcp.ProgressRelay{}
	cs := connect(t, s, &mcp.ClientOptions{ProgressNotificationHandler: relay.Handle}, modern)
	imported, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{Progress: relay})
	require.NoError(t, err)
	b, err := tool.Bind(imported.Tools[0])
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)

	var got []tool.Progress
	reporter := tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		got = append(got, p)
		if len(got) == 2 {
			close(seenAll)
		}
		return nil
	})
	o := d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: "long", Arguments: `{}`}, Progress: reporter})
	require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
	require.Equal(t, []tool.Progress{{Completed: 1, Total: 2, Message: "half"}, {Completed: 2, Total: 2, Message: "all"}}, got)
}

func TestImportListingFails(t *testing.T) {
	cs := connect(t, (&remote{}).server(), nil, modern)
	require.NoError(t, cs.Close())
	_, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
	require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
	require.ErrorContains(t, err, "tool: remote mcp call failed: listing tools: ")
}
