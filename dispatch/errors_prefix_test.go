package dispatch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/stretchr/testify/require"
)

// The error types of this package say "tool: " once, alone and quoted by
// another error of the project.
func TestErrorTypesPrefixOnce(t *testing.T) {
	answered := &AnsweredError{Claim: Claim{CheckpointID: "0123456789abcdef0123456789abcdef", ClaimedAt: time.Unix(0, 0)}}
	refused := &RefusedCall{Call: Call{ID: "call_1"}, Err: fmt.Errorf("too deep")}
	for _, err := range []error{answered, refused, (*AnsweredError)(nil), (*RefusedCall)(nil)} {
		for _, text := range []string{err.Error(), errprefix.Errorf("%w: resending: %w", ErrStore, err).Error()} {
			require.True(t, strings.HasPrefix(text, "tool: "), text)
			require.Equal(t, 1, strings.Count(text, "tool: "), text)
		}
	}
	require.Equal(t, "tool: checkpoint already answered: checkpoint 0123456789abcdef0123456789abcdef was answered at 1970-01-01T00:00:00Z; its outcome is not recorded yet", answered.Error())
	require.Equal(t, `tool: invalid invocation: call "call_1" refused while its arguments streamed: too deep`, refused.Error())
}
