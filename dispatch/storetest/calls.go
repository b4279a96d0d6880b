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

func testClaimOnce(t *testing.T, s dispatch.CallStore) {
	ctx := t.Context()
	first := claim(0, 0)
	prior, err := s.Claim(ctx, first)
	check(t, err, "first claim")
	if prior != nil {
		t.Fatalf("the first claim of an ID must win (nil, nil); got a prior claim %+v", *prior)
	}
	got, err := s.Claimed(ctx, first.CheckpointID)
	check(t, err, "reading the claim")
	sameClaim(t, got, recorded(first), "the claim as recorded: claimed, at version 1")

	again := claim(0, 0)
	again.ClaimedAt = base.Add(time.Hour)
	again.Principal = "someone-else"
	prior, err = s.Claim(ctx, again)
	check(t, err, "the same answer again")
	if prior == nil {
		t.Fatal("the same answer again must return the recorded claim, not win")
	}
	sameClaim(t, *prior, recorded(first), "the same answer again returns the first claim, unchanged")

	other := claim(0, 1)
	prior, err = s.Claim(ctx, other)
	var answered *dispatch.AnsweredError
	if !errors.As(err, &answered) || !errors.Is(err, dispatch.ErrAlreadyAnswered) || prior != nil {
		t.Fatalf("another answer: got (%v, %v), want (nil, *AnsweredError)", prior, err)
	}
	sameClaim(t, answered.Claim, recorded(first), "the AnsweredError holds the first claim")

	decline := claim(0, 0)
	decline.Declined, decline.AnswerSHA256 = true, dispatch.DeclineSHA256
	_, err = s.Claim(ctx, decline)
	wantIs(t, err, dispatch.ErrAlreadyAnswered, "a decline after an answer")

	_, err = s.Claimed(ctx, id(9))
	wantIs(t, err, dispatch.ErrNotFound, "an ID never claimed")
}

func testConcurrentClaims(t *testing.T, s dispatch.CallStore) {
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

func testFinish(t *testing.T, s dispatch.CallStore) {
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

func testAnswersAndEdits(t *testing.T, s dispatch.CallStore) {
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

// fullAttempts bounds how many claims the full test makes: a store that
// does not fill up by then passes if it kept them all.
const fullAttempts = 2000

func testFull(t *testing.T, s dispatch.CallStore) {
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

func testInvalid(t *testing.T, s dispatch.CallStore) {
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
		{"a new claim at a version", func(c *dispatch.Claim) { c.Version = 3 }},
		{"a new claim running at attempt 2", func(c *dispatch.Claim) {
			c.State, c.Attempt, c.LeaseOwner, c.LeaseExpires = dispatch.StateRunning, 2, "owner", base
		}},
		{"a new claim running without a lease", func(c *dispatch.Claim) { c.State, c.Attempt = dispatch.StateRunning, 1 }},
		{"a new claim claimed at attempt 1", func(c *dispatch.Claim) { c.Attempt = 1 }},
		{"a new claim finished", func(c *dispatch.Claim) {
			out := completed("call_0", "done")
			c.State, c.Outcome = dispatch.StateFinished, &out
		}},
		{"a new claim reconciled", func(c *dispatch.Claim) { c.Reconciled = true }},
		{"a run record with an edit", func(c *dispatch.Claim) {
			c.AnswerSHA256 = dispatch.RunSHA256
			c.Edit = &dispatch.EditRecord{Proposed: "{}", Approved: "{}", Executed: "{}", IdempotencyKey: "other"}
		}},
		{"a lease without an owner", func(c *dispatch.Claim) { c.LeaseExpires = base }},
		{"an arguments digest too short", func(c *dispatch.Claim) { c.ArgumentsSHA256 = "abc" }},
	} {
		c := claim(0, 0)
		tc.edit(&c)
		_, err := s.Claim(ctx, c)
		wantIs(t, err, dispatch.ErrInvalidRecord, tc.name)
	}
	_, err := s.Claimed(ctx, id(0))
	wantIs(t, err, dispatch.ErrNotFound, "an invalid claim records nothing")
}

func testCanceledCalls(t *testing.T, s dispatch.CallStore) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := s.Claim(ctx, claim(0, 0))
	wantIs(t, err, context.Canceled, "Claim with a cancelled context")
	err = s.Finish(ctx, id(0), completed("call_0", "x"))
	wantIs(t, err, context.Canceled, "Finish with a cancelled context")
	_, err = s.Claimed(ctx, id(0))
	wantIs(t, err, context.Canceled, "Claimed with a cancelled context")

	_, err = s.Claimed(t.Context(), id(0))
	wantIs(t, err, dispatch.ErrNotFound, "a claim with a cancelled context records nothing")
	prior, err := s.Claim(t.Context(), claim(0, 1))
	if err != nil || prior != nil {
		t.Fatalf("after a cancelled claim, a claim with a live context wins: got (%v, %v)", prior, err)
	}
}

// recorded is c as a store records it: claimed, at version 1.
func recorded(c dispatch.Claim) dispatch.Claim {
	c.State, c.Version = dispatch.StateClaimed, 1
	return c
}

// running is the step that starts the call of a record at version v,
// as attempt n held by owner until expires.
func running(v int64, n int, owner string, expires time.Time) dispatch.Step {
	return dispatch.Step{Version: v, State: dispatch.StateRunning, Attempt: n, LeaseOwner: owner, LeaseExpires: expires}
}

func unknownOutcome() dispatch.SavedOutcome {
	return dispatch.SavedOutcome{CallID: "call_0", Tool: "refund", Kind: dispatch.KindUnknown, IsError: true,
		Output: tool.NewTextOutput(`The call to "refund" did not complete and its outcome is unknown.`), ErrorClass: dispatch.ErrorClassError}
}

func testAdvance(t *testing.T, s dispatch.CallStore) {
	ctx := t.Context()
	_, err := s.Claim(ctx, claim(0, 0))
	check(t, err, "claim")
	lease := base.Add(time.Minute)
	got, err := s.Advance(ctx, id(0), running(1, 1, "owner-a", lease))
	check(t, err, "start the call")
	if got.State != dispatch.StateRunning || got.Version != 2 || got.Attempt != 1 || got.LeaseOwner != "owner-a" || !got.LeaseExpires.Equal(lease) {
		t.Fatalf("a started call is running, attempt 1, held by its owner, at version 2: got %+v", got)
	}
	read, err := s.Claimed(ctx, id(0))
	check(t, err, "read")
	sameClaim(t, read, got, "Advance returns the record as it stands")

	_, err = s.Advance(ctx, id(0), running(1, 1, "owner-b", lease))
	wantIs(t, err, dispatch.ErrConflict, "a step decided on an old version")
	_, err = s.Advance(ctx, id(0), running(2, 1, "owner-b", lease))
	wantIs(t, err, dispatch.ErrInvalidRecord, "another owner renewing the same attempt")
	_, err = s.Advance(ctx, id(0), running(2, 3, "owner-b", lease))
	wantIs(t, err, dispatch.ErrInvalidRecord, "an attempt skipped")
	_, err = s.Advance(ctx, id(0), dispatch.Step{Version: 2, State: dispatch.StateClaimed})
	wantIs(t, err, dispatch.ErrInvalidRecord, "back to claimed")
	_, err = s.Advance(ctx, id(9), running(1, 1, "owner-a", lease))
	wantIs(t, err, dispatch.ErrNotFound, "an ID never claimed")

	renewed, err := s.Advance(ctx, id(0), running(2, 1, "owner-a", lease.Add(time.Minute)))
	check(t, err, "renew the lease")
	if renewed.Version != 3 || renewed.Attempt != 1 || !renewed.LeaseExpires.Equal(lease.Add(time.Minute)) {
		t.Fatalf("a renewed lease: got %+v", renewed)
	}
	again, err := s.Advance(ctx, id(0), running(3, 2, "owner-b", lease.Add(2*time.Minute)))
	check(t, err, "run again by another owner")
	if again.Attempt != 2 || again.LeaseOwner != "owner-b" {
		t.Fatalf("a call run again is attempt 2, held by its new owner: got %+v", again)
	}
	unknown := unknownOutcome()
	lost, err := s.Advance(ctx, id(0), dispatch.Step{Version: 4, State: dispatch.StateUnknown, Attempt: 2, Outcome: &unknown})
	check(t, err, "record it unknown")
	if lost.State != dispatch.StateUnknown || lost.Outcome == nil || lost.Outcome.Kind != dispatch.KindUnknown || lost.LeaseOwner != "" || !lost.LeaseExpires.IsZero() {
		t.Fatalf("a call recorded unknown keeps its outcome and no lease: got %+v", lost)
	}
	_, err = s.Advance(ctx, id(0), dispatch.Step{Version: 5, State: dispatch.StateUnknown, Attempt: 2, Outcome: &unknown})
	wantIs(t, err, dispatch.ErrInvalidRecord, "unknown to unknown")
	_, err = s.Advance(ctx, id(0), running(5, 2, "owner-b", lease))
	wantIs(t, err, dispatch.ErrInvalidRecord, "an unknown call's same attempt run again")
	check(t, s.Finish(ctx, id(0), unknown), "finishing with the recorded outcome")
	wantIs(t, s.Finish(ctx, id(0), completed("call_0", "done")), dispatch.ErrInvalidRecord, "finishing a call recorded unknown with another outcome")
	reconciled := completed("call_0", "done")
	final, err := s.Advance(ctx, id(0), dispatch.Step{Version: 5, State: dispatch.StateFinished, Attempt: 2, Outcome: &reconciled, Reconciled: true})
	check(t, err, "finish an unknown call (a reconciliation)")
	_, err = s.Advance(ctx, id(0), running(final.Version, 3, "owner-c", lease))
	wantIs(t, err, dispatch.ErrInvalidRecord, "out of finished, which is final")

	// Finish moves a claimed or running record to finished, whatever its
	// version, and ends its lease.
	_, err = s.Claim(ctx, claim(1, 1))
	check(t, err, "claim")
	_, err = s.Advance(ctx, id(1), running(1, 1, "owner-a", lease))
	check(t, err, "start")
	check(t, s.Finish(ctx, id(1), completed("call_1", "done")), "finish")
	done, err := s.Claimed(ctx, id(1))
	check(t, err, "read")
	if done.State != dispatch.StateFinished || done.Version != 3 || done.Attempt != 1 || done.LeaseOwner != "" || done.Outcome == nil {
		t.Fatalf("a finished call: got %+v", done)
	}
	_, err = s.Claim(ctx, claim(2, 2))
	check(t, err, "claim")
	check(t, s.Finish(ctx, id(2), completed("call_2", "declined")), "finish a call never started")
	done, err = s.Claimed(ctx, id(2))
	check(t, err, "read")
	if done.State != dispatch.StateFinished || done.Version != 2 || done.Attempt != 0 {
		t.Fatalf("a call finished from claimed: got %+v", done)
	}
}

func testConcurrentAdvance(t *testing.T, s dispatch.CallStore) {
	const racers = 16
	_, err := s.Claim(t.Context(), claim(0, 0))
	check(t, err, "claim")
	var wg sync.WaitGroup
	var won, lost atomic.Int32
	for r := range racers {
		wg.Go(func() {
			_, err := s.Advance(context.Background(), id(0), running(1, 1, fmt.Sprintf("owner-%d", r), base.Add(time.Minute)))
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, dispatch.ErrConflict):
				lost.Add(1)
			default:
				t.Errorf("racer %d: %v", r, err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || lost.Load() != racers-1 {
		t.Fatalf("%d racers advancing one version: %d won and %d conflicted, want 1 and %d", racers, won.Load(), lost.Load(), racers-1)
	}
}
