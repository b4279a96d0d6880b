package tool_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// policyProbe is a Tool that counts its runs. By default it echoes its
// argument text as a text Output; fn replaces that behaviour.
type policyProbe struct {
	definition tool.Definition
	runs       atomic.Int64
	fn         func(context.Context, tool.Invocation) (tool.Result, error)
}

func newPolicyProbe(effect tool.Effect, fn func(context.Context, tool.Invocation) (tool.Result, error)) *policyProbe {
	return &policyProbe{
		definition: tool.Definition{
			Name:        "probe",
			InputSchema: []byte(`{"type":"object"}`),
			Effect:      effect,
		},
		fn: fn,
	}
}

func (p *policyProbe) Definition() tool.Definition { return p.definition.Clone() }

func (p *policyProbe) Call(ctx context.Context, invocation tool.Invocation) (tool.Result, error) {
	p.runs.Add(1)
	if p.fn != nil {
		return p.fn(ctx, invocation)
	}
	return tool.Result{Output: tool.NewTextOutput(string(invocation.Arguments()))}, nil
}

// policySecretError is an authorizer's private diagnostic; tests check that
// it never leaks through errors.Is, errors.As or an error message.
type policySecretError struct{ detail string }

func (e *policySecretError) Error() string { return "secret diagnostic: " + e.detail }

// policyAuthorizer is a pointer Authorizer, for the typed-nil case.
type policyAuthorizer struct{ allow bool }

func (a *policyAuthorizer) Authorize(context.Context, tool.Authorization) (bool, error) {
	return a.allow, nil
}

// endableContext is a context whose end, and the error it ends with, the
// test controls: it lets an authorizer make ctx report DeadlineExceeded
// without waiting for a clock.
type endableContext struct {
	context.Context
	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

func newEndableContext() *endableContext {
	return &endableContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *endableContext) Done() <-chan struct{} { return c.done }

func (c *endableContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *endableContext) end(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	})
}

// cancelBeforeNext is a middleware that ends the context it passes on, so
// that the next middleware starts with a done context.
func cancelBeforeNext(next tool.Caller) tool.Caller {
	return tool.CallerFunc(func(ctx context.Context, invocation tool.Invocation) (tool.Result, error) {
		ctx, cancel := context.WithCancel(ctx)
		cancel()
		return next.Call(ctx, invocation)
	})
}

// requireAuthorizationError checks everything an authorizer error must be:
// an *AuthorizationError naming the tool, hiding cause from its message and
// from errors.Is and errors.As, and carrying no definite outcome.
func requireAuthorizationError(t *testing.T, err error, cause error) {
	t.Helper()
	var authErr *tool.AuthorizationError
	require.ErrorAs(t, err, &authErr)
	require.Equal(t, `tool: authorization of "probe" failed`, authErr.Error())
	require.Same(t, cause, authErr.Cause(), "Cause gives the authorizer's error deliberately")
	require.NotContains(t, err.Error(), cause.Error())
	require.NotErrorIs(t, err, cause)
	var secret *policySecretError
	require.False(t, errors.As(err, &secret), "the cause's type must not be reachable")
	_, found := tool.ClassifyFailure(err)
	require.False(t, found, "an undecided authorization is not an outcome")
}

func TestGuardAuthorizerBehaviours(t *testing.T) {
	secret := &policySecretError{detail: "policy store unreachable"}
	tests := []struct {
		name string
		// ctx returns the call's context and a function that ends it with
		// the case's context error.
		ctx func() (context.Context, func())
		// authorize is the authorizer; end ends the call's context.
		authorize func(end func()) (bool, error)
		// before and after are middlewares around the guard.
		before, after []tool.CallMiddleware
		wantAsked     bool
		wantRan       bool
		wantPanic     any
		check         func(t *testing.T, result tool.Result, err error)
	}{
		{
			name:      "permit runs the tool and returns its result",
			authorize: func(func()) (bool, error) { return true, nil },
			wantAsked: true,
			wantRan:   true,
			check: func(t *testing.T, result tool.Result, err error) {
				require.NoError(t, err)
				text, ok := result.Output.Text()
				require.True(t, ok)
				require.Equal(t, `{"q":1}`, text)
			},
		},
		{
			name:      "refusal is a rejected Failure with a generic public text naming the tool",
			authorize: func(func()) (bool, error) { return false, nil },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				failure, found := tool.ClassifyFailure(err)
				require.True(t, found)
				require.Equal(t, tool.FailureKindRejected, failure.Kind())
				text, ok := failure.Output().Text()
				require.True(t, ok)
				require.Equal(t, `the call to "probe" is not permitted`, text)
				require.NoError(t, failure.Cause(), "a policy decision is not an error")
				var authErr *tool.AuthorizationError
				require.False(t, errors.As(err, &authErr))
			},
		},
		{
			name:      "an error is an AuthorizationError hiding its cause",
			authorize: func(func()) (bool, error) { return false, secret },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				requireAuthorizationError(t, err, secret)
				require.NotErrorIs(t, err, context.Canceled)
				require.NotErrorIs(t, err, context.DeadlineExceeded)
			},
		},
		{
			name:      "an error ignores a permitting boolean",
			authorize: func(func()) (bool, error) { return true, secret },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				requireAuthorizationError(t, err, secret)
			},
		},
		{
			name: "an error after the call's ctx is cancelled keeps the cancellation visible",
			ctx: func() (context.Context, func()) {
				return context.WithCancel(context.Background())
			},
			authorize: func(end func()) (bool, error) { end(); return false, secret },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				requireAuthorizationError(t, err, secret)
				require.ErrorIs(t, err, context.Canceled)
				require.NotErrorIs(t, err, context.DeadlineExceeded)
			},
		},
		{
			name: "an error after the call's deadline passes keeps the deadline visible",
			ctx: func() (context.Context, func()) {
				ctx := newEndableContext()
				return ctx, func() { ctx.end(context.DeadlineExceeded) }
			},
			authorize: func(end func()) (bool, error) { end(); return false, secret },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				requireAuthorizationError(t, err, secret)
				require.ErrorIs(t, err, context.DeadlineExceeded)
				require.NotErrorIs(t, err, context.Canceled)
			},
		},
		{
			name:      "an authorizer's own context.Canceled is sealed while ctx is live",
			authorize: func(func()) (bool, error) { return false, context.Canceled },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				require.NotErrorIs(t, err, context.Canceled, "only the call's ctx may signal cancellation")
				var authErr *tool.AuthorizationError
				require.ErrorAs(t, err, &authErr)
				require.Equal(t, context.Canceled, authErr.Cause())
			},
		},
		{
			name:      "an authorizer's own wrapped DeadlineExceeded is sealed while ctx is live",
			authorize: func(func()) (bool, error) { return false, fmt.Errorf("backend: %w", context.DeadlineExceeded) },
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				require.NotErrorIs(t, err, context.DeadlineExceeded, "only the call's ctx may signal a deadline")
				var authErr *tool.AuthorizationError
				require.ErrorAs(t, err, &authErr)
				require.ErrorIs(t, authErr.Cause(), context.DeadlineExceeded)
			},
		},
		{
			name: "a permit after the call's ctx is cancelled runs nothing and returns the cancellation",
			ctx: func() (context.Context, func()) {
				return context.WithCancel(context.Background())
			},
			authorize: func(end func()) (bool, error) { end(); return true, nil },
			wantAsked: true,
			check: func(t *testing.T, result tool.Result, err error) {
				require.Equal(t, context.Canceled, err, "the boundary checks ctx before it runs the tool")
				require.Equal(t, tool.Result{}, result)
			},
		},
		{
			name: "a permit after the call's deadline passed runs nothing and returns the deadline",
			ctx: func() (context.Context, func()) {
				ctx := newEndableContext()
				return ctx, func() { ctx.end(context.DeadlineExceeded) }
			},
			authorize: func(end func()) (bool, error) { end(); return true, nil },
			after:     []tool.CallMiddleware{tool.Recover},
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				require.Equal(t, context.DeadlineExceeded, err, "also behind further middlewares")
			},
		},
		{
			name:      "a ctx done before the guard is returned and the authorizer is not asked",
			authorize: func(func()) (bool, error) { return true, nil },
			before:    []tool.CallMiddleware{cancelBeforeNext},
			check: func(t *testing.T, _ tool.Result, err error) {
				require.Equal(t, context.Canceled, err)
			},
		},
		{
			name:      "a panic in the authorizer is not contained by the guard",
			authorize: func(func()) (bool, error) { panic("authorizer exploded") },
			wantAsked: true,
			wantPanic: "authorizer exploded",
		},
		{
			name:      "a panic in the authorizer is not recovered by a Recover inside the guard",
			authorize: func(func()) (bool, error) { panic("authorizer exploded") },
			after:     []tool.CallMiddleware{tool.Recover},
			wantAsked: true,
			wantPanic: "authorizer exploded",
		},
		{
			name:      "a panic in the authorizer becomes a failed Failure under an outermost Recover",
			authorize: func(func()) (bool, error) { panic("authorizer exploded") },
			before:    []tool.CallMiddleware{tool.Recover},
			wantAsked: true,
			check: func(t *testing.T, _ tool.Result, err error) {
				failure, found := tool.ClassifyFailure(err)
				require.True(t, found)
				require.Equal(t, tool.FailureKindFailed, failure.Kind())
				text, _ := failure.Output().Text()
				require.NotContains(t, text, "authorizer exploded")
				var panicErr *tool.PanicError
				require.ErrorAs(t, failure.Cause(), &panicErr)
				require.Equal(t, "authorizer exploded", panicErr.Value)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, end := context.Background(), func() {}
			if tt.ctx != nil {
				ctx, end = tt.ctx()
				defer end()
			}
			var asked atomic.Bool
			guard, err := tool.NewGuard(tool.GuardConfig{
				Authorizer: tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
					asked.Store(true)
					return tt.authorize(end)
				}),
			})
			require.NoError(t, err)
			probe := newPolicyProbe("", nil)
			middlewares := append(append(append([]tool.CallMiddleware{}, tt.before...), guard.Call), tt.after...)
			binding, err := tool.Bind(probe, middlewares...)
			require.NoError(t, err)
			invocation := mustPrepare(t, binding, `{"q":1}`)

			if tt.wantPanic != nil {
				require.PanicsWithValue(t, tt.wantPanic, func() { _, _ = binding.Call(ctx, invocation) })
			} else {
				result, err := binding.Call(ctx, invocation)
				tt.check(t, result, err)
			}
			require.Equal(t, tt.wantAsked, asked.Load(), "authorizer asked")
			wantRuns := int64(0)
			if tt.wantRan {
				wantRuns = 1
			}
			require.Equal(t, wantRuns, probe.runs.Load(), "tool runs")
		})
	}
}

// TestGuardStopsTheToolInEveryOrder places the guard first, last and
// between other middlewares, and behind a Registry: a refusal or an error
// never lets the tool run, and a permit always does.
func TestGuardStopsTheToolInEveryOrder(t *testing.T) {
	authorizers := []struct {
		name    string
		decide  func() (bool, error)
		wantRan bool
		check   func(t *testing.T, err error)
	}{
		{
			name:    "permit",
			decide:  func() (bool, error) { return true, nil },
			wantRan: true,
			check:   func(t *testing.T, err error) { require.NoError(t, err) },
		},
		{
			name:   "refuse",
			decide: func() (bool, error) { return false, nil },
			check: func(t *testing.T, err error) {
				failure, found := tool.ClassifyFailure(err)
				require.True(t, found)
				require.Equal(t, tool.FailureKindRejected, failure.Kind())
			},
		},
		{
			name:   "error",
			decide: func() (bool, error) { return true, errors.New("undecided") },
			check: func(t *testing.T, err error) {
				var authErr *tool.AuthorizationError
				require.ErrorAs(t, err, &authErr)
			},
		},
	}
	// pass is a middleware that forwards, counting the calls it saw.
	var passed atomic.Int64
	pass := func(next tool.Caller) tool.Caller {
		return tool.CallerFunc(func(ctx context.Context, invocation tool.Invocation) (tool.Result, error) {
			passed.Add(1)
			return next.Call(ctx, invocation)
		})
	}
	orders := []struct {
		name   string
		layout func(guard tool.CallMiddleware) []tool.CallMiddleware
	}{
		{"guard alone", func(g tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{g} }},
		{"guard first", func(g tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{g, pass, pass} }},
		{"guard last", func(g tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{pass, pass, g} }},
		{"guard between", func(g tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{pass, g, pass} }},
		{"guard twice", func(g tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{g, pass, g} }},
		{"recover then guard", func(g tool.CallMiddleware) []tool.CallMiddleware { return []tool.CallMiddleware{tool.Recover, g, pass} }},
	}
	for _, a := range authorizers {
		for _, o := range orders {
			for _, viaRegistry := range []bool{false, true} {
				name := a.name + "/" + o.name
				if viaRegistry {
					name += "/registry"
				}
				t.Run(name, func(t *testing.T) {
					guard, err := tool.NewGuard(tool.GuardConfig{
						Authorizer: tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
							return a.decide()
						}),
					})
					require.NoError(t, err)
					probe := newPolicyProbe("", nil)
					binding, err := tool.Bind(probe, o.layout(guard.Call)...)
					require.NoError(t, err)
					if viaRegistry {
						registry, err := tool.NewRegistry(binding)
						require.NoError(t, err)
						var ok bool
						binding, ok = registry.Resolve("probe")
						require.True(t, ok)
					}
					_, err = binding.Call(context.Background(), mustPrepare(t, binding, `{}`))
					a.check(t, err)
					wantRuns := int64(0)
					if a.wantRan {
						wantRuns = 1
					}
					require.Equal(t, wantRuns, probe.runs.Load())
				})
			}
		}
	}
	require.Positive(t, passed.Load(), "the other middlewares took part")
}

func TestNewGuardRefusesMissingAuthorizers(t *testing.T) {
	var nilFunc tool.AuthorizerFunc
	var nilPointer *policyAuthorizer
	tests := []struct {
		name       string
		authorizer tool.Authorizer
	}{
		{"nil interface", nil},
		{"nil AuthorizerFunc", nilFunc},
		{"nil pointer", nilPointer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: tt.authorizer})
			require.ErrorIs(t, err, tool.ErrInvalidTool)
			require.EqualError(t, err, "tool: invalid tool: a Guard needs an Authorizer")
			require.Equal(t, tool.Guard{}, guard)
		})
	}

	t.Run("a pointer authorizer", func(t *testing.T) {
		_, err := tool.NewGuard(tool.GuardConfig{Authorizer: &policyAuthorizer{allow: true}})
		require.NoError(t, err)
	})
}

func TestZeroGuardRefuses(t *testing.T) {
	probe := newPolicyProbe("", nil)
	binding, err := tool.Bind(probe, tool.Guard{}.Call)
	require.NoError(t, err)
	_, err = binding.Call(context.Background(), mustPrepare(t, binding, `{}`))
	require.Error(t, err)
	var authErr *tool.AuthorizationError
	require.ErrorAs(t, err, &authErr, "no decision could be made")
	require.ErrorIs(t, authErr.Cause(), tool.ErrInvalidTool)
	_, found := tool.ClassifyFailure(err)
	require.False(t, found)
	require.Zero(t, probe.runs.Load())
}

// TestAuthorizationIsDetached has an authorizer scribble over everything
// it is given; the tool still sees the admitted call.
func TestAuthorizationIsDetached(t *testing.T) {
	const arguments = `{"path":"/etc/hosts"}`
	var kept tool.Authorization
	guard, err := tool.NewGuard(tool.GuardConfig{
		Authorizer: tool.AuthorizerFunc(func(_ context.Context, a tool.Authorization) (bool, error) {
			kept = a
			def := a.Definition()
			for i := range def.InputSchema {
				def.InputSchema[i] = ' '
			}
			args := a.Arguments()
			for i := range args {
				args[i] = 'x'
			}
			return true, nil
		}),
	})
	require.NoError(t, err)

	var seenArguments []byte
	var seenDefinition tool.Definition
	probe := newPolicyProbe("", func(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
		seenArguments = invocation.Arguments()
		seenDefinition = invocation.Definition()
		return tool.Result{}, nil
	})
	binding, err := tool.Bind(probe, guard.Call)
	require.NoError(t, err)
	_, err = binding.Call(context.Background(), mustPrepare(t, binding, arguments))
	require.NoError(t, err)

	require.Equal(t, arguments, string(seenArguments))
	require.JSONEq(t, `{"type":"object"}`, string(seenDefinition.InputSchema))
	require.Equal(t, binding.Contract().Definition(), seenDefinition)
	// What the authorizer kept is unharmed by its own scribbling too.
	require.Equal(t, arguments, string(kept.Arguments()))
	require.Equal(t, "probe", kept.Definition().Name)
	require.JSONEq(t, `{"type":"object"}`, string(kept.Definition().InputSchema))
}

func TestZeroAuthorizationIsEmpty(t *testing.T) {
	var a tool.Authorization
	require.Equal(t, tool.Definition{}, a.Definition())
	require.Empty(t, a.Arguments())
}

// TestGuardedBindingConcurrent runs a Recover- and Guard-wrapped binding
// from many goroutines; run it with -race. Every call gets its own result.
func TestGuardedBindingConcurrent(t *testing.T) {
	const goroutines, calls = 32, 50
	var decisions atomic.Int64
	guard, err := tool.NewGuard(tool.GuardConfig{
		Authorizer: tool.AuthorizerFunc(func(_ context.Context, a tool.Authorization) (bool, error) {
			decisions.Add(1)
			return len(a.Arguments()) > 0, nil
		}),
	})
	require.NoError(t, err)
	probe := newPolicyProbe(tool.EffectSafe, nil)
	binding, err := tool.Bind(probe, tool.Recover, guard.Call)
	require.NoError(t, err)

	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range calls {
				arguments := `{"n":` + strconv.Itoa(g*calls+i) + `}`
				invocation, err := binding.Contract().Prepare(tool.Request{Name: "probe", Arguments: arguments}, tool.Admission{})
				if !assert.NoError(t, err) {
					return
				}
				result, err := binding.Call(context.Background(), invocation)
				if !assert.NoError(t, err) {
					return
				}
				text, _ := result.Output.Text()
				assert.Equal(t, arguments, text)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(goroutines*calls), decisions.Load())
	require.Equal(t, int64(goroutines*calls), probe.runs.Load())
}
