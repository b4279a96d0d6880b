package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Reconciler finds out what became of an earlier attempt of a call whose
// outcome is unknown — a timeout, a panic, a lost reply, a process that
// died while the tool ran —, before a Dispatcher runs the call again. It
// asks the system the tool acts on, by the call's idempotency key
// (Reconciliation.IdempotencyKey), and says one of three verdicts:
//
//   - Done(output): the call had its effect, and output is what the
//     call produces (what the tool would have returned). The call
//     record is finished with that completed outcome, marked as
//     reconciled (Claim.Reconciled), and nothing runs again.
//   - NotDone(): the call had no effect, and running it is safe: it runs
//     again, as its next attempt, under the same key.
//   - CannotTell(err): it cannot be told (the backend is down, say). A
//     tool whose Effect makes a replay under its key safe runs again;
//     any other's outcome stays unknown, and is returned as unknown.
//
// Register reconcilers by tool name in Config.Reconcilers. A Dispatcher
// asks one before every run of a call whose earlier attempt's outcome is
// unknown: in Run, when the same key of the same tool and principal finds
// such a record, and in Resume when it recovers a call a lost process
// left running (see "Exactly once" in the package documentation). It is
// not asked for a call whose earlier attempt provably never started its
// tool, nor for one that finished.
//
// A Reconciler must honour ctx: it is given at most ReconcileTimeout,
// after which its verdict is CannotTell and it is left to return on its
// own. A panic is recovered, and is CannotTell too. It must be safe for
// concurrent use, and must not keep r's Arguments. Two processes may ask
// about the same call at once; what they then do is decided by one
// compare-and-set write of the record, so one acts and the other sees
// what it did.
type Reconciler func(ctx context.Context, r Reconciliation) Verdict

// ReconcileTimeout bounds how long a Dispatcher waits for a Reconciler's
// verdict: one that has not returned by then cannot tell.
const ReconcileTimeout = 30 * time.Second

// Reconciliation is what a Reconciler is asked about: one call, and the
// record of its earlier attempt. It is a value made for each question;
// Arguments is a copy the Reconciler may read but must not keep.
type Reconciliation struct {
	// Tool is the tool's name.
	Tool string
	// IdempotencyKey is the key every attempt of the call ran under: the
	// name by which a backend that deduplicates knows the call.
	IdempotencyKey tool.IdempotencyKey
	// Principal is the call's principal (Call.Principal, or the
	// checkpoint's), empty when it named none.
	Principal string
	// Arguments are the call's admitted arguments, as canonical JSON
	// (compact, members sorted by name, strings and numbers as written).
	Arguments json.RawMessage
	// Record is the call record of the earlier attempt: its State
	// (StateRunning for one a lost process left, StateUnknown for one
	// whose outcome was recorded unknown), Attempt, ClaimedAt, the
	// lease that ended, and the unknown outcome when recorded.
	Record Claim
}

// VerdictKind names a Reconciler's verdict; see Reconciler.
type VerdictKind string

// The verdicts of a Reconciler.
const (
	// VerdictDone: the call had its effect; its output is known.
	VerdictDone VerdictKind = "done"
	// VerdictNotDone: the call had no effect; it may run.
	VerdictNotDone VerdictKind = "not_done"
	// VerdictCannotTell: whether it had its effect cannot be told.
	VerdictCannotTell VerdictKind = "cannot_tell"
)

// Verdict is what a Reconciler says of an earlier attempt of a call:
// made by Done, NotDone or CannotTell. The zero Verdict is CannotTell,
// without a reason. A Verdict is a value; Done copies its output.
type Verdict struct {
	kind   VerdictKind
	output tool.Output
	err    error
}

// Done is the verdict of a call that had its effect: output is what the
// call produces, as the tool would have returned it. It must be a valid
// Output that satisfies the tool's output schema, if it declares one
// (tool.Contract.ValidateResult): one that does not is taken as
// CannotTell. output is copied.
func Done(output tool.Output) Verdict {
	return Verdict{kind: VerdictDone, output: output.Clone()}
}

// NotDone is the verdict of a call that had no effect: running it again,
// under its key, is safe.
func NotDone() Verdict { return Verdict{kind: VerdictNotDone} }

// CannotTell is the verdict of a call whose fate cannot be told; err says
// why, for logs (it goes into the unknown Outcome's private Err, never to
// the model, and is not stored). err may be nil.
func CannotTell(err error) Verdict { return Verdict{kind: VerdictCannotTell, err: err} }

// Kind returns v's kind: VerdictCannotTell for the zero Verdict.
func (v Verdict) Kind() VerdictKind {
	if v.kind == "" {
		return VerdictCannotTell
	}
	return v.kind
}

// ask asks r about q, within ReconcileTimeout of ctx, and returns its
// verdict: CannotTell, with the reason, when r panics, does not return
// in time, or says Done with an output contract does not accept. r runs
// on a goroutine of its own, so that one that ignores ctx is left
// behind.
func ask(ctx context.Context, r Reconciler, contract tool.Contract, q Reconciliation) Verdict {
	ctx, cancel := context.WithTimeout(ctx, ReconcileTimeout)
	defer cancel()
	said := make(chan Verdict, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				said <- CannotTell(&tool.PanicError{Value: v, Stack: debug.Stack()})
			}
		}()
		said <- r(ctx, q)
	}()
	var v Verdict
	select {
	case v = <-said:
	case <-ctx.Done():
		return CannotTell(errprefix.Part("the reconciler of %s gave no verdict: %w", quoteName(q.Tool), context.Cause(ctx)))
	}
	switch v.Kind() {
	case VerdictDone:
		if err := contract.ValidateResult(tool.Result{Output: v.output}); err != nil {
			return CannotTell(errprefix.Part("the reconciler of %s said done with an output the tool's contract refuses: %w", quoteName(q.Tool), err))
		}
	case VerdictNotDone:
	default:
		v = CannotTell(v.err)
	}
	return v
}

// cannotTellWhy is the text of the reason v, a CannotTell verdict, gives.
func cannotTellWhy(v Verdict) string {
	var panicked *tool.PanicError
	switch {
	case v.err == nil:
		return "it gave no reason"
	case errors.As(v.err, &panicked):
		return fmt.Sprintf("it panicked: %v", panicked.Value)
	}
	return errprefix.Body(v.err)
}
