package tooltemporal

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/dispatch"
)

// History is the claim: the activity's store lets every valid claim win
// (one written running, as a Run's call record is, too), again and again (the workflow accepted the answer once; Temporal may
// retry the activity), keeps nothing, and refuses an invalid record. It
// is a CallStore only: no turns, nothing to list or sweep.
func TestHistoryClaims(t *testing.T) {
	ctx := context.Background()
	var s dispatch.CallStore = historyClaims{}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	c := dispatch.Claim{
		CheckpointID: "0123456789abcdef0123456789abcdef", Nonce: "fedcba9876543210fedcba9876543210", Tool: "refund",
		AnswerSHA256: "b5bea41b6c623f7c09f1bf24dcae58ebab3c0cdd90ad966bc43a45b44867e12b",
		ClaimedAt:    now, ExpiresAt: now.Add(dispatch.MaxCheckpointTTL),
	}
	for range 2 {
		prior, err := s.Claim(ctx, c)
		require.NoError(t, err)
		require.Nil(t, prior, "wins: nothing recorded before")
	}
	run := c
	run.AnswerSHA256 = dispatch.RunSHA256
	run.State, run.Attempt, run.LeaseOwner, run.LeaseExpires = dispatch.StateRunning, 1, "o", now.Add(time.Minute)
	for range 2 {
		prior, err := s.Claim(ctx, run)
		require.NoError(t, err)
		require.Nil(t, prior, "a claim written running wins too")
	}
	bad := c
	bad.CheckpointID = "not an ID"
	_, err := s.Claim(ctx, bad)
	require.ErrorIs(t, err, dispatch.ErrInvalidRecord)

	started, err := s.Advance(ctx, c.CheckpointID, dispatch.Step{Version: 1, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "o", LeaseExpires: now})
	require.NoError(t, err)
	require.Equal(t, dispatch.StateRunning, started.State)
	require.Equal(t, int64(2), started.Version)
	require.NoError(t, s.Finish(ctx, c.CheckpointID, dispatch.SavedOutcome{}))
	_, err = s.Claimed(ctx, c.CheckpointID)
	require.ErrorIs(t, err, dispatch.ErrNotFound)
	_, keepsTurns := any(historyClaims{}).(dispatch.TurnStore)
	require.False(t, keepsTurns, "a workflow keeps its turns as workflow state")
}
