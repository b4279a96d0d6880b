package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The example runs to the end: the refund waits, the desk approves it,
// the runtime's turn finishes, and the model reads the refund.
func TestRun(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(t.Context(), &out, true))
	lines := out.String()
	require.Contains(t, lines, "the refund waits for a person at http://127.0.0.1:")
	require.Contains(t, lines, `tool message: {"content":"Refunded 1250 cents on order A-7.","tool_call_id":"call_1","role":"tool"}`)
	require.True(t, strings.HasSuffix(lines, "assistant: Done: $12.50 is on its way back to your card.\n"), lines)
}
