package dispatch_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/dispatch/storetest"
)

func TestMemoryStoreConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) dispatch.Store {
		s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: 256 << 20})
		require.NoError(t, err)
		return s
	})
}

func TestNewMemoryStore(t *testing.T) {
	_, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: -1})
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
	require.EqualError(t, err, "tool: invalid dispatch config: MemoryStoreConfig.MaxBytes is -1, want 0 (the default) or more")

	var zero dispatch.MemoryStore
	_, err = zero.Claim(context.Background(), memClaim(0, time.Now().Add(time.Hour)))
	require.ErrorIs(t, err, dispatch.ErrStore)
}

func memClaim(n int, expires time.Time) dispatch.Claim {
	return dispatch.Claim{
		CheckpointID: fmt.Sprintf("%032x", n+1), Nonce: fmt.Sprintf("%032x", n+1), Tool: "refund",
		AnswerSHA256: fmt.Sprintf("%064x", n+1), ClaimedAt: expires.Add(-time.Hour), ExpiresAt: expires,
	}
}

// A full MemoryStore makes room by dropping what expired (by its clock),
// and nothing else: it refuses a claim rather than evict a live one.
func TestMemoryStoreFullDropsExpiredOnly(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: 4096, Clock: func() time.Time { return now }})
	require.NoError(t, err)
	ctx := context.Background()
	n := 0
	for ; n < 1000; n++ {
		if _, err := s.Claim(ctx, memClaim(n, now.Add(time.Minute))); err != nil {
			require.ErrorIs(t, err, dispatch.ErrStore)
			break
		}
	}
	require.Greater(t, n, 3)
	require.Less(t, n, 1000)
	// Later, all of those expired more than MaxClockSkew ago: room is made.
	now = now.Add(time.Minute + dispatch.MaxClockSkew + time.Second)
	for i := range n {
		_, err := s.Claim(ctx, memClaim(1000+i, now.Add(time.Hour)))
		require.NoError(t, err, "claim %d after the expired ones are dropped", i)
	}
	_, err = s.Claim(ctx, memClaim(5000, now.Add(time.Hour)))
	require.ErrorIs(t, err, dispatch.ErrStore, "full of live claims: refused")
	require.ErrorContains(t, err, "tool: claim store failed: the memory store is full")
	for i := range n {
		_, err := s.Claimed(ctx, memClaim(1000+i, now).CheckpointID)
		require.NoError(t, err, "no live claim was evicted")
	}
}
