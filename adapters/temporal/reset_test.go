package tooltemporal_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// run makes a test environment look like one run of a workflow on a real
// server, as far as keys are concerned: GetInfo reports its run ID and
// the original run ID its history records. A reset run has a run ID of
// its own and the original run ID of the run it was reset from. The
// results in recorded are what the first activities of the run return,
// in order, instead of running: a reset run replays the results its
// history recorded before the reset point.
type run struct {
	interceptor.WorkerInterceptorBase
	runID, originalRunID string
	recorded             []json.RawMessage
}

func (r *run) InterceptWorkflow(_ workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &runInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, run: r}
}

func (r *run) InterceptActivity(_ context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &runActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, run: r}
}

type runInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	run *run
}

func (i *runInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&runOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, run: i.run})
}

type runOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	run *run
}

func (o *runOutbound) GetInfo(ctx workflow.Context) *workflow.Info {
	info := *o.Next.GetInfo(ctx)
	info.WorkflowExecution.RunID = o.run.runID
	info.OriginalRunID = o.run.originalRunID
	return &info
}

type runActivity struct {
	interceptor.ActivityInboundInterceptorBase
	run *run
}

func (a *runActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	if len(a.run.recorded) > 0 {
		result := a.run.recorded[0]
		a.run.recorded = a.run.recorded[1:]
		return result, nil
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// newRunEnv is newEnv for one run r.
func newRunEnv(t *testing.T, rt *tooltemporal.Runtime, r *run) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	env := newEnv(t, rt)
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{r}})
	return env
}

// `temporal workflow reset` while a call waits: the new run replays the
// history up to the reset point under a run ID of its own, with the
// results its activities recorded in the first run. It is the same
// logical call: it keeps the key it had, the answer the approver gives
// for the key listed before the reset (or after it: the same) is
// accepted, and the call resumes with that key and completes, once.
func TestResetKeepsTheCall(t *testing.T) {
	const workflowID = "default-test-workflow-id"
	key := tool.IdempotencyKey(workflowID + "/base-run/1")
	for _, tt := range []struct {
		name string
		// answerWith picks the key the approver answers with, from what
		// was listed before and after the reset.
		answerWith func(before, after tool.IdempotencyKey) tool.IdempotencyKey
	}{
		{"answered with the key listed before the reset", func(before, _ tool.IdempotencyKey) tool.IdempotencyKey { return before }},
		{"answered with the key listed after the reset", func(_, after tool.IdempotencyKey) tool.IdempotencyKey { return after }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend()
			turn := []dispatch.Call{call("c1", "refund", `{"item":"A-1"}`)}

			// The first run: the refund asks, and waits.
			base := newRunEnv(t, newRuntime(t, newRegistry(t, b)), &run{runID: "base-run", originalRunID: "base-run"})
			var recorded []json.RawMessage
			base.SetOnActivityCompletedListener(func(_ *activity.Info, result converter.EncodedValue, err error) {
				require.NoError(t, err)
				var raw json.RawMessage
				require.NoError(t, result.Get(&raw))
				recorded = append(recorded, raw)
			})
			var before tool.IdempotencyKey
			base.RegisterDelayedCallback(func() {
				p := pending(t, base)
				require.Len(t, p, 1)
				before = p[0].IdempotencyKey
				base.CancelWorkflow() // the run the reset replaces ends here
			}, time.Hour)
			base.ExecuteWorkflow(turnWorkflowName, [][]dispatch.Call{turn})
			require.Equal(t, key, before)
			require.Len(t, recorded, 1)

			// The reset run: same history up to the suspension, new run ID.
			reset := newRunEnv(t, newRuntime(t, newRegistry(t, b)), &run{runID: "reset-run", originalRunID: "base-run", recorded: recorded})
			u := newUpdates(reset)
			var after tool.IdempotencyKey
			reset.RegisterDelayedCallback(func() {
				p := pending(t, reset)
				require.Len(t, p, 1)
				after = p[0].IdempotencyKey
				u.send("approve", tooltemporal.Answer{ID: "approval-1", IdempotencyKey: tt.answerWith(before, after), Response: json.RawMessage(`{"approved":true}`)})
			}, time.Hour)
			reset.RegisterDelayedCallback(func() {
				if !u.accepted["approve"] {
					reset.CancelWorkflow() // refused: the call would wait forever
				}
			}, 2*time.Hour)
			reset.ExecuteWorkflow(turnWorkflowName, [][]dispatch.Call{turn})
			require.NoError(t, reset.GetWorkflowError())
			var got [][]outcome
			require.NoError(t, reset.GetWorkflowResult(&got))

			require.Equal(t, key, after, "the same logical call keeps its key")
			require.NoError(t, u.refused["approve"])
			require.Equal(t, outcome{CallID: "c1", Tool: "refund", Kind: dispatch.KindCompleted,
				Output: tool.NewTextOutput(`refunded with key ` + string(key) + ` after {"asked":1}`), Key: key}, got[0][0])
			require.Equal(t, []tool.IdempotencyKey{key, key}, b.attempts("refund"), "asked in the first run, resumed once in the reset run, one key")
		})
	}
}
