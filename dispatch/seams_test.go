package dispatch_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// gated is a tool that asks for approval and, once answered, counts its
// run, waits for gate (when not nil), and completes with an Output of
// size bytes (at least a few). It records the keys and contexts its
// resumed runs saw.
type gated struct {
	name   string
	effect tool.Effect
	gate   chan struct{}
	size   int

	runs    atomic.Int32
	mu      sync.Mutex
	keys    []tool.IdempotencyKey
	ctxErrs []error
	entered chan struct{}
}

func (g *gated) Definition() tool.Definition {
	return tool.Definition{Name: g.name, InputSchema: json.RawMessage(`{"type":"object"}`), Effect: g.effect}
}

func (g *gated) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	if _, resumed := inv.Continuation(); !resumed {
		schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
		if err != nil {
			return tool.Result{}, err
		}
		ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Go?"`), ResponseSchema: schema})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &ir}, nil
	}
	g.runs.Add(1)
	if g.entered != nil {
		g.entered <- struct{}{}
	}
	if g.gate != nil {
		<-g.gate
	}
	g.mu.Lock()
	g.keys = append(g.keys, inv.IdempotencyKey())
	g.ctxErrs = append(g.ctxErrs, ctx.Err())
	g.mu.Unlock()
	return tool.Result{Output: tool.NewTextOutput("done" + strings.Repeat(".", max(g.size-4, 0)))}, nil
}

// gatedDispatcher returns a Dispatcher on store whose registry holds g,
// its Config edited by edit.
func gatedDispatcher(t *testing.T, store dispatch.Store, g *gated, edit ...func(*dispatch.Config)) *dispatch.Dispatcher {
	t.Helper()
	reg := &tool.Registry{}
	b, err := tool.Bind(g)
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	return newDispatcher(t, reg, append([]func(*dispatch.Config){func(c *dispatch.Config) { c.Store = store }}, edit...)...)
}

// clock is a Config.Clock that moves only when told to.
type clock struct{ now atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.now.Store(time.Now().UnixNano())
	return c
}

func (c *clock) time() time.Time             { return time.Unix(0, c.now.Load()) }
func (c *clock) advance(d time.Duration)     { c.now.Add(int64(d)) }
func (c *clock) config(cfg *dispatch.Config) { cfg.Clock = c.time }

// suspended runs a new call of g and returns its checkpoint, sealed with
// the key d opens. The call runs on a dispatcher of its own, whose store
// is not d's: the tests that use it fault d's store on the resume's
// claim, not on the call record of the run that asked.
func suspended(t *testing.T, d *dispatch.Dispatcher, g *gated) dispatch.Checkpoint {
	t.Helper()
	_ = d
	o := gatedDispatcher(t, memoryStore(t), g).Run(context.Background(), dispatch.Call{ID: "c", Request: tool.Request{Name: g.name, Arguments: `{}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	return *o.Checkpoint
}

// cancelOnClaim cancels the request's context while the claim is being
// written, as a closed tab or a dropped connection does.
type cancelOnClaim struct {
	dispatch.Store
	cancel context.CancelFunc
}

func (s *cancelOnClaim) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	s.cancel()
	return s.Store.Claim(ctx, c)
}

// A request whose context ends while its claim is written does not
// strand the claim: the claim is written whatever the request does, the
// approved call runs on a context of its own, and its outcome is recorded.
func TestResumeOutlivesItsRequest(t *testing.T) {
	g := &gated{name: "refund", gate: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	store := &cancelOnClaim{Store: memoryStore(t), cancel: cancel}
	d := gatedDispatcher(t, store, g)
	cp := suspended(t, d, g)

	close(g.gate)
	o, err := d.Resume(ctx, cp, yes(""))
	require.NoError(t, err, "the claim is made although the request ended while it was written")
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, int32(1), g.runs.Load())
	require.Equal(t, []error{nil}, g.ctxErrs, "the approved call is not cancelled with its request")
	c, err := store.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.NotNil(t, c.Outcome)
	require.Len(t, c.Nonce, 32)
}

// A resend of the same answer while the call runs is told so, and gets
// no Outcome; once the outcome is recorded, a resend gets it. A double
// submit runs the tool once.
func TestResendWhileRunning(t *testing.T) {
	g := &gated{name: "refund", gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	d := gatedDispatcher(t, memoryStore(t), g)
	cp := suspended(t, d, g)

	first := make(chan error, 1)
	go func() {
		_, err := d.Resume(context.Background(), cp, yes(""))
		first <- err
	}()
	<-g.entered
	o, err := d.Resume(context.Background(), cp, yes(""))
	var answered *dispatch.AnsweredError
	require.ErrorAs(t, err, &answered)
	require.ErrorContains(t, err, "its call is still running")
	require.Zero(t, o)
	_, ok := answered.Outcome()
	require.False(t, ok)

	close(g.gate)
	require.NoError(t, <-first)
	o, err = d.Resume(context.Background(), cp, yes(""))
	require.NoError(t, err)
	require.True(t, o.Replayed)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, int32(1), g.runs.Load())
}

// An outcome the store failed to record is not lost while its process
// lives: a resend there records it late. Another process is told that
// the call is held until its lease ends; after that, it recovers the
// call: a tool whose effect makes a replay under its key safe runs
// again under that key, and one that promises nothing is recorded
// unknown, never run again nor reported completed.
func TestLostOutcome(t *testing.T) {
	for _, tt := range []struct {
		effect tool.Effect
		redo   bool
	}{{tool.EffectIdempotent, true}, {tool.EffectSafe, true}, {"", false}} {
		t.Run(string(cmp.Or(tt.effect, "unmarked")), func(t *testing.T) {
			shared := memoryStore(t)
			store := &failingStore{Store: shared}
			g := &gated{name: "refund", effect: tt.effect}
			clock := newClock()
			d := gatedDispatcher(t, store, g, clock.config)
			cp := suspended(t, d, g)

			o, err := d.Resume(context.Background(), cp, yes(""))
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.Equal(t, dispatch.KindCompleted, o.Kind)
			require.Equal(t, int32(1), g.runs.Load())

			// Another process, on the same store, that never ran it, while
			// the first one's lease holds.
			other := gatedDispatcher(t, shared, g, clock.config)
			o, err = other.Resume(context.Background(), cp, yes(""))
			var answered *dispatch.AnsweredError
			require.ErrorAs(t, err, &answered)
			require.ErrorContains(t, err, "another process holds its call until")
			require.Zero(t, o)
			require.Equal(t, int32(1), g.runs.Load())

			clock.advance(dispatch.DefaultLease + time.Second)
			o, err = other.Resume(context.Background(), cp, yes(""))
			require.NoError(t, err)
			c, cerr := shared.Claimed(context.Background(), cp.ID())
			require.NoError(t, cerr)
			if !tt.redo {
				require.Equal(t, dispatch.KindUnknown, o.Kind)
				require.ErrorContains(t, o.Err, "whether it ran is not known")
				require.Equal(t, int32(1), g.runs.Load(), "a tool that promises nothing is never run again silently")
				require.Equal(t, dispatch.StateUnknown, c.State)
				require.Equal(t, dispatch.KindUnknown, c.Outcome.Kind)
				// Every resend now learns the same.
				store.finishOK.Store(true)
				o, err = d.Resume(context.Background(), cp, yes(""))
				require.NoError(t, err)
				require.True(t, o.Replayed)
				require.Equal(t, dispatch.KindUnknown, o.Kind)
				require.Equal(t, int32(1), g.runs.Load())
				return
			}
			require.Equal(t, dispatch.KindCompleted, o.Kind)
			require.Equal(t, int32(2), g.runs.Load(), "run again under its key")
			require.Equal(t, g.keys[0], g.keys[1], "the same idempotency key")
			require.Equal(t, dispatch.StateFinished, c.State)
			require.Equal(t, 2, c.Attempt)
			// The first process's resend now finds the recorded outcome.
			store.finishOK.Store(true)
			o, err = d.Resume(context.Background(), cp, yes(""))
			require.NoError(t, err)
			require.True(t, o.Replayed)
			require.Equal(t, int32(2), g.runs.Load())
		})
	}
}

// A declined call whose outcome was lost is declined again on a resend,
// in any process once the first one's lease ended: nothing runs either
// way.
func TestLostDecline(t *testing.T) {
	shared := memoryStore(t)
	store := &failingStore{Store: shared}
	g := &gated{name: "refund"}
	clock := newClock()
	d := gatedDispatcher(t, store, g, clock.config)
	cp := suspended(t, d, g)
	_, err := d.Decline(context.Background(), cp, dispatch.Answer{})
	require.ErrorIs(t, err, dispatch.ErrStore)
	clock.advance(dispatch.DefaultLease + time.Second)
	o, err := gatedDispatcher(t, shared, g, clock.config).Decline(context.Background(), cp, dispatch.Answer{})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindFailed, o.Kind)
	require.Zero(t, g.runs.Load())
}

// A MemoryStore never runs a call whose outcome it cannot keep, when
// the outcome fits the room a claim holds (a sixty-fourth of the
// store): 120 approvals of a tool whose outcomes fill the store (the
// default store with outcomes of 768 KiB, under its 1 MiB of room,
// scaled down 64 times to spare the race detector) either run and are
// recorded, or are refused before they run.
func TestMemoryStoreKeepsWhatItRuns(t *testing.T) {
	g := &gated{name: "export", size: 768 << 10 / 64}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: dispatch.DefaultMemoryStoreBytes / 64})
	require.NoError(t, err)
	d := gatedDispatcher(t, store, g)
	ran, refused := 0, 0
	for range 120 {
		cp := suspended(t, d, g)
		before := g.runs.Load()
		o, err := d.Resume(context.Background(), cp, yes(""))
		if err != nil {
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.ErrorContains(t, err, "not claimed", "a failure after the run would lose its outcome")
			require.Zero(t, o)
			require.Equal(t, before, g.runs.Load(), "a refused claim runs nothing")
			refused++
			continue
		}
		require.Equal(t, dispatch.KindCompleted, o.Kind)
		c, err := store.Claimed(context.Background(), cp.ID())
		require.NoError(t, err)
		require.NotNil(t, c.Outcome, "every call that ran has its outcome recorded")
		ran++
	}
	require.Equal(t, int32(ran), g.runs.Load())
	require.Positive(t, ran)
	require.Positive(t, refused, "the store fills up")
	t.Logf("%d approvals ran and were recorded, %d were refused before running", ran, refused)
}

// A double submit whose first request is alive runs the tool once, even
// for a tool whose effect would allow a replay: 40 submits of one
// approval, one run.
func TestDoubleSubmitRunsOnce(t *testing.T) {
	g := &gated{name: "refund", effect: tool.EffectIdempotent, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	d := gatedDispatcher(t, memoryStore(t), g)
	cp := suspended(t, d, g)
	const submits = 40
	var wg sync.WaitGroup
	var ok, conflicts atomic.Int32
	for range submits {
		wg.Go(func() {
			_, err := d.Resume(context.Background(), cp, yes(""))
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, dispatch.ErrAlreadyAnswered):
				conflicts.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	<-g.entered
	close(g.gate)
	wg.Wait()
	require.Equal(t, int32(1), g.runs.Load())
	require.Equal(t, int32(submits), ok.Load()+conflicts.Load())
}

// An edited call whose outcome was lost runs again, in another process,
// under the key the first edit ran with, not a new one.
func TestLostEditRunsUnderItsKey(t *testing.T) {
	shared := memoryStore(t)
	store := &failingStore{Store: shared}
	g := &gated{name: "refund", effect: tool.EffectIdempotent}
	clock := newClock()
	d := gatedDispatcher(t, store, g, clock.config)
	cp := suspended(t, d, g)
	edit := dispatch.Edit{Arguments: `{"amount":1}`}
	first, err := d.Supersede(context.Background(), cp, edit)
	require.ErrorIs(t, err, dispatch.ErrStore)
	require.NotEmpty(t, first.IdempotencyKey)

	clock.advance(dispatch.DefaultLease + time.Second)
	again, err := gatedDispatcher(t, shared, g, clock.config).Supersede(context.Background(), cp, edit)
	require.NoError(t, err)
	require.Equal(t, first.IdempotencyKey, again.IdempotencyKey, "the edited call ran again under its first key")
	c, err := shared.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.NotNil(t, c.Outcome)
	require.Equal(t, first.IdempotencyKey, c.Edit.IdempotencyKey)
}

// slowClaim records the first claim, then holds its reply until release
// is closed, as a database whose reply is slow does.
type slowClaim struct {
	dispatch.Store
	recorded chan struct{}
	release  chan struct{}
	calls    atomic.Int32
}

func (s *slowClaim) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	prior, err := s.Store.Claim(ctx, c)
	if s.calls.Add(1) == 1 {
		close(s.recorded)
		<-s.release
	}
	return prior, err
}

// A second submit that finds the first's claim recorded before the first
// has heard back from the store is told the call runs: even a tool whose
// effect allows a replay runs once.
func TestSubmitDuringTheFirstsClaimRunsOnce(t *testing.T) {
	store := &slowClaim{Store: memoryStore(t), recorded: make(chan struct{}), release: make(chan struct{})}
	g := &gated{name: "refund", effect: tool.EffectIdempotent}
	d := gatedDispatcher(t, store, g)
	cp := suspended(t, d, g)
	first := make(chan error, 1)
	go func() {
		_, err := d.Resume(context.Background(), cp, yes(""))
		first <- err
	}()
	<-store.recorded
	_, err := d.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrAlreadyAnswered)
	require.ErrorContains(t, err, "its call is still running")
	close(store.release)
	require.NoError(t, <-first)
	require.Equal(t, int32(1), g.runs.Load())
}
