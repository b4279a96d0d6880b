package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// secret is a test seal key; real ones come from crypto/rand.
var secret = []byte("0123456789abcdef0123456789abcdef")

type addInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

// toolFunc is a tool made of a definition and a function.
type toolFunc struct {
	def tool.Definition
	fn  func(context.Context, tool.Invocation) (tool.Result, error)
}

func (t toolFunc) Definition() tool.Definition { return t.def }
func (t toolFunc) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	return t.fn(ctx, inv)
}

func objectTool(name string, effect tool.Effect, fn func(context.Context, tool.Invocation) (tool.Result, error)) toolFunc {
	return toolFunc{
		def: tool.Definition{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`), Effect: effect},
		fn:  fn,
	}
}

// approval asks for a boolean answer on a new call and, once answered,
// completes with the answer, the state it saved and the key it saw.
type approval struct {
	calls *atomic.Int32
}

func (approval) Definition() tool.Definition {
	return tool.Definition{
		Name:        "refund",
		Description: "refund an order after approval",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}`),
		Effect:      tool.EffectIdempotent,
	}
}

func (a approval) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	if a.calls != nil {
		a.calls.Add(1)
	}
	c, resumed := inv.Continuation()
	if !resumed {
		schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
		if err != nil {
			return tool.Result{}, err
		}
		ir, err := tool.NewInputRequest(tool.InputRequestConfig{
			Prompt:            json.RawMessage(`"Approve?"`),
			ResponseSchema:    schema,
			ContinuationState: json.RawMessage(`{"step":1}`),
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &ir}, nil
	}
	return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("answer %s state %s key %s", c.Response(), c.State(), inv.IdempotencyKey()))}, nil
}

// registry binds the test tools: add (safe Func), boom (panics, no
// Recover), fail (returns a Failure), flaky (unmarked, plain error),
// refund (asks for approval), picture (media output).
func registry(t testing.TB, calls *atomic.Int32) *tool.Registry {
	t.Helper()
	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in addInput) (int, error) { return in.A + in.B, nil })
	require.NoError(t, err)
	boom := objectTool("boom", tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
		panic("secret detail at 10.0.0.1")
	})
	fail := objectTool("fail", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput("the order is closed"), Cause: errors.New("db: row 7 locked")})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{}, f
	})
	flaky := objectTool("flaky", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, errors.New("dial tcp 10.0.3.7:443: connection refused")
	})
	picture := objectTool("picture", tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{Output: tool.Output{Content: []tool.Block{
			tool.NewTextBlock("Here it is."),
			tool.NewMediaBlock("image/png", []byte{1, 2, 3}),
			tool.NewMediaURIBlock("text/csv", "https://example.com/r.csv"),
			tool.NewTextBlock("Done."),
		}}}, nil
	})
	reg := &tool.Registry{}
	for _, executable := range []tool.Tool{add, boom, fail, flaky, approval{calls: calls}, picture} {
		b, err := tool.Bind(executable)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	return reg
}

// registryOf returns a registry of the one tool tl, bound with
// middlewares.
func registryOf(t testing.TB, tl tool.Tool, middlewares ...tool.CallMiddleware) *tool.Registry {
	t.Helper()
	b, err := tool.Bind(tl, middlewares...)
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	return reg
}

func newDispatcher(t testing.TB, reg *tool.Registry, edit ...func(*dispatch.Config)) *dispatch.Dispatcher {
	t.Helper()
	config := dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}}
	for _, e := range edit {
		e(&config)
	}
	d, err := dispatch.New(config)
	require.NoError(t, err)
	return d
}

func call(id, name, args string) dispatch.Call {
	return dispatch.Call{ID: id, Request: tool.Request{Name: name, Arguments: args}}
}

// memoryStore returns a new MemoryStore of the default size.
func memoryStore(t testing.TB) *dispatch.MemoryStore {
	t.Helper()
	s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	return s
}
