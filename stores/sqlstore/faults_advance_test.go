package sqlstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// landsAt reports whether the write of a record's step has landed when
// a fault fires at step at of dialect d: its statement ran on SQLite,
// which commits each statement, or its COMMIT ran on PostgreSQL.
func landsAt(d sqlstore.Dialect, at step) bool {
	if d == sqlstore.PostgreSQL {
		return at == afterCommit
	}
	return at == duringStatement
}

// A step of a record (Advance, and Finish, which writes the same way)
// whose write meets a fault at any step — a lost reply, a failed commit,
// a bad connection, the caller's context ending — returns what the
// database holds: the record as it now stands when the step landed, an
// error wrapping dispatch.ErrStore (never dispatch.ErrConflict) with the
// record unchanged when it did not. A write that landed and whose reply
// was lost is found on the re-read, which holds another version than the
// step was decided on: that is the caller's own step, not a conflict.
func TestAdvanceFaults(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			in := &injector{}
			s := faultyStore(t, d, in)
			lease := time.Now().UTC().Add(time.Minute)
			n := 0
			for _, op := range []string{"Advance", "Finish"} {
				for _, at := range stepsOf(d.dialect) {
					for _, f := range faults {
						t.Run(fmt.Sprintf("%s/%s/%s", op, at, f.name), func(t *testing.T) {
							n++
							c := claim(n, 1)
							_, err := s.Claim(t.Context(), c)
							require.NoError(t, err)
							before, err := s.Claimed(t.Context(), c.CheckpointID)
							require.NoError(t, err)
							ctx, cancel := context.WithCancel(t.Context())
							defer cancel()
							fired := in.firedCount()
							in.arm(at, f, cancel)
							var got dispatch.Claim
							if op == "Advance" {
								got, err = s.Advance(ctx, c.CheckpointID, dispatch.Step{Version: 1, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "owner-a", LeaseExpires: lease})
							} else {
								err = s.Finish(ctx, c.CheckpointID, dispatch.SavedOutcome{CallID: "call_1", Tool: "refund", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("refunded")})
							}
							require.Equal(t, fired+1, in.firedCount(), "the fault fired")
							stored, serr := s.Claimed(t.Context(), c.CheckpointID)
							require.NoError(t, serr)
							if err != nil {
								require.ErrorIs(t, err, dispatch.ErrStore)
								require.NotErrorIs(t, err, dispatch.ErrConflict)
								require.False(t, landsAt(d.dialect, at) && f.err != nil, "a step that landed is reported as %v", err)
								require.Equal(t, encode(t, before), encode(t, stored), "a step that returned %v recorded nothing", err)
								return
							}
							require.Equal(t, int64(2), stored.Version, "a step that returned no error is recorded")
							if op == "Advance" {
								require.Equal(t, encode(t, stored), encode(t, got), "Advance returns the record as stored")
								require.Equal(t, dispatch.StateRunning, stored.State)
							} else {
								require.Equal(t, dispatch.StateFinished, stored.State)
							}
						})
					}
				}
			}
		})
	}
}

// A step whose write landed and whose reply was lost, and whose record
// another process moved on before the re-read: whether the step landed
// cannot be told from the record, and Advance says so, with an error
// wrapping dispatch.ErrStore; it does not claim a conflict it cannot
// tell either.
func TestAdvanceLostReplyMovedOn(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			other := d.store(t, sqlstore.Config{})
			lease := time.Now().UTC().Add(time.Minute)
			in := &injector{}
			s := faultyStore(t, d, in)
			c := claim(1, 1)
			_, err := s.Claim(t.Context(), c)
			require.NoError(t, err)
			// Once the step landed, its owner's other request renews the
			// lease (version 2 to 3) before the lost reply is resolved.
			in.then = func() {
				_, err := other.Advance(context.Background(), c.CheckpointID, dispatch.Step{Version: 2, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "owner-a", LeaseExpires: lease.Add(time.Minute)})
				if err != nil {
					t.Errorf("moving the record on: %v", err)
				}
			}
			at := duringStatement
			if d.dialect == sqlstore.PostgreSQL {
				at = afterCommit
			}
			in.arm(at, faults[0], nil)
			_, err = s.Advance(t.Context(), c.CheckpointID, dispatch.Step{Version: 1, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "owner-a", LeaseExpires: lease})
			require.Equal(t, 1, in.firedCount())
			require.ErrorIs(t, err, dispatch.ErrStore)
			require.NotErrorIs(t, err, dispatch.ErrConflict)
			require.ErrorContains(t, err, "whether it was recorded could not be told: the record moved on to version 3, running, meanwhile")
		})
	}
}
