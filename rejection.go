package tool

import (
	"fmt"
	"unicode/utf8"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/errprefix"
)

// InputRejectionConfig describes a model-correctable problem with a call's
// input. See [NewInputRejection].
type InputRejectionConfig struct {
	// Message is public: it is meant to be sent back to the model so it can
	// correct its proposal. It must be non-empty valid UTF-8.
	Message string
	// Cause is an optional private diagnostic. It is never part of Message
	// and not reachable with errors.Is or errors.As.
	Cause error
}

// InputRejection reports input that the model can correct, with a message
// that is explicitly public. Prepare returns one for every problem with the
// content of the argument text: invalid JSON, a broken bound, a schema
// violation, a strict decoding failure, or a rejection from the tool's own
// input validator.
//
// An InputRejection matches [ErrInvalidInvocation] with errors.Is, so code
// that only asks "was the call admitted?" needs nothing else. Its Cause is
// private: it does not take part in errors.Is or errors.As and is read only
// through Cause. The zero value and a nil pointer are invalid; all methods
// are safe on a nil receiver. An InputRejection is immutable. See "Errors
// and outcomes" in the package documentation for how it differs from a
// [Failure] and an ordinary error.
type InputRejection struct {
	message string
	cause   error
	costly  bool // the value was refused as too costly to check, not as breaking the schema
}

// NewInputRejection returns a rejection with a public message. It returns an
// error wrapping [ErrInvalidInputRejection] when the message is empty or not
// valid UTF-8, or when Cause is a typed nil.
func NewInputRejection(config InputRejectionConfig) (*InputRejection, error) {
	r := &InputRejection{message: config.Message, cause: config.Cause}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// rejectf builds a rejection whose message is produced by this package.
func rejectf(format string, args ...any) *InputRejection {
	return &InputRejection{message: engine.OneLine(fmt.Sprintf(format, args...))}
}

// rejection is the InputRejection of the engine's verdict r: its message,
// and the violations it found as the cause, for logs.
func rejection(r *engine.Rejection) *InputRejection {
	out := &InputRejection{message: r.Message, costly: r.Costly}
	if r.Detail != "" {
		out.cause = errorf("%w: %s", ErrInvalidInvocation, r.Detail)
	}
	return out
}

// against words how the value r refuses relates to a schema: mismatch
// (such as "do not match") when it breaks the schema, and that it cost
// too much to check when that is why it was refused.
func (r *InputRejection) against(mismatch string) string {
	if r.costly {
		return "cost too much to check against"
	}
	return mismatch
}

// Message returns the public message, or "" for a nil receiver.
func (r *InputRejection) Message() string {
	if r == nil {
		return ""
	}
	return r.message
}

// Cause returns the private diagnostic, or nil.
func (r *InputRejection) Cause() error {
	if r == nil {
		return nil
	}
	return r.cause
}

// Error returns the sentinel text of [ErrInvalidInvocation] followed by the
// public message: "tool: " followed by its body. The
// cause is not included.
func (r *InputRejection) Error() string { return errprefix.Message(r) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project shows r when it quotes it: "invalid invocation: "
// and the public message, or "invalid invocation" alone when there is no
// message.
func (r *InputRejection) errorBody() string {
	if r == nil || r.message == "" {
		return errprefix.Body(ErrInvalidInvocation)
	}
	return errprefix.Body(ErrInvalidInvocation) + ": " + r.message
}

// Is reports whether target is [ErrInvalidInvocation].
func (r *InputRejection) Is(target error) bool {
	return target == ErrInvalidInvocation
}

// Validate reports whether r is a usable rejection; errors wrap
// [ErrInvalidInputRejection].
func (r *InputRejection) Validate() error {
	switch {
	case r == nil:
		return errorf("%w: nil rejection", ErrInvalidInputRejection)
	case r.message == "":
		return errorf("%w: empty message", ErrInvalidInputRejection)
	case !utf8.ValidString(r.message):
		return errorf("%w: message is not valid UTF-8", ErrInvalidInputRejection)
	case isTypedNil(r.cause):
		return errorf("%w: cause is a typed nil", ErrInvalidInputRejection)
	}
	return nil
}

// ClassifyInputRejection finds the one [InputRejection] err carries, following
// only single-error wrapping (an Unwrap() error method). An error that joins
// several (an Unwrap() []error method) is ambiguous and yields nothing, even
// when one branch holds a rejection: which message is public is then for
// the owner of the join to decide. A rejection's own cause is never
// searched. Nil and invalid rejections are not found.
func ClassifyInputRejection(err error) (*InputRejection, bool) {
	r, ok := classify[*InputRejection](err)
	if !ok || r.Validate() != nil {
		return nil, false
	}
	return r, true
}

// classify walks the single-error chain of err and returns the first T.
func classify[T error](err error) (T, bool) {
	var zero T
	for err != nil {
		if t, ok := err.(T); ok {
			return t, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return zero, false
		}
		err = u.Unwrap()
	}
	return zero, false
}

// InputValidationError reports a defect in a tool's input validator: it
// returned an error that is not an [InputRejection], or it panicked. It
// says nothing about the input that a model could act on and has no public
// message. Its cause is private, reachable only through Cause (an
// [*InputValidationPanicError] for a panic); Error does not include it.
//
// Where it comes from decides which sentinel it matches with errors.Is:
//   - from [Contract.Prepare] or [Signature.Decode], the validator failed
//     while judging a call's input: it matches [ErrInvalidInvocation], as
//     every error of Prepare does, because the call was not admitted;
//   - from [Bind], the tool's InputValidator method panicked while
//     declaring its validator: it matches [ErrInvalidTool] and not
//     ErrInvalidInvocation, because no call was made and the tool cannot be
//     bound.
//
// The zero value reports a validator failure at Prepare. All methods are
// safe on a nil receiver.
type InputValidationError struct {
	cause error
	bind  string // the tool's name when InputValidator panicked at Bind
}

// Cause returns the validator's error or an [*InputValidationPanicError].
func (e *InputValidationError) Cause() error {
	if e == nil {
		return nil
	}
	return e.cause
}

// Error reports that the validator failed, without its cause: "tool: "
// followed by its body.
func (e *InputValidationError) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project shows e when it quotes it: the text of the
// sentinel it matches, then what failed.
func (e *InputValidationError) errorBody() string {
	if e != nil && e.bind != "" {
		return fmt.Sprintf("%s: the InputValidator of tool %q panicked", errprefix.Body(ErrInvalidTool), e.bind)
	}
	return errprefix.Body(ErrInvalidInvocation) + ": the input validator failed"
}

// Is reports whether target is [ErrInvalidInvocation], or [ErrInvalidTool] for
// an error of [Bind].
func (e *InputValidationError) Is(target error) bool {
	if e != nil && e.bind != "" {
		return target == ErrInvalidTool
	}
	return target == ErrInvalidInvocation
}

// InputValidationPanicError holds the value recovered from a panic in an
// input validator, or in the InputValidator method that declares one. It
// is retained only behind [InputValidationError.Cause], so that a panic
// can never pass for an input rejection or an outcome.
type InputValidationPanicError struct {
	// Value is the recovered panic value.
	Value any
}

// Error describes the panic value: "tool: " followed by
// its body.
func (e *InputValidationPanicError) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project shows e when it quotes it: "input validator
// panicked: " and the value, formatted with %v (a value that is an error
// of this project without its own prefix); "input validator panicked"
// alone for a nil InputValidationPanicError.
func (e *InputValidationPanicError) errorBody() string {
	if e == nil {
		return "input validator panicked"
	}
	return errprefix.Part("input validator panicked: %v", e.Value).Error()
}

// Unwrap returns Value when it is an error, so errors.Is and errors.As see
// through a panic(err) once the cause has been taken out with
// [InputValidationError.Cause].
func (e *InputValidationPanicError) Unwrap() error {
	if e == nil {
		return nil
	}
	err, _ := e.Value.(error)
	return err
}

// runValidator calls validator on arguments, containing panics, and sorts
// the outcome into a value to hand to Call (or none), an [*InputRejection]
// or an [*InputValidationError].
func runValidator(validator func([]byte) (*decoded, error), arguments []byte) (value *decoded, err error) {
	defer func() {
		if v := recover(); v != nil {
			value, err = nil, &InputValidationError{cause: &InputValidationPanicError{Value: v}}
		}
	}()
	value, verr := validator(arguments)
	if verr == nil {
		return value, nil
	}
	if _, ok := ClassifyInputRejection(verr); ok {
		return nil, verr
	}
	if _, ok := classify[*InputValidationError](verr); ok {
		return nil, verr // already sorted, by a typed tool's own validator
	}
	// Anything else, a rejection hidden in a join included, is a defect of
	// the validator and has no public message.
	return nil, &InputValidationError{cause: verr}
}
