package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// SavedOutcome is the storable form of an Outcome: its public parts, the
// sealed Checkpoint of a suspension, and, in place of the private error,
// a short class that says what kind of error it was (ErrorClass). It
// round-trips through JSON (MarshalJSON, UnmarshalJSON) and through
// NewSavedOutcome and Outcome. The zero SavedOutcome is not valid.
type SavedOutcome struct {
	CallID         string
	Tool           string
	Kind           Kind
	Output         tool.Output
	IsError        bool
	Retryable      bool
	Effect         tool.Effect
	IdempotencyKey tool.IdempotencyKey
	// Checkpoint is set when Kind is KindSuspended.
	Checkpoint *Checkpoint
	// ErrorClass reduces the private error to what a log needs, one of
	// the ErrorClass constants; empty when completed or suspended.
	ErrorClass string
	Duration   time.Duration
}

// The classes of a SavedOutcome's private error.
const (
	// ErrorClassFailure: a *tool.Failure of kind failed.
	ErrorClassFailure = "failure"
	// ErrorClassRefused: a *tool.Failure of kind rejected (a policy
	// refused the call).
	ErrorClassRefused = "refused"
	// ErrorClassDeclined: the person declined the call (Decline).
	ErrorClassDeclined = "declined"
	// ErrorClassInputRejection: a *tool.InputRejection.
	ErrorClassInputRejection = "input_rejection"
	// ErrorClassUnknownTool: no tool of that name.
	ErrorClassUnknownTool = "unknown_tool"
	// ErrorClassPanic: a panic (*tool.PanicError).
	ErrorClassPanic = "panic"
	// ErrorClassCanceled and ErrorClassDeadline: the call's context was
	// cancelled, or its deadline passed.
	ErrorClassCanceled = "canceled"
	ErrorClassDeadline = "deadline_exceeded"
	// ErrorClassInvalidResult: the tool's result broke its contract.
	ErrorClassInvalidResult = "invalid_result"
	// ErrorClassNotStarted: the call's tool was not started (its
	// context ended first, or Config.MaxAbandoned was reached), so it
	// did nothing; a call record with this outcome runs its next
	// attempt without asking (see StateUnknown).
	ErrorClassNotStarted = "not_started"
	// ErrorClassError: any other error.
	ErrorClassError = "error"
)

// NewSavedOutcome returns the storable form of o: its fields, with the
// private error reduced to its class. The Output is copied.
func NewSavedOutcome(o Outcome) SavedOutcome {
	return SavedOutcome{
		CallID:         o.CallID,
		Tool:           o.Tool,
		Kind:           o.Kind,
		Output:         o.Output.Clone(),
		IsError:        o.IsError,
		Retryable:      o.Retryable,
		Effect:         o.Effect,
		IdempotencyKey: o.IdempotencyKey,
		Checkpoint:     o.Checkpoint,
		ErrorClass:     errorClass(o),
		Duration:       o.Duration,
	}
}

// errorClass is the class of o's private error.
func errorClass(o Outcome) string {
	var declined *declinedError
	switch {
	case o.Kind == KindCompleted || o.Kind == KindSuspended || o.Kind == "":
		return ""
	case o.Kind == KindUnknownTool:
		return ErrorClassUnknownTool
	case errors.As(o.Err, &declined):
		return ErrorClassDeclined
	}
	var recorded *recordedError
	if errors.As(o.Err, &recorded) {
		return recorded.class
	}
	if failure, ok := tool.ClassifyFailure(o.Err); ok {
		if failure.Kind() == tool.FailureKindRejected {
			return ErrorClassRefused
		}
		return ErrorClassFailure
	}
	if _, ok := tool.ClassifyInputRejection(o.Err); ok {
		return ErrorClassInputRejection
	}
	var panicked *tool.PanicError
	var notStarted *notStartedError
	switch {
	case errors.As(o.Err, &notStarted):
		return ErrorClassNotStarted
	case errors.As(o.Err, &panicked):
		return ErrorClassPanic
	case errors.Is(o.Err, context.Canceled):
		return ErrorClassCanceled
	case errors.Is(o.Err, context.DeadlineExceeded):
		return ErrorClassDeadline
	case errors.Is(o.Err, tool.ErrInvalidResult):
		return ErrorClassInvalidResult
	}
	return ErrorClassError
}

// recordedError stands for a private error that was not stored: only its
// class is known.
type recordedError struct{ class string }

func (e *recordedError) Error() string {
	return fmt.Sprintf("recorded outcome with an error of class %q; the private error was not stored", e.class)
}

// declinedError is the private error of a declined call.
type declinedError struct{ principal string }

func (e *declinedError) Error() string {
	if e.principal == "" {
		return "the person declined the call"
	}
	return fmt.Sprintf("the call was declined by %q", truncate(e.principal, 128))
}

// Outcome returns the Outcome s stands for. Its Err is rebuilt from the
// class, as the same kind of error with the private part gone: a
// *tool.Failure with the public Output for a failed outcome, a
// *tool.InputRejection with the public text for a rejected one, and an
// error that names the class otherwise; the classifiers of package tool
// find them as they found the originals. Errors wrap ErrInvalidRecord.
func (s SavedOutcome) Outcome() (Outcome, error) {
	if err := s.Validate(); err != nil {
		return Outcome{}, err
	}
	o := Outcome{
		CallID:         s.CallID,
		Tool:           s.Tool,
		Kind:           s.Kind,
		Output:         s.Output.Clone(),
		IsError:        s.IsError,
		Retryable:      s.Retryable,
		Effect:         s.Effect,
		IdempotencyKey: s.IdempotencyKey,
		Checkpoint:     s.Checkpoint,
		Duration:       s.Duration,
	}
	cause := &recordedError{class: s.ErrorClass}
	switch s.Kind {
	case KindFailed:
		kind := tool.FailureKindFailed
		if s.ErrorClass == ErrorClassRefused || s.ErrorClass == ErrorClassDeclined {
			kind = tool.FailureKindRejected
		}
		var why error = cause
		if s.ErrorClass == ErrorClassDeclined {
			why = &declinedError{}
		}
		f, err := tool.NewFailure(tool.FailureConfig{Kind: kind, Output: s.Output, Cause: why})
		if err != nil {
			return Outcome{}, errprefix.Errorf("%w: outcome of call %q: %w", ErrInvalidRecord, s.CallID, err)
		}
		o.Err = f
	case KindRejected:
		text, _ := s.Output.Text()
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: text, Cause: cause})
		if err != nil {
			return Outcome{}, errprefix.Errorf("%w: outcome of call %q: %w", ErrInvalidRecord, s.CallID, err)
		}
		o.Err = r
	case KindUnknown, KindUnknownTool:
		o.Err = cause
	}
	return o, nil
}

// Validate reports whether s is consistent: a known kind, a tool name, a
// valid Output, a Checkpoint exactly when suspended, an error class
// exactly when the kind is an error. Errors wrap ErrInvalidRecord.
func (s SavedOutcome) Validate() error {
	bad := func(format string, args ...any) error {
		return errprefix.Errorf("%w: outcome of call %q: %s", ErrInvalidRecord, truncate(s.CallID, 80), fmt.Sprintf(format, args...))
	}
	switch s.Kind {
	case KindCompleted, KindSuspended, KindFailed, KindRejected, KindUnknownTool, KindUnknown:
	default:
		return bad("kind %q is not an outcome", string(s.Kind))
	}
	if err := s.Output.Validate(); err != nil {
		return bad("its output is not valid: %v", err)
	}
	if (s.Checkpoint != nil) != (s.Kind == KindSuspended) || (s.Checkpoint != nil && s.Checkpoint.keyID == "") {
		return bad("a checkpoint goes with a suspended outcome, and only with one")
	}
	isError := s.Kind != KindCompleted && s.Kind != KindSuspended
	if (s.ErrorClass != "") != isError || s.IsError != isError {
		return bad("an error class and IsError go with kinds failed, rejected, unknown_tool and unknown, and only with them")
	}
	if s.Tool == "" {
		return bad("no tool name")
	}
	return nil
}

// savedOutcomeWire is the JSON form of a SavedOutcome.
type savedOutcomeWire struct {
	CallID         string              `json:"call_id,omitempty"`
	Tool           string              `json:"tool"`
	Kind           Kind                `json:"kind"`
	Output         *tool.Output        `json:"output,omitempty"`
	IsError        bool                `json:"is_error,omitempty"`
	Retryable      bool                `json:"retryable,omitempty"`
	Effect         tool.Effect         `json:"effect,omitempty"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key,omitempty"`
	Checkpoint     *Checkpoint         `json:"checkpoint,omitempty"`
	ErrorClass     string              `json:"error_class,omitempty"`
	DurationNanos  int64               `json:"duration_ns,omitempty"`
}

// MarshalJSON writes s as one JSON object:
//
//	{"call_id":"…","tool":"…","kind":"…","output":{…},"is_error":true,
//	 "retryable":true,"effect":"…","idempotency_key":"…",
//	 "checkpoint":{…},"error_class":"…","duration_ns":123}
//
// with empty members left out. An invalid s is an error wrapping
// ErrInvalidRecord.
func (s SavedOutcome) MarshalJSON() ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	w := savedOutcomeWire{
		CallID: s.CallID, Tool: s.Tool, Kind: s.Kind, IsError: s.IsError, Retryable: s.Retryable,
		Effect: s.Effect, IdempotencyKey: s.IdempotencyKey, Checkpoint: s.Checkpoint,
		ErrorClass: s.ErrorClass, DurationNanos: int64(s.Duration),
	}
	if len(s.Output.Content) > 0 || len(s.Output.Details) > 0 {
		out := s.Output
		w.Output = &out
	}
	return jsonv2.Marshal(w)
}

// UnmarshalJSON decodes what MarshalJSON writes, strictly (no unknown or
// duplicate members), and validates it. Errors wrap ErrInvalidRecord (or
// ErrInvalidCheckpoint for the checkpoint); s is unchanged on error.
func (s *SavedOutcome) UnmarshalJSON(data []byte) error {
	var w savedOutcomeWire
	if err := jsonv2.Unmarshal(data, &w, jsonv2.RejectUnknownMembers(true)); err != nil {
		if errors.Is(err, ErrInvalidCheckpoint) {
			return err
		}
		return errprefix.Errorf("%w: outcome does not decode: %v", ErrInvalidRecord, err)
	}
	saved := SavedOutcome{
		CallID: w.CallID, Tool: w.Tool, Kind: w.Kind, IsError: w.IsError, Retryable: w.Retryable,
		Effect: w.Effect, IdempotencyKey: w.IdempotencyKey, Checkpoint: w.Checkpoint,
		ErrorClass: w.ErrorClass, Duration: time.Duration(w.DurationNanos),
	}
	if w.Output != nil {
		saved.Output = *w.Output
	}
	if err := saved.Validate(); err != nil {
		return err
	}
	*s = saved
	return nil
}
