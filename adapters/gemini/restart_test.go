package toolgemini_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/adaptertest"
)

// A turn with a call that waits for a person is saved in the claim store;
// after a restart the call is resumed, and the turn is answered to the
// model with one functionResponse per functionCall, in the model's order.
func TestTurnSurvivesRestart(t *testing.T) {
	turn := turnOf(t, `[{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"Lisbon"}}},
		{"functionCall":{"id":"c2","name":"publish_draft","args":{"draft":7}}}]`)

	outcomes := adaptertest.RestartedTurn(t, turn.Calls())
	reply, err := turn.Reply(outcomes)
	require.NoError(t, err)
	raw, err := json.Marshal(reply)
	require.NoError(t, err)
	require.JSONEq(t, `{"role":"user","parts":[
		{"functionResponse":{"id":"c1","name":"get_weather","response":{"output":"Lisbon: 21°C, clear sky."}}},
		{"functionResponse":{"id":"c2","name":"publish_draft","response":{"output":"Draft 7 is published."}}}]}`, string(raw))
}
