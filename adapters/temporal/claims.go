package tooltemporal

import (
	"context"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// historyClaims is the [dispatch.CallStore] of the call activity: history is
// the claim. A [dispatch.Dispatcher] claims every checkpoint before it
// resumes the call, so that the checkpoint is answered once; in a
// workflow, the [UpdateAnswer] handler does that already. It gives an
// answer to the one call waiting with that key and takes the call off the
// waiting list, in workflow state, which the workflow's history records
// and every replay rebuilds; a second answer for the call is refused, and
// the workflow schedules the resumed call's activity once. The activity
// that resumes it may run again only as Temporal retries an activity: the
// same answer, the same key, under the retry policy of the tool's effect.
// So Claim always wins here: there is nothing left for a store to stop.
//
// The records of calls the activity runs without a question (a Run's
// call record, written running; see "Exactly once" in package dispatch)
// win here too, and are kept nowhere: a retried activity runs its call
// again, as the retry policy chosen from the tool's effect allows.
//
// It must never serve anywhere else. A runtime without such a history
// that claimed through it would let one checkpoint be answered any number
// of times, which is the replay the claim store exists to stop; that is
// why it is unexported. It keeps nothing: it is a CallStore only, with no turns and no claims
// to list, so a Dispatcher made with it saves no turn.
type historyClaims struct{}

// Claim wins every claim of a valid record.
func (historyClaims) Claim(_ context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	return nil, c.Validate()
}

// Finish records nothing: the activity's result, in the workflow's
// history, is the record of the outcome.
func (historyClaims) Finish(context.Context, string, dispatch.SavedOutcome) error { return nil }

// Advance takes every step: the activity's attempt, in the workflow's
// history, is the record of the call's state. It returns the record the
// step makes of a claim it keeps nothing of.
func (historyClaims) Advance(_ context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	c := dispatch.Claim{CheckpointID: id, State: s.State, Version: s.Version + 1, Attempt: s.Attempt, Outcome: s.Outcome}
	if s.State == dispatch.StateRunning {
		c.LeaseOwner, c.LeaseExpires = s.LeaseOwner, s.LeaseExpires
	}
	return c, nil
}

// Claimed knows no claim.
func (historyClaims) Claimed(_ context.Context, id string) (dispatch.Claim, error) {
	return dispatch.Claim{}, errprefix.Errorf("%w: checkpoint %s: the workflow's history, not a store, records its answer", dispatch.ErrNotFound, id)
}
