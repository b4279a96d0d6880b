package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// claimedCall is what Resume, Decline and Supersede claim a checkpoint
// for: the claim, and the call that runs once it is won.
type claimedCall struct {
	cp    Checkpoint
	claim Claim
	info  CallInfo
	start time.Time
	// effect and key are the tool's Effect and the key the call runs
	// under: what the outcome of a call recorded unknown carries.
	effect tool.Effect
	key    tool.IdempotencyKey
	// runsTool is false for a decline: nothing is started, so the record
	// goes from claimed to finished.
	runsTool bool
	// redo says that running the call again under its key is safe when
	// the process that ran it was lost: the tool's Effect allows a
	// replay, or nothing runs (a decline).
	redo bool
	// binding and arguments (canonical JSON) are the tool's and the
	// call's, for the Reconciler of a call whose outcome was lost; zero
	// for a decline.
	binding   tool.Binding
	arguments []byte
	// rekey, when set, returns the claimed call made anew under the
	// idempotency key an earlier claim of the same edit ran with (an
	// edited call draws a new key on every Supersede): the call runs
	// again under that key, or not at all.
	rekey func(key tool.IdempotencyKey) (claimedCall, error)
	// run runs the call and returns its Outcome. Its ctx is detached
	// from the caller's: a claimed call is not cancelled with the request
	// that claimed it.
	run func(ctx context.Context) Outcome
}

// claimAndRun claims cc's checkpoint and, when the claim is won, runs
// its call and records its outcome. A claim of the same answer made
// before returns the outcome recorded then, or, when none is, what
// unrecorded decides.
func (d *Dispatcher) claimAndRun(ctx context.Context, cc claimedCall) (Outcome, error) {
	if err := ctx.Err(); err != nil {
		return d.refuseClaim(ctx, cc.info, errprefix.Errorf("%w: checkpoint %s not claimed: %w", ErrStore, cc.cp.id, err))
	}
	nonce, err := newCheckpointID()
	if err != nil {
		return d.refuseClaim(ctx, cc.info, errprefix.Errorf("%w: checkpoint %s not claimed: drawing its nonce: %w", ErrStore, cc.cp.id, err))
	}
	owner, err := d.holder()
	if err != nil {
		return d.refuseClaim(ctx, cc.info, errprefix.Errorf("%w: checkpoint %s not claimed: drawing the name of this dispatcher's leases: %w", ErrStore, cc.cp.id, err))
	}
	cc.claim.Nonce = nonce
	cc.claim.State = StateClaimed
	if cc.runsTool {
		// The call starts at once: claimed and started in one write.
		cc.claim.State, cc.claim.Attempt = StateRunning, 1
	}
	cc.claim.LeaseOwner, cc.claim.LeaseExpires = owner, d.clock().UTC().Add(d.lease)
	// The flight starts before the claim is written, so that another
	// request of this process that finds the claim without an outcome
	// knows that its call is about to run here.
	d.flights.start(cc.cp.id, nonce, cc.cp.expiresAt)
	claimCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	prior, err := d.store.Claim(claimCtx, cc.claim)
	cancel()
	if err != nil || prior != nil {
		d.flights.drop(cc.cp.id, nonce)
	}
	var answered *AnsweredError
	switch {
	case errors.As(err, &answered):
		return d.refuseClaim(ctx, cc.info, answered)
	case err != nil:
		return d.refuseClaim(ctx, cc.info, storeError(fmt.Sprintf("checkpoint %s not claimed", cc.cp.id), err))
	case prior == nil:
		d.flights.own(cc.cp.id, nonce, cc.cp.expiresAt)
		won := cc.claim
		won.Version = 1
		return d.startAndRun(ctx, cc, won, cc.runsTool)
	case prior.Outcome == nil, prior.Stage() == StateUnknown && d.reconcilerOf(cc) != nil:
		return d.unrecorded(ctx, cc, *prior, 0)
	}
	return d.replayRecorded(ctx, cc, *prior)
}

// reconcilerOf returns the Reconciler of cc's tool, nil when it has none
// (or cc runs no tool).
func (d *Dispatcher) reconcilerOf(cc claimedCall) Reconciler {
	if !cc.runsTool {
		return nil
	}
	return d.runs.reconcilers[cc.cp.request.Name]
}

// unrecorded answers a claim of the same answer as prior, a record
// without an outcome, or recorded unknown when its tool has a
// Reconciler:
//
//   - its call runs in this process now: an *AnsweredError that says so;
//   - it ran here, and the store did not record its outcome: the outcome
//     is recorded now, and returned as replayed;
//   - another process holds it (its lease has not ended): an
//     *AnsweredError that says until when;
//   - nobody holds it: recovery. A call that never started (claimed) is
//     started now; one that was running, or recorded unknown, is
//     reconciled (recoverRun).
//
// round counts the times it decided anew (see busyClaim).
func (d *Dispatcher) unrecorded(ctx context.Context, cc claimedCall, prior Claim, round int) (Outcome, error) {
	if prior.Stage() != StateUnknown {
		running, held := d.flights.lookup(cc.cp.id, prior.Nonce)
		switch {
		case running:
			return d.busyClaim(ctx, cc, prior, round)
		case held != nil:
			if err := d.recordOutcome(ctx, cc.cp, *held); err != nil {
				return d.refuseClaim(ctx, cc.info, err)
			}
			d.flights.done(cc.cp.id, *held, true, d.clock())
			return d.replayRecorded(ctx, cc, prior.withOutcome(NewSavedOutcome(*held)))
		case prior.LeaseOwner != d.leaseOwner() && !prior.Stranded(d.clock()):
			// Held elsewhere. A record this Dispatcher holds with no flight
			// here ran, or was about to run, here and no longer does.
			return d.refuseClaim(ctx, cc.info, &AnsweredError{Claim: prior, state: answerHeld})
		}
	}
	if !d.flights.start(cc.cp.id, prior.Nonce, cc.cp.expiresAt) {
		return d.busyClaim(ctx, cc, prior, round)
	}
	if prior.Stage() == StateRunning || prior.Stage() == StateUnknown {
		return d.recoverRun(ctx, cc, prior)
	}
	cc, err := d.rekeyed(cc, prior)
	if err != nil {
		return d.refuseClaim(ctx, cc.info, err)
	}
	return d.startAndRun(ctx, cc, prior, false)
}

// busyClaim answers a claim of the same answer as prior, a record with a
// flight in this process. While that flight's call runs, an
// *AnsweredError says so; once it has returned, the claim waits for its
// outcome to be recorded and is answered from the record as it is then.
func (d *Dispatcher) busyClaim(ctx context.Context, cc claimedCall, prior Claim, round int) (Outcome, error) {
	if round+1 < maxRounds && d.settled(ctx, cc.cp.id) {
		if now, err := d.claimed(ctx, cc.cp.id); err == nil {
			if now.Outcome == nil || now.Stage() == StateUnknown && d.reconcilerOf(cc) != nil {
				return d.unrecorded(ctx, cc, now, round+1)
			}
			return d.replayRecorded(ctx, cc, now)
		}
	}
	return d.refuseClaim(ctx, cc.info, &AnsweredError{Claim: prior, state: answerRunning})
}

// rekeyed returns cc made anew under the key of prior's edit, when cc is
// an edited call and prior an earlier claim of the same edit (see
// claimedCall.rekey), and cc otherwise. On error, the flight of prior
// is dropped.
func (d *Dispatcher) rekeyed(cc claimedCall, prior Claim) (claimedCall, error) {
	if cc.rekey == nil || prior.Edit == nil {
		return cc, nil
	}
	again, err := cc.rekey(prior.Edit.IdempotencyKey)
	if err != nil {
		d.flights.drop(cc.cp.id, prior.Nonce)
		return cc, err
	}
	return again, nil
}

// recoverRun recovers the call of prior, cc's record, whose outcome is
// unknown: left running by a process that no longer holds it, or
// recorded unknown. The tool's Reconciler, when it has one, is asked
// first: done finishes the record with its output (reconciledAnswer);
// not done runs the call again under the same key. Cannot tell, or no
// Reconciler, runs it again when cc.redo (a replay under its key is
// safe), and otherwise records it unknown (a running record) or returns
// the unknown outcome recorded. The caller started the flight of prior.
func (d *Dispatcher) recoverRun(ctx context.Context, cc claimedCall, prior Claim) (Outcome, error) {
	r := d.reconcilerOf(cc)
	if r == nil && !cc.redo {
		return d.recordUnknown(ctx, cc, prior, "the tool's effect does not allow running it again")
	}
	cc, err := d.rekeyed(cc, prior)
	if err != nil {
		return d.refuseClaim(ctx, cc.info, err)
	}
	if r == nil {
		return d.startAndRun(ctx, cc, prior, false)
	}
	key := cc.key
	if prior.Edit != nil {
		key = prior.Edit.IdempotencyKey
	}
	v := ask(context.WithoutCancel(ctx), r, cc.binding.Contract(), Reconciliation{
		Tool: cc.cp.request.Name, IdempotencyKey: key, Principal: cc.cp.principal,
		Arguments: append([]byte(nil), cc.arguments...), Record: prior,
	})
	cc.info.Reconciled = v.Kind()
	switch v.Kind() {
	case VerdictDone:
		return d.reconciledAnswer(ctx, cc, prior, key, v.output)
	case VerdictNotDone:
		return d.startAndRun(ctx, cc, prior, false)
	}
	why := "the tool's Reconciler could not tell whether it ran (" + cannotTellWhy(v) + "), and its effect does not allow running it again"
	if d.logger != nil {
		d.logger.WarnContext(ctx, "tool call not reconciled", "tool", truncate(cc.cp.request.Name, 128), "call_id", cc.cp.callID, "checkpoint_id", cc.cp.id, "error", cannotTellWhy(v))
	}
	switch {
	case cc.redo:
		return d.startAndRun(ctx, cc, prior, false)
	case prior.Stage() == StateRunning:
		return d.recordUnknown(ctx, cc, prior, why)
	}
	d.flights.drop(cc.cp.id, prior.Nonce)
	return d.replayRecorded(ctx, cc, prior)
}

// reconciledAnswer finishes prior, cc's record, with the completed
// outcome of output, which the tool's Reconciler said the call (under
// key) produced, marked as reconciled, and returns that outcome, as
// replayed: nothing ran. The outcome takes its place in its turn, as an
// answered call's does.
func (d *Dispatcher) reconciledAnswer(ctx context.Context, cc claimedCall, prior Claim, key tool.IdempotencyKey, output tool.Output) (Outcome, error) {
	o := Outcome{CallID: cc.cp.callID, Tool: cc.cp.request.Name, Kind: KindCompleted, Output: output, Effect: cc.effect, IdempotencyKey: key, Replayed: true}
	o = withEditNote(o, prior.Edit)
	o.Duration = time.Since(cc.start)
	saved := NewSavedOutcome(o)
	_, err := d.advance(ctx, cc.cp.id, Step{Version: prior.Version, State: StateFinished, Attempt: prior.Attempt, Outcome: &saved, Reconciled: true})
	d.flights.drop(cc.cp.id, prior.Nonce)
	if err != nil {
		return d.lostStart(ctx, cc, err)
	}
	ctx = d.callStart(ctx, cc.info)
	d.log(ctx, o)
	d.callDone(ctx, cc.info, o)
	err = d.placeInTurn(ctx, prior, o)
	d.answeredCall(ctx, cc, prior, o)
	return o, err
}

// startAndRun starts the call of rec, the record of cc's checkpoint,
// under this Dispatcher's lease, runs it and records its outcome. The
// record moves to running first, unless started says it was written
// running (a decline, which starts nothing, skips that too), and the
// lease is renewed while the call runs. When the record cannot be
// moved, nothing runs.
func (d *Dispatcher) startAndRun(ctx context.Context, cc claimedCall, rec Claim, started bool) (Outcome, error) {
	if cc.runsTool {
		if !started {
			next, err := d.advance(ctx, cc.cp.id, d.held(rec.Version, rec.Attempt+1))
			if err != nil {
				d.flights.drop(cc.cp.id, rec.Nonce)
				return d.lostStart(ctx, cc, err)
			}
			rec = next
		}
		defer d.hold(cc.cp.id, rec)()
	}
	if rec.Version == 1 {
		// Claimed (or started) in this very write: read the record the
		// store placed in its turn, so that the outcome takes its place
		// there. A store that keeps no turns is not asked.
		rec = d.placed(ctx, rec)
	}
	o, err := d.runAndFinish(ctx, cc)
	if err == nil && !o.Replayed {
		err = d.placeInTurn(ctx, rec, o)
		d.answeredCall(ctx, cc, rec, o)
	}
	return o, err
}

// placed returns rec, a record this Dispatcher just wrote, with the turn
// and position the store placed it in (Claim.TurnID, CallIndex), read
// back when the store keeps turns; rec as it is otherwise, or when it
// cannot be read.
func (d *Dispatcher) placed(ctx context.Context, rec Claim) Claim {
	if _, ok := d.store.(TurnStore); !ok {
		return rec
	}
	if now, err := d.claimed(ctx, rec.CheckpointID); err == nil {
		rec.TurnID, rec.CallIndex = now.TurnID, now.CallIndex
	}
	return rec
}

// answeredCall tells the Observer that the answered call of rec, whose
// outcome was recorded, ended in o.
func (d *Dispatcher) answeredCall(ctx context.Context, cc claimedCall, rec Claim, o Outcome) {
	info := cc.info
	info.TurnID = rec.TurnID
	d.answered(ctx, info, o)
}

// lostStart ends a call that could not be started because its record
// could not be moved to running: another process moved it first (it is
// then told as that process's claim), or the store failed.
func (d *Dispatcher) lostStart(ctx context.Context, cc claimedCall, err error) (Outcome, error) {
	if errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalidRecord) {
		now, rerr := d.claimed(ctx, cc.cp.id)
		if rerr == nil && now.Outcome != nil {
			return d.replayRecorded(ctx, cc, now)
		}
		if rerr == nil {
			return d.refuseClaim(ctx, cc.info, &AnsweredError{Claim: now, state: answerHeld})
		}
	}
	return d.refuseClaim(ctx, cc.info, storeError(fmt.Sprintf("checkpoint %s claimed but its call not started (a resend of the same answer starts it once the claim's hold ends)", cc.cp.id), err))
}

// recordUnknown records the call of prior, which was running in a
// process that no longer holds it, as unknown: why says what keeps it
// from running again (its tool's effect, and its Reconciler when it has
// one), and whether it ran is not known. The unknown outcome is
// returned, as the call's.
func (d *Dispatcher) recordUnknown(ctx context.Context, cc claimedCall, prior Claim, why string) (Outcome, error) {
	o := Outcome{CallID: cc.cp.callID, Tool: cc.cp.request.Name, Effect: cc.effect, IdempotencyKey: cc.key}
	if prior.Edit != nil {
		o.IdempotencyKey = prior.Edit.IdempotencyKey
	}
	o = unknown(o, errprefix.Part("the call was started (attempt %d) by a process that no longer holds it, which recorded no outcome; %s, so whether it ran is not known: ask the backend or a person",
		prior.Attempt, why))
	o.Duration = time.Since(cc.start)
	saved := NewSavedOutcome(o)
	_, err := d.advance(ctx, cc.cp.id, Step{Version: prior.Version, State: StateUnknown, Attempt: prior.Attempt, Outcome: &saved})
	d.flights.drop(cc.cp.id, prior.Nonce)
	if err != nil {
		return d.lostStart(ctx, cc, err)
	}
	ctx = d.callStart(ctx, cc.info)
	d.log(ctx, o)
	d.callDone(ctx, cc.info, o)
	err = d.placeInTurn(ctx, prior, o)
	d.answeredCall(ctx, cc, prior, o)
	return o, err
}

// claimed reads the record of checkpoint id, detached from the caller's
// cancellation and bounded by claimTimeout.
func (d *Dispatcher) claimed(ctx context.Context, id string) (Claim, error) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	return d.store.Claimed(rctx, id)
}

// advance moves the record of checkpoint id by s, detached from the
// caller's cancellation and bounded by claimTimeout.
func (d *Dispatcher) advance(ctx context.Context, id string, s Step) (Claim, error) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	return d.store.Advance(actx, id, s)
}

// runAndFinish runs the call of a claimed checkpoint, observed from
// cc.info and logged, its duration counted from cc.start, and records its
// outcome as the claim's. The call's flight ends with it: recorded, or
// held for a resend to record. When another outcome was recorded
// meanwhile (a process that ran it again under the same key), that one is
// returned, as replayed.
func (d *Dispatcher) runAndFinish(ctx context.Context, cc claimedCall) (Outcome, error) {
	ctx = d.callStart(ctx, cc.info)
	o := cc.run(context.WithoutCancel(ctx))
	o.Duration = time.Since(cc.start)
	d.log(ctx, o)
	d.callDone(ctx, cc.info, o)
	d.flights.settle(cc.cp.id)
	err := d.recordOutcome(ctx, cc.cp, o)
	if errors.Is(err, ErrInvalidRecord) {
		c, rerr := d.claimed(ctx, cc.cp.id)
		if rerr == nil && c.Outcome != nil {
			if recorded, rerr := c.Outcome.Outcome(); rerr == nil {
				d.flights.done(cc.cp.id, recorded, true, d.clock())
				recorded.Replayed = true
				return recorded, nil
			}
		}
	}
	d.flights.done(cc.cp.id, o, err == nil, d.clock())
	return o, err
}

// replayRecorded returns the outcome recorded in rec, the record of cc's
// checkpoint, marked as replayed and observed as a call. A call that
// suspended again takes its place in its turn, if it has not yet.
func (d *Dispatcher) replayRecorded(ctx context.Context, cc claimedCall, rec Claim) (Outcome, error) {
	o, err := rec.Outcome.Outcome()
	if err != nil {
		return d.refuseClaim(ctx, cc.info, storeError(fmt.Sprintf("the outcome recorded for checkpoint %s", cc.cp.id), err))
	}
	o.Replayed = true
	ctx = d.callStart(ctx, cc.info)
	d.callDone(ctx, cc.info, o)
	return o, d.placeInTurn(ctx, rec, o)
}

// refuseClaim ends a resume, decline or supersede that runs nothing, with err.
func (d *Dispatcher) refuseClaim(ctx context.Context, info CallInfo, err error) (Outcome, error) {
	d.resumeRefused(ctx, info, err)
	return Outcome{}, err
}

// recordOutcome records o as the outcome of the claim of cp. The caller's
// cancellation does not stop it: the call ran, and its outcome must be
// recorded whether or not the caller still waits; claimTimeout bounds it.
func (d *Dispatcher) recordOutcome(ctx context.Context, cp Checkpoint, o Outcome) error {
	finishCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	if err := d.store.Finish(finishCtx, cp.id, NewSavedOutcome(o)); err != nil {
		err = storeError(fmt.Sprintf("the call ran (outcome %s) but its outcome was not recorded for checkpoint %s", o.Kind, cp.id), err)
		if d.logger != nil {
			d.logger.ErrorContext(ctx, "tool call outcome not recorded", "tool", truncate(o.Tool, 128), "call_id", o.CallID, "kind", string(o.Kind), "error", err.Error())
		}
		return err
	}
	return nil
}
