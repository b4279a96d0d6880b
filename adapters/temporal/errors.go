package tooltemporal

import "github.com/agentcontract/tool/internal/errprefix"

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
