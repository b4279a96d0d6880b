package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// claimTimeout bounds a claim's write and the record of its outcome,
// which go on when the caller's ctx ends: their result must be what the
// store holds, not what the caller's cancellation left unknown.
const claimTimeout = time.Minute

// claimedCall is what Resume, Decline and Supersede claim a checkpoint
// for: the claim, and the call that runs once it is won.
type claimedCall struct {
	cp    Checkpoint
	claim Claim
	info  CallInfo
	start time.Time
	// redo says that running the call again under its key is safe when
	// its outcome was lost: the tool's Effect allows a replay, or nothing
	// runs (a decline).
	redo bool
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
	cc.claim.Nonce = nonce
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
		return d.runAndFinish(ctx, cc)
	case prior.Outcome == nil:
		return d.unrecorded(ctx, cc, *prior)
	}
	return d.replayRecorded(ctx, cc, *prior.Outcome)
}

// unrecorded answers a claim of the same answer as prior, a claim
// without an outcome:
//
//   - its call runs in this process now: an *AnsweredError that says so;
//   - it ran here, and the store did not record its outcome: the outcome
//     is recorded now, and returned as replayed;
//   - this process knows nothing of it (another process claimed it, or
//     this one forgot): when cc.redo, the call runs again under the same
//     idempotency key, here; otherwise an *AnsweredError, since the call
//     may run, have run, or have died elsewhere.
func (d *Dispatcher) unrecorded(ctx context.Context, cc claimedCall, prior Claim) (Outcome, error) {
	running, held := d.flights.lookup(cc.cp.id, prior.Nonce)
	switch {
	case running:
		return d.refuseClaim(ctx, cc.info, &AnsweredError{Claim: prior, state: answerRunning})
	case held != nil:
		if err := d.recordOutcome(ctx, cc.cp, *held); err != nil {
			return d.refuseClaim(ctx, cc.info, err)
		}
		d.flights.done(cc.cp.id, *held, true, d.clock())
		return d.replayRecorded(ctx, cc, NewSavedOutcome(*held))
	case !cc.redo:
		return d.refuseClaim(ctx, cc.info, &AnsweredError{Claim: prior, state: answerUnrecorded})
	}
	if cc.rekey != nil && prior.Edit != nil {
		again, err := cc.rekey(prior.Edit.IdempotencyKey)
		if err != nil {
			return d.refuseClaim(ctx, cc.info, err)
		}
		cc = again
	}
	if !d.flights.start(cc.cp.id, prior.Nonce, cc.cp.expiresAt) {
		return d.refuseClaim(ctx, cc.info, &AnsweredError{Claim: prior, state: answerRunning})
	}
	return d.runAndFinish(ctx, cc)
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
	err := d.recordOutcome(ctx, cc.cp, o)
	if errors.Is(err, ErrInvalidRecord) {
		readCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
		c, rerr := d.store.Claimed(readCtx, cc.cp.id)
		cancel()
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

// replayRecorded returns the outcome saved for cc's checkpoint, marked as
// replayed and observed as a call.
func (d *Dispatcher) replayRecorded(ctx context.Context, cc claimedCall, saved SavedOutcome) (Outcome, error) {
	o, err := saved.Outcome()
	if err != nil {
		return d.refuseClaim(ctx, cc.info, storeError(fmt.Sprintf("the outcome recorded for checkpoint %s", cc.cp.id), err))
	}
	o.Replayed = true
	ctx = d.callStart(ctx, cc.info)
	d.callDone(ctx, cc.info, o)
	return o, nil
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

// storeError wraps an error of the Store in ErrStore, unless it wraps it
// already.
func storeError(what string, err error) error {
	if errors.Is(err, ErrStore) {
		return errprefix.Part("%s: %w", what, err)
	}
	return errprefix.Errorf("%w: %s: %w", ErrStore, what, err)
}
