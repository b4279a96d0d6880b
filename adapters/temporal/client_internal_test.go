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
