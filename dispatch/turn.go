package dispatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentcontract/tool/internal/errprefix"
)

// RunAll runs the calls of one model turn, at most Config.MaxConcurrency at
// a time (0 and 1: in order, one after the other), and returns their
// outcomes in the order of calls. Each call is run as by Run: a panic or
// error in one is that call's Outcome and touches no other. A call
// abandoned at its deadline frees its place at once, so the later calls
// run (Config.MaxAbandoned bounds how many abandoned tools may still run);
// when ctx ends, RunAll returns as soon as the calls that run return or
// are abandoned, and the calls not started by then get the Outcome Run
// gives for a done ctx. calls is not retained.
//
// When the calls carry a TurnID (Call.TurnID) and one of them suspended,
// RunAll saves the turn under it, as SaveTurn does, before it returns:
// there is no step to forget before a desk lists the calls that wait. A
// turn that cannot be saved leaves each suspended Outcome's Err wrapping
// the error (ErrStore, ErrInvalidRecord, or ErrInvalidConfig for calls
// that do not all carry the same TurnID, or a dispatcher without a store
// of turns),
// logged as an error: the calls still wait, and can be resumed with
// their checkpoints, but no desk lists them.
func (d *Dispatcher) RunAll(ctx context.Context, calls []Call) []Outcome {
	outcomes := d.runAll(ctx, calls)
	id := ""
	for _, c := range calls {
		id = cmp.Or(id, c.TurnID)
	}
	if id == "" || !slices.ContainsFunc(outcomes, func(o Outcome) bool { return o.Kind == KindSuspended }) {
		return outcomes
	}
	var err error
	if slices.ContainsFunc(calls, func(c Call) bool { return c.TurnID != id }) {
		err = errprefix.Errorf("%w: the calls of one RunAll carry different TurnIDs (or some none); no turn was saved", ErrInvalidConfig)
	} else {
		err = d.SaveTurn(ctx, id, outcomes)
	}
	if err == nil {
		return outcomes
	}
	if d.logger != nil {
		d.logger.ErrorContext(ctx, "turn not saved", "turn_id", truncate(id, 80), "error", err.Error())
	}
	for i := range outcomes {
		if outcomes[i].Kind == KindSuspended {
			outcomes[i].Err = err
		}
	}
	return outcomes
}

// SaveTurn stores the outcomes of one model turn under id, in call order,
// so that the turn can be answered to the model once its suspended calls
// are resumed, in this process or after a restart (see Turn). Saving again
// under the same id replaces the turn, whatever was saved in between. The
// turn expires with the latest of its checkpoints, or the Dispatcher's
// TTL from now when it has none. The outcome of each call answered
// afterwards takes its place in the turn by itself (see Resume), and
// calls that carry a TurnID need no SaveTurn at all (see RunAll). Errors
// wrap
// ErrInvalidRecord, ErrStore, or ErrConflict when other saves kept coming
// in between.
func (d *Dispatcher) SaveTurn(ctx context.Context, id string, outcomes []Outcome) error {
	turns, err := d.turns("saves")
	if err != nil {
		return err
	}
	now := d.clock().UTC()
	t := Turn{ID: id, SavedAt: now, ExpiresAt: now.Add(d.ttl), Outcomes: make([]SavedOutcome, len(outcomes))}
	for i, o := range outcomes {
		t.Outcomes[i] = NewSavedOutcome(o)
		if o.Checkpoint != nil && o.Checkpoint.expiresAt.After(t.ExpiresAt) {
			t.ExpiresAt = o.Checkpoint.expiresAt
		}
	}
	if err := t.Validate(); err != nil {
		return err
	}
	// Saving replaces: the save is decided on the version stored now,
	// and decided again when another process saved in between.
	for range maxSaves {
		t.Version = 0
		stored, err := turns.Turn(ctx, id)
		switch {
		case err == nil:
			t.Version = stored.Version
		case !errors.Is(err, ErrNotFound):
			return storeError(fmt.Sprintf("turn %q not saved", truncate(id, 80)), err)
		}
		err = turns.SaveTurn(ctx, t)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, ErrInvalidRecord):
			return err
		case !errors.Is(err, ErrConflict):
			return storeError(fmt.Sprintf("turn %q not saved", truncate(id, 80)), err)
		}
	}
	return errprefix.Errorf("%w: turn %q not saved: %d other saves came in between", ErrConflict, truncate(id, 80), maxSaves)
}

// maxResumes bounds how many times Turn follows one call from a recorded
// outcome that suspended again to the claim of its new checkpoint.
const maxResumes = 64

// Turn reads the turn saved under id and returns its outcomes in call
// order, each suspended one replaced by the outcome recorded when its
// checkpoint was claimed (following a call that suspended again to its
// next checkpoint). A call still suspended has its suspended Outcome; the
// turn is complete when none is. Outcomes read back carry the reduced
// private errors a Store keeps. Errors wrap ErrNotFound, ErrInvalidRecord
// or ErrStore.
func (d *Dispatcher) Turn(ctx context.Context, id string) ([]Outcome, error) {
	turns, err := d.turns("reads")
	if err != nil {
		return nil, err
	}
	t, err := turns.Turn(ctx, id)
	if err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrInvalidRecord) {
			return nil, err
		}
		return nil, storeError(fmt.Sprintf("turn %q not read", truncate(id, 80)), err)
	}
	return d.outcomesOf(ctx, t)
}

// outcomesOf returns the outcomes of the saved turn t, each suspended one
// replaced by the outcome recorded when its checkpoint was claimed
// (following a call that suspended again to its next checkpoint).
func (d *Dispatcher) outcomesOf(ctx context.Context, t Turn) ([]Outcome, error) {
	outcomes := make([]Outcome, len(t.Outcomes))
	for i, saved := range t.Outcomes {
		for range maxResumes {
			if saved.Kind != KindSuspended {
				break
			}
			c, err := d.store.Claimed(ctx, saved.Checkpoint.id)
			if errors.Is(err, ErrNotFound) {
				break
			}
			if err != nil {
				return nil, storeError(fmt.Sprintf("turn %q not read", truncate(t.ID, 80)), err)
			}
			if c.Outcome == nil {
				break
			}
			saved = *c.Outcome
		}
		var err error
		if outcomes[i], err = saved.Outcome(); err != nil {
			return nil, err
		}
	}
	return outcomes, nil
}

// turns returns d's store as a TurnStore, or the error of a method that
// needs one: verb is what it does ("saves").
func (d *Dispatcher) turns(verb string) (TurnStore, error) {
	if err := d.needSuspension(verb); err != nil {
		return nil, err
	}
	turns, ok := d.store.(TurnStore)
	if !ok {
		return nil, errprefix.Errorf("%w: this Dispatcher's Store (%T) keeps no turns: it %s no turn", ErrInvalidConfig, d.store, verb)
	}
	return turns, nil
}

// WaitTurn waits until no call of the turn saved under id waits for a
// person, and returns its outcomes as Turn does. It asks the Store to
// wake it when the turn changes (TurnWaiter: each answer moves the
// turn's version on, in whichever process it was given), so the runtime
// that waits needs no loop of its own; a Store that is no TurnWaiter is
// refused with ErrInvalidConfig. A turn never saved is waited for. When
// ctx ends first, the error wraps ErrStore and ctx's error. Errors wrap
// ErrInvalidRecord or ErrStore too, as Turn's.
func (d *Dispatcher) WaitTurn(ctx context.Context, id string) ([]Outcome, error) {
	if _, err := d.turns("waits for"); err != nil {
		return nil, err
	}
	waiter, ok := d.store.(TurnWaiter)
	if !ok {
		return nil, errprefix.Errorf("%w: this dispatcher's Store (%T) cannot wait for a turn (it is no TurnWaiter)", ErrInvalidConfig, d.store)
	}
	var after int64
	for {
		t, err := waiter.WaitTurn(ctx, id, after)
		if err != nil {
			if errors.Is(err, ErrInvalidRecord) {
				return nil, err
			}
			return nil, storeError(fmt.Sprintf("waiting for turn %q", truncate(id, 80)), err)
		}
		outcomes, err := d.outcomesOf(ctx, t)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(outcomes, func(o Outcome) bool { return o.Kind == KindSuspended }) {
			return outcomes, nil
		}
		after = t.Version
	}
}
