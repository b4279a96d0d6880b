package storetest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// faultCase is one fault in the life of a call Run runs under its call
// record, injected in its first attempt.
type faultCase struct {
	name  string
	store storeFault
	tool  toolFault
	// first is the kind of the first attempt's outcome, and effect
	// whether that attempt had the call's effect.
	first  dispatch.Kind
	effect bool
	// unknown says that the call's fate is unknown after the first
	// attempt, so that a retry of a tool without a Reconciler, whose
	// Effect promises nothing, must show it as unknown; unknownElsewhere
	// says so of a retry in another process only (this one kept the
	// outcome it could not record).
	unknown, unknownElsewhere bool
}

// faultCases are the points of a call's life the suite faults.
var faultCases = []faultCase{
	{name: "BeforeTheRecord", store: claimRefused, first: dispatch.KindUnknown},
	{name: "RecordReplyLost", store: claimReplyLost, first: dispatch.KindUnknown, unknown: true},
	{name: "AfterTheRecordBeforeTheTool", store: claimOutlivesCtx, first: dispatch.KindUnknown},
	{name: "ToolPanicsBeforeTheEffect", tool: panicBefore, first: dispatch.KindUnknown, unknown: true},
	{name: "ToolPanicsAfterTheEffect", tool: panicAfter, first: dispatch.KindUnknown, effect: true, unknown: true},
	{name: "ToolAbandonedBeforeTheEffect", tool: hangBefore, first: dispatch.KindUnknown, unknown: true},
	{name: "ToolAbandonedAfterTheEffect", tool: hangAfter, first: dispatch.KindUnknown, effect: true},
	{name: "OutcomeNotRecorded", store: finishRefused, first: dispatch.KindCompleted, effect: true, unknownElsewhere: true},
	{name: "OutcomeRecordedReplyLost", store: finishReplyLost, first: dispatch.KindCompleted, effect: true},
	{name: "UnknownOutcomeNotRecorded", store: unknownRefused, tool: panicAfter, first: dispatch.KindUnknown, effect: true, unknown: true},
}

// toolKind is how a tool of the suite can be made safe to call again: by
// a Reconciler, by its Effect, or not at all.
type toolKind struct {
	name       string
	effect     tool.Effect
	reconciler bool
}

var toolKinds = []toolKind{
	{name: "Reconciled", reconciler: true},
	{name: "Idempotent", effect: tool.EffectIdempotent},
	{name: "Unmarked"},
}

// ExactlyOnce runs the fault matrix of calls Run runs under their call
// records against the stores newStore makes, through two Dispatchers on
// one store (two processes): for each point of a call's life — the
// record refused; the record written and its reply lost; the caller's
// ctx ended while the record was written (the tool never starts); the
// tool panicking, or abandoned at its deadline, before and after its
// effect; its outcome not recorded; its outcome recorded and the reply
// lost; an unknown outcome not recorded —, for a tool with a Reconciler,
// an idempotent one and one that promises nothing, it faults the first
// attempt and retries the call under the same key, in the same process
// and in the other (once the first one's lease has ended). A ledger
// counts the real effects. Every case must end with the effect had at
// most once; a tool with a Reconciler or an idempotent Effect with its
// effect had exactly once, a completed outcome and a finished record; a
// tool that promises nothing either so, or with its unknown outcome
// shown as unknown and its record unknown; and no record stranded. A
// call abandoned at its deadline is in flight, for both processes, until
// its tool returns. 60 cases.
func ExactlyOnce(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	t.Helper()
	for _, fc := range faultCases {
		for _, tk := range toolKinds {
			for _, elsewhere := range []bool{false, true} {
				where := "SameProcess"
				if elsewhere {
					where = "OtherProcess"
				}
				t.Run(fc.name+"/"+tk.name+"/"+where, func(t *testing.T) { testFault(t, newStore(t), fc, tk, elsewhere) })
			}
		}
	}
}

// fakeClock is a Config.Clock that moves only when told to.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) time() time.Time         { return time.Unix(0, c.now.Load()) }
func (c *fakeClock) advance(d time.Duration) { c.now.Add(int64(d)) }

// faultRun is one case of the fault matrix: the store and the tool that
// fault, the ledger of real effects, and two dispatchers on the store.
type faultRun struct {
	t           *testing.T
	s           dispatch.Store
	store       *faulty
	l           *ledger
	lt          *ledgerTool
	fc          faultCase
	tk          toolKind
	hangs       bool
	here, there *dispatch.Dispatcher
	clock       *fakeClock
	call        dispatch.Call
	id          string
}

// faultKey is the idempotency key every call of the matrix runs under.
const faultKey = "order-7/refund-1"

func testFault(t *testing.T, s dispatch.Store, fc faultCase, tk toolKind, elsewhere bool) {
	r := newFaultRun(t, s, fc, tk)
	r.first()
	retry := r.here
	if elsewhere {
		retry = r.there
		r.clock.advance(dispatch.DefaultLease + time.Second)
	}
	second := r.retry(retry, elsewhere)
	r.again(retry, second)
}

// newFaultRun builds the case: a ledger tool of tk's effect (and
// reconciler), faulted as fc says, and two dispatchers on s.
func newFaultRun(t *testing.T, s dispatch.Store, fc faultCase, tk toolKind) *faultRun {
	r := &faultRun{t: t, s: s, store: &faulty{Store: s}, l: newLedger(), fc: fc, tk: tk, clock: &fakeClock{}}
	r.lt = &ledgerTool{name: "refund", effect: tk.effect, l: r.l, release: make(chan struct{}), entered: make(chan struct{}, 1)}
	r.hangs = fc.tool == hangBefore || fc.tool == hangAfter
	t.Cleanup(func() {
		if r.hangs {
			select {
			case <-r.lt.release:
			default:
				close(r.lt.release)
			}
		}
	})
	b, err := tool.Bind(r.lt)
	check(t, err, "bind")
	reg, err := tool.NewRegistry(b)
	check(t, err, "registry")
	r.clock.now.Store(time.Now().UnixNano())
	config := dispatch.Config{Registry: reg, Store: r.store, Clock: r.clock.time,
		SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("storetest secret, thirty-two b!!")}}}
	if tk.reconciler {
		config.Reconcilers = map[string]dispatch.Reconciler{"refund": r.l.reconciler}
	}
	if r.hangs {
		config.CallTimeout = 10 * time.Millisecond
	}
	r.here, err = dispatch.New(config)
	check(t, err, "dispatcher")
	r.there, err = dispatch.New(config)
	check(t, err, "dispatcher")
	r.call = dispatch.Call{ID: "call_1", Request: tool.Request{Name: "refund", Arguments: `{"cents": 1250}`}, IdempotencyKey: faultKey, Principal: "user-7"}
	r.id = dispatch.RunRecordID("refund", "user-7", faultKey)
	return r
}

// effects fails the test unless the ledger holds want effects of the call.
func (r *faultRun) effects(want int, when string) {
	r.t.Helper()
	if got := r.l.count(faultKey); got != want {
		r.t.Fatalf("%s: the ledger has %d effects of the call, want %d", when, got, want)
	}
}

// effected is how many effects the faulted attempt had: one when its
// fault came after the effect.
func (r *faultRun) effected() int { return map[bool]int{true: 1, false: 0}[r.fc.effect] }

// first runs the faulted attempt.
func (r *faultRun) first() {
	t := r.t
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	r.store.cancel.Store(&cancel)
	r.store.fault.Store(int32(r.fc.store))
	r.lt.fault.Store(int32(r.fc.tool))
	first := r.here.Run(ctx, r.call)
	if first.Kind != r.fc.first {
		t.Fatalf("the faulted attempt: got %s (%v), want %s", first.Kind, first.Err, r.fc.first)
	}
	switch r.fc.store {
	case claimRefused, claimReplyLost:
		wantIs(t, first.Err, dispatch.ErrStore, "a record not written runs nothing")
	}
	r.effects(r.effected(), "after the faulted attempt")
	if !r.hangs {
		return
	}
	// The abandoned tool still runs: the call is in flight, here and in
	// the other process, and nothing runs again.
	<-r.lt.entered
	for _, d := range []*dispatch.Dispatcher{r.here, r.there} {
		o := d.Run(t.Context(), r.call)
		if o.Kind != dispatch.KindUnknown || !errors.Is(o.Err, dispatch.ErrConflict) {
			t.Fatalf("a retry while the abandoned tool runs: got %s (%v), want unknown, in flight", o.Kind, o.Err)
		}
	}
	r.effects(r.effected(), "after the retries in flight")
	close(r.lt.release)
	waitSettled(t, r.s, r.id)
}

// retry runs the call again under its key, on retry, and checks what the
// matrix promises: the effect had once, or the call shown as unknown, and
// no record stranded.
func (r *faultRun) retry(retry *dispatch.Dispatcher, elsewhere bool) dispatch.Outcome {
	t := r.t
	asked := r.l.asked.Load()
	r.call.ID = "call_1_retry"
	second := retry.Run(t.Context(), r.call)
	resolvable := r.tk.reconciler || r.tk.effect == tool.EffectIdempotent
	wantUnknown := !resolvable && (r.fc.unknown || (elsewhere && r.fc.unknownElsewhere))
	rec, err := r.s.Claimed(t.Context(), r.id)
	check(t, err, "reading the call's record")
	if wantUnknown {
		r.shownUnknown(second, rec)
	} else {
		r.completedOnce(second, rec)
	}
	if second.CallID != r.call.ID {
		t.Fatalf("the retry's outcome answers call %q, want %q", second.CallID, r.call.ID)
	}
	if r.fc.store == claimOutlivesCtx && r.l.asked.Load() != asked {
		t.Fatal("a call whose tool never started runs again without asking its Reconciler")
	}
	stranded, err := r.s.Stranded(t.Context(), dispatch.StrandedQuery{Now: r.clock.time().Add(10 * dispatch.DefaultLease)})
	check(t, err, "stranded")
	if len(stranded) != 0 {
		t.Fatalf("%d records stranded after the retry, want none: %+v", len(stranded), stranded)
	}
	return second
}

// shownUnknown checks the retry of a call whose fate is unknown and that
// nothing may run again.
func (r *faultRun) shownUnknown(second dispatch.Outcome, rec dispatch.Claim) {
	if second.Kind != dispatch.KindUnknown || second.Err == nil {
		r.t.Fatalf("the retry of a call whose fate is unknown and that nothing may run again: got %s (%v), want it shown as unknown", second.Kind, second.Err)
	}
	r.effects(r.effected(), "after the retry")
	if rec.State != dispatch.StateUnknown {
		r.t.Fatalf("the record of a call whose fate is unknown: got state %s, want unknown", rec.State)
	}
}

// completedOnce checks a retry that completed with the effect had once.
func (r *faultRun) completedOnce(second dispatch.Outcome, rec dispatch.Claim) {
	if second.Kind != dispatch.KindCompleted {
		r.t.Fatalf("the retry: got %s (%v), want completed", second.Kind, second.Err)
	}
	if text, _ := second.Output.Text(); text != "refunded under "+faultKey {
		r.t.Fatalf("the retry's output: got %q", text)
	}
	r.effects(1, "after the retry: the effect had exactly once")
	if rec.State != dispatch.StateFinished || rec.Outcome == nil || rec.Outcome.Kind != dispatch.KindCompleted {
		r.t.Fatalf("the record after the retry: got %s, want finished and completed", rec.State)
	}
}

// again runs the call once more under its key: the first recorded
// outcome, nothing run.
func (r *faultRun) again(retry *dispatch.Dispatcher, second dispatch.Outcome) {
	r.call.ID = "call_1_again"
	before := r.l.count(faultKey)
	third := retry.Run(r.t.Context(), r.call)
	if third.Kind != second.Kind || !third.Replayed {
		r.t.Fatalf("the same key once more: got %s replayed %t, want %s replayed", third.Kind, third.Replayed, second.Kind)
	}
	r.effects(before, "after the same key once more")
}

// waitSettled waits until the record id is no longer running: the tool
// an abandoned call left has returned, and its outcome is recorded. A
// record that stays running fails by the test's deadline.
func waitSettled(t *testing.T, s dispatch.CallStore, id string) {
	t.Helper()
	for {
		c, err := s.Claimed(t.Context(), id)
		check(t, err, "reading the call's record")
		if c.Stage() != dispatch.StateRunning {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal("the abandoned call's outcome was never recorded")
		case <-time.After(time.Millisecond):
		}
	}
}
