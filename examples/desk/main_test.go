package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The whole loop without a browser: the agent suspends, -auto approves
// over HTTP, the turn completes and the transcript is printed.
func TestRunAuto(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"-auto"}, &out))
	transcript := out.String()
	for _, want := range []string{
		"user: Order A-7 arrived broken.",
		`assistant calls refund {"order":"A-7","cents":1250}`,
		"refund waits for a person: open http://127.0.0.1:",
		"tool refund (completed): Refunded $12.50 on order A-7.",
		"assistant: Done. Refunded $12.50 on order A-7.",
	} {
		require.Contains(t, transcript, want)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	var out bytes.Buffer
	require.Error(t, run(t.Context(), []string{"-no-such-flag"}, &out))
}
