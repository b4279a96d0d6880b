package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Pending implements [dispatch.Store]'s Pending, with one query. A
// summary is read from the columns SaveTurn wrote it in, so that a page
// of the list reads no outcome's JSON; the outcome is read only with
// [dispatch.PendingQuery].Full, or for a row saved by schema version 1,
// which has no summary columns and whose summary is made from it.
func (s *Store) Pending(ctx context.Context, q dispatch.PendingQuery) ([]dispatch.Pending, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	outcome := "CASE WHEN o.tool IS NULL THEN o.outcome END"
	if q.Full {
		outcome = "o.outcome"
	}
	query := `SELECT o.turn_id, o.position, o.checkpoint_id, o.call_id, o.tool, o.principal, o.prompt, o.issued_at, o.checkpoint_expires_at, ` + outcome + `
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
		var checkpoint, callID, tool, principal, prompt, outcome sql.NullString
		var issuedAt, expiresAt sql.NullInt64
		if err := scan(&turnID, &position, &checkpoint, &callID, &tool, &principal, &prompt, &issuedAt, &expiresAt, &outcome); err != nil {
			return err
		}
		if outcome.Valid {
			var o dispatch.SavedOutcome
			if err := o.UnmarshalJSON([]byte(outcome.String)); err != nil {
				return errprefix.Errorf("%w (outcome %d of stored turn %q)", err, position, truncate(string(turnID), 80))
			}
			out = append(out, dispatch.NewPending(string(turnID), int(position), o, q.Full))
			return nil
		}
		out = append(out, dispatch.Pending{
			TurnID: string(turnID), Index: int(position), CheckpointID: checkpoint.String,
			CallID: callID.String, Tool: tool.String, Principal: principal.String, Prompt: prompt.String,
			IssuedAt: time.Unix(0, issuedAt.Int64).UTC(), ExpiresAt: time.Unix(0, expiresAt.Int64).UTC(),
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
