package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcontract/tool/dispatch"
)

// GrantStore runs the conformance tests of a dispatch.GrantStore against
// the stores newStore makes: grants read back as recorded and listed by
// query (filters, live at a time, order, pages); uses spent one at a
// time, never beyond the grant's uses, never on a grant expired or
// revoked, each with its receipt and a refused one with none; 16 spends
// at once of a grant of 3 uses, of which exactly 3 land; revocations,
// once; receipts recorded with each change and listed for an audit as
// they were written; invalid records refused; a cancelled context.
//
// Run runs it too, for a Store that is a GrantStore.
func GrantStore(t *testing.T, newStore func(t *testing.T) dispatch.GrantStore) {
	t.Helper()
	t.Run("Grants", func(t *testing.T) { testGrants(t, newStore(t)) })
	t.Run("Spend", func(t *testing.T) { testSpend(t, newStore(t)) })
	t.Run("ConcurrentSpends", func(t *testing.T) { testConcurrentSpends(t, newStore(t)) })
	t.Run("Revoke", func(t *testing.T) { testRevoke(t, newStore(t)) })
	t.Run("Receipts", func(t *testing.T) { testReceipts(t, newStore(t)) })
	t.Run("InvalidRecords", func(t *testing.T) { testInvalidGrants(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceledGrants(t, newStore(t)) })
}

// runGrants runs GrantStore for Run: a Store that keeps no grants skips.
func runGrants(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	if _, ok := newStore(t).(dispatch.GrantStore); !ok {
		t.Skip("the store is no dispatch.GrantStore")
	}
	GrantStore(t, func(t *testing.T) dispatch.GrantStore { return newStore(t).(dispatch.GrantStore) })
}

// receipts numbers the receipts of a test binary.
var receipts atomic.Uint64

// grant returns the n-th grant of a subtest, of uses uses, made n seconds
// after base, for principal "user-7", live for a day.
func grant(n, uses int) dispatch.Grant {
	return dispatch.Grant{
		ID:             id(1000 + n),
		GrantedBy:      "user-7",
		Principal:      "user-7",
		Tool:           "refund",
		ContractSHA256: digest(7),
		Predicate:      json.RawMessage(`{"type":"object","additionalProperties":false,"required":["order"],"properties":{"order":{"const":"A-7"}}}`),
		Widened:        []dispatch.Widening{{Member: "cents", Maximum: "5000", Approved: "1250"}},
		Answer:         json.RawMessage(`{"approve":true}`),
		CheckpointID:   id(n),
		CreatedAt:      base.Add(time.Duration(n) * time.Second),
		ExpiresAt:      base.Add(24 * time.Hour),
		Uses:           uses,
	}
}

// receipt returns a receipt of kind for grant g, at at, with an HMAC of
// the right size (a store keeps receipts; it does not verify them).
func receipt(kind dispatch.ReceiptKind, g dispatch.Grant, at time.Time) dispatch.Receipt {
	r := dispatch.Receipt{ID: fmt.Sprintf("%032x", 1<<40+receipts.Add(1)), Kind: kind, At: at, GrantID: g.ID, KeyID: "k1", HMACSHA256: make([]byte, 32)}
	switch kind {
	case dispatch.ReceiptMade:
		r.By, r.Grant = g.GrantedBy, &g
	case dispatch.ReceiptRevoked:
		r.By = "user-7"
	default:
		r.CheckpointID, r.CallID, r.Principal, r.Tool = id(2000+int(receipts.Load())), "call_1", g.Principal, g.Tool
		r.Arguments = `{"order":"A-7"}`
		if kind == dispatch.ReceiptCovered {
			r.Use, r.Uses, r.Outcome, r.Arguments = 1, g.Uses, dispatch.KindCompleted, ""
		}
	}
	return r
}

// addGrant records g with its receipt.
func addGrant(t *testing.T, s dispatch.GrantStore, g dispatch.Grant) {
	t.Helper()
	check(t, s.AddGrant(t.Context(), g, receipt(dispatch.ReceiptMade, g, g.CreatedAt)), "recording grant %s", g.ID)
}

// sameJSON compares two values by their JSON.
func sameJSON(t *testing.T, got, want any, what string) {
	t.Helper()
	g, err := json.Marshal(got)
	check(t, err, "encoding")
	w, err := json.Marshal(want)
	check(t, err, "encoding")
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

// ids returns the IDs of gs.
func ids(gs []dispatch.Grant) []string {
	out := []string{}
	for _, g := range gs {
		out = append(out, g.ID)
	}
	return out
}

func testGrants(t *testing.T, s dispatch.GrantStore) {
	ctx := t.Context()
	g0, g1, g2 := grant(0, 3), grant(1, 1), grant(2, 2)
	g1.Tool = "pay"
	g2.Principal, g2.GrantedBy = "user-8", "user-8"
	for _, g := range []dispatch.Grant{g2, g0, g1} {
		addGrant(t, s, g)
	}
	got, err := s.Grants(ctx, dispatch.GrantQuery{ID: g0.ID})
	check(t, err, "reading a grant")
	if len(got) != 1 {
		t.Fatalf("grant %s read back %d times", g0.ID, len(got))
	}
	sameJSON(t, got[0], g0, "a grant read back")
	got[0].Predicate[0] = 'X'
	got, err = s.Grants(ctx, dispatch.GrantQuery{ID: g0.ID})
	check(t, err, "reading a grant again")
	sameJSON(t, got[0], g0, "a grant read back after the caller changed its copy")

	for _, c := range []struct {
		q    dispatch.GrantQuery
		want []string
		why  string
	}{
		{dispatch.GrantQuery{}, []string{g0.ID, g1.ID, g2.ID}, "all, in the order they were made"},
		{dispatch.GrantQuery{NewestFirst: true}, []string{g2.ID, g1.ID, g0.ID}, "newest first"},
		{dispatch.GrantQuery{Offset: 1, Limit: 1}, []string{g1.ID}, "a page"},
		{dispatch.GrantQuery{Offset: 5}, []string{}, "beyond the end"},
		{dispatch.GrantQuery{Principal: "user-7"}, []string{g0.ID, g1.ID}, "by principal"},
		{dispatch.GrantQuery{Principal: "user-7", Tool: "refund", ContractSHA256: digest(7)}, []string{g0.ID}, "by principal, tool and contract"},
		{dispatch.GrantQuery{ContractSHA256: digest(8)}, []string{}, "another contract"},
		{dispatch.GrantQuery{LiveAt: base.Add(time.Hour)}, []string{g0.ID, g1.ID, g2.ID}, "live in an hour"},
		{dispatch.GrantQuery{LiveAt: base.Add(24 * time.Hour)}, []string{}, "live at their expiry"},
	} {
		got, err := s.Grants(ctx, c.q)
		check(t, err, "listing grants %s", c.why)
		sameJSON(t, ids(got), c.want, "grants listed "+c.why)
	}
	// Spent and revoked grants are not live.
	_, err = s.SpendGrant(ctx, g1.ID, base.Add(time.Hour), receipt(dispatch.ReceiptSpent, g1, base.Add(time.Hour)))
	check(t, err, "spending the one use of grant 1")
	_, err = s.RevokeGrant(ctx, g2.ID, "user-8", base.Add(time.Hour), func() dispatch.Receipt {
		r := receipt(dispatch.ReceiptRevoked, g2, base.Add(time.Hour))
		r.By = "user-8"
		return r
	}())
	check(t, err, "revoking grant 2")
	got, err = s.Grants(ctx, dispatch.GrantQuery{LiveAt: base.Add(time.Hour)})
	check(t, err, "listing live grants")
	sameJSON(t, ids(got), []string{g0.ID}, "live grants once one is spent and one revoked")
}

func testSpend(t *testing.T, s dispatch.GrantStore) {
	ctx := t.Context()
	g := grant(0, 2)
	addGrant(t, s, g)
	now := base.Add(time.Minute)
	for use := 1; use <= 2; use++ {
		got, err := s.SpendGrant(ctx, g.ID, now, receipt(dispatch.ReceiptSpent, g, now))
		check(t, err, "spending use %d", use)
		if got.Used != use || got.Uses != 2 || got.ID != g.ID || string(got.Predicate) != string(g.Predicate) {
			t.Fatalf("after use %d the store returned %+v", use, got)
		}
	}
	_, err := s.SpendGrant(ctx, g.ID, now, receipt(dispatch.ReceiptSpent, g, now))
	wantIs(t, err, dispatch.ErrGrantNotLive, "spending a grant with no use left")

	expiring := grant(1, 5)
	addGrant(t, s, expiring)
	_, err = s.SpendGrant(ctx, expiring.ID, expiring.ExpiresAt, receipt(dispatch.ReceiptSpent, expiring, expiring.ExpiresAt))
	wantIs(t, err, dispatch.ErrGrantNotLive, "spending a grant at its expiry")
	_, err = s.SpendGrant(ctx, expiring.ID, expiring.ExpiresAt.Add(-time.Nanosecond), receipt(dispatch.ReceiptSpent, expiring, now))
	check(t, err, "spending a grant a nanosecond before its expiry")

	missing := grant(9, 1)
	_, err = s.SpendGrant(ctx, missing.ID, now, receipt(dispatch.ReceiptSpent, missing, now))
	wantIs(t, err, dispatch.ErrNotFound, "spending a grant never made")
	_, err = s.SpendGrant(ctx, expiring.ID, now, receipt(dispatch.ReceiptCovered, expiring, now))
	wantIs(t, err, dispatch.ErrInvalidReceipt, "spending with a receipt of another kind")
	_, err = s.SpendGrant(ctx, expiring.ID, now, receipt(dispatch.ReceiptSpent, g, now))
	wantIs(t, err, dispatch.ErrInvalidReceipt, "spending with a receipt of another grant")

	rs, err := s.Receipts(ctx, dispatch.ReceiptQuery{GrantID: g.ID})
	check(t, err, "listing receipts")
	kinds := []dispatch.ReceiptKind{}
	for _, r := range rs {
		kinds = append(kinds, r.Kind)
	}
	sameJSON(t, kinds, []dispatch.ReceiptKind{dispatch.ReceiptMade, dispatch.ReceiptSpent, dispatch.ReceiptSpent}, "receipts of a grant spent twice and refused once")
	got, err := s.Grants(ctx, dispatch.GrantQuery{ID: expiring.ID})
	check(t, err, "reading grant 1")
	if got[0].Used != 1 {
		t.Fatalf("grant 1 has %d uses taken, want 1: refused spends take none", got[0].Used)
	}
}

// testConcurrentSpends: of 16 spends at once of a grant of 3 uses,
// exactly 3 land, each with its receipt. (The dispatch-level test of the
// SQL store races 64 calls on two replicas.)
func testConcurrentSpends(t *testing.T, s dispatch.GrantStore) {
	const racers, uses = 16, 3
	g := grant(0, uses)
	addGrant(t, s, g)
	now := base.Add(time.Minute)
	var wg sync.WaitGroup
	var spent, refused atomic.Int32
	start := make(chan struct{})
	for r := range racers {
		wg.Go(func() {
			<-start
			got, err := s.SpendGrant(context.Background(), g.ID, now, receipt(dispatch.ReceiptSpent, g, now))
			switch {
			case err == nil && got.Used >= 1 && got.Used <= uses:
				spent.Add(1)
			case errors.Is(err, dispatch.ErrGrantNotLive):
				refused.Add(1)
			default:
				t.Errorf("racer %d: the spend returned use %d of %d and error %v", r, got.Used, got.Uses, err)
			}
		})
	}
	close(start)
	wg.Wait()
	if spent.Load() != uses || refused.Load() != racers-uses {
		t.Fatalf("%d spends landed and %d were refused; want %d and %d", spent.Load(), refused.Load(), uses, racers-uses)
	}
	got, err := s.Grants(t.Context(), dispatch.GrantQuery{ID: g.ID})
	check(t, err, "reading the grant")
	if got[0].Used != uses {
		t.Fatalf("the grant has %d uses taken, want %d", got[0].Used, uses)
	}
	rs, err := s.Receipts(t.Context(), dispatch.ReceiptQuery{GrantID: g.ID})
	check(t, err, "listing receipts")
	if len(rs) != 1+uses {
		t.Fatalf("%d receipts, want %d: one made, one a use", len(rs), 1+uses)
	}
}

func testRevoke(t *testing.T, s dispatch.GrantStore) {
	ctx := t.Context()
	g := grant(0, 2)
	addGrant(t, s, g)
	at := base.Add(time.Minute)
	got, err := s.RevokeGrant(ctx, g.ID, "user-7", at, receipt(dispatch.ReceiptRevoked, g, at))
	check(t, err, "revoking")
	if got.RevokedBy != "user-7" || !got.RevokedAt.Equal(at) || got.Used != 0 {
		t.Fatalf("a revoked grant reads %+v", got)
	}
	_, err = s.RevokeGrant(ctx, g.ID, "user-7", at.Add(time.Second), receipt(dispatch.ReceiptRevoked, g, at))
	wantIs(t, err, dispatch.ErrGrantNotLive, "revoking twice")
	_, err = s.SpendGrant(ctx, g.ID, at, receipt(dispatch.ReceiptSpent, g, at))
	wantIs(t, err, dispatch.ErrGrantNotLive, "spending a revoked grant")
	read, err := s.Grants(ctx, dispatch.GrantQuery{ID: g.ID})
	check(t, err, "reading the revoked grant")
	sameJSON(t, read[0], got, "the revoked grant read back")

	spent := grant(1, 1)
	addGrant(t, s, spent)
	_, err = s.SpendGrant(ctx, spent.ID, at, receipt(dispatch.ReceiptSpent, spent, at))
	check(t, err, "spending grant 1")
	_, err = s.RevokeGrant(ctx, spent.ID, "user-7", at, receipt(dispatch.ReceiptRevoked, spent, at))
	check(t, err, "revoking a spent grant")
	missing := grant(9, 1)
	_, err = s.RevokeGrant(ctx, missing.ID, "user-7", at, receipt(dispatch.ReceiptRevoked, missing, at))
	wantIs(t, err, dispatch.ErrNotFound, "revoking a grant never made")
	_, err = s.RevokeGrant(ctx, spent.ID, "", at, receipt(dispatch.ReceiptRevoked, spent, at))
	wantIs(t, err, dispatch.ErrInvalidGrant, "revoking for nobody")
	rs, err := s.Receipts(ctx, dispatch.ReceiptQuery{GrantID: g.ID})
	check(t, err, "listing receipts")
	if len(rs) != 2 || rs[1].Kind != dispatch.ReceiptRevoked {
		t.Fatalf("receipts of a grant revoked once, then refused: %+v", rs)
	}
}

func testReceipts(t *testing.T, s dispatch.GrantStore) {
	ctx := t.Context()
	g0, g1 := grant(0, 5), grant(1, 5)
	addGrant(t, s, g0)
	addGrant(t, s, g1)
	covered := receipt(dispatch.ReceiptCovered, g0, base.Add(time.Hour))
	check(t, s.AddReceipt(ctx, covered), "recording a covered call's receipt")
	err := s.AddReceipt(ctx, covered)
	wantIs(t, err, dispatch.ErrInvalidReceipt, "recording the same receipt twice")
	err = s.AddReceipt(ctx, receipt(dispatch.ReceiptSpent, g0, base))
	wantIs(t, err, dispatch.ErrInvalidReceipt, "recording a use's receipt without its spend")
	bad := receipt(dispatch.ReceiptCovered, g0, base)
	bad.HMACSHA256 = nil
	wantIs(t, s.AddReceipt(ctx, bad), dispatch.ErrInvalidReceipt, "recording a receipt without an HMAC")

	all, err := s.Receipts(ctx, dispatch.ReceiptQuery{})
	check(t, err, "listing every receipt")
	if len(all) != 3 {
		t.Fatalf("%d receipts, want 3", len(all))
	}
	sameJSON(t, all[2], covered, "a receipt listed as written")
	for i, want := range []string{g0.ID, g1.ID, g0.ID} {
		if all[i].GrantID != want {
			t.Fatalf("receipt %d is of grant %s, want %s: receipts are listed in the order of their times", i, all[i].GrantID, want)
		}
	}
	for _, c := range []struct {
		q    dispatch.ReceiptQuery
		want int
		why  string
	}{
		{dispatch.ReceiptQuery{GrantID: g0.ID}, 2, "of one grant"},
		{dispatch.ReceiptQuery{Since: base.Add(time.Second)}, 2, "since a time"},
		{dispatch.ReceiptQuery{Limit: 1}, 1, "limited"},
		{dispatch.ReceiptQuery{GrantID: id(999)}, 0, "of no grant"},
	} {
		got, err := s.Receipts(ctx, c.q)
		check(t, err, "listing receipts %s", c.why)
		if len(got) != c.want {
			t.Fatalf("%d receipts %s, want %d", len(got), c.why, c.want)
		}
	}
}

func testInvalidGrants(t *testing.T, s dispatch.GrantStore) {
	ctx := t.Context()
	g := grant(0, 1)
	addGrant(t, s, g)
	wantIs(t, s.AddGrant(ctx, g, receipt(dispatch.ReceiptMade, g, base)), dispatch.ErrInvalidGrant, "recording a grant of an ID taken")
	for _, c := range []struct {
		why  string
		edit func(*dispatch.Grant)
	}{
		{"no principal", func(g *dispatch.Grant) { g.Principal = "" }},
		{"no uses", func(g *dispatch.Grant) { g.Uses = 0 }},
		{"used already", func(g *dispatch.Grant) { g.Used = 1 }},
		{"revoked already", func(g *dispatch.Grant) { g.RevokedBy, g.RevokedAt = "user-7", base }},
		{"a predicate that is no JSON", func(g *dispatch.Grant) { g.Predicate = json.RawMessage(`{`) }},
		{"an expiry before it was made", func(g *dispatch.Grant) { g.ExpiresAt = g.CreatedAt }},
	} {
		bad := grant(1, 1)
		c.edit(&bad)
		wantIs(t, s.AddGrant(ctx, bad, receipt(dispatch.ReceiptMade, grant(1, 1), base)), dispatch.ErrInvalidGrant, "recording a grant with "+c.why)
	}
	other := grant(2, 1)
	wantIs(t, s.AddGrant(ctx, other, receipt(dispatch.ReceiptMade, g, base)), dispatch.ErrInvalidReceipt, "recording a grant with another grant's receipt")
	got, err := s.Grants(ctx, dispatch.GrantQuery{})
	check(t, err, "listing grants")
	if len(got) != 1 {
		t.Fatalf("%d grants recorded, want the one valid grant", len(got))
	}
}

func testCanceledGrants(t *testing.T, s dispatch.GrantStore) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	g := grant(0, 1)
	wantIs(t, s.AddGrant(ctx, g, receipt(dispatch.ReceiptMade, g, base)), dispatch.ErrStore, "AddGrant with a cancelled context")
	_, err := s.Grants(ctx, dispatch.GrantQuery{})
	wantIs(t, err, dispatch.ErrStore, "Grants with a cancelled context")
	_, err = s.SpendGrant(ctx, g.ID, base, receipt(dispatch.ReceiptSpent, g, base))
	wantIs(t, err, dispatch.ErrStore, "SpendGrant with a cancelled context")
	_, err = s.RevokeGrant(ctx, g.ID, "user-7", base, receipt(dispatch.ReceiptRevoked, g, base))
	wantIs(t, err, dispatch.ErrStore, "RevokeGrant with a cancelled context")
	wantIs(t, s.AddReceipt(ctx, receipt(dispatch.ReceiptCovered, g, base)), dispatch.ErrStore, "AddReceipt with a cancelled context")
	_, err = s.Receipts(ctx, dispatch.ReceiptQuery{})
	wantIs(t, err, dispatch.ErrStore, "Receipts with a cancelled context")
	got, err := s.Grants(context.Background(), dispatch.GrantQuery{})
	check(t, err, "listing grants")
	if len(got) != 0 {
		t.Fatalf("a cancelled AddGrant recorded %d grants", len(got))
	}
}
