package dispatch

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcontract/tool/internal/errprefix"
)

// SaveTurn stores the outcomes of one model turn under id, in call order,
// so that the turn can be answered to the model once its suspended calls
// are resumed, in this process or after a restart (see Turn). Saving again
// under the same id replaces the turn, whatever was saved in between. The
// turn expires with the latest of its checkpoints, or the Dispatcher's
// TTL from now when it has none. A call that a resume suspends again
// takes its new place in the turn by itself (see Resume). Errors wrap
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
				return nil, storeError(fmt.Sprintf("turn %q not read", truncate(id, 80)), err)
			}
			if c.Outcome == nil {
				break
			}
			saved = *c.Outcome
		}
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
