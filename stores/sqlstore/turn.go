package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

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
