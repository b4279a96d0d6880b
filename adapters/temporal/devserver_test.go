package tooltemporal_test

import (
	"context"
	"encoding/json"
	"flag"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// devServer runs the tests that need a real Temporal server (at
// -temporal-address: temporal server start-dev), which the SDK's test
// environment does not reproduce: what the server answers for a reused
// update ID, an update to a completed workflow, and an answer after
// `temporal workflow reset`.
var devServer = flag.Bool("devserver", false, "run the tests that need a Temporal server at -temporal-address (temporal server start-dev)")

func needDevServer(t *testing.T) (context.Context, client.Client) {
	t.Helper()
	if !*devServer {
		t.Skip("needs a Temporal server: temporal server start-dev, then -devserver")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	c := dial(t, ctx)
	t.Cleanup(c.Close)
	return ctx, c
}

// startRefund starts the test workflow with one refund on a fresh task
// queue with a worker, and returns the run and the key of the waiting
// call.
func startRefund(t *testing.T, ctx context.Context, c client.Client, workflowID string, b *backend) (client.WorkflowRun, tool.IdempotencyKey) {
	t.Helper()
	taskQueue := workflowID + "-" + time.Now().UTC().Format("20060102T150405.000")
	w := startWorker(t, c, taskQueue, b)
	t.Cleanup(w.Stop)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: workflowID, TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
	}, turnWorkflowName, [][]dispatch.Call{{call("c1", "refund", `{"item":"A-1"}`)}})
	require.NoError(t, err)
	return run, waitPending(t, ctx, c, workflowID)[0].IdempotencyKey
}

// On the server: another answer under a used ID is refused with the
// receipt of the first; after the workflow completed, the accepted
// answer sent again still gets its receipt, and another answer is an
// invalid answer.
func TestDevServerAnswerIDs(t *testing.T) {
	ctx, c := needDevServer(t)
	const workflowID = "tooltemporal-devserver-answer-ids"
	run, key := startRefund(t, ctx, c, workflowID, newBackend())
	declined := tooltemporal.Answer{ID: "approval-1", IdempotencyKey: key, Response: json.RawMessage(`{"approved":false}`)}
	first, err := tooltemporal.SendAnswer(ctx, c, workflowID, declined)
	require.NoError(t, err)
	flipped := declined
	flipped.Response = json.RawMessage(`{"approved":true}`)
	_, err = tooltemporal.SendAnswer(ctx, c, workflowID, flipped)
	var idErr *tooltemporal.AnswerIDError
	require.ErrorAs(t, err, &idErr)
	require.Equal(t, first, idErr.Receipt)
	t.Logf("another answer under a used ID: %v", err)

	var got [][]outcome
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, dispatch.KindFailed, got[0][0].Kind, "the declined answer stands")

	again, err := tooltemporal.SendAnswer(ctx, c, workflowID, declined)
	require.NoError(t, err, "the accepted answer, sent again after completion")
	require.Equal(t, first, again)
	_, err = tooltemporal.SendAnswer(ctx, c, workflowID, tooltemporal.Answer{ID: "approval-2", IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	t.Logf("another answer after completion: %v", err)
}

// resetTo resets the workflow's run, with reapply excluding what exclude
// lists, and returns the new run's ID. The reset point is the last
// completed workflow task before the first update was accepted (the call
// waited: what the tests of reset_test.go reproduce), or with first the
// first workflow task (the call had not asked yet: `temporal workflow
// reset --type FirstWorkflowTask`).
func resetTo(t *testing.T, ctx context.Context, c client.Client, workflowID, runID string, first bool, exclude []enumspb.ResetReapplyExcludeType) string {
	t.Helper()
	var point int64
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil {
			break
		}
		if e.GetWorkflowTaskCompletedEventAttributes() != nil {
			point = e.EventId
			if first {
				break
			}
		}
	}
	reset, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 "default",
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: workflowID, RunId: runID},
		Reason:                    "tooltemporal dev server test",
		WorkflowTaskFinishEventId: point,
		RequestId:                 "tooltemporal-devserver-" + runID,
		ResetReapplyExcludeTypes:  exclude,
	})
	require.NoError(t, err)
	return reset.GetRunId()
}

// A reset to before an accepted answer, as `temporal workflow reset`
// does it, while the call waited or before it asked, with the answer's
// update reapplied (the default) or not (--reapply-exclude Update). In
// every case the call resumes, under its key, and the sender's resend
// under the answer's ID is accepted with the same answer. (Before
// SendAnswer derived the update's ID from the run, a reset before the
// call asked left the reapplied update refused in the new run and its ID
// unusable there: every resend failed with an internal error.)
func TestDevServerReset(t *testing.T) {
	ctx, c := needDevServer(t)
	excludeUpdates := []enumspb.ResetReapplyExcludeType{enumspb.RESET_REAPPLY_EXCLUDE_TYPE_UPDATE}
	for _, tt := range []struct {
		name    string
		first   bool
		exclude []enumspb.ResetReapplyExcludeType
		// attempts is how often the refund ran, all under one key.
		attempts int
	}{
		{"while the call waited, updates reapplied (the default)", false, nil, 3},
		{"while the call waited, --reapply-exclude Update", false, excludeUpdates, 3},
		{"before the call asked, updates reapplied (the default)", true, nil, 4},
		{"before the call asked, --reapply-exclude Update", true, excludeUpdates, 4},
	} {
		t.Run(tt.name, func(t *testing.T) {
			workflowID := "tooltemporal-devserver-reset-" + time.Now().UTC().Format("150405.000")
			b := newBackend()
			run, key := startRefund(t, ctx, c, workflowID, b)
			approve := tooltemporal.Answer{ID: "approval-1", IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)}
			first, err := tooltemporal.SendAnswer(ctx, c, workflowID, approve)
			require.NoError(t, err)
			require.NoError(t, run.Get(ctx, nil))

			newRun := resetTo(t, ctx, c, workflowID, run.GetRunID(), tt.first, tt.exclude)
			if tt.first {
				// The reset run asks again before anything can answer it.
				waitPending(t, ctx, c, workflowID)
			}
			sendCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			again, err := tooltemporal.SendAnswer(sendCtx, c, workflowID, approve)
			require.NoError(t, err, "the answer sent again after the reset")
			require.Equal(t, first.IdempotencyKey, again.IdempotencyKey)
			require.Equal(t, first.AnswerSHA256, again.AnswerSHA256)

			var got [][]outcome
			require.NoError(t, c.GetWorkflow(ctx, workflowID, newRun).Get(ctx, &got))
			require.Equal(t, dispatch.KindCompleted, got[0][0].Kind, got[0][0].Err)
			attempts := b.attempts("refund")
			require.Len(t, attempts, tt.attempts)
			for _, k := range attempts {
				require.Equal(t, key, k)
			}
		})
	}
}
