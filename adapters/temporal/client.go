package tooltemporal

import (
	"context"
	"errors"
	"strings"
	"unicode/utf8"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// SendAnswer sends a to the workflow workflowID (its latest run) as an
// [UpdateAnswer] update and waits until the workflow has taken it. It
// returns the answer's [Receipt] when the answer was accepted: the call
// resumes (ask [ReadReceipt] for its outcome later).
//
// Sending is idempotent under a.ID, which is required: the update's ID is
// derived from it and from the ID of the workflow's latest run, which
// SendAnswer asks the server for first (DescribeWorkflow), so
// Temporal hands a resend to the same run the result of the update it
// already has, and a workflow that accepted the answer before returns
// its Receipt again. A run made by a reset gets the answer under an
// update ID of its own: the update that the reset reapplied, or that a
// run refused, keeps the old one (see "What a reset means for a call"
// in the package documentation). SendAnswer compares the Receipt with
// what it sent:
// one for another call, or with another answer digest
// ([dispatch.AnswerSHA256]), means the ID had been used for another
// answer, which Temporal answered for instead of this one; that is an
// [*AnswerIDError], and this answer was not accepted. An ID names one
// answer to one call, in a run: choose a new one for each answer.
//
// What each uncertain path means:
//
//   - ctx ends, or the connection fails, before SendAnswer returns: the
//     answer has not been withdrawn. It may have been accepted, or may
//     still be accepted once a worker takes it. Send it again with the
//     same ID (never under a new one: a second ID is a second answer,
//     refused if the first was accepted, accepted if it was not), or
//     ask [ReadReceipt] with its ID.
//   - No worker runs the workflow: SendAnswer waits for one, as long as
//     ctx allows. Bound it with a deadline on ctx.
//   - The workflow refuses the answer (it breaks the response schema, no
//     call waits with its key, the call was answered already by another
//     answer, or the run had seen its ID with another answer): an error
//     wrapping [dispatch.ErrInvalidAnswer] whose message is the
//     validator's reason; the call keeps waiting (unless answered) and
//     nothing is written to the workflow's history.
//   - The workflow has completed: no call waits any more. An answer it
//     accepted before, sent again, gets its Receipt while Temporal keeps
//     the update's outcome; otherwise the error wraps
//     [dispatch.ErrInvalidAnswer] (the answer lost to another, or came
//     too late), and [ReadReceipt] tells which answer was accepted.
//   - The workflow was reset (`temporal workflow reset`) after it
//     accepted the answer: see "What a reset means for a call" in the
//     package documentation.
//
// Other errors are the client's. The Receipt is the caller's.
func SendAnswer(ctx context.Context, c client.Client, workflowID string, a Answer) (Receipt, error) {
	if a.ID == "" || len(a.ID) > maxAnswerIDBytes || !utf8.ValidString(a.ID) {
		return Receipt{}, errprefix.Errorf("%w: an answer needs an ID of 1 to %d bytes of UTF-8", dispatch.ErrInvalidAnswer, maxAnswerIDBytes)
	}
	digest, err := dispatch.AnswerSHA256(a.Response)
	if err != nil {
		return Receipt{}, err
	}
	latest, err := c.DescribeWorkflow(ctx, workflowID, "")
	if err != nil {
		return Receipt{}, err
	}
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: workflowID,
		// Not pinned to that run: if a reset replaced it meanwhile, the
		// update goes to the new run, under an ID no update there has.
		UpdateID:     answerUpdateID(latest.WorkflowExecution.RunID, a.ID),
		UpdateName:   UpdateAnswer,
		Args:         []any{a},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return Receipt{}, sendError(err)
	}
	var r Receipt
	if err := handle.Get(ctx, &r); err != nil {
		return Receipt{}, sendError(err)
	}
	if r.AnswerID != a.ID || r.IdempotencyKey != a.IdempotencyKey || r.AnswerSHA256 != digest {
		// Temporal matched the update's ID and answered for the update
		// it had under it: the workflow never saw this answer.
		return Receipt{}, &AnswerIDError{Receipt: r}
	}
	return r, nil
}

// answerUpdateID is the ID of the update that carries the answer with ID
// answerID to the run runID. Temporal deduplicates updates by ID within a
// run, and a run made by a reset keeps the update IDs that the reset
// reapplied: one the reset run refused (the call it answered had not
// asked yet at the reset point) stays there, unusable, forever. An ID
// with the run's own ID is fresh in every run, and within a run the
// workflow's receipts keep an answer ID to one answer, whatever the
// update's ID.
func answerUpdateID(runID, answerID string) string {
	return UpdateAnswer + "/" + runID + "/" + answerID
}

// ReadReceipt asks the workflow workflowID (its latest run), with the
// [QueryReceipt] query, for the [Receipt] of the answer with ID answerID:
// whether it was accepted and, once the resumed call has one, its
// outcome. An answer the run did not accept is an error wrapping
// [ErrUnknownAnswer]. Other errors are the client's.
//
// A query is answered by a worker of the workflow's task queue, even
// after the workflow completed (the worker replays its history): while
// none runs, ReadReceipt waits, as long as ctx allows, or until the
// server gives up. Bound it with a deadline on ctx; an error of ctx then
// says nothing about the answer.
func ReadReceipt(ctx context.Context, c client.Client, workflowID, answerID string) (Receipt, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", QueryReceipt, answerID)
	if err != nil {
		return Receipt{}, unknownAnswer(err)
	}
	var r Receipt
	if err := v.Get(&r); err != nil {
		return Receipt{}, err
	}
	return r, nil
}

// unknownAnswer turns the error with which the [QueryReceipt] handler
// answered an unknown answer ID, which reaches the client as text (in an
// application error, or after the client's own prefix), back into an
// error wrapping [ErrUnknownAnswer]. Any other error is returned as it
// is.
func unknownAnswer(err error) error {
	if _, reason, ok := strings.Cut(errorMessage(err), ErrUnknownAnswer.Error()+": "); ok {
		return errprefix.Errorf("%w: %s", ErrUnknownAnswer, reason)
	}
	return err
}

// errorMessage is the message a workflow's handler error reaches a client
// with: an application error's own message, or the error's text.
func errorMessage(err error) string {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		return appErr.Message()
	}
	return err.Error()
}

// refusal turns the error with which the workflow's validator refused an
// answer, which reaches the client as an application error carrying the
// validator's message, back into an error wrapping
// [dispatch.ErrInvalidAnswer]. Any other error is returned as it is.
func refusal(err error) error {
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) {
		return err
	}
	reason, ok := strings.CutPrefix(appErr.Message(), dispatch.ErrInvalidAnswer.Error()+": ")
	if !ok {
		return err
	}
	return errprefix.Errorf("%w: %s", dispatch.ErrInvalidAnswer, reason)
}

// ListPending asks the workflow workflowID (its latest run), with the
// [QueryPending] query, which calls wait for an answer ([Pending]). The
// slice is the caller's. Errors are the client's.
//
// Like [ReadReceipt], it waits for a worker of the workflow's task queue
// to answer: while none runs, it blocks as long as ctx allows, or until
// the server gives up. Bound it with a deadline on ctx; an error of ctx
// then means the list is not known, not that it is empty.
func ListPending(ctx context.Context, c client.Client, workflowID string) ([]Pending, error) {
	v, err := c.QueryWorkflow(ctx, workflowID, "", QueryPending)
	if err != nil {
		return nil, err
	}
	var pending []Pending
	if err := v.Get(&pending); err != nil {
		return nil, err
	}
	return pending, nil
}

// sendError turns the error an [UpdateAnswer] update met into this
// package's: the validator's refusal, and the server's refusal of an
// update to a workflow that has completed, wrap [dispatch.ErrInvalidAnswer].
// Any other error is returned as it is.
func sendError(err error) error {
	if completed(err) {
		return errprefix.Errorf("%w: the workflow has completed: no call waits for an answer, and no answer with this ID was accepted (ReadReceipt tells which one was)", dispatch.ErrInvalidAnswer)
	}
	return refusal(err)
}

// completed reports whether err is the server's refusal of an update to
// a workflow that has completed. A completed workflow still answers an
// update whose ID it accepted before with that update's outcome; only an
// ID it never accepted gets this error. Temporal gives it no type of its
// own: it is a NotFound whose message says "workflow execution already
// completed" (the test environment says "Workflow … already completed").
func completed(err error) bool {
	var notFound *serviceerror.NotFound
	return errors.As(err, &notFound) && strings.Contains(strings.ToLower(notFound.Message), "already completed")
}
