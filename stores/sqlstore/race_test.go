package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// raceRounds is how many checkpoints two replicas race to claim.
const raceRounds = 200

// Two replicas, each with its own connection pool, claim the same
// checkpoint at the same moment, round after round: exactly one wins each
// round, and the other finds its claim (the same answer) or is refused
// (another answer). Both then read the same winner.
func TestReplicasRace(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			replica := [2]*sqlstore.Store{d.store(t, sqlstore.Config{}), d.store(t, sqlstore.Config{})}
			ctx := t.Context()
			for round := range raceRounds {
				start := make(chan struct{})
				var wg sync.WaitGroup
				var prior [2]*dispatch.Claim
				var errs [2]error
				for r := range 2 {
					c := claim(round+1, 1)
					c.Principal = fmt.Sprintf("replica-%d", r)
					if round%2 == 1 {
						c.AnswerSHA256 = hexN(r+1, 64) // different answers
					}
					wg.Go(func() {
						<-start
						prior[r], errs[r] = replica[r].Claim(ctx, c)
					})
				}
				close(start)
				wg.Wait()
				winners := 0
				winner := ""
				for r := range 2 {
					var answered *dispatch.AnsweredError
					switch {
					case errs[r] == nil && prior[r] == nil:
						winners++
						winner = fmt.Sprintf("replica-%d", r)
					case errs[r] == nil && round%2 == 0:
						// The same answer: the winner's claim comes back.
					case errors.As(errs[r], &answered) && round%2 == 1:
					default:
						t.Fatalf("round %d replica %d: got (%v, %v)", round, r, prior[r], errs[r])
					}
				}
				if winners != 1 {
					t.Fatalf("round %d: %d replicas won the claim, want exactly 1", round, winners)
				}
				for r := range 2 {
					got, err := replica[r].Claimed(ctx, hexN(round+1, 32))
					require.NoError(t, err)
					require.Equal(t, winner, got.Principal, "round %d: replica %d reads another winner", round, r)
				}
			}
		})
	}
}

// A claim whose ctx ends while it waits is refused, fail closed, and
// records nothing.
func TestClaimContextEnds(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.new(t).store(t, sqlstore.Config{})
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			_, err := s.Claim(ctx, claim(1, 1))
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.ErrorIs(t, err, context.Canceled)
			_, err = s.Claimed(t.Context(), hexN(1, 32))
			require.ErrorIs(t, err, dispatch.ErrNotFound)
		})
	}
}

// A claim that waits for a lock another transaction holds gives up when
// its ctx ends: refused with dispatch.ErrStore and the ctx's error, and
// nothing recorded; once the lock is gone, a claim wins.
func TestClaimWaitsThenContextEnds(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			s := d.store(t, sqlstore.Config{})
			other := d.open(t)
			conn, err := other.Conn(t.Context())
			require.NoError(t, err)
			defer conn.Close()
			// Another process inserts the same checkpoint's claim and has
			// not committed yet (on SQLite it holds the write lock).
			begin := "BEGIN"
			if d.dialect == sqlstore.SQLite {
				begin = "BEGIN IMMEDIATE"
			}
			_, err = conn.ExecContext(t.Context(), begin)
			require.NoError(t, err)
			insert := "INSERT INTO tool_claims (checkpoint_id, answer_sha256, claimed_at, expires_at, claim) VALUES ('" + hexN(1, 32) + "', 'x', 0, 0, '{}')"
			_, err = conn.ExecContext(t.Context(), insert)
			require.NoError(t, err)

			ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
			defer cancel()
			start := time.Now()
			_, err = s.Claim(ctx, claim(1, 1))
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.Less(t, time.Since(start), 5*time.Second, "the claim gave up when its ctx ended")

			_, err = conn.ExecContext(t.Context(), "ROLLBACK")
			require.NoError(t, err)
			_, err = s.Claimed(t.Context(), hexN(1, 32))
			require.ErrorIs(t, err, dispatch.ErrNotFound)
			prior, err := s.Claim(t.Context(), claim(1, 1))
			require.NoError(t, err)
			require.Nil(t, prior)
		})
	}
}
