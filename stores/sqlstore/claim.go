package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// claimBound bounds the work of one Claim once it has started writing:
// the insert and, when its result is uncertain, what resolves it. It does
// not end with the caller's ctx.
const claimBound = 30 * time.Second

// Claim implements [dispatch.Store]'s Claim: one INSERT … ON CONFLICT DO
// NOTHING, which the database runs atomically; when it inserted nothing,
// the claim that was there is read and compared. The record is written
// at version 1, as [dispatch.StateClaimed], or as [dispatch.StateRunning]
// at attempt 1 with its lease when c is so (a call whose tool starts at
// once: intent and start in one statement), placed (TurnID, CallIndex) in
// the saved turn whose pending call has its checkpoint, read from the
// store's own rows of the turns' outcomes just before the insert (the
// first by turn ID and position if several turns hold it; unplaced if
// none does, and never looked up for the record of a call Run ran,
// whose ID is no checkpoint's), whatever the caller set.
//
// Once the insert starts, ctx no longer ends it: the insert and whatever
// resolves it run on a context of their own, bounded by 30 seconds, so
// that what Claim returns is what the database holds. A failed insert (a
// lost reply, a failed commit, a dropped connection) may have landed:
// Claim reads the claim back, and the nonce tells the caller's own from
// another's; when the database cannot be read either, it tries again,
// insert and read, a few times within the bound (less than a second of
// pauses). Only then does Claim return an error for a claim that may
// stand.
func (s *Store) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	c, row, err := s.claimRowOf(ctx, c)
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimBound)
	defer cancel()
	var uncertain error // the error of a write that may have landed
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			err := errors.New("no answer after " + strconv.Itoa(maxAttempts) + " attempts")
			if attempt < maxAttempts {
				err = pause(wctx, attempt)
			}
			if err != nil {
				if uncertain != nil {
					return nil, s.fail(wctx, "claiming checkpoint "+c.CheckpointID+" (whether the claim was recorded could not be told)", uncertain)
				}
				return nil, s.fail(wctx, "claiming checkpoint "+c.CheckpointID, err)
			}
		}
		won, ierr := s.insertClaimRow(wctx, c.CheckpointID, row)
		if ierr == nil && won {
			return nil, nil
		}
		// The insert found a claim in place, or failed and may have
		// landed: read what the database holds.
		prior, err := s.claimed(wctx, s.db, s.selectClaim, c.CheckpointID)
		switch {
		case errors.Is(err, dispatch.ErrNotFound) && ierr != nil:
			// The failed insert recorded nothing.
			return nil, ierr
		case errors.Is(err, dispatch.ErrNotFound):
			// The claim in place was deleted (expired) before it was
			// read: insert again.
			continue
		case errors.Is(err, dispatch.ErrInvalidRecord):
			return nil, err
		case err != nil:
			if ierr != nil {
				uncertain = ierr
			}
			continue
		case prior.AnswerSHA256 != c.AnswerSHA256:
			return nil, &dispatch.AnsweredError{Claim: prior}
		case prior.Nonce == c.Nonce:
			return nil, nil // ours: the insert landed, or an earlier one did
		}
		return &prior, nil
	}
}

// claimRowOf checks c, a new claim, and returns it as recorded (at
// version 1, placed in its turn) with the row that records it.
func (s *Store) claimRowOf(ctx context.Context, c dispatch.Claim) (dispatch.Claim, []any, error) {
	if err := checkNewClaim(c); err != nil {
		return c, nil, err
	}
	claimedAt, err := nanos(c.ClaimedAt, "claim "+c.CheckpointID+": ClaimedAt")
	if err != nil {
		return c, nil, err
	}
	expiresAt, err := nanos(c.ExpiresAt, "claim "+c.CheckpointID+": ExpiresAt")
	if err != nil {
		return c, nil, err
	}
	lease, err := leaseNanos(c)
	if err != nil {
		return c, nil, err
	}
	if err := s.begin(ctx); err != nil {
		return c, nil, err
	}
	if c.State == "" {
		c.State = dispatch.StateClaimed
	}
	c.Version = 1
	c.TurnID, c.CallIndex = "", 0
	if c.AnswerSHA256 != dispatch.RunSHA256 { // a run's record is no pending call of a turn
		if c.TurnID, c.CallIndex, err = s.place(ctx, c.CheckpointID); err != nil {
			return c, nil, err
		}
	}
	data, err := jsonv2.Marshal(c)
	if err != nil {
		return c, nil, errprefix.Errorf("%w: claim %s: %v", dispatch.ErrInvalidRecord, c.CheckpointID, err)
	}
	if len(data) > s.maxRecordBytes() {
		return c, nil, s.tooLarge("claim "+c.CheckpointID, len(data))
	}
	return c, []any{c.CheckpointID, c.AnswerSHA256, claimedAt, expiresAt, string(data), string(c.State), c.Version, lease}, nil
}

// checkNewClaim refuses what Claim may not record, as
// [dispatch.CallStore] says: a claim that is not valid, that has an
// outcome, a version or Reconciled, or that is neither claimed at no
// attempt nor running at attempt 1 with a lease.
func checkNewClaim(c dispatch.Claim) error {
	if err := c.Validate(); err != nil {
		return err
	}
	claimed := (c.State == "" || c.State == dispatch.StateClaimed) && c.Attempt == 0
	running := c.State == dispatch.StateRunning && c.Attempt == 1 && c.LeaseOwner != "" && !c.LeaseExpires.IsZero()
	if c.Outcome != nil || c.Version != 0 || c.Reconciled || !(claimed || running) {
		return errprefix.Errorf("%w: claim %s: a new claim is claimed at no attempt, or running at attempt 1 with a lease, at no version, without an outcome", dispatch.ErrInvalidRecord, c.CheckpointID)
	}
	return nil
}

// leaseNanos returns the lease_expires column of c: NULL for no lease.
func leaseNanos(c dispatch.Claim) (sql.NullInt64, error) {
	if c.LeaseExpires.IsZero() {
		return sql.NullInt64{}, nil
	}
	n, err := nanos(c.LeaseExpires, "claim "+c.CheckpointID+": LeaseExpires")
	return sql.NullInt64{Int64: n, Valid: err == nil}, err
}

// place returns the turn and position of the saved turn's pending call
// whose checkpoint is id, or "" and 0 when no saved turn has it.
func (s *Store) place(ctx context.Context, id string) (string, int, error) {
	var turn []byte
	var position int64
	err := s.db.QueryRowContext(ctx, s.placeClaim, id).Scan(&turn, &position)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", 0, nil
	case err != nil:
		return "", 0, s.fail(ctx, "finding the turn of checkpoint "+id, err)
	}
	return string(turn), int(position), nil
}

// maxAttempts bounds how many times Claim writes and reads when the
// database does not answer whether a claim stands: about 0.6 seconds of
// pauses in all, so that a database that fails the same way every time (a
// table that is not there, a server that is down) is not waited for
// until the bound.
const maxAttempts = 8

// pause waits before the attempt-th try of a write whose result was
// uncertain: a little longer each time, at most a second.
func pause(ctx context.Context, attempt int) error {
	d := min(time.Duration(1<<min(attempt, 10))*5*time.Millisecond, time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// insertClaimRow inserts a claim's row unless its checkpoint has one,
// and reports whether it did.
//
// On PostgreSQL the INSERT is its own transaction, committed by a second
// statement: a driver that gives up on a query when ctx ends may leave
// the server running it (pgx closes the connection, and a server waiting
// for a lock does not notice until it has the lock), and an INSERT in
// autocommit would then record a claim after its caller was told it
// failed. In a transaction, the server finds the connection gone when it
// waits for the COMMIT, and rolls the claim back.
func (s *Store) insertClaimRow(ctx context.Context, id string, row []any) (bool, error) {
	var n int64
	insert := func(q querier) error {
		res, err := q.ExecContext(ctx, s.insertClaim, row...)
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

// claimed reads the claim of id with its outcome, with query: selectClaim,
// or lockClaim in a write transaction.
func (s *Store) claimed(ctx context.Context, q querier, query, id string) (dispatch.Claim, error) {
	var data string
	var outcome sql.NullString
	err := q.QueryRowContext(ctx, query, id).Scan(&data, &outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return dispatch.Claim{}, notFound(id)
	}
	if err != nil {
		return dispatch.Claim{}, s.fail(ctx, "reading the claim of checkpoint "+truncate(id, 80), err)
	}
	return decodeClaim(data, outcome)
}

// notFound is the error of an ID without a claim.
func notFound(id string) error {
	return errprefix.Errorf("%w: no claim of checkpoint %q", dispatch.ErrNotFound, truncate(id, 80))
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

// Claimed implements [dispatch.Store]'s Claimed.
func (s *Store) Claimed(ctx context.Context, id string) (dispatch.Claim, error) {
	if err := s.begin(ctx); err != nil {
		return dispatch.Claim{}, err
	}
	return s.claimed(ctx, s.db, s.selectClaim, id)
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
