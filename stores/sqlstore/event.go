package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// The Store as a dispatch.EventStore: the scopes' event logs, shared by
// replicas (see the package documentation, "Scope event logs").
var _ dispatch.EventStore = (*Store)(nil)

// errDenied rolls back the transaction of a decision that refused.
var errDenied = errors.New("the decision refused the event")

// ReserveEvent implements [dispatch.EventStore]'s ReserveEvent: decide
// runs in the transaction that holds the scope's lock (see the package
// documentation, "Scope event logs"). A transaction whose COMMIT fails
// may have landed: the event is read back, and ReserveEvent returns
// true when the database holds it as this call reserved it.
func (s *Store) ReserveEvent(ctx context.Context, e dispatch.Event, decide func(dispatch.ScopeLog) (bool, error)) (bool, error) {
	e.State = dispatch.EventReserved
	if err := e.Validate(); err != nil {
		return false, err
	}
	args := jsontext.Value(slices.Clone(e.Arguments))
	if err := args.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return false, errprefix.Errorf("%w: sqlstore: event %q of scope %q: its arguments: %v", dispatch.ErrInvalidRecord, truncate(e.ID, 80), truncate(e.Scope, 80), err)
	}
	at, err := nanos(e.At, "event "+truncate(e.ID, 80)+": At")
	if err != nil {
		return false, err
	}
	keep, err := nanos(e.KeepUntil, "event "+truncate(e.ID, 80)+": KeepUntil")
	if err != nil {
		return false, err
	}
	if err := s.begin(ctx); err != nil {
		return false, err
	}
	q := func(query string) string { return s.dialect.sql(s.prefix, query) }
	greatest := "GREATEST({p}scopes.keep_until, EXCLUDED.keep_until)"
	if s.dialect == SQLite {
		greatest = "max(keep_until, excluded.keep_until)"
	}
	scope, id := []byte(e.Scope), []byte(e.ID)
	inserted := false
	err = s.inTx(ctx, func(tx querier) error {
		if _, err := tx.ExecContext(ctx, q(`INSERT INTO {p}scopes (scope, keep_until) VALUES (?, ?)
ON CONFLICT (scope) DO UPDATE SET keep_until = `+greatest), scope, keep); err != nil {
			return s.fail(ctx, "locking scope "+truncate(e.Scope, 80), err)
		}
		var state string
		err := tx.QueryRowContext(ctx, q(`SELECT state FROM {p}scope_events WHERE scope = ? AND id = ?`), scope, id).Scan(&state)
		switch {
		case err == nil && state != string(dispatch.EventReleased):
			return nil // the same call, holding its place
		case err != nil && !errors.Is(err, sql.ErrNoRows):
			return s.fail(ctx, "reading event "+truncate(e.ID, 80), err)
		}
		again := err == nil
		ok, err := decide(&sqlLog{s: s, ctx: ctx, q: tx, scope: scope})
		switch {
		case err != nil:
			return err
		case !ok:
			return errDenied
		}
		statement := `INSERT INTO {p}scope_events (tool, at, keep_until, arguments, state, scope, id) VALUES (?, ?, ?, ?, ?, ?, ?)`
		if again {
			statement = `UPDATE {p}scope_events SET tool = ?, at = ?, keep_until = ?, arguments = ?, state = ?, outcome = NULL WHERE scope = ? AND id = ?`
		}
		if _, err := tx.ExecContext(ctx, q(statement), e.Tool, at, keep, string(args), string(dispatch.EventReserved), scope, id); err != nil {
			return s.fail(ctx, "reserving event "+truncate(e.ID, 80), err)
		}
		inserted = true
		return nil
	})
	switch {
	case errors.Is(err, errDenied):
		return false, nil
	case err != nil && inserted:
		// The COMMIT failed, and may have landed: read the event back.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimBound)
		defer cancel()
		var got int64
		var state string
		rerr := s.db.QueryRowContext(rctx, q(`SELECT at, state FROM {p}scope_events WHERE scope = ? AND id = ?`), scope, id).Scan(&got, &state)
		if rerr == nil && got == at && state == string(dispatch.EventReserved) {
			return true, nil
		}
		return false, err
	case err != nil:
		return false, err
	}
	return true, nil
}

// SettleEvent implements [dispatch.EventStore]'s SettleEvent, in one
// transaction that reads the event (locked, on PostgreSQL) and writes
// the state [dispatch.Event.Settle] gives.
func (s *Store) SettleEvent(ctx context.Context, scope, id string, outcome dispatch.Kind, release bool) error {
	if err := s.begin(ctx); err != nil {
		return err
	}
	q := func(query string) string { return s.dialect.sql(s.prefix, query) }
	read := q(`SELECT state, outcome FROM {p}scope_events WHERE scope = ? AND id = ?`)
	if s.dialect == PostgreSQL {
		read += " FOR UPDATE"
	}
	return s.inTx(ctx, func(tx querier) error {
		var state string
		var recorded sql.NullString
		err := tx.QueryRowContext(ctx, read, []byte(scope), []byte(id)).Scan(&state, &recorded)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return errprefix.Errorf("%w: sqlstore: no event %q in scope %q", dispatch.ErrNotFound, truncate(id, 80), truncate(scope, 80))
		case err != nil:
			return s.fail(ctx, "reading event "+truncate(id, 80), err)
		}
		e := dispatch.Event{Scope: scope, ID: id, State: dispatch.EventState(state), Outcome: dispatch.Kind(recorded.String)}
		next, err := e.Settle(outcome, release)
		if err != nil {
			return err
		}
		if next.State == e.State && next.Outcome == e.Outcome {
			return nil
		}
		var kind sql.NullString
		if next.Outcome != "" {
			kind = sql.NullString{String: string(next.Outcome), Valid: true}
		}
		if _, err := tx.ExecContext(ctx, q(`UPDATE {p}scope_events SET state = ?, outcome = ? WHERE scope = ? AND id = ?`),
			string(next.State), kind, []byte(scope), []byte(id)); err != nil {
			return s.fail(ctx, "settling event "+truncate(id, 80), err)
		}
		return nil
	})
}

// Events implements [dispatch.EventStore]'s Events.
func (s *Store) Events(ctx context.Context, eq dispatch.EventQuery) ([]dispatch.Event, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	query := `SELECT scope, id, tool, arguments, at, keep_until, state, outcome FROM {p}scope_events WHERE scope = ?`
	args := []any{[]byte(eq.Scope)}
	if !eq.Since.IsZero() {
		query += " AND at >= ?"
		args = append(args, clampNanos(eq.Since))
	}
	query += " ORDER BY at, id"
	if eq.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, eq.Limit)
	}
	out := []dispatch.Event{}
	err := s.each(ctx, s.db, "listing the events of scope "+truncate(eq.Scope, 80), s.dialect.sql(s.prefix, query), args, func(scan func(...any) error) error {
		var scope, id []byte
		var tool, arguments, state string
		var at, keep int64
		var outcome sql.NullString
		if err := scan(&scope, &id, &tool, &arguments, &at, &keep, &state, &outcome); err != nil {
			return err
		}
		e := dispatch.Event{Scope: string(scope), ID: string(id), Tool: tool, Arguments: json.RawMessage(arguments),
			At: time.Unix(0, at).UTC(), KeepUntil: time.Unix(0, keep).UTC(), State: dispatch.EventState(state), Outcome: dispatch.Kind(outcome.String)}
		if err := e.Validate(); err != nil {
			return errprefix.Errorf("%w (a stored event)", err)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteExpiredEvents implements [dispatch.EventStore]'s
// DeleteExpiredEvents: the events kept until before now, and the rows of
// the scopes whose events all are (a scope's row is kept until its
// latest event is).
func (s *Store) DeleteExpiredEvents(ctx context.Context, now time.Time) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	before := clampNanos(now)
	res, err := s.db.ExecContext(ctx, s.dialect.sql(s.prefix, `DELETE FROM {p}scope_events WHERE keep_until < ?`), before)
	if err != nil {
		return 0, s.fail(ctx, "deleting expired events", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, s.fail(ctx, "deleting expired events", err)
	}
	if _, err := s.db.ExecContext(ctx, s.dialect.sql(s.prefix, `DELETE FROM {p}scopes WHERE keep_until < ?`), before); err != nil {
		return int(n), s.fail(ctx, "deleting the scopes of expired events", err)
	}
	return int(n), nil
}
