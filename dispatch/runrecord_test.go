package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// counting is a Store that counts the round trips of its CallStore.
type counting struct {
	dispatch.Store
	claims, advances, finishes, reads atomic.Int32
}

func (c *counting) Claim(ctx context.Context, cl dispatch.Claim) (*dispatch.Claim, error) {
	c.claims.Add(1)
	return c.Store.Claim(ctx, cl)
}

func (c *counting) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	c.advances.Add(1)
	return c.Store.Advance(ctx, id, s)
}

func (c *counting) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	c.finishes.Add(1)
	return c.Store.Finish(ctx, id, o)
}

func (c *counting) Claimed(ctx context.Context, id string) (dispatch.Claim, error) {
	c.reads.Add(1)
	return c.Store.Claimed(ctx, id)
}

func (c *counting) total() int32 {
	return c.claims.Load() + c.advances.Load() + c.finishes.Load() + c.reads.Load()
}

// countingRegistry is a registry of tools that count their runs: refund
// (unmarked), charge (idempotent) and lookup (safe).
func countingRegistry(t testing.TB, runs *atomic.Int32) *tool.Registry {
	t.Helper()
	counted := func(name string, effect tool.Effect) toolFunc {
		return objectTool(name, effect, func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
			runs.Add(1)
			return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("%s under %s", name, inv.IdempotencyKey()))}, nil
		})
	}
	reg := &tool.Registry{}
	for _, tf := range []toolFunc{counted("refund", ""), counted("charge", tool.EffectIdempotent), counted("lookup", tool.EffectSafe)} {
		b, err := tool.Bind(tf)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	return reg
}

func keyed(id, name, args string, key tool.IdempotencyKey) dispatch.Call {
	c := call(id, name, args)
	c.IdempotencyKey, c.Principal = key, "user-7"
	return c
}

// The cost of the promise, with no fault: an effectful call writes its
// record and its outcome, two round trips; a safe call writes nothing;
// a dispatcher of a registry alone has no store.
func TestRunRecordRoundTrips(t *testing.T) {
	var runs atomic.Int32
	store := &counting{Store: memoryStore(t)}
	d := newDispatcher(t, countingRegistry(t, &runs), func(c *dispatch.Config) { c.Store = store })
	for _, tc := range []struct {
		name string
		want int32
	}{{"refund", 2}, {"charge", 2}, {"lookup", 0}} {
		before := store.total()
		o := d.Run(t.Context(), keyed("c", tc.name, `{}`, "k-"+tool.IdempotencyKey(tc.name)))
		require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
		require.Equal(t, tc.want, store.total()-before, "%s: store round trips", tc.name)
	}
	require.Equal(t, int32(2), store.claims.Load())
	require.Equal(t, int32(2), store.finishes.Load())
	require.Zero(t, store.advances.Load(), "intent and start in one write")
}

// The same key of the same tool and principal returns the first
// recorded outcome, as replayed, answering the new call's ID; nothing
// runs. Another principal's call, or another tool's, under the same key
// is a call of its own. A dispatcher without a store promises nothing:
// the same key runs again.
func TestSameKeyReturnsTheFirstOutcome(t *testing.T) {
	var runs atomic.Int32
	d := newDispatcher(t, countingRegistry(t, &runs))
	first := d.Run(t.Context(), keyed("c1", "refund", `{"order":"A-7"}`, "k1"))
	require.Equal(t, dispatch.KindCompleted, first.Kind)
	require.False(t, first.Replayed)
	again := d.Run(t.Context(), keyed("c2", "refund", ` { "order" : "A-7" } `, "k1"))
	require.Equal(t, dispatch.KindCompleted, again.Kind)
	require.True(t, again.Replayed, "the first recorded outcome")
	require.Equal(t, "c2", again.CallID, "it answers the call that asked")
	require.Equal(t, first.Text(), again.Text())
	require.Equal(t, int32(1), runs.Load(), "the same arguments, written otherwise, are the same call")

	other := keyed("c3", "refund", `{"order":"A-7"}`, "k1")
	other.Principal = "user-8"
	require.False(t, d.Run(t.Context(), other).Replayed, "another principal's key is its own")
	require.False(t, d.Run(t.Context(), keyed("c4", "charge", `{"order":"A-7"}`, "k1")).Replayed, "another tool's key is its own")
	require.Equal(t, int32(3), runs.Load())

	alone, err := dispatch.New(dispatch.Config{Registry: countingRegistry(t, &runs)})
	require.NoError(t, err)
	for range 2 {
		require.False(t, alone.Run(t.Context(), keyed("c", "refund", `{}`, "k1")).Replayed)
	}
	require.Equal(t, int32(5), runs.Load(), "a dispatcher without a store promises no exactly-once")
}

// A key used for another call (other arguments, or another contract of
// the tool) runs nothing: its outcome is unknown, says so, and is not
// retryable.
func TestSameKeyOtherCall(t *testing.T) {
	var runs atomic.Int32
	store := memoryStore(t)
	d := newDispatcher(t, countingRegistry(t, &runs), func(c *dispatch.Config) { c.Store = store })
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), keyed("c1", "refund", `{"order":"A-7"}`, "k1")).Kind)
	o := d.Run(t.Context(), keyed("c2", "refund", `{"order":"A-8"}`, "k1"))
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.ErrorIs(t, o.Err, dispatch.ErrConflict)
	require.ErrorContains(t, o.Err, `idempotency key "k1" of tool "refund" names another call (with other arguments): nothing ran`)
	require.False(t, o.Retryable)
	require.Equal(t, int32(1), runs.Load())

	// The same name with another input schema is another contract.
	changed := objectTool("refund", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		runs.Add(1)
		return tool.Result{Output: tool.NewTextOutput("x")}, nil
	})
	changed.def.InputSchema = json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}}}`)
	reg := registryOf(t, changed)
	o = newDispatcher(t, reg, func(c *dispatch.Config) { c.Store = store }).Run(t.Context(), keyed("c3", "refund", `{"order":"A-7"}`, "k1"))
	require.ErrorIs(t, o.Err, dispatch.ErrConflict)
	require.ErrorContains(t, o.Err, "another contract")
	require.Equal(t, int32(1), runs.Load())
}

// A call that suspended is recorded with its checkpoint: the same key
// returns the suspended outcome, with the same checkpoint, and does not
// ask the person twice.
func TestSameKeySuspended(t *testing.T) {
	var runs atomic.Int32
	d := newDispatcher(t, registry(t, &runs))
	first := d.Run(t.Context(), keyed("c1", "refund", `{"order":"A-1"}`, "k1"))
	require.Equal(t, dispatch.KindSuspended, first.Kind)
	again := d.Run(t.Context(), keyed("c2", "refund", `{"order":"A-1"}`, "k1"))
	require.Equal(t, dispatch.KindSuspended, again.Kind)
	require.True(t, again.Replayed)
	require.Equal(t, first.Checkpoint.ID(), again.Checkpoint.ID())
	require.Equal(t, int32(1), runs.Load())
	o, err := d.Resume(t.Context(), *again.Checkpoint, yes("user-7"))
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
}

// A store that refuses the record, or is full, runs nothing: the outcome
// is unknown and says so.
func TestRunRecordRefused(t *testing.T) {
	var runs atomic.Int32
	store := &failingStore{Store: memoryStore(t), failClaim: true}
	refuse := &refusingRuns{failingStore: store}
	d := newDispatcher(t, countingRegistry(t, &runs), func(c *dispatch.Config) { c.Store = refuse })
	o := d.Run(t.Context(), keyed("c", "refund", `{}`, "k1"))
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.ErrorIs(t, o.Err, dispatch.ErrStore)
	require.ErrorContains(t, o.Err, `the record of the call under idempotency key "k1" was not written, so the call did not run`)
	require.Zero(t, runs.Load())

	full, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: 512})
	require.NoError(t, err)
	d = newDispatcher(t, countingRegistry(t, &runs), func(c *dispatch.Config) { c.Store = full })
	o = d.Run(t.Context(), keyed("c", "refund", `{}`, "k1"))
	require.ErrorIs(t, o.Err, dispatch.ErrStore)
	require.ErrorContains(t, o.Err, "the memory store is full")
	require.Zero(t, runs.Load(), "a full store runs nothing")
}

// refusingRuns refuses the records of Run too.
type refusingRuns struct{ *failingStore }

func (r *refusingRuns) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	return nil, errors.New("dial tcp 10.0.0.5:5432: connection refused")
}

// A call of the same key while the first runs, in this process or in
// another that holds its lease, runs nothing: its outcome is unknown,
// in flight, and says until when.
func TestSameKeyInFlight(t *testing.T) {
	gate, entered := make(chan struct{}), make(chan struct{}, 1)
	var runs atomic.Int32
	slow := objectTool("refund", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		runs.Add(1)
		entered <- struct{}{}
		<-gate
		return tool.Result{Output: tool.NewTextOutput("refunded")}, nil
	})
	reg := registryOf(t, slow)
	store := memoryStore(t)
	here := newDispatcher(t, reg, func(c *dispatch.Config) { c.Store = store })
	there := newDispatcher(t, reg, func(c *dispatch.Config) { c.Store = store })
	done := make(chan dispatch.Outcome, 1)
	go func() { done <- here.Run(context.Background(), keyed("c1", "refund", `{}`, "k1")) }()
	<-entered
	o := here.Run(t.Context(), keyed("c2", "refund", `{}`, "k1"))
	require.ErrorIs(t, o.Err, dispatch.ErrConflict)
	require.ErrorContains(t, o.Err, "is in flight (attempt 1, in this process)")
	o = there.Run(t.Context(), keyed("c3", "refund", `{}`, "k1"))
	require.ErrorIs(t, o.Err, dispatch.ErrConflict)
	require.ErrorContains(t, o.Err, "in another process, which holds it until")
	close(gate)
	require.Equal(t, dispatch.KindCompleted, (<-done).Kind)
	require.True(t, there.Run(t.Context(), keyed("c4", "refund", `{}`, "k1")).Replayed)
	require.Equal(t, int32(1), runs.Load())
}

// pausing is a Store that holds the first write of a call's outcome (a
// Finish, or an Advance to StateUnknown) once armed until released, just
// before or just after it lands, and says when it holds it.
type pausing struct {
	dispatch.Store
	after           bool
	armed           atomic.Bool
	paused, release chan struct{}
	once            sync.Once
}

func newPausing(t *testing.T, after bool) *pausing {
	p := &pausing{Store: memoryStore(t), after: after, paused: make(chan struct{}), release: make(chan struct{})}
	p.armed.Store(true)
	return p
}

func (p *pausing) hold(write func() error) error {
	first := false
	if p.armed.Load() {
		p.once.Do(func() { first = true })
	}
	if !first {
		return write()
	}
	if p.after {
		err := write()
		p.paused <- struct{}{}
		<-p.release
		return err
	}
	p.paused <- struct{}{}
	<-p.release
	return write()
}

func (p *pausing) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	return p.hold(func() error { return p.Store.Finish(ctx, id, o) })
}

func (p *pausing) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	if s.State != dispatch.StateUnknown {
		return p.Store.Advance(ctx, id, s)
	}
	var c dispatch.Claim
	err := p.hold(func() error {
		var err error
		c, err = p.Store.Advance(ctx, id, s)
		return err
	})
	return c, err
}

// A call of the same key that comes, in the same process, after the
// first call's tool has returned but before that process has done
// recording its outcome (the write not yet landed, or landed and not yet
// heard of) is not called in flight: it is answered from the record,
// waiting for it while it is not yet written. A completed outcome is
// replayed; an unknown one of an idempotent tool runs its next attempt.
func TestSameKeyWhileItsOutcomeIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		panics   bool
		after    bool
		waits    bool // a finished record answers at once
		replayed bool
		runs     int32
	}{
		{name: "CompletedBeforeTheWrite", waits: true, replayed: true, runs: 1},
		{name: "CompletedAfterTheWrite", after: true, replayed: true, runs: 1},
		{name: "UnknownBeforeTheWrite", panics: true, waits: true, runs: 2},
		{name: "UnknownAfterTheWrite", panics: true, after: true, waits: true, runs: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int32
			charge := objectTool("charge", tool.EffectIdempotent, func(context.Context, tool.Invocation) (tool.Result, error) {
				if runs.Add(1) == 1 && tc.panics {
					panic("the card network hung up")
				}
				return tool.Result{Output: tool.NewTextOutput("charged")}, nil
			})
			reg := registryOf(t, charge)
			store := newPausing(t, tc.after)
			here := newDispatcher(t, reg, func(c *dispatch.Config) { c.Store = store })
			first, second := make(chan dispatch.Outcome, 1), make(chan dispatch.Outcome, 1)
			go func() { first <- here.Run(context.Background(), keyed("c1", "charge", `{}`, "k1")) }()
			<-store.paused
			go func() { second <- here.Run(context.Background(), keyed("c2", "charge", `{}`, "k1")) }()
			if tc.waits {
				select {
				case o := <-second:
					t.Fatalf("the second call was answered while the first one's outcome was being recorded: %s (%v)", o.Kind, o.Err)
				case <-time.After(50 * time.Millisecond):
				}
			}
			close(store.release)
			o := <-second
			require.Equal(t, dispatch.KindCompleted, o.Kind, "%v", o.Err)
			require.Equal(t, tc.replayed, o.Replayed)
			require.Equal(t, "c2", o.CallID)
			require.Equal(t, tc.runs, runs.Load())
			<-first
		})
	}
}

// A Reconciler is given the call and its record; what it says is what
// happens, and the Observer sees its verdict. A panic, a zero Verdict,
// an output the tool's contract refuses and a Reconciler that does not
// return before the call's ctx ends (it ignores its ctx) cannot tell:
// the call of a tool whose effect promises nothing stays unknown, and
// runs nothing.
func TestReconcilerVerdicts(t *testing.T) {
	ignored := make(chan struct{})
	t.Cleanup(func() { close(ignored) })
	for _, tc := range []struct {
		name    string
		verdict func(context.Context) dispatch.Verdict
		cancels bool // the caller's ctx ends while the Reconciler works
		kind    dispatch.Kind
		runs    int32
		seen    dispatch.VerdictKind
		why     string
	}{
		{"done", func(context.Context) dispatch.Verdict { return dispatch.Done(refundedA7()) }, false, dispatch.KindCompleted, 0, dispatch.VerdictDone, ""},
		{"not done", func(context.Context) dispatch.Verdict { return dispatch.NotDone() }, false, dispatch.KindCompleted, 1, dispatch.VerdictNotDone, ""},
		{"cannot tell", func(context.Context) dispatch.Verdict { return dispatch.CannotTell(errors.New("bank down")) }, false, dispatch.KindUnknown, 0, dispatch.VerdictCannotTell, "its Reconciler could not tell: bank down"},
		{"the zero verdict", func(context.Context) dispatch.Verdict { return dispatch.Verdict{} }, false, dispatch.KindUnknown, 0, dispatch.VerdictCannotTell, "it gave no reason"},
		{"a panic", func(context.Context) dispatch.Verdict { panic("nil map") }, false, dispatch.KindUnknown, 0, dispatch.VerdictCannotTell, "it panicked: nil map"},
		{"an output the contract refuses", func(context.Context) dispatch.Verdict {
			return dispatch.Done(tool.Output{Details: json.RawMessage(`{"cents":"x"}`)})
		}, false, dispatch.KindUnknown, 0, dispatch.VerdictCannotTell, "an output the tool's contract refuses"},
		{"no verdict in time", func(context.Context) dispatch.Verdict { <-ignored; return dispatch.NotDone() }, true, dispatch.KindUnknown, 0, dispatch.VerdictCannotTell, "gave no verdict"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var runs atomic.Int32
			var crash atomic.Bool
			crash.Store(true)
			refund := objectTool("refund", "", func(context.Context, tool.Invocation) (tool.Result, error) {
				if crash.Swap(false) {
					panic("the bank's reply was lost")
				}
				runs.Add(1)
				return tool.Result{Output: refundedA7()}, nil
			})
			refund.def.OutputSchema = json.RawMessage(`{"type":"object","properties":{"cents":{"type":"integer"}}}`)
			reg := registryOf(t, refund)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			var asked []dispatch.Reconciliation
			var seen []dispatch.VerdictKind
			var mu sync.Mutex
			d := newDispatcher(t, reg, func(c *dispatch.Config) {
				c.Reconcilers = map[string]dispatch.Reconciler{"refund": func(ctx context.Context, r dispatch.Reconciliation) dispatch.Verdict {
					mu.Lock()
					asked = append(asked, r)
					mu.Unlock()
					if tc.cancels {
						cancel()
					}
					return tc.verdict(ctx)
				}}
				c.Observer = &dispatch.Observer{CallDone: func(_ context.Context, info dispatch.CallInfo, _ dispatch.Outcome) {
					mu.Lock()
					seen = append(seen, info.Reconciled)
					mu.Unlock()
				}}
			})
			first := d.Run(t.Context(), keyed("c1", "refund", `{"order": "A-7", "cents": 1250}`, "k1"))
			require.Equal(t, dispatch.KindUnknown, first.Kind)
			o := d.Run(ctx, keyed("c2", "refund", `{"order": "A-7", "cents": 1250}`, "k1"))
			require.Equal(t, tc.kind, o.Kind, "%v", o.Err)
			require.Equal(t, tc.runs, runs.Load())
			if tc.why != "" {
				require.ErrorContains(t, o.Err, tc.why)
				require.ErrorContains(t, o.Err, "nothing ran")
			}
			mu.Lock()
			defer mu.Unlock()
			require.Len(t, asked, 1)
			r := asked[0]
			require.Equal(t, "refund", r.Tool)
			require.Equal(t, tool.IdempotencyKey("k1"), r.IdempotencyKey)
			require.Equal(t, "user-7", r.Principal)
			require.JSONEq(t, `{"cents":1250,"order":"A-7"}`, string(r.Arguments))
			require.Equal(t, `{"cents":1250,"order":"A-7"}`, string(r.Arguments), "canonical")
			require.Equal(t, dispatch.StateUnknown, r.Record.State)
			require.Equal(t, 1, r.Record.Attempt)
			require.Equal(t, []dispatch.VerdictKind{"", tc.seen}, seen)
			if tc.seen == dispatch.VerdictDone {
				require.True(t, o.Replayed, "nothing ran")
				require.Equal(t, "refunded A-7", o.Text())
			}
		})
	}
}

// refundedA7 is the output of the refund of order A-7.
func refundedA7() tool.Output {
	return tool.Output{Content: []tool.Block{tool.NewTextBlock("refunded A-7")}, Details: json.RawMessage(`{"cents":1250}`)}
}

// A Reconciler's Done is recorded: the record is finished, marked as
// reconciled, and the same key replays it without asking again.
func TestReconciledRecord(t *testing.T) {
	var crash atomic.Bool
	crash.Store(true)
	refund := objectTool("refund", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		if crash.Swap(false) {
			panic("lost")
		}
		return tool.Result{Output: tool.NewTextOutput("refunded")}, nil
	})
	reg := registryOf(t, refund)
	var asked atomic.Int32
	store := memoryStore(t)
	d := newDispatcher(t, reg, func(c *dispatch.Config) {
		c.Store = store
		c.Reconcilers = map[string]dispatch.Reconciler{"refund": func(context.Context, dispatch.Reconciliation) dispatch.Verdict {
			asked.Add(1)
			return dispatch.Done(tool.NewTextOutput("refunded, found by the reconciler"))
		}}
	})
	d.Run(t.Context(), keyed("c1", "refund", `{}`, "k1"))
	for range 3 {
		o := d.Run(t.Context(), keyed("c2", "refund", `{}`, "k1"))
		require.Equal(t, "refunded, found by the reconciler", o.Text())
		require.True(t, o.Replayed)
	}
	require.Equal(t, int32(1), asked.Load(), "asked once, then recorded")
	rec, err := store.Claimed(t.Context(), dispatch.RunRecordID("refund", "user-7", "k1"))
	require.NoError(t, err)
	require.Equal(t, dispatch.StateFinished, rec.State)
	require.True(t, rec.Reconciled)
	require.Equal(t, dispatch.RunSHA256, rec.AnswerSHA256)
	require.Equal(t, dispatch.KindCompleted, rec.Outcome.Kind)
}

// The record of a call Run ran: what it holds, and for how long.
func TestRunRecordFields(t *testing.T) {
	var runs atomic.Int32
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	store := memoryStore(t)
	d := newDispatcher(t, countingRegistry(t, &runs), func(c *dispatch.Config) {
		c.Store, c.Clock, c.KeyTTL = store, func() time.Time { return now }, time.Hour
	})
	long := strings.Repeat("é", 700)
	c := keyed(long, "refund", `{"order":"A-7"}`, tool.IdempotencyKey(long))
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), c).Kind)
	rec, err := store.Claimed(t.Context(), dispatch.RunRecordID("refund", "user-7", tool.IdempotencyKey(long)))
	require.NoError(t, err)
	require.Equal(t, dispatch.RunSHA256, rec.AnswerSHA256)
	require.Equal(t, "user-7", rec.SealedPrincipal)
	require.Empty(t, rec.Principal, "nobody answered")
	require.Equal(t, now, rec.ClaimedAt)
	require.Equal(t, now.Add(time.Hour), rec.ExpiresAt, "the key deduplicates for KeyTTL")
	require.Equal(t, 1, rec.Attempt)
	require.Equal(t, dispatch.StateFinished, rec.State)
	require.Len(t, rec.ContractSHA256, 64)
	require.Len(t, rec.ArgumentsSHA256, 64)
	require.LessOrEqual(t, len(rec.CallID), 1024, "a long call ID is kept cut")
	require.LessOrEqual(t, len(rec.IdempotencyKey), 1024)

	n, err := store.DeleteExpired(t.Context(), now.Add(time.Hour+dispatch.MaxClockSkew+time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.False(t, d.Run(t.Context(), c).Replayed, "once its record expired, the key runs a new call")
	require.Equal(t, int32(2), runs.Load())
}

// RunRecordID is 32 hex digits of the tool, principal and key, each
// kept apart from the next.
func TestRunRecordID(t *testing.T) {
	id := dispatch.RunRecordID("refund", "user-7", "k1")
	require.Regexp(t, `^[0-9a-f]{32}$`, id)
	require.Equal(t, id, dispatch.RunRecordID("refund", "user-7", "k1"))
	for _, other := range []string{
		dispatch.RunRecordID("refund", "user-8", "k1"),
		dispatch.RunRecordID("charge", "user-7", "k1"),
		dispatch.RunRecordID("refund", "user-7", "k2"),
		dispatch.RunRecordID("refund", "user-7k", "1"),
		dispatch.RunRecordID("refunduser-7", "", "k1"),
	} {
		require.NotEqual(t, id, other)
	}
}

// New refuses reconcilers it cannot use, and a KeyTTL out of range.
func TestRunRecordConfig(t *testing.T) {
	reg := registry(t, nil)
	keys := []dispatch.SealKey{{ID: "k1", Secret: secret}}
	ok := func(context.Context, dispatch.Reconciliation) dispatch.Verdict { return dispatch.NotDone() }
	for _, tc := range []struct {
		name   string
		config dispatch.Config
		want   string
	}{
		{"reconcilers without a store", dispatch.Config{Registry: reg, Reconcilers: map[string]dispatch.Reconciler{"refund": ok}},
			"tool: invalid dispatch config: Reconcilers without a Store: a dispatcher of a registry alone keeps no call records, so it has nothing to reconcile and promises no exactly-once"},
		{"a nil reconciler", dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: keys, Reconcilers: map[string]dispatch.Reconciler{"refund": nil}},
			`tool: invalid dispatch config: the reconciler of "refund" is nil`},
		{"an empty name", dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: keys, Reconcilers: map[string]dispatch.Reconciler{"": ok}},
			"tool: invalid dispatch config: Reconcilers has a reconciler for the empty tool name"},
		{"a negative KeyTTL", dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: keys, KeyTTL: -time.Second},
			"tool: invalid dispatch config: KeyTTL is -1s, want 0 (the default) to MaxKeyTTL (876000h0m0s)"},
		{"a KeyTTL too long", dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: keys, KeyTTL: dispatch.MaxKeyTTL + 1},
			"tool: invalid dispatch config: KeyTTL is 876000h0m0.000000001s, want 0 (the default) to MaxKeyTTL (876000h0m0s)"},
	} {
		_, err := dispatch.New(tc.config)
		require.ErrorIs(t, err, dispatch.ErrInvalidConfig, tc.name)
		require.EqualError(t, err, tc.want, tc.name)
	}
	m := map[string]dispatch.Reconciler{"refund": ok}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: memoryStore(t), SealKeys: keys, Reconcilers: m})
	require.NoError(t, err)
	delete(m, "refund")
	require.NotNil(t, d, "New copied the map")
}

// A resumed call left running by a process that died is reconciled
// before it runs again: done finishes it without running it, not done
// runs it again, cannot tell records it unknown (its tool promises
// nothing), and a resend of the same answer then asks again.
func TestResumeRecoveryReconciles(t *testing.T) {
	for _, tc := range []struct {
		name    string
		verdict []dispatch.Verdict
		kinds   []dispatch.Kind
		runs    int32
		state   dispatch.State
	}{
		{"done", []dispatch.Verdict{dispatch.Done(tool.NewTextOutput("refunded"))}, []dispatch.Kind{dispatch.KindCompleted}, 0, dispatch.StateFinished},
		{"not done", []dispatch.Verdict{dispatch.NotDone()}, []dispatch.Kind{dispatch.KindCompleted}, 1, dispatch.StateFinished},
		{"cannot tell, then done", []dispatch.Verdict{dispatch.CannotTell(nil), dispatch.Done(tool.NewTextOutput("refunded"))},
			[]dispatch.Kind{dispatch.KindUnknown, dispatch.KindCompleted}, 0, dispatch.StateFinished},
		{"cannot tell", []dispatch.Verdict{dispatch.CannotTell(nil), dispatch.CannotTell(nil)}, []dispatch.Kind{dispatch.KindUnknown, dispatch.KindUnknown}, 0, dispatch.StateUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := memoryStore(t)
			store := &dying{Store: shared}
			stuck := &gated{name: "refund", gate: make(chan struct{}), entered: make(chan struct{}, 1)}
			clock := newClock()
			a := gatedDispatcher(t, store, stuck, clock.config)
			cp := suspended(t, a, stuck)
			left := make(chan error, 1)
			go func() {
				_, err := a.Resume(context.Background(), cp, yes(""))
				left <- err
			}()
			t.Cleanup(func() {
				close(stuck.gate)
				require.ErrorIs(t, <-left, dispatch.ErrStore)
			})
			<-stuck.entered
			clock.advance(dispatch.DefaultLease + time.Second)

			var asked atomic.Int32
			fresh := &gated{name: "refund"}
			b := gatedDispatcher(t, shared, fresh, clock.config, func(c *dispatch.Config) {
				c.Reconcilers = map[string]dispatch.Reconciler{"refund": func(_ context.Context, r dispatch.Reconciliation) dispatch.Verdict {
					n := asked.Add(1)
					require.Equal(t, cp.ID(), r.Record.CheckpointID)
					return tc.verdict[n-1]
				}}
			})
			for i, want := range tc.kinds {
				o, err := b.Resume(context.Background(), cp, yes(""))
				require.NoError(t, err)
				require.Equal(t, want, o.Kind, "resend %d: %v", i, o.Err)
			}
			require.Equal(t, int32(len(tc.verdict)), asked.Load())
			require.Equal(t, tc.runs, fresh.runs.Load())
			c, err := shared.Claimed(context.Background(), cp.ID())
			require.NoError(t, err)
			require.Equal(t, tc.state, c.State)
			require.Equal(t, tc.runs == 0 && tc.state == dispatch.StateFinished, c.Reconciled)
		})
	}
}

// A resumed call that starts at once is claimed and started in one
// write: a claim written running, then its outcome.
func TestResumeClaimsRunning(t *testing.T) {
	store := &counting{Store: memoryStore(t)}
	g := &gated{name: "refund"}
	d := gatedDispatcher(t, store, g)
	cp := suspended(t, d, g)
	o, err := d.Resume(t.Context(), cp, yes(""))
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, int32(1), store.claims.Load())
	require.Zero(t, store.advances.Load(), "no step to running: the claim was written running")
	require.Equal(t, int32(1), store.finishes.Load())
	c, err := store.Claimed(t.Context(), cp.ID())
	require.NoError(t, err)
	require.Equal(t, 1, c.Attempt)
	require.Equal(t, int64(2), c.Version, "written running, then finished")
}
