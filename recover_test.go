package tool_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// panicsWith returns a tool behaviour that panics with value.
func panicsWith(value any) func(context.Context, tool.Invocation) (tool.Result, error) {
	return func(context.Context, tool.Invocation) (tool.Result, error) {
		panic(value)
	}
}

// requireRecovered checks the Failure Recover makes and returns its
// PanicError.
func requireRecovered(t *testing.T, err error, secretText string) *tool.PanicError {
	t.Helper()
	failure, found := tool.ClassifyFailure(err)
	require.True(t, found, "got %v", err)
	require.Equal(t, tool.FailureKindFailed, failure.Kind())
	text, ok := failure.Output().Text()
	require.True(t, ok)
	require.Equal(t, `the tool "probe" failed`, text)
	for _, public := range []string{text, failure.Error(), err.Error()} {
		require.NotContains(t, public, secretText)
		require.NotContains(t, public, "goroutine")
		require.NotContains(t, public, ".go:")
	}
	panicErr, ok := failure.Cause().(*tool.PanicError)
	require.True(t, ok, "the Cause is a *PanicError, got %T", failure.Cause())
	require.NotEmpty(t, panicErr.Stack)
	require.Contains(t, string(panicErr.Stack), "goroutine")
	return panicErr
}

func TestRecoverToolPanic(t *testing.T) {
	sentinel := errors.New("index out of range in cache shard 3")
	tests := []struct {
		name   string
		value  any
		secret string
		check  func(t *testing.T, p *tool.PanicError)
	}{
		{
			name:   "a string",
			value:  "secret panic text",
			secret: "secret panic text",
			check: func(t *testing.T, p *tool.PanicError) {
				require.Equal(t, "secret panic text", p.Value)
				require.Equal(t, "tool: panic: secret panic text", p.Error())
				require.NoError(t, p.Unwrap(), "a string is not an error")
			},
		},
		{
			name:   "an error, reachable through PanicError.Unwrap",
			value:  fmt.Errorf("shard: %w", sentinel),
			secret: "cache shard",
			check: func(t *testing.T, p *tool.PanicError) {
				require.ErrorIs(t, p, sentinel)
			},
		},
		{
			name:   "nil",
			value:  nil,
			secret: "nil",
			check: func(t *testing.T, p *tool.PanicError) {
				var nilPanic *runtime.PanicNilError
				require.ErrorAs(t, p, &nilPanic)
			},
		},
		{
			name:   "http.ErrAbortHandler is not special",
			value:  http.ErrAbortHandler,
			secret: "abort",
			check: func(t *testing.T, p *tool.PanicError) {
				require.ErrorIs(t, p, http.ErrAbortHandler)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := newPolicyProbe(tool.EffectSafe, panicsWith(tt.value))
			binding, err := tool.Bind(probe, tool.Recover)
			require.NoError(t, err)
			result, err := binding.Call(context.Background(), mustPrepare(t, binding, `{}`))
			require.Equal(t, tool.Result{}, result)
			panicErr := requireRecovered(t, err, tt.secret)
			tt.check(t, panicErr)
			if target, ok := tt.value.(error); ok {
				require.NotErrorIs(t, err, target, "the panic value is the Failure's private cause")
			}
		})
	}
}

func TestRecoverCoversLaterMiddlewares(t *testing.T) {
	exploding := func(next tool.Caller) tool.Caller {
		return tool.CallerFunc(func(context.Context, tool.Invocation) (tool.Result, error) {
			panic("middleware secret")
		})
	}
	probe := newPolicyProbe("", nil)
	binding, err := tool.Bind(probe, tool.Recover, exploding)
	require.NoError(t, err)
	_, err = binding.Call(context.Background(), mustPrepare(t, binding, `{}`))
	panicErr := requireRecovered(t, err, "middleware secret")
	require.Equal(t, "middleware secret", panicErr.Value)
	require.Zero(t, probe.runs.Load())
}

func TestWithoutRecoverPanicsPropagate(t *testing.T) {
	tests := []struct {
		name        string
		middlewares func(exploding tool.CallMiddleware) []tool.CallMiddleware
		toolPanics  bool
	}{
		{"a tool without middlewares", func(tool.CallMiddleware) []tool.CallMiddleware { return nil }, true},
		{"a middleware without Recover", func(e tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{e} }, false},
		{"a middleware outside Recover", func(e tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{e, tool.Recover} }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exploding := func(next tool.Caller) tool.Caller {
				return tool.CallerFunc(func(context.Context, tool.Invocation) (tool.Result, error) {
					panic("unrecovered")
				})
			}
			var fn func(context.Context, tool.Invocation) (tool.Result, error)
			if tt.toolPanics {
				fn = panicsWith("unrecovered")
			}
			binding, err := tool.Bind(newPolicyProbe("", fn), tt.middlewares(exploding)...)
			require.NoError(t, err)
			invocation := mustPrepare(t, binding, `{}`)
			require.PanicsWithValue(t, "unrecovered", func() { _, _ = binding.Call(context.Background(), invocation) })
		})
	}
}

func TestRecoverPassesOutcomesThrough(t *testing.T) {
	declared, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected})
	require.NoError(t, err)
	plain := errors.New("plain")
	tests := []struct {
		name string
		fn   func(context.Context, tool.Invocation) (tool.Result, error)
		want error
		text string
	}{
		{"a result", nil, nil, `{"a":1}`},
		{"a plain error", func(context.Context, tool.Invocation) (tool.Result, error) { return tool.Result{}, plain }, plain, ""},
		{"a Failure", func(context.Context, tool.Invocation) (tool.Result, error) { return tool.Result{}, declared }, declared, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			binding, err := tool.Bind(newPolicyProbe("", tt.fn), tool.Recover)
			require.NoError(t, err)
			result, err := binding.Call(context.Background(), mustPrepare(t, binding, `{"a":1}`))
			require.True(t, err == tt.want, "got %v, want %v", err, tt.want)
			text, _ := result.Output.Text()
			require.Equal(t, tt.text, text)
		})
	}
}

// TestRecoverCoversChainConstruction: Binding.Call calls a middleware
// function only when the call reaches it, so a middleware function that
// panics inside an outermost Recover is recovered, while one outside it
// is not.
func TestRecoverCoversChainConstruction(t *testing.T) {
	panicsWhileBuilding := func(next tool.Caller) tool.Caller { panic("building") }

	probe := newPolicyProbe("", nil)
	binding, err := tool.Bind(probe, tool.Recover, panicsWhileBuilding)
	require.NoError(t, err)
	_, err = binding.Call(context.Background(), mustPrepare(t, binding, `{}`))
	failure, ok := tool.ClassifyFailure(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, tool.FailureKindFailed, failure.Kind())
	var p *tool.PanicError
	require.ErrorAs(t, failure.Cause(), &p)
	require.Equal(t, "building", p.Value)
	require.Zero(t, probe.runs.Load())

	outside, err := tool.Bind(probe, panicsWhileBuilding, tool.Recover)
	require.NoError(t, err)
	invocation := mustPrepare(t, outside, `{}`)
	require.PanicsWithValue(t, "building", func() { _, _ = outside.Call(context.Background(), invocation) })
	require.Zero(t, probe.runs.Load())
}
