package sqlstore_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

func TestNew(t *testing.T) {
	db, err := sql.Open("sqlite", sqliteDSN(t.TempDir()+"/x.db"))
	require.NoError(t, err)
	defer db.Close()
	for _, tc := range []struct {
		name, why string
		db        *sql.DB
		config    sqlstore.Config
		err       string
	}{
		{name: "nil db", why: "there is nothing to store in", config: sqlstore.Config{Dialect: sqlstore.SQLite},
			err: "tool: invalid dispatch config: sqlstore: the *sql.DB is nil"},
		{name: "zero dialect", why: "the SQL depends on it and cannot be guessed from a *sql.DB", db: db,
			err: "tool: invalid dispatch config: sqlstore: Config.Dialect is Dialect(0), want sqlstore.PostgreSQL or sqlstore.SQLite"},
		{name: "unknown dialect", why: "only the two are written", db: db, config: sqlstore.Config{Dialect: 7},
			err: "tool: invalid dispatch config: sqlstore: Config.Dialect is Dialect(7), want sqlstore.PostgreSQL or sqlstore.SQLite"},
		{name: "prefix with a dot", why: "the prefix is pasted into SQL; a schema goes in the search_path", db: db,
			config: sqlstore.Config{Dialect: sqlstore.PostgreSQL, TablePrefix: "app.tool_"},
			err:    `tool: invalid dispatch config: sqlstore: Config.TablePrefix "app.tool_" is not at most 32 lowercase letters, digits and underscores, starting with a letter or underscore`},
		{name: "prefix with a quote", why: "the prefix is pasted into SQL", db: db,
			config: sqlstore.Config{Dialect: sqlstore.SQLite, TablePrefix: "x'; DROP TABLE y; --"},
			err:    `tool: invalid dispatch config: sqlstore: Config.TablePrefix "x'; DROP TABLE y; --" is not at most 32 lowercase letters, digits and underscores, starting with a letter or underscore`},
		{name: "prefix in capitals", why: "PostgreSQL folds unquoted names to lowercase", db: db,
			config: sqlstore.Config{Dialect: sqlstore.SQLite, TablePrefix: "Tool_"},
			err:    `tool: invalid dispatch config: sqlstore: Config.TablePrefix "Tool_" is not at most 32 lowercase letters, digits and underscores, starting with a letter or underscore`},
		{name: "prefix too long", why: "PostgreSQL cuts names at 63 bytes", db: db,
			config: sqlstore.Config{Dialect: sqlstore.SQLite, TablePrefix: strings.Repeat("a", 33)},
			err:    `tool: invalid dispatch config: sqlstore: Config.TablePrefix "` + strings.Repeat("a", 33) + `" is not at most 32 lowercase letters, digits and underscores, starting with a letter or underscore`},
		{name: "negative record bound", why: "0 is the default, and nothing fits in less", db: db,
			config: sqlstore.Config{Dialect: sqlstore.SQLite, MaxRecordBytes: -1},
			err:    "tool: invalid dispatch config: sqlstore: Config.MaxRecordBytes is -1, want 0 (the default) or more"},
		{name: "negative wait interval", why: "0 is the default, and a wait cannot look back in time", db: db,
			config: sqlstore.Config{Dialect: sqlstore.SQLite, WaitInterval: -time.Second},
			err:    "tool: invalid dispatch config: sqlstore: Config.WaitInterval is -1s, want 0 (the default) or more"},
		{name: "zero config but the dialect", why: "the defaults are usable", db: db, config: sqlstore.Config{Dialect: sqlstore.SQLite}},
		{name: "longest prefix", why: "32 bytes fit", db: db, config: sqlstore.Config{Dialect: sqlstore.PostgreSQL, TablePrefix: "_" + strings.Repeat("a", 31)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := sqlstore.New(tc.db, tc.config)
			if tc.err == "" {
				require.NoError(t, err, tc.why)
				require.NotNil(t, s)
				return
			}
			require.ErrorIs(t, err, dispatch.ErrInvalidConfig, tc.why)
			require.EqualError(t, err, tc.err, tc.why)
			require.Nil(t, s)
		})
	}
}

func TestDialectString(t *testing.T) {
	require.Equal(t, "PostgreSQL", sqlstore.PostgreSQL.String())
	require.Equal(t, "SQLite", sqlstore.SQLite.String())
	require.Equal(t, "Dialect(0)", sqlstore.Dialect(0).String())
}

// The zero Store, and a nil one, keep nothing and say so: fail closed.
func TestZeroStore(t *testing.T) {
	ctx := context.Background()
	for _, s := range []*sqlstore.Store{{}, nil} {
		_, err := s.Claim(ctx, claim(1, 1))
		require.ErrorIs(t, err, dispatch.ErrStore)
		require.EqualError(t, err, "tool: claim store failed: the zero sqlstore.Store keeps nothing; use sqlstore.New")
		require.ErrorIs(t, s.Migrate(ctx), dispatch.ErrStore)
		_, err = s.Claims(ctx, dispatch.ClaimQuery{})
		require.ErrorIs(t, err, dispatch.ErrStore)
		_, err = s.DeleteExpired(ctx, time.Now())
		require.ErrorIs(t, err, dispatch.ErrStore)
		_, err = s.Advance(ctx, hexN(1, 32), dispatch.Step{Version: 1, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "o", LeaseExpires: time.Now()})
		require.ErrorIs(t, err, dispatch.ErrStore)
		require.ErrorIs(t, s.Finish(ctx, hexN(1, 32), dispatch.SavedOutcome{CallID: "c", Tool: "refund", Kind: dispatch.KindCompleted}), dispatch.ErrStore)
		_, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: time.Now()})
		require.ErrorIs(t, err, dispatch.ErrStore)
		_, err = s.WaitTurn(ctx, "t", 0)
		require.ErrorIs(t, err, dispatch.ErrStore)
		_, err = s.Pending(ctx, dispatch.PendingQuery{})
		require.ErrorIs(t, err, dispatch.ErrStore)
	}
}

// Records are bounded by Config.MaxRecordBytes, as a MemoryStore bounds
// its records: a larger one is refused before the database sees it, and
// what was recorded stays.
func TestMaxRecordBytes(t *testing.T) {
	s := sqliteDB(t).store(t, sqlstore.Config{MaxRecordBytes: 1024})
	ctx := t.Context()

	big := claim(1, 1)
	big.Principal = strings.Repeat("p", 1000)
	_, err := s.Claim(ctx, big)
	require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
	require.Regexp(t, `^tool: invalid record: sqlstore: claim 0+1 is \d+ bytes of JSON, more than the 1024 bytes a record may have \(Config.MaxRecordBytes\)$`, err.Error())
	_, err = s.Claimed(ctx, big.CheckpointID)
	require.ErrorIs(t, err, dispatch.ErrNotFound)

	_, err = s.Claim(ctx, claim(1, 1))
	require.NoError(t, err)
	large := dispatch.SavedOutcome{CallID: "call_1", Tool: "refund", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput(strings.Repeat("x", 2000))}
	err = s.Finish(ctx, hexN(1, 32), large)
	require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
	c, err := s.Claimed(ctx, hexN(1, 32))
	require.NoError(t, err)
	require.Nil(t, c.Outcome, "a refused outcome is not recorded")

	now := time.Now().UTC()
	turn := dispatch.Turn{ID: "t", SavedAt: now, ExpiresAt: now.Add(time.Hour), Outcomes: []dispatch.SavedOutcome{large}}
	require.ErrorIs(t, s.SaveTurn(ctx, turn), dispatch.ErrInvalidRecord)
	_, err = s.Turn(ctx, "t")
	require.ErrorIs(t, err, dispatch.ErrNotFound)
}

// Times are kept as int64 nanoseconds: one outside what that holds is
// refused, not wrapped around.
func TestTimeRange(t *testing.T) {
	s := sqliteDB(t).store(t, sqlstore.Config{})
	c := claim(1, 1)
	c.ExpiresAt = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err := s.Claim(t.Context(), c)
	require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
	require.EqualError(t, err, "tool: invalid record: sqlstore: claim 00000000000000000000000000000001: ExpiresAt 2300-01-01T00:00:00Z is outside the years 1678 to 2261 that the store keeps")

	// A query's bound far away is clamped, not refused.
	_, err = s.Claim(t.Context(), claim(1, 1))
	require.NoError(t, err)
	n, err := s.DeleteExpired(t.Context(), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, err)
	require.Equal(t, 1, n)
	all, err := s.Claims(t.Context(), dispatch.ClaimQuery{Since: time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)})
	require.NoError(t, err)
	require.Empty(t, all)
}

// Times come back in UTC, to the nanosecond.
func TestTimesExact(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.new(t).store(t, sqlstore.Config{})
			at := time.Date(2026, 12, 1, 9, 30, 0, 123456789, time.UTC)
			turn := dispatch.Turn{ID: "conversation-1/turn-1", SavedAt: at, ExpiresAt: at.Add(time.Hour + time.Nanosecond)}
			require.NoError(t, s.SaveTurn(t.Context(), turn))
			got, err := s.Turn(t.Context(), turn.ID)
			require.NoError(t, err)
			require.Equal(t, turn.SavedAt, got.SavedAt)
			require.Equal(t, turn.ExpiresAt, got.ExpiresAt)
			require.Empty(t, got.Outcomes)
		})
	}
}

// Stores with different table prefixes share a database without seeing
// each other's records.
func TestTablePrefix(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			a := d.store(t, sqlstore.Config{TablePrefix: "a_"})
			other := d.store(t, sqlstore.Config{TablePrefix: "b_"})
			_, err := a.Claim(t.Context(), claim(1, 1))
			require.NoError(t, err)
			_, err = other.Claimed(t.Context(), hexN(1, 32))
			require.ErrorIs(t, err, dispatch.ErrNotFound)
			prior, err := other.Claim(t.Context(), claim(1, 2))
			require.NoError(t, err)
			require.Nil(t, prior)
		})
	}
}

// Turn IDs are ordered byte by byte, as a MemoryStore orders them, on
// every server whatever its collation; any UTF-8 is kept, NUL included.
func TestTurnIDs(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			s := b.new(t).store(t, sqlstore.Config{})
			now := time.Now().UTC()
			for _, id := range []string{"é", "a", "B", "a\x00b"} {
				require.NoError(t, s.SaveTurn(t.Context(), dispatch.Turn{ID: id, SavedAt: now, ExpiresAt: now.Add(time.Hour)}))
				got, err := s.Turn(t.Context(), id)
				require.NoError(t, err)
				require.Equal(t, id, got.ID)
			}
			_, err := s.Turn(t.Context(), "a\x00")
			require.ErrorIs(t, err, dispatch.ErrNotFound)
		})
	}
}

// A stored row that does not decode (edited by hand, or by a newer
// release) is refused with dispatch.ErrInvalidRecord, never taken for a
// missing claim: a claim of that checkpoint does not win.
func TestCorruptedRows(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			d := b.new(t)
			s := d.store(t, sqlstore.Config{})
			db := d.open(t)
			ctx := t.Context()
			_, err := s.Claim(ctx, claim(1, 1))
			require.NoError(t, err)
			_, err = s.Claim(ctx, claim(2, 1))
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, "UPDATE tool_claims SET claim = '{\"checkpoint_id\":1}' WHERE checkpoint_id = '"+hexN(1, 32)+"'")
			require.NoError(t, err)
			_, err = db.ExecContext(ctx, "UPDATE tool_claims SET outcome = '{\"kind\":\"nonsense\"}' WHERE checkpoint_id = '"+hexN(2, 32)+"'")
			require.NoError(t, err)

			for _, n := range []int{1, 2} {
				_, err = s.Claimed(ctx, hexN(n, 32))
				require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
				require.True(t, strings.HasPrefix(err.Error(), "tool: "), err.Error())
				_, err = s.Claim(ctx, claim(n, 2))
				require.ErrorIs(t, err, dispatch.ErrInvalidRecord, "another answer to a claim that does not decode")
			}
			_, err = s.Claims(ctx, dispatch.ClaimQuery{})
			require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
			require.EqualError(t, s.Finish(ctx, hexN(2, 32), dispatch.SavedOutcome{CallID: "c", Tool: "refund", Kind: dispatch.KindCompleted}),
				"tool: invalid record: claim 00000000000000000000000000000002 already has outcome unreadable")

			now := time.Now().UTC()
			require.NoError(t, s.SaveTurn(ctx, dispatch.Turn{ID: "t", SavedAt: now, ExpiresAt: now.Add(time.Hour),
				Outcomes: []dispatch.SavedOutcome{{CallID: "c", Tool: "refund", Kind: dispatch.KindCompleted}}}))
			_, err = db.ExecContext(ctx, "UPDATE tool_turn_outcomes SET outcome = 'not json'")
			require.NoError(t, err)
			_, err = s.Turn(ctx, "t")
			require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
			require.Regexp(t, `^tool: invalid record: outcome does not decode: .* \(outcome 0 of stored turn "t"\)$`, err.Error())
		})
	}
}
