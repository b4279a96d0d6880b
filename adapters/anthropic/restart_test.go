package toolanthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/adaptertest"

	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
)

// A turn with a call that waits for a person is saved in the claim store;
// after a restart the call is resumed, and the turn is answered to the
// model with one tool_result per tool_use, in the model's order.
func TestTurnSurvivesRestart(t *testing.T) {
	tools, err := toolanthropic.New(toolanthropic.Config{Registry: adaptertest.ApprovalRegistry(t)})
	require.NoError(t, err)
	var msg anthropic.Message
	require.NoError(t, json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","stop_reason":"tool_use",
		"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Lisbon"}},
			{"type":"tool_use","id":"toolu_2","name":"publish_draft","input":{"draft":7}}],
		"usage":{"input_tokens":1,"output_tokens":1}}`), &msg))

	outcomes := adaptertest.RestartedTurn(t, calls(t, tools, msg))
	answer, err := toolanthropic.Results(outcomes)
	require.NoError(t, err)
	raw, err := json.Marshal(answer)
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"user","content":[
		{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"Lisbon: 21°C, clear sky."}]},
		{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"Draft 7 is published."}]}]}`, string(raw))
}
