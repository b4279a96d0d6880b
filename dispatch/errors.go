package dispatch

import (
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
	// keep or that does not decode, or a Step its record cannot take.
	ErrInvalidRecord = errprefix.New("invalid record")
	// ErrConflict: a write decided on a version of a record that is no
	// longer the stored one (CallStore.Advance, TurnStore.SaveTurn):
	// another process wrote it in between. Read it again and decide anew.
	// In the Err of an unknown Outcome of Run: the key's call record
	// belongs to another call, or its call is in flight; nothing ran.
	ErrConflict = errprefix.New("record changed")
	// ErrRule: a scope rule could not decide a call (it returned an
	// error of its own, or panicked), so the call did not run. A rule
	// whose store failed returns an error wrapping ErrStore instead.
	ErrRule = errprefix.New("scope rule failed")
)

// The error types of this package show their body to the errors of this
// project that quote them through errprefix's registry, so that the
// "tool: " prefix is written once.
func init() {
	errprefix.RegisterBodies(func(err error) (string, bool) {
		switch e := err.(type) {
		case *AnsweredError:
			return e.errorBody(), true
		case *RefusedCall:
			return e.errorBody(), true
		}
		return "", false
	})
}
