package sqlstore_test

import (
	"database/sql"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// version1Script is the schema of the first release (version 1), exactly
// as its Migrate created it with the default prefix: what a database
// made by that release holds. It is kept here, not read from the
// package, so that a change to the package's first migration cannot
// change what this test upgrades from.
func version1Script(d sqlstore.Dialect) string {
	bytes, text, ts := "BLOB", "TEXT", "TEXT"
	if d == sqlstore.PostgreSQL {
		bytes, text, ts = "BYTEA", `TEXT COLLATE "C"`, "TIMESTAMPTZ"
	}
	return `CREATE TABLE tool_schema_version (
	version INTEGER PRIMARY KEY,
	applied_at ` + ts + ` NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE tool_claims (
	checkpoint_id ` + text + ` PRIMARY KEY,
	answer_sha256 TEXT NOT NULL,
	claimed_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL,
	claim TEXT NOT NULL,
	outcome TEXT
);
CREATE INDEX tool_claims_by_time ON tool_claims (claimed_at, checkpoint_id);
CREATE INDEX tool_claims_by_expiry ON tool_claims (expires_at);
CREATE TABLE tool_turns (
	id ` + bytes + ` PRIMARY KEY,
	first_saved_at BIGINT NOT NULL,
	saved_at BIGINT NOT NULL,
	expires_at BIGINT NOT NULL
);
CREATE INDEX tool_turns_by_time ON tool_turns (first_saved_at, id);
CREATE INDEX tool_turns_by_expiry ON tool_turns (expires_at);
CREATE TABLE tool_turn_outcomes (
	turn_id ` + bytes + ` NOT NULL,
	position INTEGER NOT NULL,
	checkpoint_id ` + text + `,
	outcome TEXT NOT NULL,
	PRIMARY KEY (turn_id, position)
);
CREATE INDEX tool_turn_outcomes_by_checkpoint ON tool_turn_outcomes (checkpoint_id);
INSERT INTO tool_schema_version (version) VALUES (1);
`
}

// The first migration is version 1's schema, unchanged: a database made
// by the first release is the database Migrate upgrades.
func TestVersion1Unchanged(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.SQLite} {
		require.Equal(t, version1Script(d), sqlstore.Migrations(d)[0], d.String())
	}
}

// version1 writes rows as the first release wrote them: its statements,
// with ? placeholders rewritten for d.
type version1 struct {
	t  *testing.T
	db *sql.DB
	d  sqlstore.Dialect
}

func (v version1) exec(query string, args ...any) {
	v.t.Helper()
	if v.d == sqlstore.PostgreSQL {
		for n := 1; strings.Contains(query, "?"); n++ {
			query = strings.Replace(query, "?", "$"+strconv.Itoa(n), 1)
		}
	}
	_, err := v.db.ExecContext(v.t.Context(), query, args...)
	require.NoError(v.t, err, query)
}

func (v version1) create() {
	for stmt := range strings.SplitSeq(strings.TrimSuffix(version1Script(v.d), ";\n"), ";\n") {
		v.exec(stmt)
	}
}

// claim records c as version 1's Claim did: its JSON, with no state,
// version or lease.
func (v version1) claim(c dispatch.Claim) {
	v.t.Helper()
	data, err := jsonv2.Marshal(c)
	require.NoError(v.t, err)
	require.NotContains(v.t, string(data), `"state"`)
	v.exec("INSERT INTO tool_claims (checkpoint_id, answer_sha256, claimed_at, expires_at, claim) VALUES (?, ?, ?, ?, ?) ON CONFLICT (checkpoint_id) DO NOTHING",
		c.CheckpointID, c.AnswerSHA256, c.ClaimedAt.UnixNano(), c.ExpiresAt.UnixNano(), string(data))
}

// finish records o as version 1's Finish did.
func (v version1) finish(id string, o dispatch.SavedOutcome) {
	v.t.Helper()
	data, err := o.MarshalJSON()
	require.NoError(v.t, err)
	v.exec("UPDATE tool_claims SET outcome = ? WHERE checkpoint_id = ? AND outcome IS NULL", string(data), id)
}

// saveTurn saves t as version 1's SaveTurn did: a row and one row per
// outcome, no version, no summary.
func (v version1) saveTurn(t dispatch.Turn) {
	v.t.Helper()
	v.exec("INSERT INTO tool_turns (id, first_saved_at, saved_at, expires_at) VALUES (?, ?, ?, ?)", []byte(t.ID), t.SavedAt.UnixNano(), t.SavedAt.UnixNano(), t.ExpiresAt.UnixNano())
	for i, o := range t.Outcomes {
		data, err := o.MarshalJSON()
		require.NoError(v.t, err)
		var checkpoint any
		if o.Checkpoint != nil {
			checkpoint = o.Checkpoint.ID()
		}
		v.exec("INSERT INTO tool_turn_outcomes (turn_id, position, checkpoint_id, outcome) VALUES (?, ?, ?, ?)", []byte(t.ID), i, checkpoint, string(data))
	}
}

// suspendedOutcome returns the saved outcome of a call that asks a
// person, with its sealed checkpoint.
func suspendedOutcome(t *testing.T, callID string) dispatch.SavedOutcome {
	t.Helper()
	s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	var runs atomic.Int32
	o := refunds(t, s, &runs).Run(t.Context(), dispatch.Call{ID: callID, Request: tool.Request{Name: "refund", Arguments: `{}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	return dispatch.NewSavedOutcome(o)
}

// requireSummary checks that got is the summary of the pending call want
// (dispatch.NewPending's), times compared as instants.
func requireSummary(t *testing.T, want, got dispatch.Pending, what string) {
	t.Helper()
	require.True(t, want.IssuedAt.Equal(got.IssuedAt) && want.ExpiresAt.Equal(got.ExpiresAt), "%s: times %v %v, want %v %v", what, got.IssuedAt, got.ExpiresAt, want.IssuedAt, want.ExpiresAt)
	want.IssuedAt, want.ExpiresAt, got.IssuedAt, got.ExpiresAt = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	require.Equal(t, want, got, what)
}

// A database that the first release (schema version 1) made and wrote
// to is migrated to version 2, and its records keep working: claims read
// as they were written (no state: finished with an outcome, running with
// a lease long ended without one), the unfinished one is stranded and
// can be advanced and finished, the pending call of a turn is listed with
// its summary (made from its outcome, since version 1 kept none), a
// claim of it is placed in its turn, and the turn, at version 1, is
// saved at version 2.
func TestMigrateFromVersion1(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			d := b.new(t)
			db := d.open(t)
			old := version1{t: t, db: db, d: d.dialect}
			old.create()

			now := time.Now().UTC().Truncate(time.Second)
			open, done := claim(1, 1), claim(2, 2)
			open.ClaimedAt, done.ClaimedAt = now.Add(-2*time.Hour), now.Add(-time.Hour)
			old.claim(open)
			old.claim(done)
			finished := dispatch.SavedOutcome{CallID: "call_1", Tool: "refund", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("refunded")}
			old.finish(done.CheckpointID, finished)
			pending := suspendedOutcome(t, "call_p")
			turn := dispatch.Turn{ID: "conversation-1/turn-1", SavedAt: now, ExpiresAt: now.Add(24 * time.Hour),
				Outcomes: []dispatch.SavedOutcome{finished, pending}}
			old.saveTurn(turn)

			s, err := sqlstore.New(db, sqlstore.Config{Dialect: d.dialect})
			require.NoError(t, err)
			require.NoError(t, s.Migrate(ctx))
			require.Equal(t, allVersions(), versions(t, db, "tool_"))

			// The claims read back as version 1 wrote them.
			got, err := s.Claimed(ctx, open.CheckpointID)
			require.NoError(t, err)
			require.Equal(t, encode(t, open), encode(t, got), "an unfinished claim of version 1")
			require.Equal(t, dispatch.StateRunning, got.Stage())
			got, err = s.Claimed(ctx, done.CheckpointID)
			require.NoError(t, err)
			want := done
			want.Outcome = &finished
			require.Equal(t, encode(t, want), encode(t, got), "a finished claim of version 1")
			require.Equal(t, dispatch.StateFinished, got.Stage())
			all, err := s.Claims(ctx, dispatch.ClaimQuery{})
			require.NoError(t, err)
			require.Len(t, all, 2)

			// The unfinished one waits for a process that is gone.
			stranded, err := s.Stranded(ctx, dispatch.StrandedQuery{Now: now})
			require.NoError(t, err)
			require.Len(t, stranded, 1)
			require.Equal(t, open.CheckpointID, stranded[0].CheckpointID)

			// The pending call is listed with its summary.
			wantPending := dispatch.NewPending(turn.ID, 1, pending, false)
			list, err := s.Pending(ctx, dispatch.PendingQuery{})
			require.NoError(t, err)
			require.Len(t, list, 1)
			requireSummary(t, wantPending, list[0], "the summary of a pending call saved by version 1")
			full, err := s.Pending(ctx, dispatch.PendingQuery{Full: true})
			require.NoError(t, err)
			require.Len(t, full, 1)
			require.Equal(t, pending.Checkpoint.ID(), full[0].Outcome.Checkpoint.ID())

			// The turn is at version 1, and saves at version 2.
			saved, err := s.Turn(ctx, turn.ID)
			require.NoError(t, err)
			require.Equal(t, int64(1), saved.Version)
			require.Len(t, saved.Outcomes, 2)
			require.ErrorIs(t, s.SaveTurn(ctx, turn), dispatch.ErrConflict, "a turn of version 1 is not new")
			require.NoError(t, s.SaveTurn(ctx, saved))
			saved, err = s.Turn(ctx, turn.ID)
			require.NoError(t, err)
			require.Equal(t, int64(2), saved.Version)
			list, err = s.Pending(ctx, dispatch.PendingQuery{})
			require.NoError(t, err)
			require.Len(t, list, 1)
			requireSummary(t, wantPending, list[0], "the summary of a pending call saved again")
			stale := saved
			stale.Version = 1
			require.ErrorIs(t, s.SaveTurn(ctx, stale), dispatch.ErrConflict)

			// A claim of the pending call is placed in the turn of
			// version 1's rows.
			c := claim(3, 3)
			c.CheckpointID = pending.Checkpoint.ID()
			c.LeaseOwner, c.LeaseExpires = "owner-b", now.Add(time.Hour)
			_, err = s.Claim(ctx, c)
			require.NoError(t, err)
			placed, err := s.Claimed(ctx, c.CheckpointID)
			require.NoError(t, err)
			require.Equal(t, turn.ID, placed.TurnID)
			require.Equal(t, 1, placed.CallIndex)

			// The unfinished claim is recovered: run again, then finished.
			lease := now.Add(time.Minute)
			running, err := s.Advance(ctx, open.CheckpointID, dispatch.Step{Version: 0, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "owner-a", LeaseExpires: lease})
			require.NoError(t, err)
			require.Equal(t, int64(1), running.Version)
			stranded, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: now})
			require.NoError(t, err)
			require.Empty(t, stranded, "a record held by a live lease is not stranded")
			require.NoError(t, s.Finish(ctx, open.CheckpointID, finished))
			got, err = s.Claimed(ctx, open.CheckpointID)
			require.NoError(t, err)
			require.Equal(t, dispatch.StateFinished, got.State)
			require.Equal(t, int64(2), got.Version)

			// The finished claim of version 1 keeps its outcome.
			require.NoError(t, s.Finish(ctx, done.CheckpointID, finished))
			require.ErrorIs(t, s.Finish(ctx, done.CheckpointID, dispatch.SavedOutcome{CallID: "call_1", Tool: "refund", Kind: dispatch.KindCompleted}), dispatch.ErrInvalidRecord)
			_, err = s.Advance(ctx, done.CheckpointID, dispatch.Step{Version: 0, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "owner-a", LeaseExpires: lease})
			require.ErrorIs(t, err, dispatch.ErrInvalidRecord, "a finished record of version 1 is final")
		})
	}
}

// encode is c's JSON, to compare claims whole.
func encode(t *testing.T, c dispatch.Claim) string {
	t.Helper()
	data, err := jsonv2.Marshal(c)
	require.NoError(t, err)
	return string(data)
}
