// Package storetest holds the conformance tests of a dispatch.Store: every
// implementation (in memory, on SQLite, on PostgreSQL) runs the same Run,
// so that they cannot drift apart.
//
// A test of an implementation calls
//
//	storetest.Run(t, func(t *testing.T) dispatch.Store { return newEmptyStore(t) })
//
// newStore must return an empty store for each subtest; it may register
// cleanups with t. The records the subtests write carry times around the
// moment the test binary started, and expire a day later, so a store's own
// clock sees them as live.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// base is the time the subtests' records are made at: now, to the second,
// because a store may delete what expired by its own clock when it is
// full, and the records of these tests must not have expired.
var base = time.Now().UTC().Truncate(time.Second)

// Run runs the conformance tests against the stores newStore makes: claims
// once, concurrent claims of one ID (exactly one wins), the same answer
// returning the recorded claim, another answer refused with an
// *dispatch.AnsweredError, Finish and the audit listing, turns round
// trip, pending calls, expiry and DeleteExpired, a full store that
// refuses with dispatch.ErrStore and evicts no unexpired claim, invalid
// records, and a cancelled context; pending calls newest first and in
// pages; a recorded answer and an edit's three sets of arguments kept as
// claimed; a claim whose context ends at any point of its work, whose
// result must be what the store holds; and a claim sent again with its
// own nonce, which is told it won.
func Run(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	t.Helper()
	t.Run("ClaimOnce", func(t *testing.T) { testClaimOnce(t, newStore(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, newStore(t)) })
	t.Run("Finish", func(t *testing.T) { testFinish(t, newStore(t)) })
	t.Run("Claims", func(t *testing.T) { testClaims(t, newStore(t)) })
	t.Run("Turns", func(t *testing.T) { testTurns(t, newStore(t)) })
	t.Run("Pending", func(t *testing.T) { testPending(t, newStore(t)) })
	t.Run("PendingPages", func(t *testing.T) { testPendingPages(t, newStore(t)) })
	t.Run("AnswersAndEdits", func(t *testing.T) { testAnswersAndEdits(t, newStore(t)) })
	t.Run("DeleteExpired", func(t *testing.T) { testDeleteExpired(t, newStore(t)) })
	t.Run("Full", func(t *testing.T) { testFull(t, newStore(t)) })
	t.Run("InvalidRecords", func(t *testing.T) { testInvalid(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceled(t, newStore(t)) })
	t.Run("ClaimWhateverTheContext", func(t *testing.T) { testClaimWhateverTheContext(t, newStore(t)) })
	t.Run("SameNonce", func(t *testing.T) { testSameNonce(t, newStore(t)) })
}

// id returns the n-th checkpoint ID of a subtest.
func id(n int) string { return fmt.Sprintf("%032x", n+1) }

// digest returns the n-th answer digest.
func digest(n int) string { return fmt.Sprintf("%064x", n+1) }

// nonces numbers the claims of a test binary, so that each has a nonce
// of its own, as each claim a Dispatcher makes has.
var nonces atomic.Uint64

// claim returns a claim of the n-th checkpoint with the answer-th digest
// and a nonce of its own.
func claim(n int, answer int) dispatch.Claim {
	return dispatch.Claim{
		CheckpointID:   id(n),
		Nonce:          fmt.Sprintf("%032x", nonces.Add(1)),
		CallID:         fmt.Sprintf("call_%d", n),
		Tool:           "refund",
		IdempotencyKey: tool.IdempotencyKey(fmt.Sprintf("key-%d", n)),
		Principal:      "user-7",
		AnswerSHA256:   digest(answer),
		ClaimedAt:      base.Add(time.Duration(n) * time.Second),
		ExpiresAt:      base.Add(24 * time.Hour),
	}
}

func completed(callID, text string) dispatch.SavedOutcome {
	return dispatch.SavedOutcome{CallID: callID, Tool: "refund", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput(text), Effect: tool.EffectIdempotent}
}

func check(t *testing.T, err error, format string, args ...any) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", fmt.Sprintf(format, args...), err)
	}
}

func wantIs(t *testing.T, err, target error, what string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want one wrapping %v", what, err, target)
	}
}

// sameClaim compares two claims by their JSON.
func sameClaim(t *testing.T, got, want dispatch.Claim, what string) {
	t.Helper()
	g, err := json.Marshal(got)
	check(t, err, "encoding a claim")
	w, err := json.Marshal(want)
	check(t, err, "encoding a claim")
	if string(g) != string(w) {
		t.Fatalf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func testClaimOnce(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	first := claim(0, 0)
	prior, err := s.Claim(ctx, first)
	check(t, err, "first claim")
	if prior != nil {
		t.Fatalf("the first claim of an ID must win (nil, nil); got a prior claim %+v", *prior)
	}
	got, err := s.Claimed(ctx, first.CheckpointID)
	check(t, err, "reading the claim")
	sameClaim(t, got, first, "the claim as recorded")

	again := claim(0, 0)
	again.ClaimedAt = base.Add(time.Hour)
	again.Principal = "someone-else"
	prior, err = s.Claim(ctx, again)
	check(t, err, "the same answer again")
	if prior == nil {
		t.Fatal("the same answer again must return the recorded claim, not win")
	}
	sameClaim(t, *prior, first, "the same answer again returns the first claim, unchanged")

	other := claim(0, 1)
	prior, err = s.Claim(ctx, other)
	var answered *dispatch.AnsweredError
	if !errors.As(err, &answered) || !errors.Is(err, dispatch.ErrAlreadyAnswered) || prior != nil {
		t.Fatalf("another answer: got (%v, %v), want (nil, *AnsweredError)", prior, err)
	}
	sameClaim(t, answered.Claim, first, "the AnsweredError holds the first claim")

	decline := claim(0, 0)
	decline.Declined, decline.AnswerSHA256 = true, dispatch.DeclineSHA256
	_, err = s.Claim(ctx, decline)
	wantIs(t, err, dispatch.ErrAlreadyAnswered, "a decline after an answer")

	_, err = s.Claimed(ctx, id(9))
	wantIs(t, err, dispatch.ErrNotFound, "an ID never claimed")
}

func testConcurrentClaims(t *testing.T, s dispatch.Store) {
	const rounds, racers = 8, 16
	for round := range rounds {
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, answered, same := 0, 0, 0
		for r := range racers {
			wg.Go(func() {
				// Half the racers send answer 0, half their own answer.
				answer := 0
				if r%2 == 1 {
					answer = r
				}
				c := claim(round, answer)
				c.Principal = fmt.Sprintf("racer-%d", r)
				prior, err := s.Claim(context.Background(), c)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && prior == nil:
					wins++
				case err == nil:
					same++
				case errors.Is(err, dispatch.ErrAlreadyAnswered):
					answered++
				default:
					t.Errorf("round %d racer %d: %v", round, r, err)
				}
			})
		}
		wg.Wait()
		if wins != 1 || wins+same+answered != racers {
			t.Fatalf("round %d: %d claims won, %d found the same answer, %d were refused; want exactly one winner", round, wins, same, answered)
		}
	}
}

func testFinish(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	err := s.Finish(ctx, id(0), completed("call_0", "refunded"))
	wantIs(t, err, dispatch.ErrNotFound, "finishing an ID never claimed")

	_, err = s.Claim(ctx, claim(0, 0))
	check(t, err, "claim")
	out := completed("call_0", "refunded")
	check(t, s.Finish(ctx, id(0), out), "finish")
	check(t, s.Finish(ctx, id(0), out), "finishing again with the same outcome")
	err = s.Finish(ctx, id(0), completed("call_0", "refunded twice"))
	wantIs(t, err, dispatch.ErrInvalidRecord, "finishing again with another outcome")

	got, err := s.Claimed(ctx, id(0))
	check(t, err, "reading the claim")
	if got.Outcome == nil {
		t.Fatal("the finished claim has no outcome")
	}
	if text, _ := got.Outcome.Output.Text(); text != "refunded" || got.Outcome.Kind != dispatch.KindCompleted {
		t.Fatalf("recorded outcome %q %q, want completed \"refunded\"", got.Outcome.Kind, text)
	}
	prior, err := s.Claim(ctx, claim(0, 0))
	check(t, err, "the same answer after finish")
	if prior == nil || prior.Outcome == nil {
		t.Fatal("the same answer after finish must return the claim with its outcome")
	}
	_, err = s.Claim(ctx, claim(0, 1))
	var answered *dispatch.AnsweredError
	if !errors.As(err, &answered) || answered.Claim.Outcome == nil {
		t.Fatalf("another answer after finish: got %v, want an *AnsweredError with the outcome", err)
	}
}

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
}

// approval is a tool that asks for a boolean before it acts.
type approval struct{}

func (approval) Definition() tool.Definition {
	return tool.Definition{Name: "refund", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectIdempotent}
}

func (approval) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	if _, resumed := inv.Continuation(); resumed {
		return tool.Result{Output: tool.NewTextOutput("refunded")}, nil
	}
	schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
	if err != nil {
		return tool.Result{}, err
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Refund?"`), ResponseSchema: schema})
	return tool.Result{InputRequest: &ir}, err
}

// suspended returns n suspended outcomes, made by a Dispatcher on s (Run
// does not touch the store).
func suspended(t *testing.T, s dispatch.Store, n int) []dispatch.SavedOutcome {
	t.Helper()
	b, err := tool.Bind(approval{})
	check(t, err, "bind")
	reg, err := tool.NewRegistry(b)
	check(t, err, "registry")
	d, err := dispatch.New(dispatch.Config{
		Registry: reg, Store: s, Clock: func() time.Time { return base },
		SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("storetest secret, thirty-two b!!")}},
	})
	check(t, err, "dispatcher")
	out := make([]dispatch.SavedOutcome, n)
	for i := range out {
		o := d.Run(t.Context(), dispatch.Call{ID: fmt.Sprintf("call_s%d", i), Request: tool.Request{Name: "refund", Arguments: `{}`}})
		if o.Kind != dispatch.KindSuspended {
			t.Fatalf("the test tool did not suspend: %s %v", o.Kind, o.Err)
		}
		out[i] = dispatch.NewSavedOutcome(o)
	}
	return out
}

func turn(id string, at time.Time, outcomes ...dispatch.SavedOutcome) dispatch.Turn {
	return dispatch.Turn{ID: id, Outcomes: outcomes, SavedAt: at, ExpiresAt: base.Add(24 * time.Hour)}
}

func testTurns(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	sus := suspended(t, s, 1)
	failed := dispatch.SavedOutcome{CallID: "call_f", Tool: "refund", Kind: dispatch.KindFailed, IsError: true,
		Output: tool.NewTextOutput("the order is closed"), ErrorClass: dispatch.ErrorClassFailure}
	want := turn("conversation-1/turn-3", base, completed("call_c", "5"), sus[0], failed)
	check(t, s.SaveTurn(ctx, want), "save")
	got, err := s.Turn(ctx, want.ID)
	check(t, err, "read")
	g, err := json.Marshal(got)
	check(t, err, "encode")
	w, err := json.Marshal(want)
	check(t, err, "encode")
	if string(g) != string(w) {
		t.Fatalf("the turn did not round-trip:\n got %s\nwant %s", g, w)
	}
	if got.Outcomes[1].Checkpoint == nil || got.Outcomes[1].Checkpoint.ID() != sus[0].Checkpoint.ID() {
		t.Fatal("the suspended outcome lost its checkpoint")
	}

	replaced := turn(want.ID, base, completed("call_c", "5"))
	check(t, s.SaveTurn(ctx, replaced), "save again")
	got, err = s.Turn(ctx, want.ID)
	check(t, err, "read again")
	if len(got.Outcomes) != 1 {
		t.Fatalf("saving a turn again replaces it: got %d outcomes, want 1", len(got.Outcomes))
	}
	_, err = s.Turn(ctx, "no such turn")
	wantIs(t, err, dispatch.ErrNotFound, "an unknown turn")
}

func testPending(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	sus := suspended(t, s, 3)
	check(t, s.SaveTurn(ctx, turn("t1", base, completed("call_c", "5"), sus[0], sus[1])), "save t1")
	check(t, s.SaveTurn(ctx, turn("t2", base.Add(time.Minute), sus[2])), "save t2")

	ids := func(ps []dispatch.Pending) string {
		var b strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&b, "%s/%d:%s ", p.TurnID, p.Index, p.Outcome.CallID)
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
	none, err := s.Pending(ctx, dispatch.PendingQuery{TurnID: "no such turn"})
	check(t, err, "pending of an unknown turn")
	if len(none) != 0 {
		t.Fatalf("an unknown turn has no pending calls, got %d", len(none))
	}
}

func testPendingPages(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	sus := suspended(t, s, 5)
	check(t, s.SaveTurn(ctx, turn("t1", base, sus[0], sus[1])), "save t1")
	check(t, s.SaveTurn(ctx, turn("t2", base.Add(time.Minute), completed("call_c", "5"), sus[2])), "save t2")
	check(t, s.SaveTurn(ctx, turn("t3", base.Add(2*time.Minute), sus[3], sus[4])), "save t3")
	// Saving a turn again keeps its place: it was first saved before t3.
	check(t, s.SaveTurn(ctx, turn("t2", base.Add(3*time.Minute), completed("call_c", "5"), sus[2])), "save t2 again")

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

func testAnswersAndEdits(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	answered := claim(0, 0)
	answered.Response = json.RawMessage(`{"approve":true,"note":"<b>ok</b>"}`)
	sum, err := dispatch.AnswerSHA256(answered.Response)
	check(t, err, "digest")
	answered.AnswerSHA256 = sum
	_, err = s.Claim(ctx, answered)
	check(t, err, "claim with a recorded answer")

	edited := claim(1, 1)
	edited.Edit = &dispatch.EditRecord{
		Proposed:       `{"order":"A-7","cents":125000}`,
		Approved:       `{"order":"A-7", "cents":1250}`,
		Executed:       `{"order":"A-7", "cents":1250}`,
		IdempotencyKey: "key-1-edit",
	}
	_, err = s.Claim(ctx, edited)
	check(t, err, "superseding claim")
	check(t, s.Finish(ctx, edited.CheckpointID, completed("call_1", "refunded 1250")), "finish the edit")

	got, err := s.Claimed(ctx, answered.CheckpointID)
	check(t, err, "reading the answered claim")
	if string(got.Response) != string(answered.Response) || got.Principal != "user-7" || !got.ClaimedAt.Equal(answered.ClaimedAt) {
		t.Fatalf("the answered claim lost who, when or what: %+v", got)
	}
	got, err = s.Claimed(ctx, edited.CheckpointID)
	check(t, err, "reading the superseding claim")
	if !got.Superseded() || *got.Edit != *edited.Edit || got.Outcome == nil {
		t.Fatalf("the superseding claim lost its edit or outcome: %+v", got)
	}
	all, err := s.Claims(ctx, dispatch.ClaimQuery{})
	check(t, err, "listing")
	if len(all) != 2 || string(all[0].Response) != string(answered.Response) || all[1].Edit == nil || all[1].Edit.Approved != edited.Edit.Approved {
		t.Fatalf("the audit listing lost an answer or an edit: %+v", all)
	}

	// A response that is not the answer of the digest, and an edit under
	// the old key, are not claims.
	bad := claim(2, 2)
	bad.Response = json.RawMessage(`true`)
	_, err = s.Claim(ctx, bad)
	wantIs(t, err, dispatch.ErrInvalidRecord, "a response that does not match its digest")
	bad = claim(3, 3)
	bad.Edit = &dispatch.EditRecord{Proposed: "{}", Approved: "{}", Executed: "{}", IdempotencyKey: bad.IdempotencyKey}
	_, err = s.Claim(ctx, bad)
	wantIs(t, err, dispatch.ErrInvalidRecord, "an edit under the superseded call's key")
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

// fullAttempts bounds how many claims the full test makes: a store that
// does not fill up by then passes if it kept them all.
const fullAttempts = 2000

func testFull(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	accepted := 0
	for n := range fullAttempts {
		c := claim(n, n)
		c.Principal = strings.Repeat("p", 512)
		_, err := s.Claim(ctx, c)
		if err != nil {
			wantIs(t, err, dispatch.ErrStore, "a claim the store has no room for")
			break
		}
		accepted++
	}
	if accepted == fullAttempts {
		t.Logf("the store held all %d claims without filling up", fullAttempts)
	}
	for n := range accepted {
		if _, err := s.Claimed(ctx, id(n)); err != nil {
			t.Fatalf("claim %d of %d was evicted: %v", n, accepted, err)
		}
		// An evicted claim would let the checkpoint be answered again.
		_, err := s.Claim(ctx, claim(n, n+1))
		wantIs(t, err, dispatch.ErrAlreadyAnswered, "another answer to a claim of a full store")
	}
}

func testInvalid(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	for _, tc := range []struct {
		name string
		edit func(*dispatch.Claim)
	}{
		{"checkpoint ID not hex", func(c *dispatch.Claim) { c.CheckpointID = "not-an-id" }},
		{"digest too short", func(c *dispatch.Claim) { c.AnswerSHA256 = "abc" }},
		{"decline without its digest", func(c *dispatch.Claim) { c.Declined = true }},
		{"no claim time", func(c *dispatch.Claim) { c.ClaimedAt = time.Time{} }},
		{"principal not UTF-8", func(c *dispatch.Claim) { c.Principal = "\xff" }},
	} {
		c := claim(0, 0)
		tc.edit(&c)
		_, err := s.Claim(ctx, c)
		wantIs(t, err, dispatch.ErrInvalidRecord, tc.name)
	}
	_, err := s.Claimed(ctx, id(0))
	wantIs(t, err, dispatch.ErrNotFound, "an invalid claim records nothing")
	err = s.SaveTurn(ctx, dispatch.Turn{ID: "", SavedAt: base, ExpiresAt: base})
	wantIs(t, err, dispatch.ErrInvalidRecord, "a turn without an ID")
}

func testCanceled(t *testing.T, s dispatch.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Claim(ctx, claim(0, 0))
	wantIs(t, err, context.Canceled, "Claim with a cancelled context")
	err = s.Finish(ctx, id(0), completed("call_0", "x"))
	wantIs(t, err, context.Canceled, "Finish with a cancelled context")
	_, err = s.Claimed(ctx, id(0))
	wantIs(t, err, context.Canceled, "Claimed with a cancelled context")
	_, err = s.Claims(ctx, dispatch.ClaimQuery{})
	wantIs(t, err, context.Canceled, "Claims with a cancelled context")
	err = s.SaveTurn(ctx, turn("t", base, completed("c", "x")))
	wantIs(t, err, context.Canceled, "SaveTurn with a cancelled context")
	_, err = s.Turn(ctx, "t")
	wantIs(t, err, context.Canceled, "Turn with a cancelled context")
	_, err = s.Pending(ctx, dispatch.PendingQuery{})
	wantIs(t, err, context.Canceled, "Pending with a cancelled context")
	_, err = s.DeleteExpired(ctx, base)
	wantIs(t, err, context.Canceled, "DeleteExpired with a cancelled context")

	_, err = s.Claimed(t.Context(), id(0))
	wantIs(t, err, dispatch.ErrNotFound, "a claim with a cancelled context records nothing")
	prior, err := s.Claim(t.Context(), claim(0, 1))
	if err != nil || prior != nil {
		t.Fatalf("after a cancelled claim, a claim with a live context wins: got (%v, %v)", prior, err)
	}
}
