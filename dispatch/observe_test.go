package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// event is one hook call an observer saw.
type event struct {
	hook    string // "start", "done" or "refused"
	info    dispatch.CallInfo
	outcome dispatch.Outcome
	err     error
	marked  bool // the ctx carried the value CallStart put there
}

type markKey struct{}

// recorder records every hook call, and marks the ctx CallStart returns.
type recorder struct {
	mu     sync.Mutex
	events []event
}

func (r *recorder) add(e event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) take() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.events
	r.events = nil
	return e
}

func (r *recorder) observer() *dispatch.Observer {
	return &dispatch.Observer{
		CallStart: func(ctx context.Context, info dispatch.CallInfo) context.Context {
			r.add(event{hook: "start", info: info})
			return context.WithValue(ctx, markKey{}, true)
		},
		CallDone: func(ctx context.Context, info dispatch.CallInfo, o dispatch.Outcome) {
			r.add(event{hook: "done", info: info, outcome: o, marked: ctx.Value(markKey{}) == true})
		},
		ResumeRefused: func(ctx context.Context, info dispatch.CallInfo, err error) {
			r.add(event{hook: "refused", info: info, err: err})
		},
	}
}

// Every outcome kind of Run is observed: a start, then one done with the
// kind, the private error and the retry verdict, with the ctx the start
// returned.
func TestObserverOutcomeKinds(t *testing.T) {
	var rec recorder
	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) { c.Observer = rec.observer() })
	tests := []struct {
		name, tool, args string
		kind             dispatch.Kind
		retryable        bool
		errIs            func(error) bool
	}{
		{"completed", "add", `{"a":1,"b":2}`, dispatch.KindCompleted, false, func(err error) bool { return err == nil }},
		{"suspended", "refund", `{"order":"A-1"}`, dispatch.KindSuspended, false, func(err error) bool { return err == nil }},
		{"failed", "fail", `{}`, dispatch.KindFailed, false, func(err error) bool { var f *tool.Failure; return errors.As(err, &f) }},
		{"rejected", "add", `{"a":"one"}`, dispatch.KindRejected, false, func(err error) bool { var r *tool.InputRejection; return errors.As(err, &r) }},
		{"unknown tool", "nope", `{}`, dispatch.KindUnknownTool, false, func(err error) bool { return err != nil }},
		{"unknown, not replayable", "flaky", `{}`, dispatch.KindUnknown, false, func(err error) bool { return err != nil && err.Error() == "dial tcp 10.0.3.7:443: connection refused" }},
		{"unknown after a panic, replayable", "boom", `{}`, dispatch.KindUnknown, true, func(err error) bool { var p *tool.PanicError; return errors.As(err, &p) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := call("call-"+tt.name, tt.tool, tt.args)
			c.Principal = "user-7"
			o := d.Run(context.Background(), c)
			require.Equal(t, tt.kind, o.Kind)
			events := rec.take()
			require.Len(t, events, 2)
			want := dispatch.CallInfo{Op: dispatch.OpRun, CallID: c.ID, Tool: tt.tool, Arguments: tt.args, Principal: "user-7"}
			require.Equal(t, "start", events[0].hook)
			require.Equal(t, want, events[0].info)
			done := events[1]
			require.Equal(t, "done", done.hook)
			require.Equal(t, want, done.info)
			require.True(t, done.marked, "CallDone gets the ctx CallStart returned")
			require.Equal(t, tt.kind, done.outcome.Kind)
			require.Equal(t, tt.retryable, done.outcome.Retryable)
			require.True(t, tt.errIs(done.outcome.Err), "private error: %v", done.outcome.Err)
			require.Equal(t, o.Err, done.outcome.Err)
			require.Equal(t, o.Output, done.outcome.Output)
			if o.Err != nil && tt.kind != dispatch.KindUnknownTool {
				require.NotContains(t, o.Text(), o.Err.Error(), "the private error is not the model's")
			}
		})
	}
}

// The tool runs with the ctx CallStart returned, so a span started there
// is the tool's parent.
func TestObserverToolContext(t *testing.T) {
	seen := objectTool("seen", tool.EffectSafe, func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
		if ctx.Value(markKey{}) != true {
			return tool.Result{}, errors.New("the tool's ctx lacks the observer's value")
		}
		return tool.Result{Output: tool.NewTextOutput("ok")}, nil
	})
	reg := registryOf(t, seen)
	var rec recorder
	for _, timeout := range []time.Duration{0, time.Minute} {
		d := newDispatcher(t, reg, func(c *dispatch.Config) { c.Observer, c.CallTimeout = rec.observer(), timeout })
		o := d.Run(context.Background(), call("c1", "seen", `{}`))
		require.Equal(t, dispatch.KindCompleted, o.Kind, "timeout %s: %v", timeout, o.Err)
	}
}

// A suspension and its resumption are two observed calls linked by the
// checkpoint's ID; a replay of the same answer is observed as a call that
// ran nothing, and another answer as a refused replay.
func TestObserverSuspendResume(t *testing.T) {
	var calls atomic.Int32
	var rec recorder
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Observer = rec.observer() })
	cp := suspendFor(t, d, "user-7")
	events := rec.take()
	require.Len(t, events, 2)
	require.Equal(t, dispatch.KindSuspended, events[1].outcome.Kind)
	require.Equal(t, cp.ID(), events[1].outcome.Checkpoint.ID())

	resumed := dispatch.CallInfo{Op: dispatch.OpResume, CallID: "toolu_1", Tool: "refund", Arguments: `{"order":"A-1"}`, IdempotencyKey: "key-1",
		Principal: "user-7", CheckpointID: cp.ID(), AnsweredBy: "user-7"}
	o, err := d.Resume(context.Background(), cp, yes("user-7"))
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	events = rec.take()
	require.Len(t, events, 2)
	require.Equal(t, "start", events[0].hook)
	require.Equal(t, resumed, events[0].info, "the resumption names the checkpoint of the suspension")
	require.Equal(t, "done", events[1].hook)
	require.True(t, events[1].marked)
	require.Equal(t, dispatch.KindCompleted, events[1].outcome.Kind)
	require.False(t, events[1].outcome.Replayed)
	require.Equal(t, int32(2), calls.Load())

	// The same answer again: the recorded outcome, observed, nothing run.
	_, err = d.Resume(context.Background(), cp, yes("user-7"))
	require.NoError(t, err)
	events = rec.take()
	require.Len(t, events, 2)
	require.Equal(t, resumed, events[1].info)
	require.True(t, events[1].outcome.Replayed)
	require.Equal(t, int32(2), calls.Load())

	// Another answer: a refused replay.
	_, err = d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`false`), Principal: "user-7"})
	require.ErrorIs(t, err, dispatch.ErrAlreadyAnswered)
	events = rec.take()
	require.Len(t, events, 1)
	require.Equal(t, "refused", events[0].hook)
	require.Equal(t, resumed, events[0].info)
	require.Equal(t, err, events[0].err)
}

// Each refusal of Resume and Decline is observed with the error returned,
// whose sentinel says which security check refused it; nothing else is.
func TestObserverRefusals(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	var rec recorder
	reg := registry(t, nil)
	d := newDispatcher(t, reg, func(c *dispatch.Config) { c.Observer, c.Clock = rec.observer(), clock })
	// A forger holds a key of the same ID with another secret.
	forger := newDispatcher(t, reg, func(c *dispatch.Config) {
		c.Clock = clock
		c.SealKeys = []dispatch.SealKey{{ID: "k1", Secret: []byte("ffffffffffffffffffffffffffffffff")}}
	})
	type method func(context.Context, dispatch.Checkpoint, dispatch.Answer) (dispatch.Outcome, error)
	tests := []struct {
		name     string
		prepare  func(t *testing.T) dispatch.Checkpoint
		answer   dispatch.Answer
		sentinel error
	}{
		{"wrong principal", func(t *testing.T) dispatch.Checkpoint { return suspendFor(t, d, "user-7") }, yes("user-8"), dispatch.ErrWrongPrincipal},
		{"forged seal", func(t *testing.T) dispatch.Checkpoint { return suspendFor(t, forger, "user-7") }, yes("user-7"), dispatch.ErrInvalidCheckpoint},
		{"zero checkpoint", func(*testing.T) dispatch.Checkpoint { return dispatch.Checkpoint{} }, yes("user-7"), dispatch.ErrInvalidCheckpoint},
		{"expired", func(t *testing.T) dispatch.Checkpoint {
			cp := suspendFor(t, d, "user-7")
			now = cp.ExpiresAt()
			t.Cleanup(func() { now = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) })
			return cp
		}, yes("user-7"), dispatch.ErrExpired},
		{"refused replay", func(t *testing.T) dispatch.Checkpoint {
			cp := suspendFor(t, d, "user-7")
			_, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`false`), Principal: "user-7"})
			require.NoError(t, err)
			return cp
		}, yes("user-7"), dispatch.ErrAlreadyAnswered},
	}
	for _, tt := range tests {
		for _, m := range []struct {
			op  dispatch.Op
			run method
		}{{dispatch.OpResume, d.Resume}, {dispatch.OpDecline, d.Decline}} {
			t.Run(tt.name+"/"+string(m.op), func(t *testing.T) {
				cp := tt.prepare(t)
				rec.take()
				o, err := m.run(context.Background(), cp, tt.answer)
				require.ErrorIs(t, err, tt.sentinel)
				require.Zero(t, o)
				events := rec.take()
				require.Len(t, events, 1, "a refusal is observed once, and no call starts")
				require.Equal(t, "refused", events[0].hook)
				require.Equal(t, err, events[0].err)
				require.Equal(t, m.op, events[0].info.Op)
				require.Equal(t, cp.ID(), events[0].info.CheckpointID)
				require.Equal(t, tt.answer.Principal, events[0].info.AnsweredBy)
			})
		}
	}
}

// Decline and Settle are observed too.
func TestObserverDeclineSettle(t *testing.T) {
	var rec recorder
	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) { c.Observer = rec.observer() })
	cp := suspendFor(t, d, "")
	rec.take()
	o, err := d.Decline(context.Background(), cp, dispatch.Answer{Principal: "user-9"})
	require.NoError(t, err)
	events := rec.take()
	require.Len(t, events, 2)
	require.Equal(t, dispatch.OpDecline, events[0].info.Op)
	require.Equal(t, cp.ID(), events[0].info.CheckpointID)
	require.Equal(t, "user-9", events[1].info.AnsweredBy)
	require.Equal(t, o.Err, events[1].outcome.Err)
	require.Equal(t, dispatch.KindFailed, events[1].outcome.Kind)

	c := call("c1", "flaky", `{}`)
	o = d.Settle(c, "key-2", tool.EffectIdempotent, tool.Result{}, errors.New("lost"))
	events = rec.take()
	require.Len(t, events, 1, "Settle runs nothing: CallDone only")
	require.Equal(t, dispatch.CallInfo{Op: dispatch.OpSettle, CallID: "c1", Tool: "flaky", Arguments: `{}`, IdempotencyKey: "key-2"}, events[0].info)
	require.Equal(t, dispatch.KindUnknown, events[0].outcome.Kind)
	require.True(t, events[0].outcome.Retryable)
	require.Equal(t, o.Err, events[0].outcome.Err)
}

// A hook that panics changes no outcome and no error.
func TestObserverPanics(t *testing.T) {
	var calls atomic.Int32
	reg := registry(t, &calls)
	panicking := &dispatch.Observer{
		CallStart:     func(context.Context, dispatch.CallInfo) context.Context { panic("start") },
		CallDone:      func(context.Context, dispatch.CallInfo, dispatch.Outcome) { panic("done") },
		ResumeRefused: func(context.Context, dispatch.CallInfo, error) { panic("refused") },
	}
	plain := newDispatcher(t, reg)
	observed := newDispatcher(t, reg, func(c *dispatch.Config) { c.Observer = panicking })
	for _, c := range []dispatch.Call{
		call("c1", "add", `{"a":1,"b":2}`), call("c2", "fail", `{}`), call("c3", "add", `{"a":"x"}`),
		call("c4", "nope", `{}`), call("c5", "flaky", `{}`), call("c6", "refund", `{"order":"A-1"}`),
	} {
		c.IdempotencyKey = tool.IdempotencyKey("key-" + c.ID)
		want, got := plain.Run(context.Background(), c), observed.Run(context.Background(), c)
		require.Equal(t, want.Kind, got.Kind, c.Request.Name)
		require.Equal(t, want.Output, got.Output, c.Request.Name)
		require.Equal(t, want.Retryable, got.Retryable, c.Request.Name)
		require.Equal(t, want.Err, got.Err, c.Request.Name)
	}
	outcomes := observed.RunAll(context.Background(), []dispatch.Call{call("a", "add", `{"a":1,"b":1}`), call("b", "nope", `{}`)})
	require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind)
	require.Equal(t, dispatch.KindUnknownTool, outcomes[1].Kind)

	cp := suspendFor(t, observed, "user-7")
	_, err := observed.Resume(context.Background(), cp, yes("user-8"))
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal, "a panicking ResumeRefused does not change the error")
	o, err := observed.Resume(context.Background(), cp, yes("user-7"))
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	o, err = observed.Resume(context.Background(), cp, yes("user-7"))
	require.NoError(t, err)
	require.True(t, o.Replayed)
}

// RunAll's concurrent calls each get one start and one done.
func TestObserverRunAllConcurrent(t *testing.T) {
	var starts, dones atomic.Int32
	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.MaxConcurrency = 4
		c.Observer = &dispatch.Observer{
			CallStart: func(ctx context.Context, _ dispatch.CallInfo) context.Context { starts.Add(1); return ctx },
			CallDone:  func(context.Context, dispatch.CallInfo, dispatch.Outcome) { dones.Add(1) },
		}
	})
	calls := make([]dispatch.Call, 16)
	for i := range calls {
		calls[i] = call("c", "add", `{"a":1,"b":2}`)
	}
	d.RunAll(context.Background(), calls)
	require.Equal(t, int32(16), starts.Load())
	require.Equal(t, int32(16), dones.Load())
}

// An unset Observer costs Run no allocation: no Observer, and one whose
// hooks are all nil, allocate exactly what Run allocates without one.
func TestObserverUnsetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop values, so allocation counts vary")
	}
	reg := registry(t, nil)
	c := call("c1", "add", `{"a":1,"b":2}`)
	c.IdempotencyKey = "key-1"
	allocs := func(o *dispatch.Observer) float64 {
		d := newDispatcher(t, reg, func(c *dispatch.Config) { c.Observer = o })
		return testing.AllocsPerRun(200, func() { d.Run(context.Background(), c) })
	}
	none := allocs(nil)
	require.Equal(t, none, allocs(&dispatch.Observer{}), "an Observer with nil hooks")
	noop := allocs(&dispatch.Observer{
		CallStart: func(ctx context.Context, _ dispatch.CallInfo) context.Context { return ctx },
		CallDone:  func(context.Context, dispatch.CallInfo, dispatch.Outcome) {},
	})
	require.Equal(t, none, noop, "hooks that allocate nothing add nothing")
}

func BenchmarkRunObserver(b *testing.B) {
	reg := registry(b, nil)
	c := call("c1", "add", `{"a":1,"b":2}`)
	c.IdempotencyKey = "key-1"
	for _, bb := range []struct {
		name string
		o    *dispatch.Observer
	}{
		{"unset", nil},
		{"noop", &dispatch.Observer{
			CallStart: func(ctx context.Context, _ dispatch.CallInfo) context.Context { return ctx },
			CallDone:  func(context.Context, dispatch.CallInfo, dispatch.Outcome) {},
		}},
	} {
		b.Run(bb.name, func(b *testing.B) {
			d := newDispatcher(b, reg, func(c *dispatch.Config) { c.Observer = bb.o })
			b.ReportAllocs()
			for b.Loop() {
				d.Run(context.Background(), c)
			}
		})
	}
}
