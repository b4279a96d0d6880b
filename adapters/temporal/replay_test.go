package tooltemporal_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

var (
	update          = flag.Bool("update", false, "record "+historyFile+" again, against the Temporal server at -temporal-address")
	temporalAddress = flag.String("temporal-address", "127.0.0.1:7233", "the Temporal frontend -update records against (temporal server start-dev)")
)

// historyFile is the history of one run of the test workflow on a real
// Temporal server, recorded by -update: the turns of recordedTurns, with
// the worker that ran the first turn stopped while the refund waited, and
// a worker built from scratch answering and finishing it.
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
		call("c5", "cancel", `{"item":"A-1001"}`), // a definite failure
		call("c6", "lookup", `{"item":""}`),       // not admitted
		call("c7", "teleport", `{}`),              // no such tool
	},
}

// A worker with a registry built from scratch replays the recorded
// history: same admissions, same activities, same keys, same waiting.
func TestReplayRecordedHistory(t *testing.T) {
	if *update {
		recordHistory(t)
	}
	require.NoError(t, replay(t, newRegistry(t, newBackend())))
}

// replay replays the recorded history on a fresh replayer whose workflow
// uses reg. The replayer is told the original workflow ID and run ID:
// keys are made of them, and by default it replays under made-up ones,
// under which no answer in the history would find its call.
func replay(t *testing.T, reg *tool.Registry) error {
	t.Helper()
	history := readHistory(t)
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions(turnWorkflow(newRuntime(t, reg)), workflow.RegisterOptions{Name: turnWorkflowName})
	return replayer.ReplayWorkflowHistoryWithOptions(nil, history, worker.ReplayWorkflowHistoryOptions{
		OriginalExecution: workflow.Execution{ID: recordedWorkflowID, RunID: recordedRunID(history)},
	})
}

func readHistory(t *testing.T) *historypb.History {
	t.Helper()
	f, err := os.Open(historyFile)
	require.NoError(t, err)
	defer f.Close()
	history, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	return history
}

func recordedRunID(history *historypb.History) string {
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

// Keys are made of the workflow ID and run ID: replayed under the
// replayer's made-up ones, the recorded answer finds no call waiting with
// its key, the resumed call is not scheduled, and the replay fails. A
// replay must be told the original execution (see replay).
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
	history := readHistory(t)
	type scheduled struct {
		Request        tool.Request        `json:"request"`
		IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
		// The recorded history predates single-use checkpoints: its
		// checkpoint is of version 1, which dispatch no longer decodes
		// (a replay does not decode activity inputs). Read its key only.
		Checkpoint *struct {
			IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
		} `json:"checkpoint"`
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
				require.Equal(t, in.IdempotencyKey, in.Checkpoint.IdempotencyKey)
			}
		case e.GetActivityTaskStartedEventAttributes() != nil:
			a := e.GetActivityTaskStartedEventAttributes()
			attempts[byEvent[a.ScheduledEventId].Request.Name] = a.Attempt
		case e.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
			answers++
		}
	}
	prefix := recordedWorkflowID + "/" + recordedRunID(history) + "/"
	key := func(n string) tool.IdempotencyKey { return tool.IdempotencyKey(prefix + n) }
	require.Equal(t, map[string][]tool.IdempotencyKey{
		"lookup":  {key("1")},
		"reserve": {key("2")},
		"charge":  {key("3")},
		"refund":  {key("4"), key("4")},
		"cancel":  {key("5")},
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
	quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
	c, err := client.DialContext(ctx, client.Options{HostPort: *temporalAddress, Logger: quiet})
	require.NoError(t, err, "-update needs a Temporal server: temporal server start-dev")
	defer c.Close()
	taskQueue := "tooltemporal-replay-" + time.Now().UTC().Format("20060102T150405")

	b := newBackend()
	b.failFirst["reserve"] = 2
	b.failFirst["charge"] = 1
	startWorker := func() worker.Worker {
		rt := newRuntime(t, newRegistry(t, b)) // from scratch, every time
		w := worker.New(c, taskQueue, worker.Options{})
		rt.Register(w)
		w.RegisterWorkflowWithOptions(turnWorkflow(rt), workflow.RegisterOptions{Name: turnWorkflowName})
		require.NoError(t, w.Start())
		return w
	}
	first := startWorker()
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: recordedWorkflowID, TaskQueue: taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
	}, turnWorkflowName, recordedTurns)
	require.NoError(t, err)

	var pending []tooltemporal.Pending
	require.Eventually(t, func() bool {
		pending, err = tooltemporal.ListPending(ctx, c, recordedWorkflowID)
		return err == nil && len(pending) == 1
	}, time.Minute, 200*time.Millisecond)
	first.Stop()
	second := startWorker()
	defer second.Stop()

	key := pending[0].IdempotencyKey
	err = tooltemporal.SendAnswer(ctx, c, recordedWorkflowID, tooltemporal.Answer{IdempotencyKey: key, Response: json.RawMessage(`{"approved":1}`)})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	require.EqualError(t, err, "tool: invalid answer: the answer does not match the response schema: at /approved: got number, want boolean")
	require.NoError(t, tooltemporal.SendAnswer(ctx, c, recordedWorkflowID, tooltemporal.Answer{IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)}))
	var got [][]outcome
	require.NoError(t, run.Get(ctx, &got))
	require.Equal(t, dispatch.KindCompleted, got[0][3].Kind)

	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, recordedWorkflowID, run.GetRunID(), false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		require.NoError(t, err)
		events = append(events, e)
	}
	data, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(&historypb.History{Events: events})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(historyFile, append(data, '\n'), 0o644))
	t.Logf("recorded %d events of run %s to %s", len(events), run.GetRunID(), historyFile)
}
