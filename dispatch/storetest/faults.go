package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// storeFault is a fault a faulty store injects once, at the first call
// of a Run's call record it applies to.
type storeFault int

const (
	noStoreFault storeFault = iota
	// claimRefused: Claim fails before it writes anything.
	claimRefused
	// claimReplyLost: Claim writes the record, then fails, as a lost
	// reply does.
	claimReplyLost
	// claimOutlivesCtx: the caller's ctx ends while Claim writes the
	// record, which is written.
	claimOutlivesCtx
	// finishRefused: Finish fails before it writes anything.
	finishRefused
	// finishReplyLost: Finish writes the outcome, then fails.
	finishReplyLost
	// unknownRefused: the Advance that records an unknown outcome fails
	// before it writes anything.
	unknownRefused
)

// errFault is the error of an injected store fault.
var errFault = errors.New("read tcp 10.0.0.5:5432: connection reset by peer")

// faulty is a Store that injects one fault (armed) into the writes of
// Run's call records (those whose AnswerSHA256 is RunSHA256), once.
type faulty struct {
	dispatch.Store
	fault  atomic.Int32 // a storeFault, reset once injected
	cancel atomic.Pointer[context.CancelFunc]
}

func (f *faulty) take(want storeFault) bool {
	return f.fault.CompareAndSwap(int32(want), int32(noStoreFault))
}

func (f *faulty) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	if c.AnswerSHA256 != dispatch.RunSHA256 {
		return f.Store.Claim(ctx, c)
	}
	switch {
	case f.take(claimRefused):
		return nil, errFault
	case f.take(claimReplyLost):
		if _, err := f.Store.Claim(ctx, c); err != nil {
			return nil, err
		}
		return nil, errFault
	case f.take(claimOutlivesCtx):
		if cancel := f.cancel.Load(); cancel != nil {
			(*cancel)()
		}
	}
	return f.Store.Claim(ctx, c)
}

func (f *faulty) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	switch {
	case f.take(finishRefused):
		return errFault
	case f.take(finishReplyLost):
		if err := f.Store.Finish(ctx, id, o); err != nil {
			return err
		}
		return errFault
	}
	return f.Store.Finish(ctx, id, o)
}

func (f *faulty) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	if s.State == dispatch.StateUnknown && f.take(unknownRefused) {
		return dispatch.Claim{}, errFault
	}
	return f.Store.Advance(ctx, id, s)
}

// toolFault is a fault a ledger tool injects once, in its first attempt.
type toolFault int

const (
	noToolFault toolFault = iota
	// panicBefore and panicAfter: the tool panics before, or after, its
	// effect.
	panicBefore
	panicAfter
	// hangBefore: the tool ignores its ctx until released, then notices
	// it ended, and returns its error without the effect.
	hangBefore
	// hangAfter: the tool has its effect, then ignores its ctx until
	// released, and completes.
	hangAfter
)

// ledger is the backend the tools of the suite act on: it counts the
// effects each key had, and the attempts that reached the effect.
type ledger struct {
	mu       sync.Mutex
	effects  map[string]int
	attempts map[string]int
	asked    atomic.Int32 // reconciliations asked
}

func newLedger() *ledger { return &ledger{effects: map[string]int{}, attempts: map[string]int{}} }

// apply has the effect of key, once only when dedupe (a backend that
// deduplicates by key, as tool.EffectIdempotent promises).
func (l *ledger) apply(key string, dedupe bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.attempts[key]++
	if dedupe && l.effects[key] > 0 {
		return
	}
	l.effects[key]++
}

func (l *ledger) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.effects[key]
}

// reconciler is the Reconciler of a ledger tool: done with the tool's
// output when the ledger has the key's effect, not done otherwise.
func (l *ledger) reconciler(ctx context.Context, r dispatch.Reconciliation) dispatch.Verdict {
	l.asked.Add(1)
	if l.count(string(r.IdempotencyKey)) > 0 {
		return dispatch.Done(refunded(r.IdempotencyKey))
	}
	return dispatch.NotDone()
}

func refunded(key tool.IdempotencyKey) tool.Output {
	return tool.NewTextOutput(fmt.Sprintf("refunded under %s", key))
}

// ledgerTool acts on a ledger, with the fault armed for its next attempt.
type ledgerTool struct {
	name    string
	effect  tool.Effect
	l       *ledger
	fault   atomic.Int32 // a toolFault, reset once injected
	release chan struct{}
	entered chan struct{} // told when a hanging attempt hangs
}

func (lt *ledgerTool) Definition() tool.Definition {
	return tool.Definition{Name: lt.name, Description: "refunds an order", Effect: lt.effect,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"cents":{"type":"integer"}},"required":["cents"]}`)}
}

func (lt *ledgerTool) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	fault := toolFault(lt.fault.Swap(int32(noToolFault)))
	key := inv.IdempotencyKey()
	switch fault {
	case panicBefore:
		panic("the refund service crashed before refunding")
	case hangBefore:
		lt.entered <- struct{}{}
		<-lt.release
		return tool.Result{}, ctx.Err()
	}
	lt.l.apply(string(key), lt.effect == tool.EffectIdempotent)
	switch fault {
	case panicAfter:
		panic("the refund service crashed after refunding")
	case hangAfter:
		lt.entered <- struct{}{}
		<-lt.release
	}
	return tool.Result{Output: refunded(key)}, nil
}
