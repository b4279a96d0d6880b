package desk

import (
	"context"
	"errors"
	"net/http"

	"github.com/agentcontract/tool/dispatch"
)

// parseRecovery reads a post about an answered call: only a recovery of
// a stranded call, by a person who may answer it, is something to do;
// anything else is told who answered first.
func (d *Desk) parseRecovery(w http.ResponseWriter, r *http.Request, person string, f found) (posted, bool) {
	answered := page{Title: d.title, Person: person, Answered: d.answeredOf(f.claim)}
	if r.PostForm.Get("action") != "recover" || !f.claim.Stranded(d.clock()) {
		d.render(w, http.StatusConflict, answered)
		return posted{}, false
	}
	if !f.may {
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "You may not answer this call."})
		return posted{}, false
	}
	cp, err := d.checkpointOf(r.Context(), f.claim)
	if err != nil {
		d.render(w, http.StatusConflict, answered)
		return posted{}, false
	}
	f.p = dispatch.Pending{TurnID: f.claim.TurnID, Index: f.claim.CallIndex}
	return posted{action: "recover", f: f, cp: cp}, true
}

// errNoCheckpoint: the turn of a claim no longer holds its checkpoint.
var errNoCheckpoint = errors.New("the turn no longer holds the call's checkpoint")

// checkpointOf reads the checkpoint c claimed from the saved turn the
// store placed it in.
func (d *Desk) checkpointOf(ctx context.Context, c dispatch.Claim) (dispatch.Checkpoint, error) {
	if c.TurnID == "" {
		return dispatch.Checkpoint{}, errNoCheckpoint
	}
	t, err := d.store.Turn(ctx, c.TurnID)
	if err != nil {
		return dispatch.Checkpoint{}, err
	}
	if c.CallIndex >= len(t.Outcomes) {
		return dispatch.Checkpoint{}, errNoCheckpoint
	}
	cp := t.Outcomes[c.CallIndex].Checkpoint
	if cp == nil || cp.ID() != c.CheckpointID {
		return dispatch.Checkpoint{}, errNoCheckpoint
	}
	return *cp, nil
}

// recover sends the answer recorded in c again, as it was given: the resend
// that makes the Dispatcher recover a call whose process was lost (it
// starts it, runs it again when that is safe, or records it unknown).
func (d *Desk) recover(ctx context.Context, c dispatch.Claim, cp dispatch.Checkpoint) (dispatch.Outcome, error) {
	switch {
	case c.Declined:
		return d.d.Decline(ctx, cp, dispatch.Answer{Principal: c.Principal})
	case c.Edit != nil:
		return d.d.Supersede(ctx, cp, dispatch.Edit{Arguments: c.Edit.Approved, Principal: c.Principal})
	case len(c.Response) > 0:
		return d.d.Resume(ctx, cp, dispatch.Answer{Response: c.Response, Principal: c.Principal, Record: true})
	}
	return dispatch.Outcome{}, errNotRecorded
}

// errNotRecorded: the claim keeps no answer to send again.
var errNotRecorded = &formError{msg: "The answer was not recorded, so it cannot be sent again here: send it again from where it was given."}
