package tooltemporal_test

import (
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
