package tooltemporal

import (
	"context"
	"errors"
	"strings"

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
// derived from it, so Temporal hands a resend the result of the update
// it already has, and a workflow that accepted the answer before returns
// its Receipt again. A sender that gave up waiting (a context that ended
// while no worker ran, say) has not withdrawn its answer: it may still be
// accepted later. Send it again with the same ID, or read its receipt,
// to learn what happened; never send it under a new ID.
//
// An answer the workflow refuses (no ID, it breaks the response schema,
// no call waits with its key, or its ID was used for another answer) is
// an error wrapping [dispatch.ErrInvalidAnswer] whose message is the
// validator's reason; the call keeps waiting and nothing is written to
// the workflow's history. Other errors are the client's.
func SendAnswer(ctx context.Context, c client.Client, workflowID string, a Answer) (Receipt, error) {
	if a.ID == "" {
		return Receipt{}, errprefix.Errorf("%w: an answer needs an ID of 1 to %d bytes of UTF-8", dispatch.ErrInvalidAnswer, maxAnswerIDBytes)
	}
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateID:     UpdateAnswer + "/" + a.ID,
		UpdateName:   UpdateAnswer,
		Args:         []any{a},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return Receipt{}, refusal(err)
	}
	var r Receipt
	if err := handle.Get(ctx, &r); err != nil {
		return Receipt{}, refusal(err)
	}
	return r, nil
}

// ReadReceipt asks the workflow workflowID (its latest run), with the
// [QueryReceipt] query, for the [Receipt] of the answer with ID answerID:
// whether it was accepted and, once the resumed call has one, its
// outcome. An answer the run did not accept is an error wrapping
// [ErrUnknownAnswer]. Other errors are the client's.
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
// slice is the caller's.
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
