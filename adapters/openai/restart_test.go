package toolopenai_test

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/adaptertest"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

// A turn with a call that waits for a person is saved in the claim store;
// after a restart the call is resumed, and the turn is answered to the
// model with one tool message per call, in the model's order.
func TestTurnSurvivesRestart(t *testing.T) {
	tools, err := toolopenai.New(toolopenai.Config{Registry: adaptertest.ApprovalRegistry(t)})
	require.NoError(t, err)
	var msg openai.ChatCompletionMessage
	require.NoError(t, json.Unmarshal([]byte(`{"role":"assistant","content":null,"tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lisbon\"}"}},
		{"id":"call_2","type":"function","function":{"name":"publish_draft","arguments":"{\"draft\":7}"}}]}`), &msg))

	outcomes := adaptertest.RestartedTurn(t, chatCalls(t, tools, msg))
	answers, err := toolopenai.ChatResults(outcomes)
	require.NoError(t, err)
	raw, err := json.Marshal(answers)
	require.NoError(t, err)
	require.JSONEq(t, `[
		{"role":"tool","tool_call_id":"call_1","content":"Lisbon: 21°C, clear sky."},
		{"role":"tool","tool_call_id":"call_2","content":"Draft 7 is published."}]`, string(raw))
}
