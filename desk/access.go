package desk

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/agentcontract/tool/dispatch"
)

// mayAnswer reports whether person may answer the call p, a summary the
// store keeps: the sealed principal and the hook both accept them.
func (d *Desk) mayAnswer(ctx context.Context, person string, p dispatch.Pending) bool {
	if p.Principal != "" && p.Principal != person {
		return false
	}
	ok, err := d.authorize(ctx, person, p)
	return err == nil && ok
}

// access reports whether person may see the call p and whether they
// may answer it, asking each hook once: Config.MaySee for seeing, or,
// without one, whether they may answer it.
func (d *Desk) access(ctx context.Context, person string, p dispatch.Pending) (see, answer bool) {
	if d.maySee == nil {
		answer = d.mayAnswer(ctx, person, p)
		return answer, answer
	}
	if ok, err := d.maySee(ctx, person, p); err != nil || !ok {
		return false, false
	}
	return true, d.mayAnswer(ctx, person, p)
}

// summaryOfClaim is the summary of an answered call, made from the
// store's record of its answer: what the hooks decide from once the call
// is no longer pending.
func summaryOfClaim(c dispatch.Claim) dispatch.Pending {
	return dispatch.Pending{
		TurnID: c.TurnID, Index: c.CallIndex, CheckpointID: c.CheckpointID, CallID: c.CallID,
		Tool: c.Tool, Principal: c.SealedPrincipal, ExpiresAt: c.ExpiresAt,
	}
}

// found is the call a request names, as the store keeps it: pending (p,
// with its whole outcome) or answered (claim).
type found struct {
	pending bool
	p       dispatch.Pending
	claim   dispatch.Claim
	summary dispatch.Pending // what the hooks are given
	may     bool             // the person may answer it
}

// maxTurnScan bounds how many pending calls of one turn locate reads to
// find the one a request names.
const maxTurnScan = 10_000

// locate finds the call a request names (turn, i and cp, from q) in the
// store, and checks that person may see it. A call that does not exist
// and one the person may not see both answer 404 with the same page: the
// desk is no oracle of what others may see. What the request names only
// points at the call; every decision is made from what the store keeps.
func (d *Desk) locate(w http.ResponseWriter, r *http.Request, q func(string) string, person string) (found, bool) {
	notFound := func() (found, bool) {
		d.render(w, http.StatusNotFound, page{Title: d.title, Person: person, Message: "There is no such call."})
		return found{}, false
	}
	turn, cp := q("turn"), q("cp")
	i, err := strconv.Atoi(q("i"))
	if cp == "" || err != nil {
		return notFound()
	}
	if turn != "" {
		f, ok, err := d.pendingCall(r.Context(), turn, i, cp)
		if err != nil {
			d.storeFailed(w, r, err)
			return found{}, false
		}
		if ok {
			var see bool
			if see, f.may = d.access(r.Context(), person, f.summary); !see {
				return notFound()
			}
			return f, true
		}
	}
	claim, err := d.store.Claimed(r.Context(), cp)
	switch {
	case errors.Is(err, dispatch.ErrNotFound), err == nil && claim.AnswerSHA256 == dispatch.RunSHA256:
		// The record of a call Run ran (no question, no answer) is no
		// call of the desk's.
		return notFound()
	case err != nil:
		d.storeFailed(w, r, err)
		return found{}, false
	}
	f := found{claim: claim, summary: summaryOfClaim(claim)}
	var see bool
	if see, f.may = d.access(r.Context(), person, f.summary); !see {
		return notFound()
	}
	return f, true
}

// pendingCall reads the pending call at position i of turn whose
// checkpoint is cp: first the turn's summaries, to find it, then that
// one call whole. ok is false when the turn has no such pending call.
func (d *Desk) pendingCall(ctx context.Context, turn string, i int, cp string) (found, bool, error) {
	ps, err := d.store.Pending(ctx, dispatch.PendingQuery{TurnID: turn, Limit: maxTurnScan})
	if err != nil {
		return found{}, false, err
	}
	for k, p := range ps {
		if p.Index != i || p.CheckpointID != cp {
			continue
		}
		whole, err := d.store.Pending(ctx, dispatch.PendingQuery{TurnID: turn, Offset: k, Limit: 1, Full: true})
		if err != nil {
			return found{}, false, err
		}
		if len(whole) != 1 || whole[0].CheckpointID != cp || whole[0].Outcome.Checkpoint == nil {
			return found{}, false, nil // answered in between
		}
		return found{pending: true, p: whole[0], summary: p}, true, nil
	}
	return found{}, false, nil
}
