package tooltemporal

import (
	"fmt"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Errors returned by this package. Every error it makes wraps exactly one
// of them, or one of package [dispatch]'s, so that [errors.Is] tells them
// apart.
var (
	// ErrInvalidConfig: New was given a configuration it cannot use, or a
	// Session could not install its handlers.
	ErrInvalidConfig = errprefix.New("invalid temporal config")
	// ErrInvalidActivityResult: what came back from the call activity is
	// neither an Output nor an input request, or is not what the tool's
	// contract allows. The workflow settles such a call as unknown.
	ErrInvalidActivityResult = errprefix.New("invalid activity result")
	// ErrInvalidActivityInput: the call activity was started with input
	// that this package's workflow side never sends (no idempotency key,
	// say). Nothing runs.
	ErrInvalidActivityInput = errprefix.New("invalid activity input")
	// ErrUnknownAnswer: no answer with that ID was accepted by the run
	// asked ([ReadReceipt], [Session.Receipt]). It was never sent, was
	// refused, is still on its way to a worker, or was accepted by
	// another run (before a continue-as-new, or after the reset point of
	// a run that was reset).
	ErrUnknownAnswer = errprefix.New("unknown answer")
)

// AnswerIDError is the error of [SendAnswer] when the answer's ID had
// been used, in the workflow's run, for another answer: another response,
// or an answer to another call. Temporal hands an update sent under an
// ID it has seen the outcome of the first, without showing the workflow
// the new one; so the answer sent was not accepted, changed nothing, and
// the first answer stands. Receipt is the first answer's, as the workflow
// recorded it. Send the new answer under an ID of its own, if it is still
// wanted (the call the first answer was for is answered).
//
// It wraps [dispatch.ErrInvalidAnswer]; [errors.As] finds it. A nil
// *AnswerIDError is safe to call methods on.
type AnswerIDError struct {
	// Receipt is the receipt of the answer first accepted under the ID:
	// which call it answered, its digest, and when. It holds no answer.
	Receipt Receipt
}

// Error says which ID was used before, and for which call, without
// either answer.
func (e *AnswerIDError) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project quotes e.
func (e *AnswerIDError) errorBody() string {
	if e == nil {
		return errprefix.Body(dispatch.ErrInvalidAnswer)
	}
	return fmt.Sprintf("%s: answer ID %q was used for another answer: the answer accepted under it, for the call with idempotency key %q at %s, stands; this one was not accepted",
		errprefix.Body(dispatch.ErrInvalidAnswer), e.Receipt.AnswerID, e.Receipt.IdempotencyKey, e.Receipt.AcceptedAt.UTC().Format("2006-01-02T15:04:05Z07:00"))
}

// The error types of this package show their body to the errors of this
// project that quote them through errprefix's registry, so that the
// "tool: " prefix is written once.
func init() {
	errprefix.RegisterBodies(func(err error) (string, bool) {
		if e, ok := err.(*AnswerIDError); ok {
			return e.errorBody(), true
		}
		return "", false
	})
}

// Unwrap returns [dispatch.ErrInvalidAnswer].
func (e *AnswerIDError) Unwrap() error { return dispatch.ErrInvalidAnswer }
