package toolmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
	d := importedDispatcher(t, cs, toolmcp.ImportConfig{})

	o := d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: "ship", Arguments: `{"order":"7"}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	ir := o.Checkpoint.InputRequest()
	require.JSONEq(t, `"Ship order 7 today?"`, string(ir.Prompt()))
	require.JSONEq(t, `{"type":"object","properties":{"today":{"type":"boolean"}},"required":["today"]}`, string(ir.ResponseSchema().JSON()))

	_, err := d.Resume(t.Context(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"today":"yes"}`)})
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
	d := importedDispatcher(t, cs, toolmcp.ImportConfig{Progress: relay})

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

// Bridge to bridge, the outcome kind survives: the serving side writes it
// in the isError result's _meta, and Import reads it back where it keeps
// the call at least as safe. A third-party server's _meta cannot make an
// error a success.
func TestImportOutcomeKinds(t *testing.T) {
	reg := registry(t, nil, nil)
	positive, err := tool.NewFunc(tool.FuncConfig{Name: "positive", Description: "accepts a positive n"},
		func(_ context.Context, in positiveIn) (string, error) { return "ok", nil })
	require.NoError(t, err)
	b, err := tool.Bind(positive)
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	served := connect(t, newServer(t, reg), nil, modern)
	res, err := toolmcp.Import(t.Context(), served, toolmcp.ImportConfig{})
	require.NoError(t, err)

	third := mcp.NewServer(&mcp.Implementation{Name: "third", Version: "v1"}, nil)
	marked := func(name string, isError bool, kind any) {
		third.AddTool(&mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name + " said so"}}, IsError: isError, Meta: mcp.Meta{toolmcp.OutcomeMetaKey: kind}}, nil
		})
	}
	marked("claims_completed", true, "completed")
	marked("claims_number", true, 7)
	marked("success_claims_unknown", false, "unknown")
	marked("claims_unknown", true, "unknown")
	other, err := toolmcp.Import(t.Context(), connect(t, third, nil, modern), toolmcp.ImportConfig{})
	require.NoError(t, err)

	reg = &tool.Registry{}
	for _, rt := range append(res.Tools, other.Tools...) {
		b, err := tool.Bind(rt)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, args, why string
		kind            dispatch.Kind
		text            string
	}{
		{name: "fail", args: `{}`, kind: dispatch.KindFailed, text: "the order is closed", why: "a remote failure stays a failure"},
		{name: "flaky", args: `{}`, kind: dispatch.KindUnknown, text: `The call to "flaky" did not complete and its outcome is unknown.`, why: "a remote unknown outcome stays unknown: the call may have had its effect"},
		{name: "positive", args: `{"n":-1}`, kind: dispatch.KindRejected, text: "n must be positive", why: "a remote rejection (here by a rule the schema does not state) stays model-correctable"},
		{name: "claims_completed", args: `{}`, kind: dispatch.KindFailed, text: "claims_completed said so", why: "an isError result is not made a success"},
		{name: "claims_number", args: `{}`, kind: dispatch.KindFailed, text: "claims_number said so", why: "a kind that is not a string is ignored"},
		{name: "success_claims_unknown", args: `{}`, kind: dispatch.KindCompleted, text: "success_claims_unknown said so", why: "only isError results are read"},
		{name: "claims_unknown", args: `{}`, kind: dispatch.KindUnknown, why: "any server may make its outcome less definite"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := d.Run(t.Context(), dispatch.Call{Request: tool.Request{Name: tc.name, Arguments: tc.args}})
			require.Equal(t, tc.kind, o.Kind, tc.why)
			require.False(t, o.Retryable, "no imported tool promises replay by default")
			if tc.text != "" {
				require.Equal(t, tc.text, o.Text(), tc.why)
			}
			if tc.kind == dispatch.KindRejected {
				_, ok := tool.ClassifyInputRejection(o.Err)
				require.True(t, ok)
			}
		})
	}
}

type positiveIn struct {
	N int `json:"n"`
}

func (in positiveIn) Validate() error {
	if in.N > 0 {
		return nil
	}
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "n must be positive"})
	if err != nil {
		return err
	}
	return r
}

// A remote tool that returns right after its last progress notification:
// the SDK may hand the notification to the relay after the call's result,
// and the relay still delivers it to the call, every time.
func TestImportProgressLastStep(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "quick", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 3})
				if err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	for name, version := range map[string]string{"modern": modern, "legacy": legacy} {
		t.Run(name, func(t *testing.T) {
			// A machine loaded by parallel tests under the race detector
			// needs a longer wait than DefaultProgressLinger.
			relay := &toolmcp.ProgressRelay{Linger: 100 * time.Millisecond}
			cs := connectHTTP(t, s, &mcp.ClientOptions{ProgressNotificationHandler: relay.Handle}, version)
			imported, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{Progress: relay})
			require.NoError(t, err)
			for run := range 10 {
				var mu sync.Mutex
				var got []float64
				ctx := tool.WithProgressReporter(t.Context(), tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
					mu.Lock()
					defer mu.Unlock()
					got = append(got, p.Completed)
					return nil
				}))
				_, err := imported.Tools[0].Call(ctx, tool.Invocation{})
				require.NoError(t, err)
				mu.Lock()
				require.Equal(t, []float64{1, 2, 3}, got, "run %d", run)
				mu.Unlock()
			}
		})
	}
}

// connectHTTP connects a Go client to server over streamable HTTP.
func connectHTTP(t testing.TB, server *mcp.Server, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	t.Cleanup(srv.Close)
	return connectURL(t, srv.URL, opts, version)
}

// An embedded resource keeps its URI where a block can carry it: one
// without contents becomes media by URI instead of being dropped.
func TestImportEmbeddedResourceURI(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1"}, nil)
	s.AddTool(&mcp.Tool{Name: "resources", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://report.csv", MIMEType: "text/csv"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://blank"}},
				&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://note", MIMEType: "text/plain", Text: "a note"}},
			}}, nil
		})
	imported, err := toolmcp.Import(t.Context(), connect(t, s, nil, modern), toolmcp.ImportConfig{})
	require.NoError(t, err)
	res, err := imported.Tools[0].Call(t.Context(), tool.Invocation{})
	require.NoError(t, err)
	require.Equal(t, []tool.Block{
		tool.NewMediaURIBlock("text/csv", "test://report.csv"),
		tool.NewMediaURIBlock("application/octet-stream", "test://blank"),
		tool.NewTextBlock("a note"),
	}, res.Output.Content)
}
