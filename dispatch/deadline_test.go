package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// loggedKeys is a slog.Handler that closes the channel of a call's
// idempotency key once the call's record is written, that is once Run has
// decided the call's outcome.
type loggedKeys struct {
	done map[string]chan struct{}
}

func (h loggedKeys) Enabled(context.Context, slog.Level) bool { return true }
func (h loggedKeys) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h loggedKeys) WithGroup(string) slog.Handler            { return h }
func (h loggedKeys) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "idempotency_key" {
			if ch, ok := h.done[a.Value.String()]; ok {
				close(ch)
			}
			return false
		}
		return true
	})
	return nil
}

// A tool that ignores its context: RunAll gives each call an unknown
// outcome at its deadline, and the tools still running past it keep their
// slots, so that no more than MaxConcurrency of them are ever alive.
func TestCallTimeoutBoundsLeaks(t *testing.T) {
	for _, tt := range []struct{ limit, calls int }{{limit: 4, calls: 200}, {limit: 0, calls: 20}} {
		t.Run(fmt.Sprintf("MaxConcurrency=%d", tt.limit), func(t *testing.T) {
			logged := loggedKeys{done: map[string]chan struct{}{}}
			calls := make([]dispatch.Call, tt.calls)
			for i := range calls {
				key := fmt.Sprintf("k%d", i)
				logged.done[key] = make(chan struct{})
				calls[i] = dispatch.Call{ID: fmt.Sprint(i), Request: tool.Request{Name: "stubborn"}, IdempotencyKey: tool.IdempotencyKey(key)}
			}
			var alive, peak, started, returned atomic.Int32
			stubborn := objectTool("stubborn", "", func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
				started.Add(1)
				n := alive.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-ctx.Done()
				// Ignore the context: return only once Run has given up on
				// this call and logged its outcome.
				<-logged.done[string(inv.IdempotencyKey())]
				alive.Add(-1)
				returned.Add(1)
				return tool.Result{Output: tool.NewTextOutput("too late")}, nil
			})
			reg := &tool.Registry{}
			b, err := tool.Bind(stubborn)
			require.NoError(t, err)
			require.NoError(t, reg.Register(b))
			d := newDispatcher(t, reg, func(c *dispatch.Config) {
				c.MaxConcurrency = tt.limit
				c.CallTimeout = 2 * time.Millisecond
				c.Logger = slog.New(logged)
			})

			outcomes := d.RunAll(context.Background(), calls)

			require.Len(t, outcomes, tt.calls)
			for i, o := range outcomes {
				require.Equal(t, calls[i].ID, o.CallID)
				require.Equal(t, dispatch.KindUnknown, o.Kind, "call %d", i)
				require.True(t, o.IsError)
				require.False(t, o.Retryable, "an unmarked tool's unknown outcome is not retryable")
				require.Equal(t, `The call to "stubborn" did not complete and its outcome is unknown.`, o.Text())
				require.ErrorIs(t, o.Err, context.DeadlineExceeded)
			}
			require.Positive(t, started.Load())
			require.LessOrEqual(t, peak.Load(), int32(max(tt.limit, 1)), "tools alive at once")
			// A call whose deadline came before its tool started never
			// reaches it; every tool that did start returns.
			require.Eventually(t, func() bool { return returned.Load() == started.Load() }, 10*time.Second, time.Millisecond)
			require.Zero(t, alive.Load())
		})
	}
}

// Run and Resume return at the deadline while the tool still runs, and a
// tool that returns in time is unaffected.
func TestCallTimeoutRunAndResume(t *testing.T) {
	release := make(chan struct{})
	var reported, hung, finished atomic.Int32
	hang := objectTool("hang", tool.EffectIdempotent, func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
		if _, resumed := inv.Continuation(); !resumed && string(inv.Arguments()) == `{"ask":true}` {
			schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
			if err != nil {
				return tool.Result{}, err
			}
			ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Go on?"`), ResponseSchema: schema})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{InputRequest: &ir}, nil
		}
		if string(inv.Arguments()) == `{"quick":true}` {
			return tool.Result{Output: tool.NewTextOutput("quick")}, nil
		}
		hung.Add(1)
		<-ctx.Done()
		<-release
		// Progress after the deadline is not passed on.
		_ = tool.ReportProgress(ctx, tool.Progress{Completed: 1})
		finished.Add(1)
		return tool.Result{Output: tool.NewTextOutput("too late")}, nil
	})
	reg := &tool.Registry{}
	b, err := tool.Bind(hang)
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	d := newDispatcher(t, reg, func(c *dispatch.Config) { c.CallTimeout = 5 * time.Millisecond })
	progress := tool.ProgressReporterFunc(func(context.Context, tool.Progress) error { reported.Add(1); return nil })

	o := d.Run(context.Background(), dispatch.Call{ID: "a", Request: tool.Request{Name: "hang", Arguments: `{}`}, Progress: progress})
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.True(t, o.Retryable, "an idempotent tool's unknown outcome may be retried")
	require.ErrorIs(t, o.Err, context.DeadlineExceeded)

	o = d.Run(context.Background(), dispatch.Call{ID: "b", Request: tool.Request{Name: "hang", Arguments: `{"quick":true}`}})
	require.Equal(t, dispatch.KindCompleted, o.Kind)

	// The caller's own cancellation ends the wait too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	o = d.Run(ctx, dispatch.Call{ID: "c", Request: tool.Request{Name: "hang", Arguments: `{}`}})
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.ErrorIs(t, o.Err, context.Canceled)

	o = d.Run(context.Background(), dispatch.Call{ID: "d", Request: tool.Request{Name: "hang", Arguments: `{"ask":true}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	resumed, err := d.Resume(context.Background(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`), Progress: progress})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindUnknown, resumed.Kind)
	require.ErrorIs(t, resumed.Err, context.DeadlineExceeded)

	_, err = dispatch.New(dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}, CallTimeout: -1})
	require.True(t, errors.Is(err, dispatch.ErrInvalidConfig))

	close(release)
	require.Positive(t, hung.Load())
	require.Eventually(t, func() bool { return finished.Load() == hung.Load() }, 10*time.Second, time.Millisecond)
	require.Zero(t, reported.Load(), "progress reported after the deadline")
}
