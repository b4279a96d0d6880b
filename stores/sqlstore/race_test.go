package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
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

// A claim that waits for a lock another transaction holds does not give
// up when its ctx ends: its result must be what the database holds, so
// it waits, within a bound of its own, and once the lock is gone it wins.
func TestClaimWaitsThenContextEnds(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			inserting := make(chan struct{}, 1)
			in := &injector{onInsert: func() { inserting <- struct{}{} }}
			s := faultyStore(t, d, in)
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

			ctx, cancel := context.WithCancel(t.Context())
			c := claim(1, 1)
			type result struct {
				prior *dispatch.Claim
				err   error
			}
			done := make(chan result, 1)
			go func() {
				prior, err := s.Claim(ctx, c)
				done <- result{prior, err}
			}()
			// The claim's insert is on its way to the lock: its caller
			// gives up, and then the lock is released.
			<-inserting
			cancel()
			_, err = conn.ExecContext(t.Context(), "ROLLBACK")
			require.NoError(t, err)
			r := <-done
			got, gerr := s.Claimed(t.Context(), hexN(1, 32))
			require.NoError(t, r.err, "the claim waited for the lock although its caller gave up")
			require.Nil(t, r.prior)
			require.NoError(t, gerr)
			require.Equal(t, c.Nonce, got.Nonce, "the claim that won is the one recorded")
		})
	}
}

// resaveRounds is how many times two calls of one turn save it at once.
const resaveRounds = 100

// Two calls of one saved turn are resumed at once, in two replicas: each
// reads the turn, puts its call's outcome in place and saves the turn at
// the version it read. Never do both saves land (one would undo the
// other's change): one does, and the other gets dispatch.ErrConflict and
// writes nothing, round after round.
func TestConcurrentResave(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			replica := [2]*sqlstore.Store{d.store(t, sqlstore.Config{}), d.store(t, sqlstore.Config{})}
			ctx := t.Context()
			now := time.Now().UTC()
			outcome := func(call int, text string) dispatch.SavedOutcome {
				return dispatch.SavedOutcome{CallID: fmt.Sprintf("call_%d", call), Tool: "refund", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput(text)}
			}
			first := dispatch.Turn{ID: "t", SavedAt: now, ExpiresAt: now.Add(time.Hour), Outcomes: []dispatch.SavedOutcome{outcome(0, "waiting"), outcome(1, "waiting")}}
			require.NoError(t, replica[0].SaveTurn(ctx, first))
			for round := range resaveRounds {
				var read, saved sync.WaitGroup
				read.Add(2)
				var errs [2]error
				for call := range 2 {
					saved.Go(func() {
						turn, err := replica[call].Turn(ctx, "t")
						read.Done()
						if err != nil {
							errs[call] = err
							return
						}
						// Both have read the same version before either saves.
						read.Wait()
						turn.Outcomes[call] = outcome(call, fmt.Sprintf("round %d", round))
						errs[call] = replica[call].SaveTurn(ctx, turn)
					})
				}
				saved.Wait()
				landed := -1
				for call, err := range errs {
					switch {
					case err == nil:
						require.Equal(t, -1, landed, "round %d: both saves landed", round)
						landed = call
					default:
						require.ErrorIs(t, err, dispatch.ErrConflict, "round %d: call %d", round, call)
					}
				}
				require.NotEqual(t, -1, landed, "round %d: no save landed", round)
				turn, err := replica[0].Turn(ctx, "t")
				require.NoError(t, err)
				require.Equal(t, int64(round+2), turn.Version, "round %d: one save more", round)
				text, _ := turn.Outcomes[landed].Output.Text()
				require.Equal(t, fmt.Sprintf("round %d", round), text, "round %d: the save that landed is stored", round)
			}
		})
	}
}
