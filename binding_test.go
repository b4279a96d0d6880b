package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestBindRefusesNil(t *testing.T) {
	var nilMiddleware tool.CallMiddleware
	pass := func(next tool.Caller) tool.Caller { return next }
	tests := []struct {
		name        string
		executable  tool.Tool
		middlewares []tool.CallMiddleware
	}{
		{"nil tool", nil, nil},
		{"typed-nil tool", (*coreTool)(nil), nil},
		{"nil middleware", newCoreTool(coreDefinition("t")), []tool.CallMiddleware{nilMiddleware}},
		{"nil middleware after a good one", newCoreTool(coreDefinition("t")), []tool.CallMiddleware{pass, nil}},
		{"nil func converted", newCoreTool(coreDefinition("t")), []tool.CallMiddleware{tool.CallMiddleware((func(tool.Caller) tool.Caller)(nil))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tool.Bind(tt.executable, tt.middlewares...)
			require.ErrorIs(t, err, tool.ErrInvalidTool)
			require.True(t, strings.HasPrefix(err.Error(), "tool: invalid tool: "))
			require.Zero(t, b)
		})
	}
}

func TestBindRefusesInvalidDefinitions(t *testing.T) {
	good := coreDefinition("good")
	with := func(change func(*tool.Definition)) tool.Definition {
		d := good.Clone()
		change(&d)
		return d
	}
	tests := []struct {
		name   string
		def    tool.Definition
		schema bool // also ErrInvalidSchema
	}{
		{"zero definition", tool.Definition{}, false},
		{"empty name", with(func(d *tool.Definition) { d.Name = "" }), false},
		{"65-character name", with(func(d *tool.Definition) { d.Name = strings.Repeat("a", 65) }), false},
		{"space in name", with(func(d *tool.Definition) { d.Name = "get weather" }), false},
		{"dot in name", with(func(d *tool.Definition) { d.Name = "weather.get" }), false},
		{"non-ASCII name", with(func(d *tool.Definition) { d.Name = "météo" }), false},
		{"no input schema", with(func(d *tool.Definition) { d.InputSchema = nil }), false},
		{"input schema not JSON", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":`) }), true},
		{"input schema an array", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`[]`) }), false},
		{"input schema true", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`true`) }), false},
		{"input schema without type", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{}`) }), false},
		{"input schema of strings", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":"string"}`) }), false},
		{"type as a list", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":["object"]}`) }), false},
		{"type with different case", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":"Object"}`) }), false},
		{"input schema not compiling", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":"object","minProperties":-1}`) }), true},
		{"input schema with an external ref", with(func(d *tool.Definition) {
			d.InputSchema = json.RawMessage(`{"type":"object","$ref":"https://example.test/s"}`)
		}), true},
		{"unknown effect", with(func(d *tool.Definition) { d.Effect = "readonly" }), false},
		{"effect in the wrong case", with(func(d *tool.Definition) { d.Effect = "Safe" }), false},
		{"output schema not compiling", with(func(d *tool.Definition) { d.OutputSchema = json.RawMessage(`{"type":12}`) }), true},
		{"output schema not JSON", with(func(d *tool.Definition) { d.OutputSchema = json.RawMessage(`{`) }), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			executable := newCoreTool(tt.def)
			_, err := tool.Bind(executable)
			require.ErrorIs(t, err, tool.ErrInvalidTool)
			require.ErrorIs(t, err, tool.ErrInvalidDefinition)
			if tt.schema {
				require.ErrorIs(t, err, tool.ErrInvalidSchema)
			}
			require.Equal(t, 1, executable.reads())
			require.ErrorIs(t, tt.def.Validate(), tool.ErrInvalidDefinition, "Validate applies the same rules")
		})
	}
}

func TestBindReadsDefinitionOnceAndFreezesIt(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	b := mustBind(t, executable)
	require.Equal(t, 1, executable.reads())
	frozen := b.Contract().Definition()

	// The tool changes its mind, in place and by replacement.
	executable.mu.Lock()
	for i := range executable.def.InputSchema {
		executable.def.InputSchema[i] = ' '
	}
	executable.def = tool.Definition{Name: "other", InputSchema: json.RawMessage(`{"type":"object","required":["x"]}`)}
	executable.mu.Unlock()

	require.Equal(t, frozen, b.Contract().Definition())
	require.Equal(t, "weather", b.Contract().Name())
	inv := mustPrepare(t, b, `{"city":"Paris"}`)
	_, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	require.Equal(t, 1, executable.reads(), "Prepare and Call read no definition")
	require.Equal(t, 1, executable.ran())
}

func TestBindDefinitionIsCanonicalAndDetached(t *testing.T) {
	def := coreDefinition("weather")
	def.OutputSchema = json.RawMessage(` { "type" : "object" , "maximum" : 1.0E+2 } `)
	def.Effect = tool.EffectIdempotent
	b := mustBind(t, newCoreTool(def))
	got := b.Contract().Definition()
	require.Equal(t, `{"type":"object","properties":{"city":{"type":"string","minLength":1},"days":{"type":"integer","minimum":1,"maximum":9007199254740993}},"additionalProperties":false}`, string(got.InputSchema))
	require.Equal(t, `{"type":"object","maximum":1.0E+2}`, string(got.OutputSchema))
	require.Equal(t, tool.EffectIdempotent, got.Effect)
	require.Equal(t, "looks up a city", got.Description)

	got.InputSchema[0] = 'X'
	got.OutputSchema[0] = 'X'
	again := b.Contract().Definition()
	require.Equal(t, byte('{'), again.InputSchema[0])
	require.Equal(t, byte('{'), again.OutputSchema[0])

	inv := mustPrepare(t, b, `{}`)
	invDef := inv.Definition()
	invDef.InputSchema[0] = 'X'
	require.Equal(t, byte('{'), inv.Definition().InputSchema[0])
	require.Equal(t, byte('{'), b.Contract().Definition().InputSchema[0])

	args := inv.Arguments()
	args[0] = 'X'
	require.Equal(t, `{}`, string(inv.Arguments()))
}

func TestBindCopiesMiddlewares(t *testing.T) {
	var trail []string
	mark := func(name string) tool.CallMiddleware {
		return func(next tool.Caller) tool.Caller {
			return tool.CallerFunc(func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
				trail = append(trail, name)
				return next.Call(ctx, inv)
			})
		}
	}
	middlewares := []tool.CallMiddleware{mark("a")}
	b := mustBind(t, newCoreTool(coreDefinition("weather")), middlewares...)
	middlewares[0] = mark("replaced")
	_, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
	require.NoError(t, err)
	require.Equal(t, []string{"a"}, trail)
}

func TestBindInputValidator(t *testing.T) {
	t.Run("read once", func(t *testing.T) {
		var reads atomic.Int32
		executable := coreValidatingTool{
			coreTool: newCoreTool(coreDefinition("weather")),
			validator: func() func([]byte) error {
				reads.Add(1)
				return func([]byte) error { return nil }
			},
		}
		b := mustBind(t, executable)
		for range 3 {
			mustPrepare(t, b, `{}`)
		}
		require.Equal(t, int32(1), reads.Load())
	})
	t.Run("panic contained", func(t *testing.T) {
		executable := coreValidatingTool{
			coreTool:  newCoreTool(coreDefinition("weather")),
			validator: func() func([]byte) error { panic("no table") },
		}
		var b tool.Binding
		var err error
		require.NotPanics(t, func() { b, err = tool.Bind(executable) })
		require.Zero(t, b)
		require.ErrorIs(t, err, tool.ErrInvalidTool)
		require.NotErrorIs(t, err, tool.ErrInvalidInvocation, "nothing was invoked")
		var ive *tool.InputValidationError
		require.ErrorAs(t, err, &ive, "the panic is reported as a defect of the validator")
		var p *tool.InputValidationPanicError
		require.False(t, errors.As(err, &p), "the panic is retained only behind InputValidationError.Cause")
		require.ErrorAs(t, ive.Cause(), &p)
		require.Equal(t, "no table", p.Value)
		require.Equal(t, `tool: invalid tool: the InputValidator of tool "weather" panicked`, err.Error(), "the panic value stays out of the message")
	})
	t.Run("panic with an error", func(t *testing.T) {
		cause := errors.New("no table")
		executable := coreValidatingTool{
			coreTool:  newCoreTool(coreDefinition("weather")),
			validator: func() func([]byte) error { panic(cause) },
		}
		_, err := tool.Bind(executable)
		require.ErrorIs(t, err, tool.ErrInvalidTool)
		require.NotErrorIs(t, err, cause, "the panic's error is reachable only through Cause")
		var ive *tool.InputValidationError
		require.ErrorAs(t, err, &ive)
		require.ErrorIs(t, ive.Cause(), cause, "Cause exposes it deliberately")
	})
}

func TestCallRefusesForeignInvocations(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	b := mustBind(t, executable)
	twin := mustBind(t, newCoreTool(coreDefinition("weather")))
	twinSameTool := mustBind(t, executable)
	tests := []struct {
		name string
		inv  tool.Invocation
	}{
		{"zero invocation", tool.Invocation{}},
		{"prepared by a binding of an identical tool", mustPrepare(t, twin, `{"city":"Paris"}`)},
		{"prepared by another binding of the same tool", mustPrepare(t, twinSameTool, `{"city":"Paris"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.Call(context.Background(), tt.inv)
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			require.Zero(t, res)
			require.Zero(t, executable.ran())
		})
	}
	t.Run("zero binding", func(t *testing.T) {
		var zero tool.Binding
		_, err := zero.Call(context.Background(), mustPrepare(t, b, `{}`))
		require.ErrorIs(t, err, tool.ErrInvalidInvocation)
		require.Zero(t, zero.Contract())
	})
}

func TestCallCancelledContextRunsNothing(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	var factories atomic.Int32
	b := mustBind(t, executable, func(next tool.Caller) tool.Caller {
		factories.Add(1)
		return next
	})
	inv := mustPrepare(t, b, `{}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Call(ctx, inv)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, context.Canceled, err, "ctx.Err() as it is")
	require.Zero(t, executable.ran())
	require.Zero(t, factories.Load())
}

// recordingMiddleware appends enter and leave marks to a shared trail.
func recordingMiddleware(name string, mu *sync.Mutex, trail *[]string) tool.CallMiddleware {
	note := func(s string) {
		mu.Lock()
		*trail = append(*trail, s)
		mu.Unlock()
	}
	return func(next tool.Caller) tool.Caller {
		note("new " + name)
		return tool.CallerFunc(func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
			note("enter " + name)
			res, err := next.Call(ctx, inv)
			note("leave " + name)
			return res, err
		})
	}
}

func TestCallMiddlewareOrder(t *testing.T) {
	var mu sync.Mutex
	var trail []string
	executable := newCoreTool(coreDefinition("weather"))
	executable.run = func(context.Context, tool.Invocation) (tool.Result, error) {
		mu.Lock()
		trail = append(trail, "tool")
		mu.Unlock()
		return tool.Result{Output: tool.NewTextOutput("sunny")}, nil
	}
	b := mustBind(t, executable,
		recordingMiddleware("outer", &mu, &trail),
		recordingMiddleware("inner", &mu, &trail))
	for range 2 {
		_, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
		require.NoError(t, err)
	}
	once := []string{"new outer", "enter outer", "new inner", "enter inner", "tool", "leave inner", "leave outer"}
	require.Equal(t, append(append([]string{}, once...), once...), trail,
		"the first middleware is outermost, and every call builds the chain anew, each middleware when the call reaches it")
}

func TestCallForwardingRules(t *testing.T) {
	type forward func(ctx context.Context, next tool.Caller, inv, other tool.Invocation) (tool.Result, error)
	tests := []struct {
		name    string
		forward forward
		ok      bool
		ran     int
	}{
		{"forward once", func(ctx context.Context, next tool.Caller, inv, _ tool.Invocation) (tool.Result, error) {
			return next.Call(ctx, inv)
		}, true, 1},
		{"forward a copy of the same value", func(ctx context.Context, next tool.Caller, inv, _ tool.Invocation) (tool.Result, error) {
			same := inv
			return next.Call(ctx, same)
		}, true, 1},
		{"forward twice", func(ctx context.Context, next tool.Caller, inv, _ tool.Invocation) (tool.Result, error) {
			if _, err := next.Call(ctx, inv); err != nil {
				return tool.Result{}, err
			}
			return next.Call(ctx, inv)
		}, false, 1},
		{"forward a different invocation with the same arguments", func(ctx context.Context, next tool.Caller, _, other tool.Invocation) (tool.Result, error) {
			return next.Call(ctx, other)
		}, false, 0},
		{"forward the zero invocation", func(ctx context.Context, next tool.Caller, _, _ tool.Invocation) (tool.Result, error) {
			return next.Call(ctx, tool.Invocation{})
		}, false, 0},
		{"forward the other after the right one", func(ctx context.Context, next tool.Caller, inv, other tool.Invocation) (tool.Result, error) {
			if _, err := next.Call(ctx, inv); err != nil {
				return tool.Result{}, err
			}
			return next.Call(ctx, other)
		}, false, 1},
		{"refuse without forwarding", func(context.Context, tool.Caller, tool.Invocation, tool.Invocation) (tool.Result, error) {
			return tool.Result{Output: tool.NewTextOutput("not today")}, nil
		}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			executable := newCoreTool(coreDefinition("weather"))
			var other tool.Invocation
			b := mustBind(t, executable, func(next tool.Caller) tool.Caller {
				return tool.CallerFunc(func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
					return tt.forward(ctx, next, inv, other)
				})
			})
			other = mustPrepare(t, b, `{"city":"Paris"}`)
			_, err := b.Call(context.Background(), mustPrepare(t, b, `{"city":"Paris"}`))
			if tt.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			}
			require.Equal(t, tt.ran, executable.ran())
		})
	}
}

// TestCallTellsInvocationsOfEqualArgumentsApart prepares the same text
// twice, blank text included (both admitted as {}): each Prepare makes its
// own invocation, and a middleware cannot forward one for the other.
func TestCallTellsInvocationsOfEqualArgumentsApart(t *testing.T) {
	for _, arguments := range []string{"", " ", "{}", `{"city":"Oslo"}`} {
		executable := newCoreTool(coreDefinition("weather"))
		var other tool.Invocation
		b := mustBind(t, executable, func(next tool.Caller) tool.Caller {
			return tool.CallerFunc(func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
				return next.Call(ctx, other)
			})
		})
		other = mustPrepare(t, b, arguments)
		_, err := b.Call(context.Background(), mustPrepare(t, b, arguments))
		require.ErrorIs(t, err, tool.ErrInvalidInvocation, "arguments %q", arguments)
		require.Zero(t, executable.ran())
		_, err = b.Call(context.Background(), other)
		require.NoError(t, err, "an invocation is itself")
	}
}

// TestCallForwardingIsSynchronous keeps the next of a middleware, and
// forwards through it after Binding.Call returned: from the test itself
// (a next stashed for later) or from a goroutine the middleware started.
// Whatever the middleware returned, the forward is refused and the tool
// never runs.
func TestCallForwardingIsSynchronous(t *testing.T) {
	tests := []struct {
		name string
		// forward decides what the middleware returns; the middleware
		// keeps next whatever it returns.
		forward func(ctx context.Context, next tool.Caller, inv tool.Invocation) (tool.Result, error)
		// wantRan is how often the tool runs during Binding.Call.
		wantRan int
	}{
		{"refuse, keeping next", func(context.Context, tool.Caller, tool.Invocation) (tool.Result, error) {
			return tool.Result{}, errors.New("refused")
		}, 0},
		{"refuse with an output, keeping next", func(context.Context, tool.Caller, tool.Invocation) (tool.Result, error) {
			return tool.Result{Output: tool.NewTextOutput("not now")}, nil
		}, 0},
		{"forward once, keeping next", func(ctx context.Context, next tool.Caller, inv tool.Invocation) (tool.Result, error) {
			return next.Call(ctx, inv)
		}, 1},
	}
	for _, tt := range tests {
		for _, later := range []string{"stashed next", "goroutine"} {
			t.Run(tt.name+", "+later, func(t *testing.T) {
				executable := newCoreTool(coreDefinition("weather"))
				var kept tool.Caller
				var keptInv tool.Invocation
				release := make(chan struct{})
				forwarded := make(chan error, 1)
				b := mustBind(t, executable, func(next tool.Caller) tool.Caller {
					return tool.CallerFunc(func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
						kept, keptInv = next, inv
						if later == "goroutine" {
							go func() {
								<-release
								_, err := next.Call(context.Background(), inv)
								forwarded <- err
							}()
						}
						return tt.forward(ctx, next, inv)
					})
				})
				_, _ = b.Call(context.Background(), mustPrepare(t, b, `{"city":"Paris"}`))
				require.Equal(t, tt.wantRan, executable.ran())

				var err error
				if later == "goroutine" {
					close(release)
					err = <-forwarded
				} else {
					_, err = kept.Call(context.Background(), keptInv)
				}
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
				require.Contains(t, err.Error(), "after the call returned")
				require.Equal(t, tt.wantRan, executable.ran(), "a forward after Binding.Call returned runs nothing")
			})
		}
	}
}

// TestCallWaitsForAForwardUnderWay lets a middleware forward from a
// goroutine and return before the tool finished: Binding.Call waits for the
// forward, so no tool code of the call runs after Call returned.
func TestCallWaitsForAForwardUnderWay(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	executable.run = func(context.Context, tool.Invocation) (tool.Result, error) {
		close(started)
		<-release
		finished.Store(true)
		return tool.Result{}, nil
	}
	b := mustBind(t, executable, func(next tool.Caller) tool.Caller {
		return tool.CallerFunc(func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
			go func() { _, _ = next.Call(ctx, inv) }()
			<-started
			close(release) // the tool may finish now, but need not have yet
			return tool.Result{Output: tool.NewTextOutput("did not wait")}, nil
		})
	})
	result, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
	require.NoError(t, err)
	text, _ := result.Output.Text()
	require.Equal(t, "did not wait", text, "the middleware's own result is the call's result")
	require.True(t, finished.Load(), "the tool had finished when Call returned")
}

func TestCallMiddlewareReturningNil(t *testing.T) {
	tests := []struct {
		name       string
		middleware tool.CallMiddleware
	}{
		{"nil Caller", func(tool.Caller) tool.Caller { return nil }},
		{"typed-nil CallerFunc", func(tool.Caller) tool.Caller { return tool.CallerFunc(nil) }},
		{"typed-nil pointer", func(tool.Caller) tool.Caller { return (*coreTool)(nil) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			executable := newCoreTool(coreDefinition("weather"))
			b := mustBind(t, executable, tt.middleware)
			_, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
			require.ErrorIs(t, err, tool.ErrInvalidTool)
			require.Zero(t, executable.ran())
		})
	}
}

func TestCallChecksResults(t *testing.T) {
	prompt, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:         json.RawMessage(`"approve?"`),
		ResponseSchema: coreSchema(t, `{"type":"boolean"}`),
	})
	require.NoError(t, err)
	tests := []struct {
		name   string
		output json.RawMessage // output schema, if any
		result tool.Result
	}{
		{"empty text block", nil, tool.Result{Output: tool.Output{Content: []tool.Block{{Kind: tool.BlockText}}}}},
		{"unknown block kind", nil, tool.Result{Output: tool.Output{Content: []tool.Block{{Kind: "video", Text: "x"}}}}},
		{"details not JSON", nil, tool.Result{Output: tool.Output{Details: json.RawMessage(`{"a":1,"a":2}`)}}},
		{"output schema but no details", json.RawMessage(`{"type":"object"}`), tool.Result{Output: tool.NewTextOutput("done")}},
		{"details break the output schema", json.RawMessage(`{"type":"object","required":["n"]}`), tool.Result{Output: tool.Output{Details: json.RawMessage(`{}`)}}},
		{"output and input request", nil, tool.Result{Output: tool.NewTextOutput("done"), InputRequest: &prompt}},
		{"details and input request", nil, tool.Result{Output: tool.Output{Details: json.RawMessage(`1`)}, InputRequest: &prompt}},
		{"zero input request", nil, tool.Result{InputRequest: &tool.InputRequest{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := coreDefinition("weather")
			def.OutputSchema = tt.output
			executable := newCoreTool(def)
			executable.run = func(context.Context, tool.Invocation) (tool.Result, error) { return tt.result, nil }
			var seen error
			b := mustBind(t, executable, func(next tool.Caller) tool.Caller {
				return tool.CallerFunc(func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
					res, err := next.Call(ctx, inv)
					seen = err
					return res, err
				})
			})
			res, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
			require.ErrorIs(t, err, tool.ErrInvalidResult)
			require.Zero(t, res, "a bad result is never passed on")
			require.ErrorIs(t, seen, tool.ErrInvalidResult, "middlewares see the checked outcome")
			require.Equal(t, 1, executable.ran())
		})
	}
}

func TestCallResultStandsAfterCancellation(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	executable.run = func(context.Context, tool.Invocation) (tool.Result, error) {
		cancel()
		return tool.Result{Output: tool.NewTextOutput("done anyway")}, nil
	}
	b := mustBind(t, executable)
	res, err := b.Call(ctx, mustPrepare(t, b, `{}`))
	require.NoError(t, err)
	text, ok := res.Output.Text()
	require.True(t, ok)
	require.Equal(t, "done anyway", text)
}

func TestCallOutputIsACopy(t *testing.T) {
	kept := tool.Output{
		Content: []tool.Block{tool.NewMediaBlock("image/png", []byte{1, 2, 3})},
		Details: json.RawMessage(`{"n":1}`),
	}
	executable := newCoreTool(coreDefinition("weather"))
	executable.run = func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{Output: kept}, nil
	}
	b := mustBind(t, executable)
	res, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
	require.NoError(t, err)

	// The tool keeps writing into what it returned.
	kept.Details[2] = 'X'
	kept.Content[0].Data[0] = 9
	kept.Content[0].MediaType = "text/plain"
	require.Equal(t, `{"n":1}`, string(res.Output.Details))
	require.Equal(t, []byte{1, 2, 3}, res.Output.Content[0].Data)
	require.Equal(t, "image/png", res.Output.Content[0].MediaType)
}

func TestCallToolSeesTheAdmittedInvocation(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	b := mustBind(t, executable)
	inv, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{"city":"Oslo"}`}, tool.Admission{IdempotencyKey: "call-7"})
	require.NoError(t, err)
	res, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	text, _ := res.Output.Text()
	require.Equal(t, `ran with {"city":"Oslo"}`, text)
	executable.mu.Lock()
	got := executable.calls[0]
	executable.mu.Unlock()
	require.Equal(t, tool.IdempotencyKey("call-7"), got.IdempotencyKey())
	require.Equal(t, `{"city":"Oslo"}`, string(got.Arguments()))
}

func TestCallToolErrors(t *testing.T) {
	boom := errors.New("backend down")
	tests := []struct {
		name    string
		effect  tool.Effect
		failure bool // turned into a Failure
	}{
		{"safe tool error becomes a Failure", tool.EffectSafe, true},
		{"idempotent tool error passes through", tool.EffectIdempotent, false},
		{"tool without effect passes through", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := coreDefinition("weather")
			def.Effect = tt.effect
			executable := newCoreTool(def)
			executable.run = func(context.Context, tool.Invocation) (tool.Result, error) { return tool.Result{}, boom }
			b := mustBind(t, executable)
			_, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
			f, isFailure := tool.ClassifyFailure(err)
			require.Equal(t, tt.failure, isFailure)
			if tt.failure {
				require.Equal(t, tool.FailureKindFailed, f.Kind())
				require.Equal(t, boom, f.Cause())
				require.NotErrorIs(t, err, boom, "the cause is private")
				return
			}
			require.Equal(t, boom, err, "the tool's own error, untouched")
		})
	}
}

func TestCallConcurrent(t *testing.T) {
	executable := newCoreTool(coreDefinition("weather"))
	b := mustBind(t, executable, func(next tool.Caller) tool.Caller { return next })
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Go(func() {
			inv, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{"city":"Rome"}`}, tool.Admission{})
			if err == nil {
				_, err = b.Call(context.Background(), inv)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 16, executable.ran())
}

// An InputRejection from a safe tool's own Call is the model's to correct:
// it passes through instead of becoming a generic Failure.
func TestCallSafeToolInputRejection(t *testing.T) {
	rejection, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "city must be a capital"})
	require.NoError(t, err)
	for _, returned := range []error{rejection, fmt.Errorf("decoding: %w", rejection)} {
		def := coreDefinition("weather")
		def.Effect = tool.EffectSafe
		executable := newCoreTool(def)
		executable.run = func(context.Context, tool.Invocation) (tool.Result, error) { return tool.Result{}, returned }
		b := mustBind(t, executable)
		_, err := b.Call(context.Background(), mustPrepare(t, b, `{}`))
		got, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "city must be a capital", got.Message())
		_, isFailure := tool.ClassifyFailure(err)
		require.False(t, isFailure)
	}
}
