package tooltemporal

import (
	"context"

	"go.temporal.io/sdk/client"
)

// SendAnswer sends a to the workflow workflowID (its latest run) as an
// UpdateAnswer update and waits until the workflow has taken it. It
// returns nil when the answer was accepted: the call resumes. An answer the
// workflow refuses (it breaks the response schema, or no call waits with
// its key) comes back as the update's error, with the validator's reason
// as its message; the call keeps waiting and nothing is written to the
// workflow's history. Other errors are the client's.
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
	return handle.Get(ctx, nil)
}

// ListPending asks the workflow workflowID (its latest run), with the
// QueryPending query, which calls wait for an answer. The slice is the
// caller's.
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
