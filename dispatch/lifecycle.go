package dispatch

import (
	"time"

	"github.com/agentcontract/tool/internal/errprefix"
)

// DefaultLease is how long a Dispatcher's hold on a call it runs lasts
// unless renewed (Config.Lease): it renews the lease a third of the way
// through, so a live call is never taken over, and a call left by a
// process that died is recovered a minute later at most.
const DefaultLease = time.Minute

// Step is one move of a call record, asked of CallStore.Advance: the
// state it moves to and what comes with it. Stores apply it with
// Claim.Apply.
type Step struct {
	// Version is the record's version the step was decided on: the step
	// applies to that version only (compare and set).
	Version int64
	// State is the state the record moves to.
	State State
	// Attempt is the record's Attempt after the step: one more than
	// before when the call is started (again), the same when a lease is
	// renewed.
	Attempt int
	// LeaseOwner and LeaseExpires are the hold of a running call: who
	// runs it, and until when. A step to another state clears them.
	LeaseOwner   string
	LeaseExpires time.Time
	// Outcome is the outcome of a step to StateFinished or StateUnknown
	// (of KindUnknown for the latter); nil otherwise.
	Outcome *SavedOutcome
	// Reconciled marks a step to StateFinished decided by a
	// reconciliation: the tool's Reconciler said the call was done
	// (see Claim.Reconciled). false for every other step.
	Reconciled bool
}

// Stage returns c's State, reading a record made before states were
// kept as StateFinished when it has an Outcome and StateRunning (with a
// lease that expired long ago) when it has none.
func (c Claim) Stage() State {
	switch {
	case c.State != "":
		return c.State
	case c.Outcome != nil:
		return StateFinished
	}
	return StateRunning
}

// Stranded reports whether c's call waits for a process that no longer
// holds it: claimed or running, with a lease that ended before now.
// A resend of the same answer recovers such a call; an operator lists
// them with Lister.Stranded.
func (c Claim) Stranded(now time.Time) bool {
	switch c.Stage() {
	case StateClaimed, StateRunning:
		return c.LeaseExpires.Before(now)
	}
	return false
}

// Apply returns the record c becomes by step s, with its Version one
// more; c itself is not changed. The steps a record may take:
//
//   - claimed or running to running: the next attempt (Attempt one
//     more), or the same attempt renewed by its lease's owner; with a
//     lease, without an outcome;
//   - unknown to running: the next attempt, with a lease; the record's
//     outcome is cleared (a reconciliation said the call was not done,
//     or the outcome says its tool never started);
//   - claimed, running or unknown to finished, with an outcome (from
//     unknown, a reconciliation that said the call was done);
//   - running to unknown, with an outcome of KindUnknown.
//
// Errors wrap ErrConflict when s was decided on another version than
// c's, and ErrInvalidRecord for any other step: out of finished, which
// is final; back to claimed; unknown to unknown; to running without a
// lease or with an attempt that is neither the same one renewed by its
// owner nor the next (from unknown: not the next); to finished or
// unknown without an outcome (unknown: one of KindUnknown, from running
// only); an outcome with any other step; Reconciled with a step to any
// state but finished.
func (c Claim) Apply(s Step) (Claim, error) {
	id := c.CheckpointID
	from := c.Stage()
	switch {
	case s.Version != c.Version:
		return Claim{}, errprefix.Errorf("%w: claim %s is at version %d; the step was decided on version %d", ErrConflict, id, c.Version, s.Version)
	case from == StateFinished:
		return Claim{}, errprefix.Errorf("%w: claim %s is %s, which is final", ErrInvalidRecord, id, from)
	case s.Reconciled && s.State != StateFinished:
		return Claim{}, errprefix.Errorf("%w: claim %s: only a step to finished is reconciled", ErrInvalidRecord, id)
	}
	switch s.State {
	case StateRunning:
		switch {
		case s.LeaseOwner == "" || s.LeaseExpires.IsZero():
			return Claim{}, errprefix.Errorf("%w: claim %s: a running call needs a lease owner and expiry", ErrInvalidRecord, id)
		case s.Outcome != nil:
			return Claim{}, errprefix.Errorf("%w: claim %s: a running call has no outcome yet", ErrInvalidRecord, id)
		case s.Attempt == c.Attempt+1:
		case from == StateRunning && s.Attempt == c.Attempt && s.LeaseOwner == c.LeaseOwner:
		default:
			return Claim{}, errprefix.Errorf("%w: claim %s: attempt %d of a %s call at attempt %d, by %q: want the next attempt, or the same one renewed by its owner",
				ErrInvalidRecord, id, s.Attempt, from, c.Attempt, truncate(s.LeaseOwner, 80))
		}
	case StateFinished:
		if s.Outcome == nil {
			return Claim{}, errprefix.Errorf("%w: claim %s: a finished call has an outcome", ErrInvalidRecord, id)
		}
	case StateUnknown:
		switch {
		case from == StateUnknown:
			return Claim{}, errprefix.Errorf("%w: claim %s is unknown already: it moves to running (its next attempt) or finished (reconciled) only", ErrInvalidRecord, id)
		case from != StateRunning:
			return Claim{}, errprefix.Errorf("%w: claim %s: only a running call can be recorded unknown, not a %s one", ErrInvalidRecord, id, from)
		case s.Outcome == nil || s.Outcome.Kind != KindUnknown:
			return Claim{}, errprefix.Errorf("%w: claim %s: a call recorded unknown has an outcome of kind unknown", ErrInvalidRecord, id)
		}
	default:
		return Claim{}, errprefix.Errorf("%w: claim %s: no step leads to state %q", ErrInvalidRecord, id, truncate(string(s.State), 80))
	}
	if s.Outcome != nil {
		if err := s.Outcome.Validate(); err != nil {
			return Claim{}, err
		}
	}
	next := c
	next.State, next.Version = s.State, c.Version+1
	next.Attempt = max(s.Attempt, c.Attempt)
	next.LeaseOwner, next.LeaseExpires = "", time.Time{}
	next.Reconciled = s.Reconciled
	if s.State == StateRunning {
		next.LeaseOwner, next.LeaseExpires = s.LeaseOwner, s.LeaseExpires
		next.Outcome = nil // an unknown call's next attempt
	}
	if s.Outcome != nil {
		o := *s.Outcome
		next.Outcome = &o
	}
	return next, next.Validate()
}
