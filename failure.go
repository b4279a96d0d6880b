package tool

import (
	"fmt"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/errprefix"
)

// FailureKind classifies a definite unsuccessful outcome. Neither kind says
// anything about retrying: that is the runtime's decision.
type FailureKind string

const (
	// FailureKindFailed is a definite unsuccessful outcome. It does not
	// claim that execution started, and may describe partial effects the
	// tool acknowledges in its Output. It requires a Cause.
	FailureKindFailed FailureKind = "failed"
	// FailureKindRejected means the call was refused permission to run.
	// A Cause is optional: a policy decision need not be an error.
	FailureKindRejected FailureKind = "rejected"
)

// FailureConfig describes an unsuccessful outcome; see [NewFailure].
type FailureConfig struct {
	// Kind is FailureKindFailed or FailureKindRejected.
	Kind FailureKind
	// Output is public: it is what the model is told about the outcome.
	Output Output
	// Cause is a private diagnostic, required for FailureKindFailed.
	Cause error
}

// Failure is the definite, complete unsuccessful outcome of the current
// call, returned as an error.
//
// Its [Output] is public and meant for the model; its Cause is private and
// meant for logs. Failure has no Unwrap, so errors.Is and errors.As never
// reach the cause: a diagnostic cannot change the outcome, stand in for
// another call's output, or pass for a control signal. Wrapping a Failure
// with a single %w keeps it findable with [ClassifyFailure]. Make one with
// [NewFailure]: the zero Failure, like a nil *Failure, has no kind, fails
// Validate and is not found by ClassifyFailure. A Failure is immutable and
// safe for concurrent use; all methods are safe on a nil receiver. See
// "Errors and outcomes" in the package documentation for how it differs
// from an error, a [CallError] and an [InputRejection].
type Failure struct {
	kind   FailureKind
	output Output
	cause  error
}

// NewFailure validates config and returns a [Failure] holding a copy of its
// [Output]. Errors wrap [ErrInvalidFailure]: an unknown kind, an invalid Output
// (one over [MaxOutputBytes] included: it is refused before it is copied),
// a failed kind without a cause, or a typed-nil cause.
func NewFailure(config FailureConfig) (*Failure, error) {
	f := &Failure{kind: config.Kind, output: config.Output, cause: config.Cause}
	if err := f.Validate(); err != nil {
		return nil, err
	}
	f.output = config.Output.Clone()
	return f, nil
}

// Kind returns the kind, or "" for a nil receiver.
func (f *Failure) Kind() FailureKind {
	if f == nil {
		return ""
	}
	return f.kind
}

// Output returns a copy of the public output.
func (f *Failure) Output() Output {
	if f == nil {
		return Output{}
	}
	return f.output.Clone()
}

// Cause returns the private diagnostic, or nil. It takes no part in
// errors.Is or errors.As.
func (f *Failure) Cause() error {
	if f == nil {
		return nil
	}
	return f.cause
}

// Error describes the outcome with its public text, never the cause:
// "tool: " followed by its body.
func (f *Failure) Error() string { return errprefix.Message(f) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project shows f when it quotes it: the kind, then ": " and
// the public text when the Output has one ("failed: order closed"). A text
// longer than maxErrorText bytes is cut short; a nil Failure is "failure".
func (f *Failure) errorBody() string {
	if f == nil {
		return "failure"
	}
	if text, ok := f.output.Text(); ok && text != "" {
		return string(f.kind) + ": " + engine.Clip(text, maxErrorText)
	}
	return string(f.kind)
}

// maxErrorText bounds the public text an error message repeats.
const maxErrorText = 4096

// Validate reports whether f is a usable [Failure]; errors wrap
// [ErrInvalidFailure].
func (f *Failure) Validate() error {
	if f == nil {
		return errorf("%w: nil failure", ErrInvalidFailure)
	}
	switch f.kind {
	case FailureKindFailed:
		if f.cause == nil {
			return errorf("%w: a failed outcome needs a cause", ErrInvalidFailure)
		}
	case FailureKindRejected:
	default:
		return errorf("%w: unknown kind %q", ErrInvalidFailure, string(f.kind))
	}
	if isTypedNil(f.cause) {
		return errorf("%w: cause is a typed nil", ErrInvalidFailure)
	}
	if err := f.output.Validate(); err != nil {
		return errorf("%w: %w", ErrInvalidFailure, err)
	}
	return nil
}

// ClassifyFailure finds the [Failure] of the current call in err, following
// only single-error wrapping (an Unwrap() error method, which includes
// [CallError]). An error that joins several (an Unwrap() []error method) is
// ambiguous and yields nothing, even when one branch holds a Failure: the
// owner of the join must decide the outcome. Nil and invalid Failures are
// not found.
func ClassifyFailure(err error) (*Failure, bool) {
	f, ok := classify[*Failure](err)
	if !ok || f.Validate() != nil {
		return nil, false
	}
	return f, true
}

// safeFailure is the outcome of an ordinary error from a safe tool.
func safeFailure(name string, cause error) *Failure {
	return &Failure{
		kind:   FailureKindFailed,
		output: NewTextOutput(fmt.Sprintf("the tool %q failed", name)),
		cause:  cause,
	}
}

// CallErrorConfig attaches evidence to an error; see [NewCallError].
type CallErrorConfig struct {
	// Cause is the error; required.
	Cause error
	// Evidence is what was observed before the error, such as effects
	// already applied. It is copied.
	Evidence Output
}

// CallError is an ordinary error that carries evidence of what happened
// before it, for diagnostics and evaluation. It declares no outcome and no
// retry policy: the evidence is not a result and must not be sent to a
// model as one. Unwrap returns the cause, so CallError is transparent to
// errors.Is, errors.As and [ClassifyFailure]. Make one with [NewCallError]:
// the zero CallError, like a nil *CallError, has no cause, fails Validate,
// unwraps to nil and reports the text of [ErrInvalidCallError]. A CallError
// is immutable and safe for concurrent use; all methods are safe on a nil
// receiver. See "Errors and outcomes" in the package documentation for how
// it differs from a [Failure].
type CallError struct {
	cause    error
	evidence Output
}

// NewCallError returns a [CallError] holding a copy of the evidence. Errors
// wrap [ErrInvalidCallError]: a nil or typed-nil cause, or invalid evidence
// (one over [MaxOutputBytes] included: it is refused before it is copied).
func NewCallError(config CallErrorConfig) (*CallError, error) {
	e := &CallError{cause: config.Cause, evidence: config.Evidence}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	e.evidence = config.Evidence.Clone()
	return e, nil
}

// Evidence returns a copy of the evidence.
func (e *CallError) Evidence() Output {
	if e == nil {
		return Output{}
	}
	return e.evidence.Clone()
}

// Unwrap returns the cause.
func (e *CallError) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.cause
}

// Error returns the cause's message, or the text of [ErrInvalidCallError]
// when there is no cause.
func (e *CallError) Error() string {
	if e == nil || e.cause == nil {
		return errprefix.Message(e)
	}
	return e.cause.Error()
}

// errorBody is the text another error of this project shows when it
// quotes e: the cause's, without its "tool: " prefix when the cause is an
// error of this project, since a CallError adds nothing to its cause's
// message.
func (e *CallError) errorBody() string {
	if e == nil || e.cause == nil {
		return errprefix.Body(ErrInvalidCallError)
	}
	return errprefix.Body(e.cause)
}

// Validate reports whether e is a usable [CallError]; errors wrap
// [ErrInvalidCallError].
func (e *CallError) Validate() error {
	switch {
	case e == nil:
		return errorf("%w: nil call error", ErrInvalidCallError)
	case e.cause == nil:
		return errorf("%w: a cause is required", ErrInvalidCallError)
	case isTypedNil(e.cause):
		return errorf("%w: cause is a typed nil", ErrInvalidCallError)
	}
	if err := e.evidence.Validate(); err != nil {
		return errorf("%w: evidence: %w", ErrInvalidCallError, err)
	}
	return nil
}
