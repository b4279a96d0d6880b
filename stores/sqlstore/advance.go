package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Advance implements [dispatch.Store]'s Advance: the record is read,
// [dispatch.Claim.Apply] decides the step, and one UPDATE writes the
// record it becomes only where the row is still at the version read
// (compare and set), so that of the steps decided on one version, in any
// number of processes, one lands and the others get an error wrapping
// [dispatch.ErrConflict].
//
// Once the UPDATE starts, ctx no longer ends it, as with Claim: the write
// and what resolves it run on a context of their own, bounded by 30
// seconds. On PostgreSQL the UPDATE is a transaction of its own, so that
// a write whose statement failed never lands later; a failed COMMIT, or a
// failed statement on SQLite, which commits each statement, may have
// landed. Advance then reads the record back in a write transaction
// (which waits for a write of it still under way): the record it meant to
// write (same version and content) means the step landed, and Advance
// returns it; the record it was decided on means it did not, and Advance
// returns an error wrapping [dispatch.ErrStore]; a record that another
// process moved on meanwhile cannot tell, and Advance says so with an
// error wrapping [dispatch.ErrStore], never ErrConflict. A read that
// fails is tried again a few times within the bound. An UPDATE that
// finds no row at the version is read back the same way before it is
// called a conflict: database/sql runs a statement again on another
// connection when the driver reports a bad one, which a driver may do
// after the first run landed.
func (s *Store) Advance(ctx context.Context, id string, step dispatch.Step) (dispatch.Claim, error) {
	if err := s.begin(ctx); err != nil {
		return dispatch.Claim{}, err
	}
	c, err := s.claimed(ctx, s.db, s.selectClaim, id)
	if err != nil {
		return dispatch.Claim{}, err
	}
	next, err := c.Apply(step)
	if err != nil {
		return dispatch.Claim{}, err
	}
	return s.write(ctx, c, next)
}

// maxFinishes bounds how many times Finish reads a record again when
// another write moved it between its read and its write (a lease
// renewed by the call's own runner, say).
const maxFinishes = 16

// Finish implements [dispatch.Store]'s Finish: the record moves to
// [dispatch.StateFinished] through [dispatch.Claim.Apply], from whatever
// version it is at, by the compare and set Advance writes with (read
// again and decided anew when another write came in between). A claim
// that has an outcome keeps it: an equal outcome returns nil, another an
// error wrapping [dispatch.ErrInvalidRecord].
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
	for range maxFinishes {
		c, recorded, err := s.claimRow(ctx, id)
		if err != nil {
			return err
		}
		if recorded.Valid {
			return sameOutcome(id, recorded.String, data)
		}
		next, err := c.Apply(dispatch.Step{Version: c.Version, State: dispatch.StateFinished, Attempt: c.Attempt, Outcome: &outcome})
		if err != nil {
			return err
		}
		if _, err := s.write(ctx, c, next); !errors.Is(err, dispatch.ErrConflict) {
			return err
		}
	}
	return errprefix.Errorf("%w: sqlstore: recording the outcome of checkpoint %s: %d other writes of its record came in between", dispatch.ErrConflict, truncate(id, 80), maxFinishes)
}

// claimRow reads the claim of id, decoded without its outcome, and its
// outcome as stored, not decoded: Finish compares it as it is.
func (s *Store) claimRow(ctx context.Context, id string) (dispatch.Claim, sql.NullString, error) {
	var data string
	var outcome sql.NullString
	err := s.db.QueryRowContext(ctx, s.selectClaim, id).Scan(&data, &outcome)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return dispatch.Claim{}, outcome, notFound(id)
	case err != nil:
		return dispatch.Claim{}, outcome, s.fail(ctx, "reading the claim of checkpoint "+truncate(id, 80), err)
	}
	c, err := decodeClaim(data, sql.NullString{})
	return c, outcome, err
}

// sameOutcome returns nil when the outcome recorded for claim id (as
// stored) is the one given (as encoded), and otherwise an error wrapping
// ErrInvalidRecord that names the recorded one's kind.
func sameOutcome(id, recorded string, given []byte) error {
	if recorded == string(given) {
		return nil
	}
	var prior dispatch.SavedOutcome
	kind := "unreadable"
	if prior.UnmarshalJSON([]byte(recorded)) == nil {
		// Encoded anew, in case the encoding changed since it was stored.
		if again, err := prior.MarshalJSON(); err == nil && string(again) == string(given) {
			return nil
		}
		kind = string(prior.Kind)
	}
	return errprefix.Errorf("%w: claim %s already has outcome %s", dispatch.ErrInvalidRecord, truncate(id, 80), kind)
}

// write stores next, the record c becomes by one step, in place of c if
// the row is still at c's version and has no outcome (or is recorded
// unknown), and returns next
// as stored. A row that moved is an error wrapping ErrConflict (or
// ErrNotFound when it is gone); a write whose result is uncertain is
// resolved (see Advance).
func (s *Store) write(ctx context.Context, c, next dispatch.Claim) (dispatch.Claim, error) {
	id := c.CheckpointID
	var outcome sql.NullString
	if next.Outcome != nil {
		data, err := next.Outcome.MarshalJSON()
		if err != nil {
			return dispatch.Claim{}, err
		}
		if len(data) > s.maxRecordBytes() {
			return dispatch.Claim{}, s.tooLarge("the outcome of checkpoint "+id, len(data))
		}
		outcome = sql.NullString{String: string(data), Valid: true}
	}
	bare := next
	bare.Outcome = nil
	data, err := jsonv2.Marshal(bare)
	if err != nil {
		return dispatch.Claim{}, errprefix.Errorf("%w: claim %s: %v", dispatch.ErrInvalidRecord, id, err)
	}
	if len(data) > s.maxRecordBytes() {
		return dispatch.Claim{}, s.tooLarge("claim "+id, len(data))
	}
	lease, err := leaseNanos(next)
	if err != nil {
		return dispatch.Claim{}, err
	}
	// What is written, as the database will give it back.
	stored, err := decodeClaim(string(data), outcome)
	if err != nil {
		return dispatch.Claim{}, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimBound)
	defer cancel()
	landed, certain, werr := s.stepRow(wctx, id, []any{outcome, string(data), string(next.State), next.Version, lease, id, c.Version})
	switch {
	case werr == nil && landed:
		return stored, nil
	case werr == nil:
		// No row was at c's version: another write moved it, or this
		// one did (database/sql runs a statement again on a new
		// connection when the driver says the first was bad, which it
		// may say after the statement ran).
		now, err := s.claimed(wctx, s.db, s.selectClaim, id)
		if err != nil {
			return dispatch.Claim{}, err
		}
		if encodeClaim(now) == encodeClaim(stored) {
			return now, nil
		}
		return dispatch.Claim{}, errprefix.Errorf("%w: claim %s is at version %d (%s); the step was decided on version %d (%s)",
			dispatch.ErrConflict, id, now.Version, now.Stage(), c.Version, c.Stage())
	case certain:
		return dispatch.Claim{}, werr
	}
	return s.resolve(wctx, c, stored, werr)
}

// stepRow runs the compare and set of a record's row, and reports
// whether it wrote the row and, when it failed, whether it certainly
// wrote nothing.
//
// On PostgreSQL the UPDATE runs in a transaction of its own, for the
// reason insertClaimRow gives: a failure before the COMMIT is sent
// leaves nothing written, ever; only the COMMIT's failure is uncertain.
// On SQLite each statement commits, so its failure is uncertain.
func (s *Store) stepRow(ctx context.Context, id string, args []any) (landed, certain bool, err error) {
	what := "recording a step of the claim of checkpoint " + id
	if s.dialect != PostgreSQL {
		res, err := s.db.ExecContext(ctx, s.stepClaim, args...)
		if err != nil {
			return false, false, s.fail(ctx, what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return false, false, s.fail(ctx, what, err)
		}
		return n == 1, true, nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, true, s.fail(ctx, what, err)
	}
	res, err := tx.ExecContext(ctx, s.stepClaim, args...)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	if err != nil || n != 1 {
		_ = tx.Rollback()
		if err != nil {
			return false, true, s.fail(ctx, what, err)
		}
		return false, true, nil
	}
	if err := tx.Commit(); err != nil {
		return false, false, s.fail(ctx, what+" (committing)", err)
	}
	return true, true, nil
}

// resolve tells whether the write of next in place of c, which failed
// with werr (which wraps ErrStore), landed: it reads the record in a
// write transaction, so that a write of it still under way ends first,
// and compares.
func (s *Store) resolve(ctx context.Context, c, next dispatch.Claim, werr error) (dispatch.Claim, error) {
	id := c.CheckpointID
	want, was := encodeClaim(next), encodeClaim(c)
	for attempt := range maxAttempts {
		if attempt > 0 {
			if err := pause(ctx, attempt); err != nil {
				break
			}
		}
		var now dispatch.Claim
		err := s.inTx(ctx, func(q querier) error {
			var err error
			now, err = s.claimed(ctx, q, s.lockClaim, id)
			return err
		})
		switch {
		case errors.Is(err, dispatch.ErrNotFound):
			return dispatch.Claim{}, errprefix.Errorf("%w (the claim is gone since: it expired and was deleted)", werr)
		case errors.Is(err, dispatch.ErrInvalidRecord):
			return dispatch.Claim{}, err
		case err != nil:
			continue
		case encodeClaim(now) == want:
			return now, nil // it landed
		case encodeClaim(now) == was:
			return dispatch.Claim{}, werr // it did not
		}
		return dispatch.Claim{}, errprefix.Errorf("%w (whether it was recorded could not be told: the record moved on to version %d, %s, meanwhile)", werr, now.Version, now.Stage())
	}
	return dispatch.Claim{}, errprefix.Errorf("%w (whether it was recorded could not be told: the record could not be read back)", werr)
}

// encodeClaim is c's JSON, to compare two records whole; "" when it
// does not encode.
func encodeClaim(c dispatch.Claim) string {
	data, err := jsonv2.Marshal(c)
	if err != nil {
		return ""
	}
	return string(data)
}

// Stranded implements [dispatch.Store]'s Stranded with one query on the
// index of the records not finished (those without an outcome), in the
// order they were claimed, that filters on the lease end kept in the
// index: it reads the JSON of the records it returns, not of every
// claim. A record of schema version 1 without an outcome (no state, no
// lease) is listed, as [dispatch.Claim.Stranded] says.
func (s *Store) Stranded(ctx context.Context, q dispatch.StrandedQuery) ([]dispatch.Claim, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	query, args := s.strandedQuery(q)
	out := []dispatch.Claim{}
	err := s.each(ctx, s.db, "listing stranded claims", query, args, func(scan func(...any) error) error {
		var data string
		if err := scan(&data); err != nil {
			return err
		}
		c, err := decodeClaim(data, sql.NullString{})
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

// strandedQuery is the query of Stranded and its arguments. A record
// without a lease (NULL) has one that ended at the zero time, so it is
// listed when q.Now is after that.
func (s *Store) strandedQuery(q dispatch.StrandedQuery) (string, []any) {
	query := "SELECT claim FROM {p}claims WHERE outcome IS NULL AND (lease_expires < ?"
	args := []any{clampNanos(q.Now)}
	if q.Now.After(time.Time{}) {
		query += " OR lease_expires IS NULL"
	}
	query += ") ORDER BY claimed_at, checkpoint_id"
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	return s.dialect.sql(s.prefix, query), args
}
