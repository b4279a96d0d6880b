package tooltemporal_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"log/slog"
	"os"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// temporalAddress is the Temporal frontend that -update
// ([adaptertest.Update]) records against (temporal server start-dev).
var temporalAddress = flag.String("temporal-address", "127.0.0.1:7233", "the Temporal frontend -update records against (temporal server start-dev)")

// historyFile is the history of one run of the test workflow on a real
// Temporal server, recorded by -update: the turns of recordedTurns, with
// the worker that ran the first turn stopped while the refund waited, and
// a worker built from scratch answering (once refused, once accepted,
// once resent) and finishing it.
const historyFile = "testdata/refund.history.json"

const recordedWorkflowID = "tooltemporal-refund-replay"

var recordedTurns = [][]dispatch.Call{
	{
		call("c1", "lookup", `{"item":"kettle"}`),
		call("c2", "reserve", `{"item":"kettle"}`), // fails twice, then completes
		call("c3", "charge", `{"item":"kettle"}`),  // fails once: unknown
		call("c4", "refund", `{"item":"A-1001"}`),  // waits for approval
	},
	{
		call("c5", "cancel", `{"item":"A-1001"}`),  // a definite failure
		call("c6", "lookup", `{"item":""}`),        // not admitted
		call("c7", "teleport", `{}`),               // no such tool
		call("c8", "picky", `{"item":"A-1001"}`),   // rejected in Call
		call("c9", "explode", `{"item":"A-1001"}`), // panics: Recover makes it a Failure
	},
}

// A worker with a registry built from scratch replays the recorded
// history: same admissions, same activities, same keys, same waiting.
func TestReplayRecordedHistory(t *testing.T) {
	if *adaptertest.Update {
		recordHistory(t)
		recordResetHistory(t)
	}
	require.NoError(t, replay(t, newRegistry(t, newBackend())))
}

// replay replays the recorded history on a fresh replayer whose workflow
// uses reg. The replayer is told the workflow ID, and nothing else: keys
// are made of the workflow ID and the original run ID, which the
// history's first event records, and by default the replayer makes up a
// workflow ID, under which no answer in the history would find its call.
// The run ID is not needed, even for the run a reset made.
func replay(t *testing.T, reg *tool.Registry) error {
	t.Helper()
	return replayFile(t, reg, historyFile, recordedWorkflowID)
}

func replayFile(t *testing.T, reg *tool.Registry, file, workflowID string) error {
	t.Helper()
	history := readHistory(t, file)
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(turnWorkflow(newRuntime(t, reg)), workflow.RegisterOptions{Name: turnWorkflowName})
	return replayer.ReplayWorkflowHistoryWithOptions(nil, history, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: workflowID},
	})
}

func readHistory(t *testing.T, file string) *historypb.History {
	t.Helper()
	f, err := os.Open(file)
	require.NoError(t, err)
	defer f.Close()
	history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	return history
}

// runID returns the ID of the run whose history this is. A run that was
// reset has its own ID, which only the workflow task that the reset
// failed records (its NewRunId); its first event, copied from the run it
// was reset from, records that run's original ID. A run that was not
// reset is its own original run.
func runID(history *historypb.History) string {
	id := originalRunID(history)
	for _, e := range history.Events {
		if a := e.GetWorkflowTaskFailedEventAttributes(); a != nil && a.Cause == enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW {
			id = a.NewRunId
		}
	}
	return id
}

// originalRunID returns the original run ID the history's first event
// records, which the keys are made of.
func originalRunID(history *historypb.History) string {
	return history.Events[0].GetWorkflowExecutionStartedEventAttributes().OriginalExecutionRunId
}

// The replayer is not lenient: a worker whose registry lacks a tool the
// history used admits that call differently (no activity), and the replay
// fails.
func TestReplayRefusesAnotherRegistry(t *testing.T) {
	b := newBackend()
	full := newRegistry(t, b)
	var bindings []tool.Binding
	for _, def := range full.Definitions() {
		if def.Name == "reserve" {
			continue
		}
		binding, ok := full.Resolve(def.Name)
		require.True(t, ok)
		bindings = append(bindings, binding)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	// TMPRL1100 is the SDK's code for a nondeterministic replay.
	require.ErrorContains(t, replay(t, reg), "TMPRL1100")
}

// Keys are made of the workflow ID and the original run ID: replayed
// under the replayer's made-up workflow ID, the recorded answer finds no
// call waiting with its key, the resumed call is not scheduled, and the
// replay fails. A replay must be told the workflow ID (see replay).
func TestReplayNeedsTheOriginalExecution(t *testing.T) {
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(turnWorkflow(newRuntime(t, newRegistry(t, newBackend()))), workflow.RegisterOptions{Name: turnWorkflowName})
	require.ErrorContains(t, replayer.ReplayWorkflowHistoryFromJSONFile(nil, historyFile), "TMPRL1100")
}

// What the server recorded: every attempt of a call carried the key the
// workflow chose, the resumed refund carried the same key as the call that
// asked, the replayable tool took three attempts in one activity and the
// unmarked tool one.
func TestRecordedHistoryKeepsKeys(t *testing.T) {
	history := readHistory(t, historyFile)
	type scheduled struct {
		Request        tool.Request        `json:"request"`
		IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
		// Decoded strictly: a checkpoint of version 1 would not decode.
		Checkpoint *dispatch.Checkpoint `json:"checkpoint"`
	}
	byEvent := map[int64]scheduled{}
	keys := map[string][]tool.IdempotencyKey{}
	resumed := map[string]bool{}
	attempts := map[string]int32{}
	answers := 0
	for _, e := range history.Events {
		switch {
		case e.GetActivityTaskScheduledEventAttributes() != nil:
			var in scheduled
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(e.GetActivityTaskScheduledEventAttributes().Input, &in))
			byEvent[e.EventId] = in
			keys[in.Request.Name] = append(keys[in.Request.Name], in.IdempotencyKey)
			if in.Checkpoint != nil {
				resumed[in.Request.Name] = true
				require.Equal(t, in.IdempotencyKey, in.Checkpoint.IdempotencyKey())
			}
		case e.GetActivityTaskStartedEventAttributes() != nil:
			a := e.GetActivityTaskStartedEventAttributes()
			attempts[byEvent[a.ScheduledEventId].Request.Name] = a.Attempt
		case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			answers++
		}
	}
	prefix := recordedWorkflowID + "/" + originalRunID(history) + "/"
	key := func(n string) tool.IdempotencyKey { return tool.IdempotencyKey(prefix + n) }
	require.Equal(t, map[string][]tool.IdempotencyKey{
		"lookup":  {key("1")},
		"reserve": {key("2")},
		"charge":  {key("3")},
		"refund":  {key("4"), key("4")},
		"cancel":  {key("5")},
		"picky":   {key("8")},
		"explode": {key("9")},
	}, keys, "no activity for the call that was not admitted or named no tool")
	require.Equal(t, map[string]bool{"refund": true}, resumed)
	require.Equal(t, int32(3), attempts["reserve"])
	require.Equal(t, int32(1), attempts["charge"])
	require.Equal(t, 1, answers, "the refused answer left no trace")
}

// recordHistory runs recordedTurns on the Temporal server at
// -temporal-address and writes the history to historyFile.
func recordHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dial(t, ctx)
	defer c.Close()
	taskQueue := "tooltemporal-replay-" + time.Now().UTC().Format("20060102T150405")

	b := newBackend()
	b.failFirst["reserve"] = 2
	b.failFirst["charge"] = 1
	first := startWorker(t, c, taskQueue, b)
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: recordedWorkflowID, TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
	}, turnWorkflowName, recordedTurns)
	require.NoError(t, err)

	pending := waitPending(t, ctx, c, recordedWorkflowID)
	first.Stop()
	second := startWorker(t, c, taskQueue, b)
	defer second.Stop()

	key := pending[0].IdempotencyKey
	_, err = tooltemporal.SendAnswer(ctx, c, recordedWorkflowID, tooltemporal.Answer{ID: "approval-1", IdempotencyKey: key, Response: json.RawMessage(`{"approved":1}`)})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	require.EqualError(t, err, "tool: invalid answer: the answer does not match the response schema: at /approved: got number, want boolean")
	// A refused answer leaves no trace, whatever it holds.
	_, err = tooltemporal.SendAnswer(ctx, c, recordedWorkflowID, tooltemporal.Answer{ID: "approval-0", IdempotencyKey: key, Response: json.RawMessage(`{"approved":true,"SECRET-answer-member":1}`)})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	answer := tooltemporal.Answer{ID: "approval-2", IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)}
	receipt, err := tooltemporal.SendAnswer(ctx, c, recordedWorkflowID, answer)
	require.NoError(t, err)
	require.Equal(t, "approval-2", receipt.AnswerID)
	again, err := tooltemporal.SendAnswer(ctx, c, recordedWorkflowID, answer)
	require.NoError(t, err)
	require.Equal(t, receipt, again, "a resend gets the first receipt")
	var got [][]outcome
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, dispatch.KindCompleted, got[0][3].Kind)

	// Receipts over a real server, after the workflow closed.
	read, err := tooltemporal.ReadReceipt(ctx, c, recordedWorkflowID, "approval-2")
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, read.Kind)
	_, err = tooltemporal.ReadReceipt(ctx, c, recordedWorkflowID, "never-sent")
	require.ErrorIs(t, err, tooltemporal.ErrUnknownAnswer)

	writeHistory(t, ctx, c, recordedWorkflowID, run.GetRunID(), historyFile)
}

// resetHistoryFile is the history of a run made by `temporal workflow
// reset` while the refund waited for approval, recorded by -update: the
// reset run kept the call's key, accepted the answer given for the key
// listed before the reset, and resumed the call once.
const resetHistoryFile = "testdata/reset.history.json"

const resetWorkflowID = "tooltemporal-reset-replay"

// recordResetHistory runs one refund on the server, resets the workflow
// to the workflow task in which the refund suspended, answers in the
// reset run, and writes the reset run's history to resetHistoryFile.
func recordResetHistory(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := dial(t, ctx)
	defer c.Close()
	taskQueue := "tooltemporal-reset-" + time.Now().UTC().Format("20060102T150405")
	b := newBackend()
	w := startWorker(t, c, taskQueue, b)
	defer w.Stop()
	turn := []dispatch.Call{call("c1", "refund", `{"item":"A-1002"}`)}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: resetWorkflowID, TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
	}, turnWorkflowName, [][]dispatch.Call{turn})
	require.NoError(t, err)
	before := waitPending(t, ctx, c, resetWorkflowID)[0].IdempotencyKey

	// The reset point: the last workflow task completed, in which the
	// refund's result was settled and the call began to wait.
	var point int64
	it := c.GetWorkflowHistory(ctx, resetWorkflowID, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		if e.GetWorkflowTaskCompletedEventAttributes() != nil {
			point = e.EventId
		}
	}
	reset, err := c.ResetWorkflowExecution(ctx, &workflowservice.ResetWorkflowExecutionRequest{
		Namespace:                 "default",
		WorkflowExecution:         &commonpb.WorkflowExecution{WorkflowId: resetWorkflowID, RunId: run.GetRunID()},
		Reason:                    "tooltemporal reset test",
		WorkflowTaskFinishEventId: point,
		RequestId:                 "tooltemporal-reset-" + run.GetRunID(),
	})
	require.NoError(t, err)
	after := waitPending(t, ctx, c, resetWorkflowID)[0].IdempotencyKey
	require.Equal(t, before, after, "the same logical call keeps its key")

	_, err = tooltemporal.SendAnswer(ctx, c, resetWorkflowID, tooltemporal.Answer{ID: "approval-1", IdempotencyKey: before, Response: json.RawMessage(`{"approved":true}`)})
	require.NoError(t, err)
	var got [][]outcome
	require.NoError(t, c.GetWorkflow(ctx, resetWorkflowID, reset.GetRunId()).Get(ctx, &got))
	require.Equal(t, dispatch.KindCompleted, got[0][0].Kind, got[0][0].Err)
	require.Equal(t, []tool.IdempotencyKey{before, before}, b.attempts("refund"), "asked once, resumed once, one key")
	writeHistory(t, ctx, c, resetWorkflowID, reset.GetRunId(), resetHistoryFile)
}

func dial(t *testing.T, ctx context.Context) client.Client {
	t.Helper()
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	c, err := client.DialContext(ctx, client.Options{HostPort: *temporalAddress, Logger: quiet})
	require.NoError(t, err, "-update needs a Temporal server: temporal server start-dev")
	return c
}

// startWorker builds the tools and a worker from scratch and starts it.
func startWorker(t *testing.T, c client.Client, taskQueue string, b *backend) worker.Worker {
	t.Helper()
	rt := newRuntime(t, newRegistry(t, b))
	w := worker.New(c, taskQueue, worker.Options{})
	rt.Register(w)
	w.RegisterWorkflowWithOptions(turnWorkflow(rt), workflow.RegisterOptions{Name: turnWorkflowName})
	require.NoError(t, w.Start())
	return w
}

// waitPending waits until exactly one call of the workflow's latest run
// waits for an answer.
func waitPending(t *testing.T, ctx context.Context, c client.Client, workflowID string) []tooltemporal.Pending {
	t.Helper()
	var pending []tooltemporal.Pending
	require.Eventually(t, func() bool {
		var err error
		pending, err = tooltemporal.ListPending(ctx, c, workflowID)
		return err == nil && len(pending) == 1
	}, time.Minute, 200*time.Millisecond)
	return pending
}

// writeHistory writes the history of one run to file.
func writeHistory(t *testing.T, ctx context.Context, c client.Client, workflowID, runID, file string) {
	t.Helper()
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, workflowID, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	data, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(file, append(data, '\n'), 0o644))
	t.Logf("recorded %d events of run %s to %s", len(events), runID, file)
}

// The reset run replays under its own run ID with the keys of the run it
// was reset from: its first event's original run ID. Every activity of
// the call carried that key.
func TestReplayResetHistory(t *testing.T) {
	if _, err := os.Stat(resetHistoryFile); err != nil {
		t.Skipf("%s is not recorded: go test -run TestReplayRecordedHistory -update against temporal server start-dev", resetHistoryFile)
	}
	history := readHistory(t, resetHistoryFile)
	require.NotEqual(t, originalRunID(history), runID(history), "a reset run has an ID of its own")
	require.NoError(t, replayFile(t, newRegistry(t, newBackend()), resetHistoryFile, resetWorkflowID))
	key := tool.IdempotencyKey(resetWorkflowID + "/" + originalRunID(history) + "/1")
	var keys []tool.IdempotencyKey
	for _, e := range history.Events {
		if a := e.GetActivityTaskScheduledEventAttributes(); a != nil {
			var in struct {
				IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
			}
			require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(a.Input, &in))
			keys = append(keys, in.IdempotencyKey)
		}
	}
	require.Equal(t, []tool.IdempotencyKey{key, key}, keys, "asked before the reset, resumed after it, one key")
}

// The recorded histories hold none of the fake secrets the test tools
// plant in their private errors, in any message or payload, and no
// checkpoint of version 1.
func TestRecordedHistoryHoldsNoSecrets(t *testing.T) {
	payloadData := regexp.MustCompile(`"data":\s*"([A-Za-z0-9+/=]*)"`)
	for _, file := range []string{historyFile, resetHistoryFile} {
		raw, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) && file == resetHistoryFile {
			continue
		}
		require.NoError(t, err)
		text := string(raw)
		for _, m := range payloadData.FindAllStringSubmatch(text, -1) {
			decoded, err := base64.StdEncoding.DecodeString(m[1])
			require.NoError(t, err)
			text += "\n" + string(decoded)
		}
		require.NotContains(t, text, planted, file)
		require.NotRegexp(t, `"version":\s*1\b`, text, "%s: no checkpoint of version 1", file)
		require.Contains(t, text, `"version":2`, "%s: the payloads were read", file)
	}
}

// A reset run is replayed under its own run ID, which the workflow task
// failed by the reset records; its keys come from the original run ID of
// its first event, which the run it was reset from wrote.
func TestRunIDOfAResetRun(t *testing.T) {
	started := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
		WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{OriginalExecutionRunId: "base-run"},
	}}
	reset := &historypb.HistoryEvent{Attributes: &historypb.HistoryEvent_WorkflowTaskFailedEventAttributes{
		WorkflowTaskFailedEventAttributes: &historypb.WorkflowTaskFailedEventAttributes{
			Cause: enumspb.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW, BaseRunId: "base-run", NewRunId: "reset-run",
		},
	}}
	for _, tt := range []struct {
		name, why          string
		events             []*historypb.HistoryEvent
		runID, originalRun string
	}{
		{"not reset", "a run is its own original run", []*historypb.HistoryEvent{started}, "base-run", "base-run"},
		{"reset", "the reset run has an ID of its own and keeps the original", []*historypb.HistoryEvent{started, reset}, "reset-run", "base-run"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := &historypb.History{Events: tt.events}
			require.Equal(t, tt.runID, runID(h), tt.why)
			require.Equal(t, tt.originalRun, originalRunID(h), tt.why)
		})
	}
}
