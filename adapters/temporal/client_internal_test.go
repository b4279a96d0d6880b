package tooltemporal

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/agentcontract/tool/dispatch"
)

// The validator's refusal crosses the wire as an application error; the
// client gets it back as dispatch.ErrInvalidAnswer with the same reason.
func TestRefusalCrossesTheWire(t *testing.T) {
	fc := temporal.GetDefaultFailureConverter()
	refused := fmt.Errorf("%w: at /approved: got string, want boolean", dispatch.ErrInvalidAnswer)
	got := refusal(fc.FailureToError(fc.ErrorToFailure(refused)))
	require.ErrorIs(t, got, dispatch.ErrInvalidAnswer)
	require.EqualError(t, got, "tool: invalid answer: at /approved: got string, want boolean")

	other := errors.New("workflow not found")
	require.Equal(t, other, refusal(other))
	foreign := fc.FailureToError(fc.ErrorToFailure(errors.New("tool: something else")))
	require.Equal(t, foreign, refusal(foreign))
	require.NoError(t, refusal(nil))
}

// The receipt query's refusal of an unknown answer ID reaches the client
// as text: an application error's message, or the server's query failure
// with its own prefix. Both become ErrUnknownAnswer again.
func TestUnknownAnswerCrossesTheWire(t *testing.T) {
	fc := temporal.GetDefaultFailureConverter()
	unknown := fmt.Errorf("%w: no answer with ID %q was accepted by this run", ErrUnknownAnswer, "a-9")
	for _, tt := range []struct {
		name string
		err  error
	}{
		{"as an application error", fc.FailureToError(fc.ErrorToFailure(unknown))},
		{"as the text of a query failure", fmt.Errorf("query failed: %s", unknown.Error())},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := unknownAnswer(tt.err)
			require.ErrorIs(t, got, ErrUnknownAnswer)
			require.EqualError(t, got, `tool: unknown answer: no answer with ID "a-9" was accepted by this run`)
		})
	}
	other := errors.New("workflow not found")
	require.Equal(t, other, unknownAnswer(other))
}
