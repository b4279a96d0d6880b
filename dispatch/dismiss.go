package dispatch

import (
	"context"
	"slices"
	"time"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Dismiss clears a suspended call that can no longer be answered because
// the key that sealed its checkpoint was retired from Config.SealKeys: a
// person's record that the call will not run, so that it leaves the
// pending list instead of waiting there until it expires. It claims the
// checkpoint as Decline does, with a.Principal as who cleared it, and
// records the outcome of a decline (DeclinedText), which the model sees
// when the turn is answered; the tool does not run.
//
// A checkpoint sealed with a key that this Dispatcher holds is refused
// with an error wrapping ErrInvalidCheckpoint: it can still be declined,
// or, when its seal does not verify, it was altered. A checkpoint whose
// tool's contract changed still opens, and is cleared with Decline.
// Because the seal of a checkpoint Dismiss clears cannot be verified,
// Dismiss trusts cp: pass only a checkpoint read from the runtime's own
// Store (a desk reads it from its pending list), never one a client
// sent. Its principal, when it names one, must still be a.Principal
// (ErrWrongPrincipal). Expired checkpoints are refused (ErrExpired):
// they leave the list when DeleteExpired removes their turn. The claim's
// uncertain paths are Decline's.
func (d *Dispatcher) Dismiss(ctx context.Context, cp Checkpoint, a Answer) (Outcome, error) {
	if err := d.needSuspension("dismisses"); err != nil {
		return Outcome{}, err
	}
	info := resumeInfo(OpDecline, cp, a)
	refuse := func(err error) (Outcome, error) {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	switch {
	case cp.keyID == "" || !validID(cp.id):
		return refuse(errprefix.Errorf("%w: the zero Checkpoint", ErrInvalidCheckpoint))
	case slices.ContainsFunc(d.keys, func(k SealKey) bool { return k.ID == cp.keyID }):
		return refuse(errprefix.Errorf("%w: checkpoint %s was sealed with key %q, which this dispatcher holds: decline it instead", ErrInvalidCheckpoint, cp.id, cp.keyID))
	}
	now := d.clock()
	if err := d.checkTime(cp, now); err != nil {
		return refuse(err)
	}
	if err := checkAnswerer(cp, a.Principal); err != nil {
		return refuse(err)
	}
	return d.claimAndRun(ctx, claimedCall{cp: cp, claim: d.newClaim(cp, a.Principal, DeclineSHA256, now), info: info, start: time.Now(), key: cp.key, redo: true,
		run: func(context.Context) Outcome { return d.declined(cp, a.Principal) },
	})
}
