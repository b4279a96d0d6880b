package dispatch

import (
	"fmt"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Errors returned by this package. Every error wraps exactly one of them,
// so that errors.Is tells them apart. (An error of a Store or of a context
// is wrapped beside ErrStore, so that errors.Is finds context.Canceled
// too.)
var (
	// ErrInvalidConfig: New was given a configuration it cannot use.
	ErrInvalidConfig = errprefix.New("invalid dispatch config")
	// ErrInvalidCheckpoint: a checkpoint that does not decode, whose seal
	// does not verify, or that no longer matches a tool of the registry.
	ErrInvalidCheckpoint = errprefix.New("invalid checkpoint")
	// ErrInvalidAnswer: an answer to a suspended call that breaks the
	// response schema of its input request.
	ErrInvalidAnswer = errprefix.New("invalid answer")
	// ErrExpired: a checkpoint resumed or declined at or after its
	// expiry, judged on the clock of the process that claims it.
	ErrExpired = errprefix.New("checkpoint expired")
	// ErrWrongPrincipal: an answer from someone other than the principal
	// the checkpoint names.
	ErrWrongPrincipal = errprefix.New("wrong principal")
	// ErrAlreadyAnswered: the checkpoint was claimed already, by another
	// answer or a decline. The error is an *AnsweredError, which carries
	// the claim and its recorded outcome.
	ErrAlreadyAnswered = errprefix.New("checkpoint already answered")
	// ErrStore: the Store failed, could not be reached, or is full. A
	// resume that meets it runs nothing (fail closed).
	ErrStore = errprefix.New("claim store failed")
	// ErrNotFound: a Store has no record of that ID.
	ErrNotFound = errprefix.New("record not found")
	// ErrInvalidRecord: a Claim, Turn or SavedOutcome that a Store cannot
	// keep or that does not decode.
	ErrInvalidRecord = errprefix.New("invalid record")
)

// AnsweredError is the error of a resume or decline of a checkpoint that
// was claimed before: by a different answer, by a decline, or by the same
// answer whose outcome is not recorded yet (its run is still going, or
// ended without recording one). It wraps ErrAlreadyAnswered; errors.As
// finds it. A Store's Claim returns it for a different answer; Resume and
// Decline return it for every refused second claim.
//
// A nil *AnsweredError is safe to call methods on.
type AnsweredError struct {
	// Claim is the claim that was recorded first: who answered, when,
	// with which answer digest, and its outcome once recorded.
	Claim Claim

	state answerState
}

// answerState is what a Dispatcher knows of a claim of the same answer
// without an outcome.
type answerState int

const (
	answerOther      answerState = iota // another answer, or nothing known
	answerRunning                       // its call runs in this process now
	answerUnrecorded                    // its call may have run elsewhere; it is not run again
)

// Error says which checkpoint was answered, how and when, without the
// answer.
func (e *AnsweredError) Error() string {
	if e == nil {
		return ErrAlreadyAnswered.Error()
	}
	how := "answered"
	switch {
	case e.Claim.Declined:
		how = "declined"
	case e.Claim.Superseded():
		how = "superseded by an edit"
	}
	recorded := "its outcome is not recorded yet"
	switch {
	case e.Claim.Outcome != nil:
		recorded = "outcome " + string(e.Claim.Outcome.Kind)
	case e.state == answerRunning:
		recorded = "its call is still running; send the same answer again later to learn its outcome"
	case e.state == answerUnrecorded:
		recorded = "its outcome is not recorded, and whether its call ran is not known here: the tool's effect does not allow running it again"
	}
	return fmt.Sprintf("%v: checkpoint %s was %s at %s; %s", ErrAlreadyAnswered, e.Claim.CheckpointID, how,
		e.Claim.ClaimedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), recorded)
}

// Unwrap returns ErrAlreadyAnswered.
func (e *AnsweredError) Unwrap() error { return ErrAlreadyAnswered }

// Outcome returns the outcome recorded for the first claim, marked as
// replayed, and false when none is recorded yet. The outcome's private
// error is the reduced one a Store keeps (see SavedOutcome).
func (e *AnsweredError) Outcome() (Outcome, bool) {
	if e == nil || e.Claim.Outcome == nil {
		return Outcome{}, false
	}
	o, err := e.Claim.Outcome.Outcome()
	if err != nil {
		return Outcome{}, false
	}
	o.Replayed = true
	return o, true
}
