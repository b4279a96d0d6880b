package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// A Store keeps grants.
var _ dispatch.GrantStore = (*Store)(nil)

// grantColumns are the columns a grant is read from: its JSON as made,
// and what changed since.
const grantColumns = "record, used, revoked_by, revoked_at"

// AddGrant implements [dispatch.GrantStore]'s AddGrant: the grant's row
// and its receipt's, in one transaction.
func (s *Store) AddGrant(ctx context.Context, g dispatch.Grant, made dispatch.Receipt) error {
	if err := checkNewGrant(g, made); err != nil {
		return err
	}
	created, err := nanos(g.CreatedAt, "grant "+g.ID+": CreatedAt")
	if err != nil {
		return err
	}
	expires, err := nanos(g.ExpiresAt, "grant "+g.ID+": ExpiresAt")
	if err != nil {
		return err
	}
	data, err := jsonv2.Marshal(g)
	if err != nil {
		return errprefix.Errorf("%w: grant %s: %v", dispatch.ErrInvalidGrant, g.ID, err)
	}
	if len(data) > s.maxRecordBytes() {
		return s.tooLarge("grant "+g.ID, len(data))
	}
	row, err := s.receiptRow(made)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	return s.inTx(ctx, func(q querier) error {
		res, err := q.ExecContext(ctx, s.dialect.sql(s.prefix, `INSERT INTO {p}grants (id, principal, tool, contract_sha256, created_at, expires_at, uses, used, record)
VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?) ON CONFLICT (id) DO NOTHING`), g.ID, g.Principal, g.Tool, g.ContractSHA256, created, expires, g.Uses, string(data))
		if err != nil {
			return s.fail(ctx, "recording grant "+g.ID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return s.fail(ctx, "recording grant "+g.ID, err)
		} else if n == 0 {
			return errprefix.Errorf("%w: grant %s is recorded already", dispatch.ErrInvalidGrant, g.ID)
		}
		return s.insertReceipt(ctx, q, made.ID, row)
	})
}

// receiptRow returns the row of receipt r: its grant, time and JSON.
func (s *Store) receiptRow(r dispatch.Receipt) ([]any, error) {
	at, err := nanos(r.At, "receipt "+r.ID+": At")
	if err != nil {
		return nil, err
	}
	data, err := jsonv2.Marshal(r)
	if err != nil {
		return nil, errprefix.Errorf("%w: receipt %s: %v", dispatch.ErrInvalidReceipt, r.ID, err)
	}
	if len(data) > s.maxRecordBytes() {
		return nil, s.tooLarge("receipt "+r.ID, len(data))
	}
	return []any{r.ID, r.GrantID, at, string(data)}, nil
}

// insertReceipt inserts the row of receipt id on q.
func (s *Store) insertReceipt(ctx context.Context, q querier, id string, row []any) error {
	res, err := q.ExecContext(ctx, s.dialect.sql(s.prefix, `INSERT INTO {p}grant_receipts (id, grant_id, receipt_at, receipt) VALUES (?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING`), row...)
	if err != nil {
		return s.fail(ctx, "recording receipt "+id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return s.fail(ctx, "recording receipt "+id, err)
	} else if n == 0 {
		return errprefix.Errorf("%w: receipt %s is recorded already", dispatch.ErrInvalidReceipt, id)
	}
	return nil
}

// Grants implements [dispatch.GrantStore]'s Grants: one query, on the
// index of principal, tool and contract when the query names them.
func (s *Store) Grants(ctx context.Context, q dispatch.GrantQuery) ([]dispatch.Grant, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	query := "SELECT " + grantColumns + " FROM {p}grants WHERE 1 = 1"
	var args []any
	for column, v := range map[string]string{"id": q.ID, "principal": q.Principal, "tool": q.Tool, "contract_sha256": q.ContractSHA256} {
		if v != "" {
			query += " AND " + column + " = ?"
			args = append(args, v)
		}
	}
	if !q.LiveAt.IsZero() {
		query += " AND revoked_at IS NULL AND used < uses AND expires_at > ?"
		args = append(args, clampNanos(q.LiveAt))
	}
	order := " ORDER BY created_at, id"
	if q.NewestFirst {
		order = " ORDER BY created_at DESC, id DESC"
	}
	query += order
	switch {
	case q.Limit > 0:
		query += " LIMIT ?"
		args = append(args, q.Limit)
	case q.Offset > 0 && s.dialect == SQLite:
		query += " LIMIT -1" // SQLite takes an OFFSET only after a LIMIT
	}
	if q.Offset > 0 {
		query += " OFFSET ?"
		args = append(args, q.Offset)
	}
	out := []dispatch.Grant{}
	err := s.each(ctx, s.db, "listing grants", s.dialect.sql(s.prefix, query), args, func(scan func(...any) error) error {
		g, err := scanGrant(scan)
		if err != nil {
			return err
		}
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanGrant reads the grantColumns of one row.
func scanGrant(scan func(...any) error) (dispatch.Grant, error) {
	var data string
	var used int64
	var revokedBy sql.NullString
	var revokedAt sql.NullInt64
	if err := scan(&data, &used, &revokedBy, &revokedAt); err != nil {
		return dispatch.Grant{}, err
	}
	var g dispatch.Grant
	if err := jsonv2.Unmarshal([]byte(data), &g, jsonv2.RejectUnknownMembers(true)); err != nil {
		return dispatch.Grant{}, errprefix.Errorf("%w: sqlstore: a stored grant does not decode: %v", dispatch.ErrInvalidGrant, err)
	}
	g.Used = int(used)
	if revokedAt.Valid {
		g.RevokedBy, g.RevokedAt = revokedBy.String, time.Unix(0, revokedAt.Int64).UTC()
	}
	return g, nil
}

// SpendGrant implements [dispatch.GrantStore]'s SpendGrant: one UPDATE
// that takes the use only where the row is live (used < uses, not
// revoked, not expired at now), which the database runs atomically
// against every other spend of the row, and the receipt's INSERT, in one
// transaction. An UPDATE that finds no such row reads the row to say why.
func (s *Store) SpendGrant(ctx context.Context, id string, now time.Time, spent dispatch.Receipt) (dispatch.Grant, error) {
	if err := checkReceiptOf(spent, dispatch.ReceiptSpent, id); err != nil {
		return dispatch.Grant{}, err
	}
	row, err := s.receiptRow(spent)
	if err != nil {
		return dispatch.Grant{}, err
	}
	if err := s.begin(ctx); err != nil {
		return dispatch.Grant{}, err
	}
	var g dispatch.Grant
	err = s.inTx(ctx, func(q querier) error {
		var err error
		g, err = s.changeGrant(ctx, q, id, now, "spending", `UPDATE {p}grants SET used = used + 1
WHERE id = ? AND used < uses AND revoked_at IS NULL AND expires_at > ? RETURNING `+grantColumns, id, clampNanos(now))
		if err != nil {
			return err
		}
		return s.insertReceipt(ctx, q, spent.ID, row)
	})
	if err != nil {
		return dispatch.Grant{}, err
	}
	return g, nil
}

// changeGrant runs update, which returns the grantColumns of grant id
// when it changed it, on q. When it changed nothing, it reads the grant:
// ErrNotFound without one, ErrGrantNotLive otherwise, judged at now.
func (s *Store) changeGrant(ctx context.Context, q querier, id string, now time.Time, what, update string, args ...any) (dispatch.Grant, error) {
	scan := func(r *sql.Row) func(...any) error {
		return func(dest ...any) error { return r.Scan(dest...) }
	}
	g, err := scanGrant(scan(q.QueryRowContext(ctx, s.dialect.sql(s.prefix, update), args...)))
	if err == nil {
		return g, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return dispatch.Grant{}, s.grantFailed(ctx, what+" grant "+id, err)
	}
	g, err = scanGrant(scan(q.QueryRowContext(ctx, s.dialect.sql(s.prefix, "SELECT "+grantColumns+" FROM {p}grants WHERE id = ?"), id)))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return dispatch.Grant{}, errprefix.Errorf("%w: no grant %q", dispatch.ErrNotFound, truncate(id, 80))
	case err != nil:
		return dispatch.Grant{}, s.grantFailed(ctx, what+" grant "+id, err)
	}
	why := "spent: all its uses are taken"
	switch {
	case !g.RevokedAt.IsZero():
		why = "revoked at " + g.RevokedAt.Format(time.RFC3339)
	case !now.Before(g.ExpiresAt):
		why = "expired at " + g.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return dispatch.Grant{}, errprefix.Errorf("%w: grant %s is %s", dispatch.ErrGrantNotLive, id, why)
}

// grantFailed wraps an error of reading a grant: its own when the grant
// does not decode, ErrStore's for the database's.
func (s *Store) grantFailed(ctx context.Context, what string, err error) error {
	if errors.Is(err, dispatch.ErrInvalidGrant) {
		return err
	}
	return s.fail(ctx, what, err)
}

// RevokeGrant implements [dispatch.GrantStore]'s RevokeGrant: one UPDATE
// of a row not yet revoked, and the receipt's INSERT, in one transaction.
func (s *Store) RevokeGrant(ctx context.Context, id, by string, at time.Time, revoked dispatch.Receipt) (dispatch.Grant, error) {
	if by == "" || len(by) > 1024 || !utf8.ValidString(by) || at.IsZero() {
		return dispatch.Grant{}, errprefix.Errorf("%w: grant %s: a revocation names who (1 to 1024 bytes of UTF-8) and when", dispatch.ErrInvalidGrant, truncate(id, 80))
	}
	if err := checkReceiptOf(revoked, dispatch.ReceiptRevoked, id); err != nil {
		return dispatch.Grant{}, err
	}
	if revoked.By != by {
		return dispatch.Grant{}, errprefix.Errorf("%w: receipt %s names %q as who revoked, not %q", dispatch.ErrInvalidReceipt, revoked.ID, truncate(revoked.By, 80), truncate(by, 80))
	}
	when, err := nanos(at, "grant "+id+": the revocation's time")
	if err != nil {
		return dispatch.Grant{}, err
	}
	row, err := s.receiptRow(revoked)
	if err != nil {
		return dispatch.Grant{}, err
	}
	if err := s.begin(ctx); err != nil {
		return dispatch.Grant{}, err
	}
	var g dispatch.Grant
	err = s.inTx(ctx, func(q querier) error {
		var err error
		g, err = s.changeGrant(ctx, q, id, time.Time{}, "revoking", `UPDATE {p}grants SET revoked_by = ?, revoked_at = ?
WHERE id = ? AND revoked_at IS NULL RETURNING `+grantColumns, by, when, id)
		if err != nil {
			return err
		}
		return s.insertReceipt(ctx, q, revoked.ID, row)
	})
	if err != nil {
		return dispatch.Grant{}, err
	}
	return g, nil
}

// AddReceipt implements [dispatch.GrantStore]'s AddReceipt.
func (s *Store) AddReceipt(ctx context.Context, r dispatch.Receipt) error {
	if err := checkReceiptOf(r, dispatch.ReceiptCovered, r.GrantID); err != nil {
		return err
	}
	row, err := s.receiptRow(r)
	if err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	return s.insertReceipt(ctx, s.db, r.ID, row)
}

// Receipts implements [dispatch.GrantStore]'s Receipts.
func (s *Store) Receipts(ctx context.Context, q dispatch.ReceiptQuery) ([]dispatch.Receipt, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	query := "SELECT receipt FROM {p}grant_receipts WHERE receipt_at >= ?"
	args := []any{clampNanos(q.Since)}
	if q.GrantID != "" {
		query += " AND grant_id = ?"
		args = append(args, q.GrantID)
	}
	query += " ORDER BY receipt_at, id"
	if q.Limit > 0 {
		query += " LIMIT ?"
		args = append(args, q.Limit)
	}
	out := []dispatch.Receipt{}
	err := s.each(ctx, s.db, "listing receipts", s.dialect.sql(s.prefix, query), args, func(scan func(...any) error) error {
		var data string
		if err := scan(&data); err != nil {
			return err
		}
		var r dispatch.Receipt
		if err := jsonv2.Unmarshal([]byte(data), &r, jsonv2.RejectUnknownMembers(true)); err != nil {
			return errprefix.Errorf("%w: sqlstore: a stored receipt does not decode: %v", dispatch.ErrInvalidReceipt, err)
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkNewGrant refuses what AddGrant may not record, as
// [dispatch.GrantStore] says: a grant that is not valid, used or
// revoked, or a receipt that is not its making's.
func checkNewGrant(g dispatch.Grant, made dispatch.Receipt) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if g.Used != 0 || g.RevokedBy != "" {
		return errprefix.Errorf("%w: grant %s: a new grant has no use taken and is not revoked", dispatch.ErrInvalidGrant, g.ID)
	}
	return checkReceiptOf(made, dispatch.ReceiptMade, g.ID)
}

// checkReceiptOf refuses a receipt that is not valid, or not of kind for
// grant id.
func checkReceiptOf(r dispatch.Receipt, kind dispatch.ReceiptKind, id string) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Kind != kind || r.GrantID != id {
		return errprefix.Errorf("%w: receipt %s is a receipt %s of grant %s, want one %s of grant %s", dispatch.ErrInvalidReceipt, r.ID, r.Kind, r.GrantID, kind, truncate(id, 80))
	}
	return nil
}
