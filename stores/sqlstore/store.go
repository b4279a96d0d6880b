package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"regexp"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

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
}

// Store is a [dispatch.Store] in a SQL database reached through
// database/sql: the claim store that replicas behind a load balancer
// share. Every replica makes its own Store on its own [*sql.DB], with the
// same [Config], on the same database; a claim made through one is seen
// by all, and of the claims of one checkpoint made at once through any of
// them exactly one wins (one INSERT … ON CONFLICT DO NOTHING on the
// checkpoint ID, the table's primary key).
//
// The Store uses the [*sql.DB] it is given and does not close it: the
// caller owns it, its pool settings and its driver. Call [Store.Migrate]
// before the first use (every replica may, at every start).
//
// A Store is safe for concurrent use by goroutines and, sharing a
// database, by processes. Its methods honour ctx throughout (the query
// of a cancelled ctx is abandoned and its transaction rolled back), copy
// what they are given and return new values. Times come back in UTC, to
// the nanosecond; a time outside the years 1678 to 2262 (which int64
// nanoseconds cannot hold) is refused with an error wrapping
// [dispatch.ErrInvalidRecord].
//
// Every error has the "tool: " prefix and wraps one sentinel of package
// dispatch: [dispatch.ErrStore] for the database (its error, or ctx's,
// beside it, so that errors.Is finds context.Canceled and errors.As the
// driver's error), [dispatch.ErrNotFound], [dispatch.ErrInvalidRecord]
// (also for a stored row that does not decode), or
// [dispatch.ErrAlreadyAnswered] as a [*dispatch.AnsweredError], as
// [dispatch.Store] documents. The zero Store keeps nothing: its methods
// return an error wrapping [dispatch.ErrStore]. Make one with [New].
type Store struct {
	db       *sql.DB
	dialect  Dialect
	prefix   string
	maxBytes int

	// The statements, rewritten for the dialect and prefix once.
	insertClaim, selectClaim, finishClaim                 string
	upsertTurn, deleteOutcomes, insertOutcome, selectTurn string
	deleteTurns, deleteClaims                             string
}

// New returns a [Store] on db, which the caller opened with a driver of
// config.Dialect and keeps owning. New does not touch the database; call
// [Store.Migrate] before the first use. Errors wrap
// [dispatch.ErrInvalidConfig]: a nil db, an unknown dialect, a table
// prefix that is not a plain lowercase name, or a negative
// MaxRecordBytes.
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
	}
	d := config.Dialect
	q := func(query string) string { return d.sql(prefix, query) }
	s := &Store{
		db:       db,
		dialect:  d,
		prefix:   prefix,
		maxBytes: config.MaxRecordBytes,
	}
	if s.maxBytes == 0 {
		s.maxBytes = DefaultMaxRecordBytes
	}
	s.insertClaim = q(`INSERT INTO {p}claims (checkpoint_id, answer_sha256, claimed_at, expires_at, claim)
VALUES (?, ?, ?, ?, ?) ON CONFLICT (checkpoint_id) DO NOTHING`)
	s.selectClaim = q(`SELECT claim, outcome FROM {p}claims WHERE checkpoint_id = ?`)
	s.finishClaim = q(`UPDATE {p}claims SET outcome = ? WHERE checkpoint_id = ? AND outcome IS NULL`)
	s.upsertTurn = q(`INSERT INTO {p}turns (id, first_saved_at, saved_at, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (id) DO UPDATE SET saved_at = excluded.saved_at, expires_at = excluded.expires_at`)
	s.deleteOutcomes = q(`DELETE FROM {p}turn_outcomes WHERE turn_id = ?`)
	s.insertOutcome = q(`INSERT INTO {p}turn_outcomes (turn_id, position, checkpoint_id, outcome) VALUES (?, ?, ?, ?)`)
	s.selectTurn = q(`SELECT t.saved_at, t.expires_at, o.position, o.outcome
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

// Claim implements [dispatch.Store]'s Claim: one INSERT … ON CONFLICT DO
// NOTHING, which the database runs atomically; when it inserted nothing,
// the claim that was there is read and compared.
func (s *Store) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if c.Outcome != nil {
		return nil, errprefix.Errorf("%w: claim %s: a new claim has no outcome yet", dispatch.ErrInvalidRecord, c.CheckpointID)
	}
	claimedAt, err := nanos(c.ClaimedAt, "claim "+c.CheckpointID+": ClaimedAt")
	if err != nil {
		return nil, err
	}
	expiresAt, err := nanos(c.ExpiresAt, "claim "+c.CheckpointID+": ExpiresAt")
	if err != nil {
		return nil, err
	}
	data, err := jsonv2.Marshal(c)
	if err != nil {
		return nil, errprefix.Errorf("%w: claim %s: %v", dispatch.ErrInvalidRecord, c.CheckpointID, err)
	}
	if len(data) > s.maxRecordBytes() {
		return nil, s.tooLarge("claim "+c.CheckpointID, len(data))
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	// The claim found in place may be deleted (expired) before it is
	// read; then the insert is tried again, a bounded number of times.
	for range 3 {
		won, err := s.insertClaimRow(ctx, c.CheckpointID, c.AnswerSHA256, claimedAt, expiresAt, string(data))
		if err != nil {
			return nil, err
		}
		if won {
			return nil, nil
		}
		prior, err := s.claimed(ctx, s.db, c.CheckpointID)
		if errors.Is(err, dispatch.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if prior.AnswerSHA256 != c.AnswerSHA256 {
			return nil, &dispatch.AnsweredError{Claim: prior}
		}
		return &prior, nil
	}
	return nil, errprefix.Errorf("%w: sqlstore: claiming checkpoint %s: its claim kept disappearing", dispatch.ErrStore, c.CheckpointID)
}

// insertClaimRow inserts a claim unless its checkpoint has one, and
// reports whether it did.
//
// On PostgreSQL the INSERT is its own transaction, committed by a second
// statement: a driver that gives up on a query when ctx ends may leave
// the server running it (pgx closes the connection, and a server waiting
// for a lock does not notice until it has the lock), and an INSERT in
// autocommit would then record a claim after its caller was told it
// failed. In a transaction, the server finds the connection gone when it
// waits for the COMMIT, and rolls the claim back.
func (s *Store) insertClaimRow(ctx context.Context, id, digest string, claimedAt, expiresAt int64, data string) (bool, error) {
	var n int64
	insert := func(q querier) error {
		res, err := q.ExecContext(ctx, s.insertClaim, id, digest, claimedAt, expiresAt, data)
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return s.fail(ctx, "claiming checkpoint "+id, err)
		}
		return nil
	}
	var err error
	if s.dialect == PostgreSQL {
		err = s.inTx(ctx, insert)
	} else {
		err = insert(s.db)
	}
	return n == 1, err
}

func (s *Store) maxRecordBytes() int {
	if s == nil || s.maxBytes == 0 {
		return DefaultMaxRecordBytes
	}
	return s.maxBytes
}

func (s *Store) tooLarge(what string, n int) error {
	return errprefix.Errorf("%w: sqlstore: %s is %d bytes of JSON, more than the %d bytes a record may have (Config.MaxRecordBytes)", dispatch.ErrInvalidRecord, what, n, s.maxRecordBytes())
}

// claimed reads the claim of id with its outcome.
func (s *Store) claimed(ctx context.Context, q querier, id string) (dispatch.Claim, error) {
	var data string
	var outcome sql.NullString
	err := q.QueryRowContext(ctx, s.selectClaim, id).Scan(&data, &outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return dispatch.Claim{}, errprefix.Errorf("%w: no claim of checkpoint %q", dispatch.ErrNotFound, truncate(id, 80))
	}
	if err != nil {
		return dispatch.Claim{}, s.fail(ctx, "reading the claim of checkpoint "+truncate(id, 80), err)
	}
	return decodeClaim(data, outcome)
}

// decodeClaim decodes a claim row, strictly.
func decodeClaim(data string, outcome sql.NullString) (dispatch.Claim, error) {
	var c dispatch.Claim
	if err := jsonv2.Unmarshal([]byte(data), &c, jsonv2.RejectUnknownMembers(true)); err != nil {
		return dispatch.Claim{}, errprefix.Errorf("%w: sqlstore: a stored claim does not decode: %v", dispatch.ErrInvalidRecord, err)
	}
	if outcome.Valid {
		var o dispatch.SavedOutcome
		if err := o.UnmarshalJSON([]byte(outcome.String)); err != nil {
			return dispatch.Claim{}, errprefix.Errorf("%w (the outcome of stored claim %s)", err, c.CheckpointID)
		}
		c.Outcome = &o
	}
	return c, nil
}

// Finish implements [dispatch.Store]'s Finish: one UPDATE of a claim that
// has no outcome; when it updated nothing, the claim is read to tell a
// missing claim from one finished before.
func (s *Store) Finish(ctx context.Context, id string, outcome dispatch.SavedOutcome) error {
	data, err := outcome.MarshalJSON()
	if err != nil {
		return err
	}
	if len(data) > s.maxRecordBytes() {
		return s.tooLarge("the outcome of checkpoint "+truncate(id, 80), len(data))
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, s.finishClaim, string(data), id)
	if err != nil {
		return s.fail(ctx, "recording the outcome of checkpoint "+truncate(id, 80), err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail(ctx, "recording the outcome of checkpoint "+truncate(id, 80), err)
	}
	if n == 1 {
		return nil
	}
	var claim string
	var recorded sql.NullString
	err = s.db.QueryRowContext(ctx, s.selectClaim, id).Scan(&claim, &recorded)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return errprefix.Errorf("%w: no claim of checkpoint %q", dispatch.ErrNotFound, truncate(id, 80))
	case err != nil:
		return s.fail(ctx, "reading the outcome of checkpoint "+truncate(id, 80), err)
	case !recorded.Valid:
		// Only an UPDATE that ran at the same moment as a delete of the
		// claim could get here; the claim is there again.
		return errprefix.Errorf("%w: sqlstore: recording the outcome of checkpoint %s: the claim changed while it was recorded; try again", dispatch.ErrStore, truncate(id, 80))
	case recorded.String == string(data):
		return nil
	}
	var prior dispatch.SavedOutcome
	kind := "unreadable"
	if prior.UnmarshalJSON([]byte(recorded.String)) == nil {
		kind = string(prior.Kind)
	}
	return errprefix.Errorf("%w: claim %s already has outcome %s", dispatch.ErrInvalidRecord, truncate(id, 80), kind)
}

// Claimed implements [dispatch.Store]'s Claimed.
func (s *Store) Claimed(ctx context.Context, id string) (dispatch.Claim, error) {
	if err := s.begin(ctx); err != nil {
		return dispatch.Claim{}, err
	}
	return s.claimed(ctx, s.db, id)
}

// Claims implements [dispatch.Store]'s Claims.
func (s *Store) Claims(ctx context.Context, q dispatch.ClaimQuery) ([]dispatch.Claim, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	query := "SELECT claim, outcome FROM {p}claims"
	var args []any
	if !q.Since.IsZero() {
		query += " WHERE claimed_at >= ?"
		args = append(args, clampNanos(q.Since))
	}
	query += " ORDER BY claimed_at, checkpoint_id"
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	out := []dispatch.Claim{}
	err := s.each(ctx, s.db, "listing claims", s.dialect.sql(s.prefix, query), args, func(scan func(...any) error) error {
		var data string
		var outcome sql.NullString
		if err := scan(&data, &outcome); err != nil {
			return err
		}
		c, err := decodeClaim(data, outcome)
		if err != nil {
			return err
		}
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SaveTurn implements [dispatch.Store]'s SaveTurn: in one transaction,
// the turn's row is inserted or updated (keeping when it was first saved)
// and its outcomes replaced.
func (s *Store) SaveTurn(ctx context.Context, t dispatch.Turn) error {
	if err := t.Validate(); err != nil {
		return err
	}
	what := fmt.Sprintf("turn %q", truncate(t.ID, 80))
	savedAt, err := nanos(t.SavedAt, what+": SavedAt")
	if err != nil {
		return err
	}
	expiresAt, err := nanos(t.ExpiresAt, what+": ExpiresAt")
	if err != nil {
		return err
	}
	outcomes := make([]string, len(t.Outcomes))
	size := len(t.ID)
	for i, o := range t.Outcomes {
		data, err := o.MarshalJSON()
		if err != nil {
			return errprefix.Errorf("%w (outcome %d of %s)", err, i, what)
		}
		outcomes[i] = string(data)
		size += len(data)
	}
	if size > s.maxRecordBytes() {
		return s.tooLarge(what, size)
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	id := []byte(t.ID)
	return s.inTx(ctx, func(q querier) error {
		if _, err := q.ExecContext(ctx, s.upsertTurn, id, savedAt, savedAt, expiresAt); err != nil {
			return s.fail(ctx, "saving "+what, err)
		}
		if _, err := q.ExecContext(ctx, s.deleteOutcomes, id); err != nil {
			return s.fail(ctx, "saving "+what, err)
		}
		for i, o := range t.Outcomes {
			var checkpoint sql.NullString
			if o.Checkpoint != nil {
				checkpoint = sql.NullString{String: o.Checkpoint.ID(), Valid: true}
			}
			if _, err := q.ExecContext(ctx, s.insertOutcome, id, i, checkpoint, outcomes[i]); err != nil {
				return s.fail(ctx, "saving "+what, err)
			}
		}
		return nil
	})
}

// Turn implements [dispatch.Store]'s Turn, with one query, so that it
// reads a turn as one SaveTurn wrote it.
func (s *Store) Turn(ctx context.Context, id string) (dispatch.Turn, error) {
	if err := s.begin(ctx); err != nil {
		return dispatch.Turn{}, err
	}
	what := fmt.Sprintf("turn %q", truncate(id, 80))
	t := dispatch.Turn{ID: id, Outcomes: []dispatch.SavedOutcome{}}
	found := false
	err := s.each(ctx, s.db, "reading "+what, s.selectTurn, []any{[]byte(id)}, func(scan func(...any) error) error {
		var savedAt, expiresAt int64
		var position sql.NullInt64
		var outcome sql.NullString
		if err := scan(&savedAt, &expiresAt, &position, &outcome); err != nil {
			return err
		}
		found = true
		t.SavedAt, t.ExpiresAt = time.Unix(0, savedAt).UTC(), time.Unix(0, expiresAt).UTC()
		if !outcome.Valid {
			return nil // a turn without outcomes
		}
		if position.Int64 != int64(len(t.Outcomes)) {
			return errprefix.Errorf("%w: sqlstore: stored %s lacks outcome %d", dispatch.ErrInvalidRecord, what, len(t.Outcomes))
		}
		var o dispatch.SavedOutcome
		if err := o.UnmarshalJSON([]byte(outcome.String)); err != nil {
			return errprefix.Errorf("%w (outcome %d of stored %s)", err, position.Int64, what)
		}
		t.Outcomes = append(t.Outcomes, o)
		return nil
	})
	if err != nil {
		return dispatch.Turn{}, err
	}
	if !found {
		return dispatch.Turn{}, errprefix.Errorf("%w: no turn %q", dispatch.ErrNotFound, truncate(id, 80))
	}
	return t, nil
}

// Pending implements [dispatch.Store]'s Pending, with one query.
func (s *Store) Pending(ctx context.Context, q dispatch.PendingQuery) ([]dispatch.Pending, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	query := `SELECT o.turn_id, o.position, o.outcome
FROM {p}turn_outcomes o JOIN {p}turns t ON t.id = o.turn_id
WHERE o.checkpoint_id IS NOT NULL
AND NOT EXISTS (SELECT 1 FROM {p}claims c WHERE c.checkpoint_id = o.checkpoint_id)`
	var args []any
	if q.TurnID != "" {
		query += " AND o.turn_id = ?"
		args = append(args, []byte(q.TurnID))
	}
	if q.NewestFirst {
		query += " ORDER BY t.first_saved_at DESC, t.id DESC, o.position"
	} else {
		query += " ORDER BY t.first_saved_at, t.id, o.position"
	}
	switch {
	case q.Limit > 0:
		query += " LIMIT ?"
		args = append(args, q.Limit)
	case q.Offset > 0 && s.dialect == SQLite:
		query += " LIMIT -1" // SQLite has no OFFSET without a LIMIT
	}
	if q.Offset > 0 {
		query += " OFFSET ?"
		args = append(args, q.Offset)
	}
	out := []dispatch.Pending{}
	err := s.each(ctx, s.db, "listing pending calls", s.dialect.sql(s.prefix, query), args, func(scan func(...any) error) error {
		var turnID []byte
		var position int64
		var outcome string
		if err := scan(&turnID, &position, &outcome); err != nil {
			return err
		}
		p := dispatch.Pending{TurnID: string(turnID), Index: int(position)}
		if err := p.Outcome.UnmarshalJSON([]byte(outcome)); err != nil {
			return errprefix.Errorf("%w (outcome %d of stored turn %q)", err, position, truncate(p.TurnID, 80))
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteExpired implements [dispatch.Store]'s DeleteExpired: in one
// transaction, it deletes the turns (and their outcomes) and the claims
// whose ExpiresAt is more than [dispatch.MaxClockSkew] before now.
func (s *Store) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	before := clampNanos(now.Add(-dispatch.MaxClockSkew))
	deleted := 0
	err := s.inTx(ctx, func(q querier) error {
		deleted = 0
		// Turns first, then their outcomes: the order SaveTurn locks
		// them in, so the two never wait for each other.
		var ids [][]byte
		err := s.each(ctx, q, "deleting expired turns", s.deleteTurns, []any{before}, func(scan func(...any) error) error {
			var id []byte
			if err := scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
			return nil
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if _, err := q.ExecContext(ctx, s.deleteOutcomes, id); err != nil {
				return s.fail(ctx, "deleting expired turns", err)
			}
		}
		res, err := q.ExecContext(ctx, s.deleteClaims, before)
		if err != nil {
			return s.fail(ctx, "deleting expired claims", err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return s.fail(ctx, "deleting expired claims", err)
		}
		deleted = len(ids) + int(n)
		return nil
	})
	if err != nil {
		return 0, err
	}
	return deleted, nil
}

// truncate shortens s to at most n bytes for an error message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
