package toolmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/dispatch"
)

// secret is a test seal key; real ones come from crypto/rand.
var secret = []byte("0123456789abcdef0123456789abcdef")

type addInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

type sum struct {
	Sum int `json:"sum"`
}

// approvalForm is the response schema of the approve tool: an elicitation
// form.
const approvalForm = `{"type":"object","properties":{"approve":{"type":"boolean","description":"true approves"},"note":{"type":"string","maxLength":200}},"required":["approve"]}`

// approve asks for approval of a refund on a new call and completes with
// the answer and the state it saved. With twice set, it asks a second
// question after the first answer. calls, when not nil, counts its calls.
func approve(calls *atomic.Int32, twice bool) adaptertest.Approval {
	a := adaptertest.Approval{Name: "approve", Prompt: `"Refund order 7 for 12.50 EUR?"`, Form: approvalForm, States: []string{`{"step":1}`}, Calls: calls}
	if twice {
		a.States = append(a.States, `{"step":2}`)
	}
	return a
}

// slowGate lets a test hold the slow tool inside its call.
type slowGate struct {
	entered   chan struct{}
	cancelled chan struct{}
}

func newSlowGate() *slowGate {
	return &slowGate{entered: make(chan struct{}), cancelled: make(chan struct{})}
}

// registry binds the test tools: add (safe, typed output), fail (returns a
// Failure), flaky (no effect, plain error), picture (media output), approve
// (asks for approval), list (output schema of an array), slow (progress,
// then waits for ctx).
func registry(t testing.TB, calls *atomic.Int32, gate *slowGate) *tool.Registry {
	t.Helper()
	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in addInput) (sum, error) { return sum{in.A + in.B}, nil })
	require.NoError(t, err)
	list, err := tool.NewFunc(tool.FuncConfig{Name: "list", Description: "list the first n squares", Effect: tool.EffectSafe},
		func(_ context.Context, in struct {
			N int `json:"n"`
		}) ([]int, error) {
			out := []int{}
			for i := 1; i <= in.N; i++ {
				out = append(out, i*i)
			}
			return out, nil
		})
	require.NoError(t, err)
	fail := adaptertest.Object("fail", "", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, adaptertest.Failure(tool.FailureKindFailed, "the order is closed", errors.New("db: row 7 locked at 10.0.0.9"))
	})
	flaky := adaptertest.Object("flaky", "", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, errors.New("dial tcp 10.0.3.7:443: connection refused")
	})
	picture := adaptertest.Object("picture", "", tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{Output: tool.Output{Content: []tool.Block{
			tool.NewTextBlock("Here it is."),
			tool.NewMediaBlock("image/png", []byte{1, 2, 3}),
			tool.NewMediaBlock("audio/wav", []byte{4, 5}),
			tool.NewMediaBlock("application/pdf", []byte("%PDF")),
			tool.NewMediaURIBlock("text/csv", "https://example.com/reports/r.csv"),
		}}}, nil
	})
	slow := adaptertest.Object("slow", "", "", func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
		for i := 1; i <= 3; i++ {
			if err := tool.ReportProgress(ctx, tool.Progress{Completed: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i)}); err != nil {
				return tool.Result{}, err
			}
		}
		if gate == nil {
			return tool.Result{Output: tool.NewTextOutput("done")}, nil
		}
		close(gate.entered)
		<-ctx.Done()
		close(gate.cancelled)
		return tool.Result{}, ctx.Err()
	})
	reg := &tool.Registry{}
	for _, executable := range []tool.Tool{add, list, fail, flaky, picture, slow, approve(calls, false)} {
		b, err := tool.Bind(executable, tool.Recover)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	return reg
}

func form(t testing.TB) tool.Schema {
	t.Helper()
	s, err := tool.ParseSchema([]byte(approvalForm))
	require.NoError(t, err)
	return s
}

// newServer serves reg on a fresh mcp.Server.
func newServer(t testing.TB, reg *tool.Registry, edit ...func(*toolmcp.Config)) *mcp.Server {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	config := toolmcp.Config{
		Dispatch: dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}},
		Tools: map[string]toolmcp.ToolOptions{
			"approve": {Title: "Approve a refund", ResponseSchemas: []tool.Schema{form(t)}},
			"add":     {ClosedWorld: true},
		},
	}
	for name := range config.Tools {
		if _, ok := reg.Resolve(name); !ok {
			delete(config.Tools, name)
		}
	}
	for _, e := range edit {
		e(&config)
	}
	require.NoError(t, toolmcp.AddTools(server, config))
	return server
}

// connect connects a Go client to server over in-memory transports.
func connect(t testing.TB, server *mcp.Server, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	// The SDK's in-memory transport takes no bound: Connect is told so.
	cs, err := toolmcp.Connect(t.Context(), toolmcp.ConnectConfig{
		Implementation:  &mcp.Implementation{Name: "client", Version: "v0"},
		Options:         opts,
		Transport:       ct,
		Session:         &mcp.ClientSessionOptions{ProtocolVersion: version},
		MaxMessageBytes: toolmcp.NoLimit,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// wire is the JSON of v, as it travelled.
func wire(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// answering is an elicitation handler that answers every form with result
// and counts the questions.
func answering(result *mcp.ElicitResult, asked *atomic.Int32) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return result, nil
	}
}

// newStore returns a claim store for one test server.
func newStore() *dispatch.MemoryStore {
	s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	return s
}

// serveHTTP serves server over streamable HTTP, with opts, behind
// toolmcp.HTTPHandler, until t ends.
func serveHTTP(t testing.TB, server *mcp.Server, opts *mcp.StreamableHTTPOptions) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(toolmcp.HTTPHandler(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, opts)))
	t.Cleanup(srv.Close)
	return srv
}

// connectURL connects a Go client to the streamable HTTP endpoint url.
func connectURL(t testing.TB, url string, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	cs, err := toolmcp.Connect(t.Context(), toolmcp.ConnectConfig{
		Implementation: &mcp.Implementation{Name: "client", Version: "v0"},
		Options:        opts,
		Transport:      &mcp.StreamableClientTransport{Endpoint: url},
		Session:        &mcp.ClientSessionOptions{ProtocolVersion: version},
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// importOne imports the tools of cs with config and binds the first.
func importOne(t testing.TB, cs *mcp.ClientSession, config toolmcp.ImportConfig) tool.Binding {
	t.Helper()
	imported, err := toolmcp.Import(t.Context(), cs, config)
	require.NoError(t, err)
	b, err := tool.Bind(imported.Tools[0])
	require.NoError(t, err)
	return b
}

// prepared is the imported tool of importOne and an admitted call of it,
// named name, with no arguments.
func prepared(t testing.TB, cs *mcp.ClientSession, config toolmcp.ImportConfig, name string) (tool.Binding, tool.Invocation) {
	t.Helper()
	b := importOne(t, cs, config)
	inv, err := b.Contract().Prepare(tool.Request{Name: name, Arguments: `{}`}, tool.Admission{})
	require.NoError(t, err)
	return b, inv
}

// importedDispatcher is a dispatcher over the imported tool of importOne.
func importedDispatcher(t testing.TB, cs *mcp.ClientSession, config toolmcp.ImportConfig) *dispatch.Dispatcher {
	t.Helper()
	reg, err := tool.NewRegistry(importOne(t, cs, config))
	require.NoError(t, err)
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: newStore(), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	require.NoError(t, err)
	return d
}
