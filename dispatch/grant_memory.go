package dispatch

import (
	"cmp"
	"context"
	"slices"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool/internal/errprefix"
)

// A MemoryStore keeps grants.
var _ GrantStore = (*MemoryStore)(nil)

// memGrants is what a MemoryStore keeps of grants: each grant's JSON as
// made, with its count of uses and its revocation beside it, and the
// receipts' JSON. The zero memGrants is empty and usable; the store's
// mutex guards it, and its bytes count towards MaxBytes (a full store
// refuses new grants and receipts with ErrStore, and evicts none).
type memGrants struct {
	grants   map[string]*memGrant
	receipts map[string]*memReceipt
	seq      int
}

// memGrant is one grant.
type memGrant struct {
	data      []byte // the grant as made: no use taken, not revoked
	seq       int
	head      Grant // its fields that queries select by, without predicate and answer
	used      int
	revokedBy string
	revokedAt time.Time
}

// memReceipt is one receipt.
type memReceipt struct {
	data    []byte
	at      time.Time
	grantID string
}

// current returns the head of r as it stands.
func (r *memGrant) current() Grant {
	g := r.head
	g.Used, g.RevokedBy, g.RevokedAt = r.used, r.revokedBy, r.revokedAt
	return g
}

// grant decodes r as it stands.
func (r *memGrant) grant() (Grant, error) {
	var g Grant
	if err := jsonv2.Unmarshal(r.data, &g, jsonv2.RejectUnknownMembers(true)); err != nil {
		return Grant{}, errprefix.Errorf("%w: a stored grant does not decode: %v", ErrInvalidGrant, err)
	}
	g.Used, g.RevokedBy, g.RevokedAt = r.used, r.revokedBy, r.revokedAt
	return g, nil
}

// checkNewGrant refuses what AddGrant may not record.
func checkNewGrant(g Grant, made Receipt) error {
	if err := g.Validate(); err != nil {
		return err
	}
	if g.Used != 0 || g.RevokedBy != "" {
		return errprefix.Errorf("%w: grant %s: a new grant has no use taken and is not revoked", ErrInvalidGrant, g.ID)
	}
	return checkReceiptOf(made, ReceiptMade, g.ID)
}

// checkReceiptOf refuses a receipt that is not valid, or not of kind for
// grant id.
func checkReceiptOf(r Receipt, kind ReceiptKind, id string) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if r.Kind != kind || r.GrantID != id {
		return errprefix.Errorf("%w: receipt %s is a receipt %s of grant %s, want one %s of grant %s", ErrInvalidReceipt, r.ID, r.Kind, r.GrantID, kind, truncate(id, 80))
	}
	return nil
}

// AddGrant implements GrantStore.AddGrant.
func (s *MemoryStore) AddGrant(ctx context.Context, g Grant, made Receipt) error {
	if err := checkNewGrant(g, made); err != nil {
		return err
	}
	data, err := jsonv2.Marshal(g)
	if err != nil {
		return errprefix.Errorf("%w: grant %s: %v", ErrInvalidGrant, g.ID, err)
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	m := &s.grants
	if _, ok := m.grants[g.ID]; ok {
		return errprefix.Errorf("%w: grant %s is recorded already", ErrInvalidGrant, g.ID)
	}
	rec, err := s.receiptRecord(made)
	if err != nil {
		return err
	}
	if err := s.makeRoom(len(data) + len(rec.data)); err != nil {
		return err
	}
	if m.grants == nil {
		m.grants = map[string]*memGrant{}
	}
	head := g
	head.Predicate, head.Answer, head.Widened = nil, nil, nil
	m.seq++
	m.grants[g.ID] = &memGrant{data: data, seq: m.seq, head: head}
	s.keepReceipt(made.ID, rec)
	s.used += len(data)
	return nil
}

// receiptRecord encodes r, which must be new. s.mu is held.
func (s *MemoryStore) receiptRecord(r Receipt) (*memReceipt, error) {
	if _, ok := s.grants.receipts[r.ID]; ok {
		return nil, errprefix.Errorf("%w: receipt %s is recorded already", ErrInvalidReceipt, r.ID)
	}
	data, err := jsonv2.Marshal(r)
	if err != nil {
		return nil, errprefix.Errorf("%w: receipt %s: %v", ErrInvalidReceipt, r.ID, err)
	}
	return &memReceipt{data: data, at: r.At, grantID: r.GrantID}, nil
}

// keepReceipt records rec, for which room was made. s.mu is held.
func (s *MemoryStore) keepReceipt(id string, rec *memReceipt) {
	if s.grants.receipts == nil {
		s.grants.receipts = map[string]*memReceipt{}
	}
	s.grants.receipts[id] = rec
	s.used += len(rec.data)
}

// Grants implements GrantStore.Grants.
func (s *MemoryStore) Grants(ctx context.Context, q GrantQuery) ([]Grant, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var rs []*memGrant
	for _, r := range s.grants.grants {
		if q.Matches(r.current()) {
			rs = append(rs, r)
		}
	}
	slices.SortFunc(rs, func(a, b *memGrant) int {
		return cmp.Or(a.head.CreatedAt.Compare(b.head.CreatedAt), cmp.Compare(a.head.ID, b.head.ID))
	})
	if q.NewestFirst {
		slices.Reverse(rs)
	}
	rs = rs[min(max(q.Offset, 0), len(rs)):]
	if q.Limit > 0 && len(rs) > q.Limit {
		rs = rs[:q.Limit]
	}
	out := make([]Grant, 0, len(rs))
	for _, r := range rs {
		g, err := r.grant()
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// SpendGrant implements GrantStore.SpendGrant.
func (s *MemoryStore) SpendGrant(ctx context.Context, id string, now time.Time, spent Receipt) (Grant, error) {
	if err := checkReceiptOf(spent, ReceiptSpent, id); err != nil {
		return Grant{}, err
	}
	if err := s.begin(ctx); err != nil {
		return Grant{}, err
	}
	defer s.mu.Unlock()
	r, err := s.grantOf(id)
	if err != nil {
		return Grant{}, err
	}
	if g := r.current(); !g.Live(now) {
		return Grant{}, notLive(g, now)
	}
	rec, err := s.receiptRecord(spent)
	if err != nil {
		return Grant{}, err
	}
	if err := s.makeRoom(len(rec.data)); err != nil {
		return Grant{}, err
	}
	r.used++
	s.keepReceipt(spent.ID, rec)
	return r.grant()
}

// RevokeGrant implements GrantStore.RevokeGrant.
func (s *MemoryStore) RevokeGrant(ctx context.Context, id, by string, at time.Time, revoked Receipt) (Grant, error) {
	if err := checkRevocation(id, by, at, revoked); err != nil {
		return Grant{}, err
	}
	if err := s.begin(ctx); err != nil {
		return Grant{}, err
	}
	defer s.mu.Unlock()
	r, err := s.grantOf(id)
	if err != nil {
		return Grant{}, err
	}
	if r.revokedBy != "" {
		return Grant{}, notLive(r.current(), at)
	}
	rec, err := s.receiptRecord(revoked)
	if err != nil {
		return Grant{}, err
	}
	if err := s.makeRoom(len(rec.data)); err != nil {
		return Grant{}, err
	}
	r.revokedBy, r.revokedAt = by, at.UTC()
	s.keepReceipt(revoked.ID, rec)
	return r.grant()
}

// checkRevocation refuses what RevokeGrant may not record: a person who
// is not 1 to 1024 bytes of UTF-8, a zero time, or a receipt that is not
// the revocation's.
func checkRevocation(id, by string, at time.Time, revoked Receipt) error {
	if by == "" || len(by) > maxRecordText || !utf8.ValidString(by) || at.IsZero() {
		return errprefix.Errorf("%w: grant %s: a revocation names who (1 to %d bytes of UTF-8) and when", ErrInvalidGrant, truncate(id, 80), maxRecordText)
	}
	if err := checkReceiptOf(revoked, ReceiptRevoked, id); err != nil {
		return err
	}
	if revoked.By != by {
		return errprefix.Errorf("%w: receipt %s names %q as who revoked, not %q", ErrInvalidReceipt, revoked.ID, truncate(revoked.By, 80), truncate(by, 80))
	}
	return nil
}

// notLive is the error of a grant that cannot be spent at now, or
// revoked again.
func notLive(g Grant, now time.Time) error {
	why := "spent: all its uses are taken"
	switch {
	case g.RevokedBy != "":
		why = "revoked at " + g.RevokedAt.UTC().Format(time.RFC3339)
	case !now.Before(g.ExpiresAt):
		why = "expired at " + g.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return errprefix.Errorf("%w: grant %s is %s", ErrGrantNotLive, g.ID, why)
}

// grantOf returns the record of grant id. s.mu is held.
func (s *MemoryStore) grantOf(id string) (*memGrant, error) {
	r, ok := s.grants.grants[id]
	if !ok {
		return nil, errprefix.Errorf("%w: no grant %q", ErrNotFound, truncate(id, 80))
	}
	return r, nil
}

// AddReceipt implements GrantStore.AddReceipt.
func (s *MemoryStore) AddReceipt(ctx context.Context, r Receipt) error {
	if err := checkReceiptOf(r, ReceiptCovered, r.GrantID); err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	rec, err := s.receiptRecord(r)
	if err != nil {
		return err
	}
	if err := s.makeRoom(len(rec.data)); err != nil {
		return err
	}
	s.keepReceipt(r.ID, rec)
	return nil
}

// Receipts implements GrantStore.Receipts.
func (s *MemoryStore) Receipts(ctx context.Context, q ReceiptQuery) ([]Receipt, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	type keyed struct {
		id string
		r  *memReceipt
	}
	var rs []keyed
	for id, r := range s.grants.receipts {
		if (q.GrantID == "" || q.GrantID == r.grantID) && !r.at.Before(q.Since) {
			rs = append(rs, keyed{id, r})
		}
	}
	slices.SortFunc(rs, func(a, b keyed) int { return cmp.Or(a.r.at.Compare(b.r.at), cmp.Compare(a.id, b.id)) })
	if q.Limit > 0 && len(rs) > q.Limit {
		rs = rs[:q.Limit]
	}
	out := make([]Receipt, 0, len(rs))
	for _, k := range rs {
		var r Receipt
		if err := jsonv2.Unmarshal(k.r.data, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
			return nil, errprefix.Errorf("%w: a stored receipt does not decode: %v", ErrInvalidReceipt, err)
		}
		out = append(out, r)
	}
	return out, nil
}
