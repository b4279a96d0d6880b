package dispatch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/agentcontract/tool/internal/errprefix"
)

// held is the step that holds a record at version as running attempt
// attempt under this Dispatcher's lease, for a lease from now.
func (d *Dispatcher) held(version int64, attempt int) Step {
	return Step{Version: version, State: StateRunning, Attempt: attempt, LeaseOwner: d.leaseOwner(), LeaseExpires: d.clock().UTC().Add(d.lease)}
}

// hold renews this Dispatcher's lease on the running call of rec, the
// record of checkpoint id, a third of the lease at a time, until the
// returned function is called. It stops renewing when the record is no
// longer its own to renew (another process recovered the call, or it
// was finished); a store that fails is asked again at the next renewal,
// and the lease may end meanwhile. stop waits for a renewal under way
// to end, so that nothing renews the record after it, and returns the
// record as the last renewal left it (rec when none landed); it may be
// called more than once.
func (d *Dispatcher) hold(id string, rec Claim) (stop func() Claim) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		tick := time.NewTicker(d.lease / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), d.lease/3)
			next, err := d.store.Advance(ctx, id, d.held(rec.Version, rec.Attempt))
			cancel()
			switch {
			case err == nil:
				rec = next
			case errors.Is(err, ErrConflict), errors.Is(err, ErrInvalidRecord), errors.Is(err, ErrNotFound):
				select {
				case <-done: // the call ended, and its outcome moved the record on
					return
				default:
				}
				if d.logger != nil {
					d.logger.Warn("tool call hold lost", "checkpoint_id", id, "tool", truncate(rec.Tool, 128), "error", err.Error())
				}
				return
			}
		}
	}()
	var once sync.Once
	return func() Claim {
		once.Do(func() { close(done) })
		<-exited
		return rec
	}
}

// placeInTurn puts o, the outcome of rec's call, in place of the
// checkpoint rec claimed in the saved turn the store placed the claim
// in: a new question is then pending in its turn, and each answer moves
// the turn's version on, which wakes whoever waits for the turn. It saves at the version it read, and reads again when another
// save came in between, so that two calls of one turn resumed at once
// both keep their new questions. A turn that no longer holds the old
// checkpoint at that place (saved anew by its runtime, or placed
// already) is left as it is.
func (d *Dispatcher) placeInTurn(ctx context.Context, rec Claim, o Outcome) error {
	turns, ok := d.store.(TurnStore)
	if !ok || rec.TurnID == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	for range maxSaves {
		t, err := turns.Turn(ctx, rec.TurnID)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return storeError(fmt.Sprintf("the call was answered, and its turn %q was not read to put its outcome in", truncate(rec.TurnID, 80)), err)
		}
		i := rec.CallIndex
		if i >= len(t.Outcomes) || t.Outcomes[i].Checkpoint == nil || t.Outcomes[i].Checkpoint.id != rec.CheckpointID {
			return nil
		}
		t.Outcomes[i] = NewSavedOutcome(carryNote(t.Outcomes[i], o))
		if o.Checkpoint != nil && o.Checkpoint.expiresAt.After(t.ExpiresAt) {
			t.ExpiresAt = o.Checkpoint.expiresAt
		}
		err = turns.SaveTurn(ctx, t)
		if err == nil || !errors.Is(err, ErrConflict) {
			if err != nil {
				return storeError(fmt.Sprintf("the call was answered, and its turn %q was not saved with its outcome", truncate(rec.TurnID, 80)), err)
			}
			return nil
		}
	}
	return storeError(fmt.Sprintf("the call was answered, and its turn %q was not saved with its outcome", truncate(rec.TurnID, 80)),
		fmt.Errorf("%d other saves came in between", maxSaves))
}

// claimTimeout bounds a claim's write and the record of its outcome,
// which go on when the caller's ctx ends: their result must be what the
// store holds, not what the caller's cancellation left unknown.
const claimTimeout = time.Minute

// storeError wraps an error of the Store in ErrStore, unless it wraps it
// already.
func storeError(what string, err error) error {
	if errors.Is(err, ErrStore) {
		return errprefix.Part("%s: %w", what, err)
	}
	return errprefix.Errorf("%w: %s: %w", ErrStore, what, err)
}

// maxSaves bounds how many times a save of a turn is decided anew when
// another process saved it in between.
const maxSaves = 16
