package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// SaveTurn implements [dispatch.Store]'s SaveTurn: in one transaction,
// the turn's row is inserted (t.Version 0: ON CONFLICT DO NOTHING) or
// updated where it is at t.Version (keeping when it was first saved), at
// one version more, and its outcomes are replaced, each suspended one
// with its summary ([dispatch.NewPending]) in columns for Pending. When
// the row was not there to insert or update at t.Version, nothing is
// written and the error wraps [dispatch.ErrConflict].
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
	id := []byte(t.ID)
	rows := make([][]any, len(t.Outcomes))
	size := len(t.ID)
	for i, o := range t.Outcomes {
		data, err := o.MarshalJSON()
		if err != nil {
			return errprefix.Errorf("%w (outcome %d of %s)", err, i, what)
		}
		size += len(data)
		rows[i] = []any{id, i, nil, string(data), nil, nil, nil, nil, nil, nil}
		if o.Checkpoint == nil {
			continue
		}
		p := dispatch.NewPending(t.ID, i, o, false)
		issued, err := nanos(p.IssuedAt, fmt.Sprintf("outcome %d of %s: the checkpoint's IssuedAt", i, what))
		if err != nil {
			return err
		}
		expires, err := nanos(p.ExpiresAt, fmt.Sprintf("outcome %d of %s: the checkpoint's ExpiresAt", i, what))
		if err != nil {
			return err
		}
		copy(rows[i][2:], []any{p.CheckpointID, string(data), p.CallID, p.Tool, p.Principal, p.Prompt, issued, expires})
	}
	if size > s.maxRecordBytes() {
		return s.tooLarge(what, size)
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	return s.inTx(ctx, func(q querier) error {
		var res sql.Result
		var err error
		if t.Version == 0 {
			res, err = q.ExecContext(ctx, s.insertTurn, id, savedAt, savedAt, expiresAt)
		} else {
			res, err = q.ExecContext(ctx, s.updateTurn, savedAt, expiresAt, id, t.Version)
		}
		var n int64
		if err == nil {
			n, err = res.RowsAffected()
		}
		if err != nil {
			return s.fail(ctx, "saving "+what, err)
		}
		if n != 1 {
			var stored int64
			err := q.QueryRowContext(ctx, s.turnVersion, id).Scan(&stored)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return s.fail(ctx, "saving "+what, err)
			}
			return errprefix.Errorf("%w: %s is at version %d; the save was decided on version %d", dispatch.ErrConflict, what, stored, t.Version)
		}
		if _, err := q.ExecContext(ctx, s.deleteOutcomes, id); err != nil {
			return s.fail(ctx, "saving "+what, err)
		}
		for _, row := range rows {
			if _, err := q.ExecContext(ctx, s.insertOutcome, row...); err != nil {
				return s.fail(ctx, "saving "+what, err)
			}
		}
		return nil
	})
}

// Turn implements [dispatch.Store]'s Turn, with one query, so that it
// reads a turn as one SaveTurn wrote it, at the version that save gave
// it (a turn saved by schema version 1 is at version 1).
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
		if err := scan(&savedAt, &expiresAt, &t.Version, &position, &outcome); err != nil {
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
