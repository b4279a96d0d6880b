package tooltemporal

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/agentcontract/tool/dispatch"
)

// SendAnswer sends a to the workflow workflowID (its latest run) as an
// [UpdateAnswer] update and waits until the workflow has taken it. It
// returns nil when the answer was accepted: the call resumes. An answer the
// workflow refuses (it breaks the response schema, or no call waits with
// its key) is an error wrapping [dispatch.ErrInvalidAnswer] whose message
// is the validator's reason; the call keeps waiting and nothing is
// written to the workflow's history. Other errors are the client's.
func SendAnswer(ctx context.Context, c client.Client, workflowID string, a Answer) error {
	handle, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID:   workflowID,
		UpdateName:   UpdateAnswer,
		Args:         []any{a},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return err
	}
	return refusal(handle.Get(ctx, nil))
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
	return fmt.Errorf("%w: %s", dispatch.ErrInvalidAnswer, reason)
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
