package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentcontract/tool/dispatch"
)

func testClaims(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	for _, n := range []int{2, 0, 1} {
		_, err := s.Claim(ctx, claim(n, n))
		check(t, err, "claim %d", n)
	}
	check(t, s.Finish(ctx, id(1), completed("call_1", "done")), "finish")
	all, err := s.Claims(ctx, dispatch.ClaimQuery{})
	check(t, err, "listing")
	if len(all) != 3 {
		t.Fatalf("listed %d claims, want 3", len(all))
	}
	for i, c := range all {
		if c.CheckpointID != id(i) {
			t.Fatalf("claim %d is %s, want %s: claims are listed in the order they were claimed", i, c.CheckpointID, id(i))
		}
		if c.Principal != "user-7" || c.AnswerSHA256 != digest(i) || !c.ClaimedAt.Equal(base.Add(time.Duration(i)*time.Second)) {
			t.Fatalf("claim %d lost who, what or when: %+v", i, c)
		}
	}
	if all[1].Outcome == nil || all[1].Outcome.Kind != dispatch.KindCompleted || all[0].Outcome != nil {
		t.Fatal("the listing shows the outcome of finished claims only")
	}
	since, err := s.Claims(ctx, dispatch.ClaimQuery{Since: base.Add(time.Second)})
	check(t, err, "listing since")
	if len(since) != 2 || since[0].CheckpointID != id(1) {
		t.Fatalf("since: got %d claims, want the last 2", len(since))
	}
	limited, err := s.Claims(ctx, dispatch.ClaimQuery{Limit: 1})
	check(t, err, "listing with a limit")
	if len(limited) != 1 || limited[0].CheckpointID != id(0) {
		t.Fatalf("limit 1: got %d claims, want the first", len(limited))
	}

	// The audit lists a recorded answer and an edit's three sets of
	// arguments as claimed.
	answered := claim(3, 3)
	answered.Response = json.RawMessage(`{"approve":true}`)
	answered.AnswerSHA256, err = dispatch.AnswerSHA256(answered.Response)
	check(t, err, "digest")
	edited := claim(4, 4)
	edited.Edit = &dispatch.EditRecord{Proposed: `{"cents":125000}`, Approved: `{"cents":1250}`, Executed: `{"cents":1250}`, IdempotencyKey: "key-4-edit"}
	for _, c := range []dispatch.Claim{answered, edited} {
		_, err := s.Claim(ctx, c)
		check(t, err, "claim %s", c.CheckpointID)
	}
	audit, err := s.Claims(ctx, dispatch.ClaimQuery{Since: answered.ClaimedAt})
	check(t, err, "listing the audit")
	if len(audit) != 2 || string(audit[0].Response) != string(answered.Response) || audit[1].Edit == nil || *audit[1].Edit != *edited.Edit {
		t.Fatalf("the audit listing lost an answer or an edit: %+v", audit)
	}
}

func testPending(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	sus := suspended(t, 3)
	check(t, s.SaveTurn(ctx, turn("t1", base, completed("call_c", "5"), sus[0], sus[1])), "save t1")
	check(t, s.SaveTurn(ctx, turn("t2", base.Add(time.Minute), sus[2])), "save t2")

	ids := func(ps []dispatch.Pending) string {
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%s/%d:%s ", p.TurnID, p.Index, p.CallID)
		}
		return b.String()
	}
	all, err := s.Pending(ctx, dispatch.PendingQuery{})
	check(t, err, "pending")
	if got, want := ids(all), "t1/1:call_s0 t1/2:call_s1 t2/0:call_s2 "; got != want {
		t.Fatalf("pending: got %q, want %q", got, want)
	}
	c := claim(0, 0)
	c.CheckpointID = sus[0].Checkpoint.ID()
	_, err = s.Claim(ctx, c)
	check(t, err, "claim")
	all, err = s.Pending(ctx, dispatch.PendingQuery{})
	check(t, err, "pending after a claim")
	if got, want := ids(all), "t1/2:call_s1 t2/0:call_s2 "; got != want {
		t.Fatalf("a claimed call is not pending: got %q, want %q", got, want)
	}
	one, err := s.Pending(ctx, dispatch.PendingQuery{TurnID: "t2"})
	check(t, err, "pending of t2")
	if got, want := ids(one), "t2/0:call_s2 "; got != want {
		t.Fatalf("pending of one turn: got %q, want %q", got, want)
	}
	limited, err := s.Pending(ctx, dispatch.PendingQuery{Limit: 1})
	check(t, err, "pending with a limit")
	if got, want := ids(limited), "t1/2:call_s1 "; got != want {
		t.Fatalf("pending with limit 1: got %q, want %q", got, want)
	}
	// A summary is what a list needs; the whole outcome comes on request.
	sum := limited[0]
	cp := sus[1].Checkpoint
	if sum.CheckpointID != cp.ID() || sum.Tool != "refund" || sum.Prompt != `"Refund?"` || !sum.IssuedAt.Equal(cp.IssuedAt()) || !sum.ExpiresAt.Equal(cp.ExpiresAt()) || sum.Outcome.Checkpoint != nil {
		t.Fatalf("the summary of a pending call: got %+v", sum)
	}
	full, err := s.Pending(ctx, dispatch.PendingQuery{Limit: 1, Full: true})
	check(t, err, "pending in full")
	if len(full) != 1 || full[0].Outcome.Checkpoint == nil || full[0].Outcome.Checkpoint.ID() != cp.ID() || full[0].CheckpointID != cp.ID() {
		t.Fatalf("a pending call in full carries its outcome and checkpoint: got %+v", full)
	}
	none, err := s.Pending(ctx, dispatch.PendingQuery{TurnID: "no such turn"})
	check(t, err, "pending of an unknown turn")
	if len(none) != 0 {
		t.Fatalf("an unknown turn has no pending calls, got %d", len(none))
	}
}

func testPendingPages(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	sus := suspended(t, 5)
	check(t, s.SaveTurn(ctx, turn("t1", base, sus[0], sus[1])), "save t1")
	check(t, s.SaveTurn(ctx, turn("t2", base.Add(time.Minute), completed("call_c", "5"), sus[2])), "save t2")
	check(t, s.SaveTurn(ctx, turn("t3", base.Add(2*time.Minute), sus[3], sus[4])), "save t3")
	// Saving a turn again keeps its place: it was first saved before t3.
	again := turn("t2", base.Add(3*time.Minute), completed("call_c", "5"), sus[2])
	again.Version = 1
	check(t, s.SaveTurn(ctx, again), "save t2 again")

	ids := func(ps []dispatch.Pending) string {
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%s/%d ", p.TurnID, p.Index)
		}
		return b.String()
	}
	tests := []struct {
		q    dispatch.PendingQuery
		want string
	}{
		{dispatch.PendingQuery{}, "t1/0 t1/1 t2/1 t3/0 t3/1 "},
		{dispatch.PendingQuery{NewestFirst: true}, "t3/0 t3/1 t2/1 t1/0 t1/1 "},
		{dispatch.PendingQuery{NewestFirst: true, Limit: 2}, "t3/0 t3/1 "},
		{dispatch.PendingQuery{NewestFirst: true, Offset: 2, Limit: 2}, "t2/1 t1/0 "},
		{dispatch.PendingQuery{NewestFirst: true, Offset: 4, Limit: 2}, "t1/1 "},
		{dispatch.PendingQuery{NewestFirst: true, Offset: 5}, ""},
		{dispatch.PendingQuery{Offset: 3}, "t3/0 t3/1 "},
		{dispatch.PendingQuery{Offset: -1, Limit: 1}, "t1/0 "},
		{dispatch.PendingQuery{TurnID: "t3", NewestFirst: true, Offset: 1}, "t3/1 "},
	}
	for _, tc := range tests {
		got, err := s.Pending(ctx, tc.q)
		check(t, err, "pending %+v", tc.q)
		if ids(got) != tc.want {
			t.Fatalf("pending %+v: got %q, want %q", tc.q, ids(got), tc.want)
		}
	}
}

func testCanceledLists(t *testing.T, s dispatch.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Claims(ctx, dispatch.ClaimQuery{})
	wantIs(t, err, context.Canceled, "Claims with a cancelled context")
	_, err = s.Pending(ctx, dispatch.PendingQuery{})
	wantIs(t, err, context.Canceled, "Pending with a cancelled context")
}

func testDeleteExpired(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	expiring := claim(0, 0)
	expiring.ExpiresAt = base.Add(time.Hour)
	_, err := s.Claim(ctx, expiring)
	check(t, err, "claim")
	lasting := claim(1, 1)
	_, err = s.Claim(ctx, lasting)
	check(t, err, "claim")
	short := turn("short", base, completed("c", "x"))
	short.ExpiresAt = base.Add(time.Hour)
	check(t, s.SaveTurn(ctx, short), "save")
	check(t, s.SaveTurn(ctx, turn("long", base, completed("c", "x"))), "save")

	// A claim is kept until MaxClockSkew after its expiry: a replica
	// whose clock is behind may still accept the checkpoint until then.
	n, err := s.DeleteExpired(ctx, expiring.ExpiresAt.Add(dispatch.MaxClockSkew))
	check(t, err, "delete at the edge")
	if n != 0 {
		t.Fatalf("deleted %d records at expiry plus MaxClockSkew, want 0", n)
	}
	n, err = s.DeleteExpired(ctx, expiring.ExpiresAt.Add(dispatch.MaxClockSkew+time.Second))
	check(t, err, "delete after the edge")
	if n != 2 {
		t.Fatalf("deleted %d records, want 2 (one claim, one turn)", n)
	}
	_, err = s.Claimed(ctx, expiring.CheckpointID)
	wantIs(t, err, dispatch.ErrNotFound, "an expired claim is deleted")
	_, err = s.Turn(ctx, "short")
	wantIs(t, err, dispatch.ErrNotFound, "an expired turn is deleted")
	_, err = s.Claimed(ctx, lasting.CheckpointID)
	check(t, err, "an unexpired claim stays")
	_, err = s.Turn(ctx, "long")
	check(t, err, "an unexpired turn stays")
}

func testCanceledSweep(t *testing.T, s dispatch.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.DeleteExpired(ctx, base)
	wantIs(t, err, context.Canceled, "DeleteExpired with a cancelled context")
}

func testStranded(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	now := base.Add(time.Hour)
	leased := func(n int, expires time.Time) dispatch.Claim {
		c := claim(n, n)
		c.LeaseOwner, c.LeaseExpires = "owner-a", expires
		return c
	}
	for _, c := range []dispatch.Claim{
		leased(0, now.Add(-time.Minute)), // claimed, its lease ended: stranded
		leased(1, now.Add(time.Minute)),  // claimed, held
		leased(2, now.Add(-time.Minute)), // finished below
		leased(3, now.Add(-time.Minute)), // running below, its lease ended: stranded
		leased(4, now.Add(-time.Minute)), // running below, held
	} {
		_, err := s.Claim(ctx, c)
		check(t, err, "claim %s", c.CheckpointID)
	}
	check(t, s.Finish(ctx, id(2), completed("call_2", "done")), "finish")
	_, err := s.Advance(ctx, id(3), running(1, 1, "owner-a", now.Add(-time.Second)))
	check(t, err, "start")
	_, err = s.Advance(ctx, id(4), running(1, 1, "owner-a", now.Add(time.Second)))
	check(t, err, "start")

	ids := func(cs []dispatch.Claim) string {
		var b strings.Builder
		for _, c := range cs {
			fmt.Fprintf(&b, "%s ", c.CallID)
		}
		return b.String()
	}
	got, err := s.Stranded(ctx, dispatch.StrandedQuery{Now: now})
	check(t, err, "stranded")
	if ids(got) != "call_0 call_3 " {
		t.Fatalf("stranded: got %q, want the claimed and the running call whose leases ended", ids(got))
	}
	if got[1].State != dispatch.StateRunning || got[1].Attempt != 1 {
		t.Fatalf("a stranded record is listed whole: got %+v", got[1])
	}
	got, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: now, Limit: 1})
	check(t, err, "stranded, limited")
	if ids(got) != "call_0 " {
		t.Fatalf("stranded with limit 1: got %q", ids(got))
	}
	got, err = s.Stranded(ctx, dispatch.StrandedQuery{Now: now.Add(time.Hour)})
	check(t, err, "stranded later")
	if ids(got) != "call_0 call_1 call_3 call_4 " {
		t.Fatalf("stranded an hour later: got %q", ids(got))
	}
}

// A store that keeps turns places a claim in the turn whose pending call
// it claims, from its own record, never from the claim it was given.
func testClaimPlaced(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	sus := suspended(t, 2)
	check(t, s.SaveTurn(ctx, turn("t1", base, completed("call_c", "5"), sus[0], sus[1])), "save")
	c := claim(0, 0)
	c.CheckpointID = sus[1].Checkpoint.ID()
	c.TurnID, c.CallIndex = "forged", 7
	_, err := s.Claim(ctx, c)
	check(t, err, "claim")
	got, err := s.Claimed(ctx, c.CheckpointID)
	check(t, err, "read")
	if got.TurnID != "t1" || got.CallIndex != 2 {
		t.Fatalf("the claim of the pending call t1/2 was placed at %q/%d", got.TurnID, got.CallIndex)
	}
	lone := claim(1, 1)
	lone.TurnID, lone.CallIndex = "forged", 7
	_, err = s.Claim(ctx, lone)
	check(t, err, "claim")
	got, err = s.Claimed(ctx, lone.CheckpointID)
	check(t, err, "read")
	if got.TurnID != "" || got.CallIndex != 0 {
		t.Fatalf("the claim of a checkpoint of no saved turn was placed at %q/%d", got.TurnID, got.CallIndex)
	}
}
