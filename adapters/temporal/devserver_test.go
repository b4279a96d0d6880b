package tooltemporal_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"google.golang.org/protobuf/encoding/protojson"

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

// On the server, a query waits for a worker: with none on the task
// queue, ListPending and ReadReceipt return only when ctx ends.
func TestDevServerQueriesWaitForAWorker(t *testing.T) {
	ctx, c := needDevServer(t)
	workflowID := "tooltemporal-devserver-no-worker-" + time.Now().UTC().Format("150405.000")
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflowID, TaskQueue: workflowID}, turnWorkflowName, [][]dispatch.Call{})
	require.NoError(t, err)
	defer func() { _ = c.TerminateWorkflow(ctx, workflowID, "", "test done") }()
	for _, query := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := tooltemporal.ListPending(ctx, c, workflowID); return err },
		func(ctx context.Context) error {
			_, err := tooltemporal.ReadReceipt(ctx, c, workflowID, "a-1")
			return err
		},
	} {
		qctx, cancel := context.WithTimeout(ctx, time.Second)
		err := query(qctx)
		cancel()
		require.Error(t, err)
		require.ErrorIs(t, qctx.Err(), context.DeadlineExceeded, "it returned when ctx ended: %v", err)
	}
}

// On the server, with a payload codec and the failure converter of
// NewFailureConverter, the history holds a Failure's public output and
// an InputRejection's message only encoded.
func TestDevServerFailureDetailsEncoded(t *testing.T) {
	ctx, _ := needDevServer(t)
	dc := converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), xorCodec{})
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	c, err := client.DialContext(ctx, client.Options{HostPort: *temporalAddress, Logger: quiet,
		DataConverter: dc, FailureConverter: tooltemporal.NewFailureConverter(dc)})
	require.NoError(t, err)
	defer c.Close()
	workflowID := "tooltemporal-devserver-codec-" + time.Now().UTC().Format("150405.000")
	w := startWorker(t, c, workflowID, newBackend())
	defer w.Stop()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflowID, TaskQueue: workflowID}, turnWorkflowName,
		[][]dispatch.Call{{call("c1", "cancel", `{"item":"A-1"}`), call("c2", "picky", `{"item":"A-1"}`)}})
	require.NoError(t, err)
	var got [][]outcome
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, cancelOutput, got[0][0].Output, "the client with the codec reads the details")
	require.Equal(t, dispatch.KindRejected, got[0][1].Kind)

	var text string
	it := c.GetWorkflowHistory(ctx, workflowID, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	failures := 0
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		data, err := protojson.Marshal(e)
		require.NoError(t, err)
		text += string(data) + "\n"
		if f := e.GetActivityTaskFailedEventAttributes().GetFailure(); f != nil {
			failures++
			for _, p := range payloadsOf(f) {
				text += string(p.Data) + "\n"
			}
		}
	}
	require.Equal(t, 2, failures)
	for _, public := range []string{"The order could not be cancelled.", "receipt.png", "item is out of range"} {
		require.NotContains(t, text, public)
	}
	require.NotContains(t, text, planted)
}
