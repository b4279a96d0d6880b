package tooltemporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// callInput is the input of the call activity: the call as proposed, the
// key workflow state chose for it, its principal, and, when it resumes,
// the sealed checkpoint and the answer the workflow accepted.
type callInput struct {
	CallID         string               `json:"call_id,omitempty"`
	Request        tool.Request         `json:"request"`
	IdempotencyKey tool.IdempotencyKey  `json:"idempotency_key"`
	Principal      string               `json:"principal,omitempty"`
	Checkpoint     *dispatch.Checkpoint `json:"checkpoint,omitempty"`
	Answer         json.RawMessage      `json:"answer,omitempty"`
}

// callResult is what the call activity returns when the call ended with a
// result: exactly one of an Output and an input request (stamped, so
// that the workflow can seal it and resume the same call).
type callResult struct {
	Output       *tool.Output       `json:"output,omitempty"`
	InputRequest *tool.InputRequest `json:"input_request,omitempty"`
}

// The types of the application errors the call activity returns. A
// Failure and an InputRejection are definite outcomes: they are never
// retried and the workflow rebuilds them from the error's details.
const (
	errTypeFailure     = "tool.Failure"
	errTypeRejection   = "tool.InputRejection"
	errTypeUnknownTool = "tool.UnknownTool"
	errTypeNotResumed  = "tool.NotResumed"
	errTypeUnknown     = "tool.UnknownOutcome"
)

// failureDetails carries a [tool.Failure] through Temporal's data converter.
type failureDetails struct {
	Kind   tool.FailureKind `json:"kind"`
	Output tool.Output      `json:"output"`
}

// rejectionDetails carries a [tool.InputRejection].
type rejectionDetails struct {
	Message string `json:"message"`
}

// callActivity runs one admitted call, or resumes one, on this worker's
// registry, and turns its outcome into what crosses Temporal. It admits the
// call again ([tool.Contract.Prepare]): a [tool.Invocation] does not leave
// the process that prepared it, and the worker that runs the activity may not
// be the one that ran the workflow.
//
// An attempt after the first (Temporal retries an activity whose attempt
// failed, timed out, or ran on a worker that died) does not simply run
// the call again: it finds the record of the attempt before it
// (historyClaims), and the Dispatcher asks the tool's Reconciler, or
// runs it again only when its effect makes that safe. An unknown outcome
// is retried when the tool is replayable, and, for a tool with a
// Reconciler, when the tool ran in this attempt, or an earlier attempt
// still runs it in this process: its next attempt reconciles it. An
// unknown outcome the Reconciler could not resolve is final.
func (r *Runtime) callActivity(ctx context.Context, in callInput) (callResult, error) {
	if r == nil || r.execute == nil {
		return callResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%v: the zero Runtime runs nothing", ErrInvalidConfig), errTypeNotResumed, nil)
	}
	if in.IdempotencyKey == "" {
		return callResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%v: the call has no idempotency key", ErrInvalidActivityInput), errTypeNotResumed, nil)
	}
	progress := heartbeats(ctx)
	attempt := &activityAttempt{number: 1}
	if activity.IsActivity(ctx) {
		attempt.number = activity.GetInfo(ctx).Attempt
	}
	ctx = withAttempt(ctx, attempt)
	var o dispatch.Outcome
	if in.Checkpoint != nil {
		if in.Checkpoint.IdempotencyKey() != in.IdempotencyKey {
			return callResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("%v: the checkpoint's key is not the call's", ErrInvalidActivityInput), errTypeNotResumed, nil)
		}
		var err error
		// Claimed in historyClaims, which always wins: the workflow
		// accepted this answer once, and schedules this resume once.
		if o, err = r.execute.Resume(ctx, *in.Checkpoint, dispatch.Answer{Response: in.Answer, Progress: progress}); err != nil {
			// Refused before anything ran: a checkpoint this worker
			// cannot open, or a tool that changed. The reason may quote
			// the answer or the call: the message says only which
			// check refused.
			if r.logger != nil {
				r.logger.WarnContext(ctx, "tool call not resumed", "tool", in.Checkpoint.Request().Name,
					"call_id", in.CallID, "idempotency_key", string(in.IdempotencyKey), "error", err.Error())
			}
			return callResult{}, temporal.NewNonRetryableApplicationError(notResumedText(in.Checkpoint.Request().Name, err), errTypeNotResumed, nil)
		}
	} else {
		o = r.execute.Run(ctx, dispatch.Call{ID: in.CallID, Request: in.Request, IdempotencyKey: in.IdempotencyKey, Principal: in.Principal, Progress: progress})
	}
	// A call in flight is one an earlier attempt still runs in this
	// process: once it returns, the next attempt reconciles it.
	return encodeOutcome(o, r.reconciled[o.Tool] && (attempt.ran.Load() || inFlight(o)))
}

// inFlight reports whether o is an unknown outcome that wraps
// dispatch.ErrConflict: a call an earlier attempt still runs in this
// process, and nothing ran. (ErrConflict also says that the key names
// another call, of other arguments or contract, which a retry of the
// same activity input meets only across a deploy that changed the
// tool; it is then retried under the policy, and runs nothing.)
func inFlight(o dispatch.Outcome) bool {
	return o.Kind == dispatch.KindUnknown && errors.Is(o.Err, dispatch.ErrConflict)
}

// heartbeats reports a tool's progress as heartbeats of the activity whose
// context is ctx. The details of the last heartbeat are the last
// [tool.Progress], visible to whoever describes the workflow.
func heartbeats(ctx context.Context) tool.ProgressReporter {
	return tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		activity.RecordHeartbeat(ctx, p)
		return nil
	})
}

// encodeOutcome turns the outcome of a call run in the activity into the
// activity's result or error.
//
// What an activity error carries is written to the workflow's history:
// its message and type in plain text, always, and its details as
// payloads, which a payload codec encrypts only if the worker has one.
// So no private text goes into either: not a Failure's or an
// InputRejection's cause, a panic's value, a tool's own error, or the
// error of an unknown outcome. The message holds public text (the tool's
// name, an InputRejection's public message) and the class of the error
// ([dispatch.SavedOutcome].ErrorClass); the details hold what the model
// may see (a Failure's kind and public Output). The private error goes to
// the worker's log ([Config].Logger), the one place that is the
// operator's, with the call's ID and key to find it by.
//
// An unknown outcome is retried when o.Retryable says so, or when
// reconcile does: the tool has a Reconciler, which the next attempt asks.
func encodeOutcome(o dispatch.Outcome, reconcile bool) (callResult, error) {
	class := dispatch.NewSavedOutcome(o).ErrorClass
	switch o.Kind {
	case dispatch.KindCompleted:
		out := o.Output
		return callResult{Output: &out}, nil
	case dispatch.KindSuspended:
		ir := o.Checkpoint.InputRequest()
		return callResult{InputRequest: &ir}, nil
	case dispatch.KindFailed:
		failure, _ := tool.ClassifyFailure(o.Err)
		return callResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the call to %s failed (class %s)", strconv.Quote(o.Tool), class), errTypeFailure, nil,
			failureDetails{Kind: failure.Kind(), Output: failure.Output()})
	case dispatch.KindRejected:
		rejection, _ := tool.ClassifyInputRejection(o.Err)
		return callResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the call to %s was rejected (class %s): %s", strconv.Quote(o.Tool), class, rejection.Message()), errTypeRejection, nil,
			rejectionDetails{Message: rejection.Message()})
	case dispatch.KindUnknownTool:
		// The name is the model's text, not a name this worker knows.
		return callResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the tool is not in this worker's registry (class %s)", class), errTypeUnknownTool, nil)
	}
	// Unknown: Temporal may try again only when the tool is replayable
	// or its next attempt asks a Reconciler; the retry policy says so
	// too, this says it twice.
	msg := fmt.Sprintf("the outcome of the call to %s is unknown (class %s)", strconv.Quote(o.Tool), class)
	if o.Retryable || reconcile {
		return callResult{}, temporal.NewApplicationError(msg, errTypeUnknown)
	}
	return callResult{}, temporal.NewNonRetryableApplicationError(msg, errTypeUnknown, nil)
}

// resumeRefusals are the errors Resume refuses with, by what they say
// about the call.
var resumeRefusals = []error{
	dispatch.ErrInvalidCheckpoint, dispatch.ErrInvalidAnswer, dispatch.ErrExpired, dispatch.ErrWrongPrincipal,
	dispatch.ErrAlreadyAnswered, dispatch.ErrStore, dispatch.ErrInvalidConfig,
}

// notResumedText is the message of the activity error of a resume that
// was refused: which check refused it (the sentinel's text), not why in
// detail, which may quote the answer or the call.
func notResumedText(name string, err error) string {
	reason := "refused"
	for _, sentinel := range resumeRefusals {
		if errors.Is(err, sentinel) {
			reason = sentinel.Error()
			break
		}
	}
	return fmt.Sprintf("the call to %s was not resumed: %s", strconv.Quote(name), reason)
}

// decodeResult rebuilds, in the workflow, what [tool.Binding.Call] returned
// in the activity: the result, a [*tool.Failure] or [*tool.InputRejection]
// made from the error's details, or the activity error itself when the
// outcome is not known.
func decodeResult(res callResult, err error) (tool.Result, error) {
	if err == nil {
		switch {
		case res.Output != nil && res.InputRequest == nil:
			return tool.Result{Output: *res.Output}, nil
		case res.InputRequest != nil && res.Output == nil:
			return tool.Result{InputRequest: res.InputRequest}, nil
		}
		return tool.Result{}, errprefix.Errorf("%w: want exactly one of an output and an input request", ErrInvalidActivityResult)
	}
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return tool.Result{}, err
	}
	switch appErr.Type() {
	case errTypeFailure:
		var d failureDetails
		if derr := appErr.Details(&d); derr != nil {
			return tool.Result{}, errprefix.Errorf("%w: failure details: %v: %w", ErrInvalidActivityResult, derr, err)
		}
		failure, ferr := tool.NewFailure(tool.FailureConfig{Kind: d.Kind, Output: d.Output, Cause: err})
		if ferr != nil {
			return tool.Result{}, errprefix.Errorf("%w: %v: %w", ErrInvalidActivityResult, ferr, err)
		}
		return tool.Result{}, failure
	case errTypeRejection:
		var d rejectionDetails
		if derr := appErr.Details(&d); derr != nil {
			return tool.Result{}, errprefix.Errorf("%w: rejection details: %v: %w", ErrInvalidActivityResult, derr, err)
		}
		rejection, rerr := tool.NewInputRejection(tool.InputRejectionConfig{Message: d.Message, Cause: err})
		if rerr != nil {
			return tool.Result{}, errprefix.Errorf("%w: %v: %w", ErrInvalidActivityResult, rerr, err)
		}
		return tool.Result{}, rejection
	}
	return tool.Result{}, err
}
