package sqlstore

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math"
	"regexp"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// DefaultTablePrefix starts the name of every table and index of a
// [Store] whose [Config].TablePrefix is empty.
const DefaultTablePrefix = "tool_"

// DefaultMaxRecordBytes bounds a record of a [Store] whose
// [Config].MaxRecordBytes is zero: 64 MiB, the bound of a default
// [dispatch.MemoryStore], so that a record one of them keeps, the other
// keeps too.
const DefaultMaxRecordBytes = dispatch.DefaultMemoryStoreBytes

// DefaultWaitInterval is how often [Store.WaitTurn] looks at the turn it
// waits for when [Config].WaitInterval is zero: 100 milliseconds.
const DefaultWaitInterval = 100 * time.Millisecond

// maxPrefix bounds Config.TablePrefix: with the longest name the store
// gives (turn_outcomes_by_checkpoint), it stays within PostgreSQL's 63
// bytes.
const maxPrefix = 32

var prefixPattern = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Config configures [New]. Its zero value is not usable: Dialect is
// required; every other field has a default.
type Config struct {
	// Dialect is the database's: [PostgreSQL] or [SQLite]. Required.
	Dialect Dialect
	// TablePrefix starts the name of every table and index of the store:
	// lowercase ASCII letters, digits and underscores, not starting with
	// a digit, at most 32 bytes. Empty means DefaultTablePrefix. Stores
	// with different prefixes share a database without seeing each
	// other's records. (To use a PostgreSQL schema, name it in the
	// connection's search_path.)
	TablePrefix string
	// MaxRecordBytes bounds each record the store keeps, counted as the
	// size of its JSON: a claim, the outcome recorded for it, and a turn
	// with all its outcomes. A larger record is refused with an error
	// wrapping [dispatch.ErrInvalidRecord], before the database sees it.
	// 0 means [DefaultMaxRecordBytes]; a negative value is refused. How
	// much the database holds in all is the database's to bound: when it
	// is full its error reaches the caller wrapped in [dispatch.ErrStore],
	// and no record is evicted to make room.
	MaxRecordBytes int
	// WaitInterval is how often [Store.WaitTurn] reads the version of
	// the turn it waits for: a database cannot tell a process of another
	// process's save in a way every driver shares, so the wait looks, by
	// one primary-key read of one row, at this interval. 0 means
	// [DefaultWaitInterval]; a negative value is refused. A shorter
	// interval sees a save sooner and costs the database more reads.
	WaitInterval time.Duration
}

// Store is a [dispatch.Store] in a SQL database reached through
// database/sql: the claim store that replicas behind a load balancer
// share. Every replica makes its own Store on its own [*sql.DB], with the
// same [Config], on the same database; a claim made through one is seen
// by all, and of the claims of one checkpoint made at once through any of
// them exactly one wins (one INSERT … ON CONFLICT DO NOTHING on the
// checkpoint ID, the table's primary key). Each later write of a record
// or a turn is a compare and set on its version (one UPDATE … WHERE
// version = …), so that of two processes that decided on one version,
// one lands and the other is told [dispatch.ErrConflict].
//
// The Store uses the [*sql.DB] it is given and does not close it: the
// caller owns it, its pool settings and its driver. Call [Store.Migrate]
// before the first use (every replica may, at every start).
//
// A Store is safe for concurrent use by goroutines and, sharing a
// database, by processes. Its methods honour ctx throughout (the query
// of a cancelled ctx is abandoned and its transaction rolled back),
// except a Claim, Advance or Finish that has started writing, whose
// result must be what the database holds (see Store.Claim and
// Store.Advance); they copy what they are given and return new values. Times come back in UTC, to
// the nanosecond; a time outside the years 1678 to 2262 (which int64
// nanoseconds cannot hold) is refused with an error wrapping
// [dispatch.ErrInvalidRecord].
//
// Every error has the "tool: " prefix and wraps one sentinel of package
// dispatch: [dispatch.ErrStore] for the database (its error, or ctx's,
// beside it, so that errors.Is finds context.Canceled and errors.As the
// driver's error), [dispatch.ErrNotFound], [dispatch.ErrInvalidRecord]
// (also for a stored row that does not decode), [dispatch.ErrConflict]
// for a write decided on a version that is no longer the stored one, or
// [dispatch.ErrAlreadyAnswered] as a [*dispatch.AnsweredError], as
// [dispatch.Store] documents. The zero Store keeps nothing: its methods
// return an error wrapping [dispatch.ErrStore]. Make one with [New].
type Store struct {
	db       *sql.DB
	dialect  Dialect
	prefix   string
	maxBytes int
	interval time.Duration

	// The statements, rewritten for the dialect and prefix once.
	insertClaim, selectClaim, lockClaim, placeClaim, stepClaim string
	insertTurn, updateTurn, turnVersion                        string
	deleteOutcomes, insertOutcome, selectTurn                  string
	deleteTurns, deleteClaims                                  string
}

// New returns a [Store] on db, which the caller opened with a driver of
// config.Dialect and keeps owning. New does not touch the database; call
// [Store.Migrate] before the first use. Errors wrap
// [dispatch.ErrInvalidConfig]: a nil db, an unknown dialect, a table
// prefix that is not a plain lowercase name, a negative MaxRecordBytes
// or a negative WaitInterval.
func New(db *sql.DB, config Config) (*Store, error) {
	prefix := config.TablePrefix
	if prefix == "" {
		prefix = DefaultTablePrefix
	}
	switch {
	case db == nil:
		return nil, errprefix.Errorf("%w: sqlstore: the *sql.DB is nil", dispatch.ErrInvalidConfig)
	case !config.Dialect.known():
		return nil, errprefix.Errorf("%w: sqlstore: Config.Dialect is %v, want sqlstore.PostgreSQL or sqlstore.SQLite", dispatch.ErrInvalidConfig, config.Dialect)
	case len(prefix) > maxPrefix || !prefixPattern.MatchString(prefix):
		return nil, errprefix.Errorf("%w: sqlstore: Config.TablePrefix %q is not at most %d lowercase letters, digits and underscores, starting with a letter or underscore", dispatch.ErrInvalidConfig, truncate(prefix, 80), maxPrefix)
	case config.MaxRecordBytes < 0:
		return nil, errprefix.Errorf("%w: sqlstore: Config.MaxRecordBytes is %d, want 0 (the default) or more", dispatch.ErrInvalidConfig, config.MaxRecordBytes)
	case config.WaitInterval < 0:
		return nil, errprefix.Errorf("%w: sqlstore: Config.WaitInterval is %v, want 0 (the default) or more", dispatch.ErrInvalidConfig, config.WaitInterval)
	}
	d := config.Dialect
	q := func(query string) string { return d.sql(prefix, query) }
	s := &Store{
		db:       db,
		dialect:  d,
		prefix:   prefix,
		maxBytes: cmp.Or(config.MaxRecordBytes, DefaultMaxRecordBytes),
		interval: cmp.Or(config.WaitInterval, DefaultWaitInterval),
	}
	s.insertClaim = q(`INSERT INTO {p}claims (checkpoint_id, answer_sha256, claimed_at, expires_at, claim, state, version, lease_expires)
VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (checkpoint_id) DO NOTHING`)
	s.selectClaim = q(`SELECT claim, outcome FROM {p}claims WHERE checkpoint_id = ?`)
	// Read in a write transaction, so that a write of the row still
	// under way (one whose reply was lost) has ended first.
	s.lockClaim = s.selectClaim
	if d == PostgreSQL {
		s.lockClaim += " FOR UPDATE"
	}
	s.placeClaim = q(`SELECT turn_id, position FROM {p}turn_outcomes WHERE checkpoint_id = ? ORDER BY turn_id, position LIMIT 1`)
	// The outcome goes first: a record moves only from a version
	// without an outcome (a version 1 process's Finish sets the outcome
	// alone, and is not overwritten), or from one recorded unknown (its
	// next attempt, or its reconciliation), whose state no version 1
	// process writes.
	s.stepClaim = q(`UPDATE {p}claims SET outcome = ?, claim = ?, state = ?, version = ?, lease_expires = ?
WHERE checkpoint_id = ? AND COALESCE(version, 0) = ? AND (outcome IS NULL OR state = 'unknown')`)
	s.insertTurn = q(`INSERT INTO {p}turns (id, first_saved_at, saved_at, expires_at, version) VALUES (?, ?, ?, ?, 1)
ON CONFLICT (id) DO NOTHING`)
	s.updateTurn = q(`UPDATE {p}turns SET saved_at = ?, expires_at = ?, version = version + 1 WHERE id = ? AND version = ?`)
	s.turnVersion = q(`SELECT version FROM {p}turns WHERE id = ?`)
	s.deleteOutcomes = q(`DELETE FROM {p}turn_outcomes WHERE turn_id = ?`)
	s.insertOutcome = q(`INSERT INTO {p}turn_outcomes (turn_id, position, checkpoint_id, outcome,
call_id, tool, principal, prompt, issued_at, checkpoint_expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	s.selectTurn = q(`SELECT t.saved_at, t.expires_at, t.version, o.position, o.outcome
FROM {p}turns t LEFT JOIN {p}turn_outcomes o ON o.turn_id = t.id
WHERE t.id = ? ORDER BY o.position`)
	s.deleteTurns = q(`DELETE FROM {p}turns WHERE expires_at < ? RETURNING id`)
	s.deleteClaims = q(`DELETE FROM {p}claims WHERE expires_at < ?`)
	return s, nil
}

// begin checks the store and ctx before a method starts.
func (s *Store) begin(ctx context.Context) error {
	if s == nil || s.db == nil {
		return errprefix.Errorf("%w: the zero sqlstore.Store keeps nothing; use sqlstore.New", dispatch.ErrStore)
	}
	if err := ctx.Err(); err != nil {
		return errprefix.Errorf("%w: %w", dispatch.ErrStore, err)
	}
	return nil
}

// fail wraps an error of the database in ErrStore, with ctx's error
// beside it when ctx ended (a driver does not always wrap it).
func (s *Store) fail(ctx context.Context, what string, err error) error {
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		return errprefix.Errorf("%w: sqlstore: %s: %w (%w)", dispatch.ErrStore, what, cerr, err)
	}
	return errprefix.Errorf("%w: sqlstore: %s: %w", dispatch.ErrStore, what, err)
}

// each runs query on q and calls row once a row, in order, with a
// function that scans that row's columns. A query, scan or iteration
// that fails is a store error about what; an error of row itself ends
// the iteration and is returned as it is. The rows are closed when each
// returns, so that q, a transaction on one connection, is free again.
func (s *Store) each(ctx context.Context, q querier, what, query string, args []any, row func(scan func(dest ...any) error) error) error {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return s.fail(ctx, what, err)
	}
	defer rows.Close()
	scan := func(dest ...any) error {
		if err := rows.Scan(dest...); err != nil {
			return s.fail(ctx, what, err)
		}
		return nil
	}
	for rows.Next() {
		if err := row(scan); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return s.fail(ctx, what, err)
	}
	if err := rows.Close(); err != nil {
		return s.fail(ctx, what, err)
	}
	return nil
}

// querier is what a transaction and a connection have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// inTx runs f in a write transaction and commits it when f returns nil.
// On SQLite the transaction is BEGIN IMMEDIATE on one connection: it
// takes the write lock first (waiting up to the busy timeout), so that
// two transactions never both read and then both try to write, which
// SQLite would fail at once. On PostgreSQL it is an ordinary one.
func (s *Store) inTx(ctx context.Context, f func(q querier) error) error {
	if s.dialect == PostgreSQL {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return s.fail(ctx, "beginning a transaction", err)
		}
		if err := f(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return s.fail(ctx, "committing", err)
		}
		return nil
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return s.fail(ctx, "getting a connection", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return s.fail(ctx, "beginning a transaction", err)
	}
	// The rollback or commit runs even when ctx ended, so that the
	// connection goes back to the pool outside any transaction; if it
	// cannot, the connection is discarded.
	after := context.WithoutCancel(ctx)
	end := func(statement string) error {
		_, err := conn.ExecContext(after, statement)
		if err != nil {
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
		return err
	}
	if err := f(conn); err != nil {
		_ = end("ROLLBACK")
		return err
	}
	if err := end("COMMIT"); err != nil {
		return s.fail(ctx, "committing", err)
	}
	return nil
}

// nanos returns t as nanoseconds since 1970 UTC, or an error wrapping
// ErrInvalidRecord when int64 cannot hold it.
func nanos(t time.Time, what string) (int64, error) {
	if t.Year() < 1678 || t.Year() > 2261 {
		return 0, errprefix.Errorf("%w: sqlstore: %s %s is outside the years 1678 to 2261 that the store keeps", dispatch.ErrInvalidRecord, what, t.UTC().Format(time.RFC3339))
	}
	return t.UnixNano(), nil
}

// clampNanos returns t as nanoseconds since 1970 UTC, clamped to what
// int64 holds: for a bound of a query, not for a record.
func clampNanos(t time.Time) int64 {
	switch {
	case t.Year() < 1678:
		return math.MinInt64
	case t.Year() > 2261:
		return math.MaxInt64
	}
	return t.UnixNano()
}

// truncate shortens s to at most n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
