package tooltemporal_test

import (
	"context"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// keyPrefix is how keys begin in the test environment: its workflow ID
// and run ID.
const keyPrefix = "default-test-workflow-id/default-test-run-id/"

func TestTurnOfThreeEffects(t *testing.T) {
	b := newBackend()
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	got := runTurns(t, env, []dispatch.Call{
		call("c1", "lookup", `{"item":"kettle"}`),
		call("c2", "reserve", `{"item":"kettle"}`),
		call("c3", "charge", `{"item":"kettle"}`),
	})
	require.Equal(t, [][]outcome{{
		{CallID: "c1", Tool: "lookup", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("6 in stock of kettle"), Key: keyPrefix + "1"},
		{CallID: "c2", Tool: "reserve", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("reserve done with key " + keyPrefix + "2"), Key: keyPrefix + "2"},
		{CallID: "c3", Tool: "charge", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("charge done with key " + keyPrefix + "3"), Key: keyPrefix + "3"},
	}}, got)
}

// A replayable tool that fails twice is retried with the same key and
// completes; a tool without a replay promise runs once and its outcome is
// unknown.
func TestRetryFollowsEffect(t *testing.T) {
	b := newBackend()
	b.failFirst["reserve"] = 2
	b.failFirst["charge"] = 2
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	got := runTurns(t, env, []dispatch.Call{
		call("c1", "reserve", `{"item":"kettle"}`),
		call("c2", "charge", `{"item":"kettle"}`),
	})
	reserveKey, chargeKey := tool.IdempotencyKey(keyPrefix+"1"), tool.IdempotencyKey(keyPrefix+"2")
	require.Equal(t, []tool.IdempotencyKey{reserveKey, reserveKey, reserveKey}, b.attempts("reserve"))
	require.Equal(t, []tool.IdempotencyKey{chargeKey}, b.attempts("charge"))

	require.Len(t, got, 1)
	require.Equal(t, outcome{CallID: "c1", Tool: "reserve", Kind: dispatch.KindCompleted,
		Output: tool.NewTextOutput("reserve done with key " + string(reserveKey)), Key: reserveKey}, got[0][0])
	charge := got[0][1]
	require.Equal(t, dispatch.KindUnknown, charge.Kind)
	require.True(t, charge.IsError)
	require.False(t, charge.Retryable, "charge makes no replay promise")
	require.Equal(t, chargeKey, charge.Key)
	require.Equal(t, tool.NewTextOutput(`The call to "charge" did not complete and its outcome is unknown.`), charge.Output)
	require.Contains(t, charge.Err, `the outcome of the call to "charge" is unknown (class error)`)
	require.NotContains(t, charge.Err, planted, "the tool's own error is private: the worker's log has it, not the history")
}

// A replayable tool that never succeeds ends unknown once its policy is
// spent, and says a retry with the same key is safe.
func TestRetriesSpentAreUnknown(t *testing.T) {
	b := newBackend()
	b.failFirst["reserve"] = 100
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	got := runTurns(t, env, []dispatch.Call{call("c1", "reserve", `{"item":"kettle"}`)})
	require.Len(t, b.attempts("reserve"), int(retry.MaximumAttempts))
	require.Equal(t, dispatch.KindUnknown, got[0][0].Kind)
	require.True(t, got[0][0].Retryable)
}

// Definite outcomes cross Temporal's data converter intact and are not
// retried: a Failure with text, media and exact-number details, and an
// InputRejection from Call. Calls that are not admitted, or name no tool,
// start no activity.
func TestDefiniteOutcomesCrossTheConverter(t *testing.T) {
	b := newBackend()
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	started := map[string]int{}
	env.SetOnActivityStartedListener(func(_ *activity.Info, _ context.Context, args converter.EncodedValues) {
		var in struct {
			Request tool.Request `json:"request"`
		}
		require.NoError(t, args.Get(&in))
		started[in.Request.Name]++
	})
	got := runTurns(t, env, []dispatch.Call{
		call("c1", "cancel", `{"item":"A-1"}`),
		call("c2", "picky", `{"item":"A-1"}`),
		call("c3", "lookup", `{"item":""}`),
		call("c4", "teleport", `{}`),
	})[0]

	require.Equal(t, dispatch.KindFailed, got[0].Kind)
	require.True(t, got[0].IsError)
	require.Equal(t, cancelOutput, got[0].Output)
	require.Contains(t, got[0].Err, `the call to "cancel" failed (class failure)`)
	require.NotContains(t, got[0].Err, planted, "the private cause stays in the worker's log, out of the history")

	require.Equal(t, dispatch.KindRejected, got[1].Kind)
	require.Equal(t, tool.NewTextOutput("item is out of range"), got[1].Output)

	require.Equal(t, dispatch.KindRejected, got[2].Kind)
	require.Equal(t, tool.NewTextOutput(`arguments of "lookup" do not match its input schema at /item: minLength: got 0, want 1`), got[2].Output)

	require.Equal(t, dispatch.KindUnknownTool, got[3].Kind)
	require.Equal(t, tool.NewTextOutput(`There is no tool named "teleport". Available tools: cancel, charge, explode, lookup, picky, refund, report, reserve.`), got[3].Output)

	require.Equal(t, map[string]int{"cancel": 1, "picky": 1}, started)
}

// Progress reported by a tool is the activity's heartbeats, and media in
// a completed Output survives the converter.
func TestProgressBecomesHeartbeats(t *testing.T) {
	env := newEnv(t, newRuntime(t, newRegistry(t, newBackend())))
	var beats []tool.Progress
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, details converter.EncodedValues) {
		var p tool.Progress
		require.NoError(t, details.Get(&p))
		beats = append(beats, p)
	})
	got := runTurns(t, env, []dispatch.Call{call("c1", "report", `{"item":"May"}`)})[0]
	require.Equal(t, dispatch.KindCompleted, got[0].Kind)
	require.Equal(t, tool.Output{Content: []tool.Block{tool.NewTextBlock("the report"), tool.NewMediaBlock("text/csv", []byte("a,b\n1,2\n"))}}, got[0].Output)
	// The SDK throttles heartbeats: the first is sent at once, later ones
	// at most once per throttle interval, and the server keeps the last.
	require.NotEmpty(t, beats)
	require.Equal(t, tool.Progress{Completed: 1, Total: 3, Message: "step 1"}, beats[0])
	for _, p := range beats {
		require.Contains(t, []tool.Progress{{Completed: 1, Total: 3, Message: "step 1"}, {Completed: 2, Total: 3, Message: "step 2"}, {Completed: 3, Total: 3, Message: "step 3"}}, p)
	}
}
