package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// A tool that ignores its context: RunAll gives each call an unknown
// outcome at its deadline and goes on with the next call; the tools still
// running past their deadline are bounded by MaxAbandoned, beyond which a
// call ends unknown without starting its tool.
func TestCallTimeoutBoundsLeaks(t *testing.T) {
	for _, tt := range []struct{ limit, abandoned, calls int }{{limit: 4, abandoned: 6, calls: 200}, {limit: 0, abandoned: 3, calls: 20}} {
		t.Run(fmt.Sprintf("MaxConcurrency=%d", tt.limit), func(t *testing.T) {
			release := make(chan struct{})
			calls := make([]dispatch.Call, tt.calls)
			for i := range calls {
				calls[i] = dispatch.Call{ID: fmt.Sprint(i), Request: tool.Request{Name: "stubborn"}}
			}
			var alive, peak, started, returned atomic.Int32
			stubborn := objectTool("stubborn", "", func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
				started.Add(1)
				n := alive.Add(1)
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				<-ctx.Done()
				<-release // ignore the context until the test ends
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
				c.MaxAbandoned = tt.abandoned
				c.CallTimeout = 2 * time.Millisecond
			})

			outcomes := d.RunAll(context.Background(), calls)

			require.Len(t, outcomes, tt.calls)
			notStarted, deadlines := 0, 0
			for i, o := range outcomes {
				require.Equal(t, calls[i].ID, o.CallID)
				require.Equal(t, dispatch.KindUnknown, o.Kind, "call %d", i)
				require.True(t, o.IsError)
				require.False(t, o.Retryable, "an unmarked tool's unknown outcome is not retryable")
				require.Equal(t, `The call to "stubborn" did not complete and its outcome is unknown.`, o.Text())
				if errors.Is(o.Err, context.DeadlineExceeded) {
					deadlines++
					continue
				}
				require.ErrorContains(t, o.Err, "the call was not started")
				require.ErrorContains(t, o.Err, "Config.MaxAbandoned")
				notStarted++
			}
			// Calls that start at once each check the bound before any of
			// them is abandoned: the excess is fewer than the calls that
			// run at once. A call abandoned before its goroutine reached
			// the tool never starts it, and frees its place when its
			// binding returns: on a loaded machine more calls than the
			// bound may end at their deadline, but never more tools than
			// the bound are alive.
			excess := max(tt.limit, 1) - 1
			require.GreaterOrEqual(t, deadlines, tt.abandoned, "the calls abandoned: as many as may be")
			require.Equal(t, tt.calls-deadlines, notStarted)
			require.LessOrEqual(t, started.Load(), int32(deadlines))
			require.LessOrEqual(t, peak.Load(), int32(tt.abandoned+excess), "tools alive at once")
			close(release)
			require.Eventually(t, func() bool { return returned.Load() == started.Load() }, 10*time.Second, time.Millisecond)
			require.Zero(t, alive.Load())
			// Once the abandoned tools returned, calls start again.
			before := started.Load()
			require.Eventually(t, func() bool {
				d.Run(context.Background(), dispatch.Call{ID: "after", Request: tool.Request{Name: "stubborn"}})
				return started.Load() > before
			}, 10*time.Second, time.Millisecond)
		})
	}
}

// An earlier tool that ignores its context does not hold up RunAll: with
// a CallTimeout the later calls run after it is abandoned, and when the
// caller's ctx ends RunAll returns, the calls not yet started ending as
// Run ends a call whose ctx is done. A hang fails by the test's deadline.
func TestRunAllReturns(t *testing.T) {
	for _, limit := range []int{0, 4} {
		t.Run(fmt.Sprintf("MaxConcurrency=%d", limit), func(t *testing.T) {
			release := make(chan struct{})
			t.Cleanup(func() { close(release) })
			var quick atomic.Int32
			entered := make(chan struct{}, 16)
			stubborn := objectTool("stubborn", "", func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
				entered <- struct{}{}
				<-release // ignores ctx
				return tool.Result{Output: tool.NewTextOutput("late")}, nil
			})
			quickTool := objectTool("quick", tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
				quick.Add(1)
				return tool.Result{Output: tool.NewTextOutput("ok")}, nil
			})
			reg := &tool.Registry{}
			for _, tl := range []toolFunc{stubborn, quickTool} {
				b, err := tool.Bind(tl)
				require.NoError(t, err)
				require.NoError(t, reg.Register(b))
			}
			turn := func(n int) []dispatch.Call {
				calls := []dispatch.Call{{ID: "s", Request: tool.Request{Name: "stubborn"}}}
				for i := range n {
					calls = append(calls, dispatch.Call{ID: fmt.Sprint("q", i), Request: tool.Request{Name: "quick"}})
				}
				return calls
			}

			// With a CallTimeout, the later calls run. It is long enough
			// for a quick call on a loaded machine (a millisecond was not).
			d := newDispatcher(t, reg, func(c *dispatch.Config) { c.MaxConcurrency, c.CallTimeout = limit, 50*time.Millisecond })
			outcomes := d.RunAll(context.Background(), turn(limit+3))
			require.Equal(t, dispatch.KindUnknown, outcomes[0].Kind)
			require.ErrorIs(t, outcomes[0].Err, context.DeadlineExceeded)
			for _, o := range outcomes[1:] {
				require.Equal(t, dispatch.KindCompleted, o.Kind, "call %s", o.CallID)
			}
			require.Equal(t, int32(limit+3), quick.Load())

			// Without one, the caller's cancellation returns RunAll.
			d = newDispatcher(t, reg, func(c *dispatch.Config) { c.MaxConcurrency = limit })
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-entered
				cancel()
			}()
			quick.Store(0)
			outcomes = d.RunAll(ctx, []dispatch.Call{{ID: "s", Request: tool.Request{Name: "stubborn"}}, {ID: "s2", Request: tool.Request{Name: "stubborn"}}})
			for _, o := range outcomes {
				require.Equal(t, dispatch.KindUnknown, o.Kind, "call %s", o.CallID)
				require.ErrorIs(t, o.Err, context.Canceled)
			}
			// A call whose ctx is done never starts its tool.
			o := d.Run(ctx, dispatch.Call{ID: "q", Request: tool.Request{Name: "quick"}})
			require.Equal(t, dispatch.KindUnknown, o.Kind)
			require.ErrorIs(t, o.Err, context.Canceled)
			require.ErrorContains(t, o.Err, "the call was not started")
			require.True(t, o.Retryable, "a safe tool's unknown outcome may be retried")
			require.Zero(t, quick.Load())
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
