package tooltemporal

import (
	"context"
	"sync/atomic"
	"time"

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
// The records of calls the activity runs without a question (a Run's
// call record, written running; see "Exactly once" in package dispatch)
// are kept nowhere either.
//
// So the first attempt of an activity always wins its claim: there is
// nothing left for a store to stop. A later attempt (the activity's
// attempt number, which the history records, is more than one: the
// earlier ones ended without a result the workflow took) finds the
// record of the one before it, running and no longer held by anybody
// (see attemptOf), and the Dispatcher decides from it what it decides
// of any call a lost process left running: it asks the tool's
// Reconciler, runs it again when its effect makes that safe, and
// otherwise leaves its outcome unknown.
//
// It must never serve anywhere else. A runtime without such a history
// that claimed through it would let one checkpoint be answered any number
// of times, which is the replay the claim store exists to stop; that is
// why it is unexported. It keeps nothing: it is a CallStore only, with no turns and no claims
// to list, so a Dispatcher made with it saves no turn.
type historyClaims struct{}

// earlierAttempt is the lease owner of the record a retried attempt
// finds: the attempts before it, which Temporal gave up on.
const earlierAttempt = "an earlier attempt of the activity"

// Claim wins the claim of a valid record in the first attempt of an
// activity; in a later one it returns the record the attempt before it
// left: c, running at that attempt, its lease ended as this attempt
// claimed.
func (historyClaims) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := attemptOf(ctx)
	if a == nil || a.number <= 1 {
		a.started()
		return nil, nil
	}
	prior := c
	prior.State, prior.Version, prior.Attempt = dispatch.StateRunning, 1, int(a.number-1)
	prior.LeaseOwner, prior.LeaseExpires = earlierAttempt, c.ClaimedAt.Add(-time.Nanosecond)
	prior.Outcome, prior.Reconciled = nil, false
	return &prior, nil
}

// Finish records nothing: the activity's result, in the workflow's
// history, is the record of the outcome.
func (historyClaims) Finish(context.Context, string, dispatch.SavedOutcome) error { return nil }

// Advance takes every step: the activity's attempt, in the workflow's
// history, is the record of the call's state. It returns the record the
// step makes of a claim it keeps nothing of.
func (historyClaims) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	c := dispatch.Claim{CheckpointID: id, State: s.State, Version: s.Version + 1, Attempt: s.Attempt, Outcome: s.Outcome}
	if s.State == dispatch.StateRunning {
		c.LeaseOwner, c.LeaseExpires = s.LeaseOwner, s.LeaseExpires
		attemptOf(ctx).started()
	}
	return c, nil
}

// Claimed knows no claim.
func (historyClaims) Claimed(_ context.Context, id string) (dispatch.Claim, error) {
	return dispatch.Claim{}, errprefix.Errorf("%w: checkpoint %s: the workflow's history, not a store, records its answer", dispatch.ErrNotFound, id)
}

// activityAttempt is what the call activity tells historyClaims of its
// attempt, through the context it gives the Dispatcher: the attempt's
// number, and whether the call's tool was started in it.
type activityAttempt struct {
	number int32
	ran    atomic.Bool
}

// attemptKey is the context key of the *activityAttempt.
type attemptKey struct{}

// withAttempt returns ctx carrying a, for historyClaims.
func withAttempt(ctx context.Context, a *activityAttempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// attemptOf returns the attempt ctx carries, nil for none.
func attemptOf(ctx context.Context) *activityAttempt {
	a, _ := ctx.Value(attemptKey{}).(*activityAttempt)
	return a
}

// started records that the call's tool starts in attempt a (a claim
// won, or a step to running): nil records nothing.
func (a *activityAttempt) started() {
	if a != nil {
		a.ran.Store(true)
	}
}
