package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// runRecord returns the record of a call Run runs, the n-th of a
// subtest: written running, at attempt 1, held by owner until expires.
func runRecord(n int, owner string, expires time.Time) dispatch.Claim {
	c := claim(n, 0)
	c.CheckpointID = dispatch.RunRecordID("refund", "user-7", tool.IdempotencyKey(fmt.Sprintf("key-%d", n)))
	c.Principal, c.SealedPrincipal = "", "user-7"
	c.AnswerSHA256 = dispatch.RunSHA256
	c.ContractSHA256, c.ArgumentsSHA256 = digest(100), digest(200+n)
	c.State, c.Attempt, c.LeaseOwner, c.LeaseExpires = dispatch.StateRunning, 1, owner, expires
	return c
}

// A claim written running (a call whose tool starts at once: a run
// record, or a resumed call) is recorded as given, running at attempt 1
// under its lease, at version 1: one write for intent and start. The
// same nonce again is told it won; another nonce is given the record;
// another digest is refused. Its lease is renewed by its owner only,
// and it finishes.
func testClaimRunning(t *testing.T, s dispatch.CallStore) {
	ctx := t.Context()
	lease := base.Add(time.Minute)
	first := runRecord(0, "owner-a", lease)
	prior, err := s.Claim(ctx, first)
	check(t, err, "a running claim")
	if prior != nil {
		t.Fatalf("the first running claim of an ID wins (nil, nil); got %+v", *prior)
	}
	got, err := s.Claimed(ctx, first.CheckpointID)
	check(t, err, "read")
	want := first
	want.Version = 1
	sameClaim(t, got, want, "a running claim as recorded: running, attempt 1, its lease, version 1")

	prior, err = s.Claim(ctx, first)
	if err != nil || prior != nil {
		t.Fatalf("the same running claim again (its own nonce): got (%v, %v), want (nil, nil)", prior, err)
	}
	again := runRecord(0, "owner-b", lease.Add(time.Hour))
	prior, err = s.Claim(ctx, again)
	check(t, err, "the same key again")
	if prior == nil {
		t.Fatal("the same key again must return the record, not win")
	}
	sameClaim(t, *prior, want, "the same key again returns the first record, unchanged")
	decline := first
	decline.Nonce, decline.State, decline.Attempt, decline.LeaseOwner, decline.LeaseExpires = "", "", 0, "", time.Time{}
	decline.Nonce = fmt.Sprintf("%032x", nonces.Add(1))
	decline.Declined, decline.AnswerSHA256 = true, dispatch.DeclineSHA256
	_, err = s.Claim(ctx, decline)
	wantIs(t, err, dispatch.ErrAlreadyAnswered, "another digest under a run record's ID")

	_, err = s.Advance(ctx, first.CheckpointID, running(1, 1, "owner-b", lease))
	wantIs(t, err, dispatch.ErrInvalidRecord, "another owner renewing the running claim's attempt")
	renewed, err := s.Advance(ctx, first.CheckpointID, running(1, 1, "owner-a", lease.Add(time.Minute)))
	check(t, err, "its owner renews the lease")
	if renewed.Version != 2 || renewed.Attempt != 1 || renewed.State != dispatch.StateRunning {
		t.Fatalf("a renewed running claim: got %+v", renewed)
	}
	check(t, s.Finish(ctx, first.CheckpointID, completed("call_0", "refunded")), "finish")
	done, err := s.Claimed(ctx, first.CheckpointID)
	check(t, err, "read")
	if done.State != dispatch.StateFinished || done.Version != 3 || done.Outcome == nil || done.LeaseOwner != "" || done.Reconciled {
		t.Fatalf("a finished running claim: got %+v", done)
	}
}

// A call recorded unknown waits for a reconciliation: it moves to
// running as its next attempt (its outcome cleared, a lease taken), back
// to unknown when that attempt's outcome is unknown too, and to finished
// with a reconciled outcome; never to unknown again, nor to the same
// attempt; Reconciled goes with a step to finished only; and Finish
// does not replace its outcome.
func testUnknownSteps(t *testing.T, s dispatch.CallStore) {
	ctx := t.Context()
	lease := base.Add(time.Minute)
	rec := runRecord(0, "owner-a", lease)
	id := rec.CheckpointID
	_, err := s.Claim(ctx, rec)
	check(t, err, "claim")
	unknown := unknownOutcome()
	lost, err := s.Advance(ctx, id, dispatch.Step{Version: 1, State: dispatch.StateUnknown, Attempt: 1, Outcome: &unknown})
	check(t, err, "record it unknown")

	wantIs(t, s.Finish(ctx, id, completed("call_0", "done")), dispatch.ErrInvalidRecord, "Finish replacing an unknown outcome")
	for _, tc := range []struct {
		name string
		step dispatch.Step
	}{
		{"unknown to unknown", dispatch.Step{Version: 2, State: dispatch.StateUnknown, Attempt: 1, Outcome: &unknown}},
		{"the same attempt again", running(2, 1, "owner-b", lease)},
		{"an attempt skipped", running(2, 3, "owner-b", lease)},
		{"the next attempt without a lease", dispatch.Step{Version: 2, State: dispatch.StateRunning, Attempt: 2}},
		{"a running step reconciled", func() dispatch.Step { s := running(2, 2, "owner-b", lease); s.Reconciled = true; return s }()},
		{"back to claimed", dispatch.Step{Version: 2, State: dispatch.StateClaimed}},
	} {
		_, err := s.Advance(ctx, id, tc.step)
		wantIs(t, err, dispatch.ErrInvalidRecord, tc.name)
	}
	_, err = s.Advance(ctx, id, running(1, 2, "owner-b", lease))
	wantIs(t, err, dispatch.ErrConflict, "the next attempt decided on an old version")

	next, err := s.Advance(ctx, id, running(lost.Version, 2, "owner-b", lease))
	check(t, err, "the next attempt (not done)")
	if next.State != dispatch.StateRunning || next.Attempt != 2 || next.Outcome != nil || next.LeaseOwner != "owner-b" || next.Version != 3 {
		t.Fatalf("an unknown call's next attempt runs, without its old outcome, under its new lease: got %+v", next)
	}
	read, err := s.Claimed(ctx, id)
	check(t, err, "read")
	sameClaim(t, read, next, "the next attempt as stored")

	lostAgain, err := s.Advance(ctx, id, dispatch.Step{Version: 3, State: dispatch.StateUnknown, Attempt: 2, Outcome: &unknown})
	check(t, err, "unknown again")
	out := completed("call_0", "refunded")
	_, err = s.Advance(ctx, id, dispatch.Step{Version: lostAgain.Version, State: dispatch.StateUnknown, Attempt: 2, Outcome: &unknown, Reconciled: true})
	wantIs(t, err, dispatch.ErrInvalidRecord, "an unknown step reconciled")
	done, err := s.Advance(ctx, id, dispatch.Step{Version: lostAgain.Version, State: dispatch.StateFinished, Attempt: 2, Outcome: &out, Reconciled: true})
	check(t, err, "reconciled: done")
	if done.State != dispatch.StateFinished || !done.Reconciled || done.Outcome == nil || done.Outcome.Kind != dispatch.KindCompleted || done.Attempt != 2 {
		t.Fatalf("a reconciled record is finished, marked reconciled, with the completed outcome: got %+v", done)
	}
	read, err = s.Claimed(ctx, id)
	check(t, err, "read")
	sameClaim(t, read, done, "the reconciled record as stored")
	check(t, s.Finish(ctx, id, out), "finishing again with the same outcome")
	_, err = s.Advance(ctx, id, running(done.Version, 3, "owner-c", lease))
	wantIs(t, err, dispatch.ErrInvalidRecord, "out of finished")
}

// Of the processes that decide, at once, what becomes of one call
// recorded unknown — some run its next attempt, some finish it as
// reconciled, each its own way —, exactly one lands; the others are told
// the record moved.
func testConcurrentReconcile(t *testing.T, s dispatch.CallStore) {
	const racers = 16
	rec := runRecord(0, "owner-a", base.Add(time.Minute))
	id := rec.CheckpointID
	_, err := s.Claim(t.Context(), rec)
	check(t, err, "claim")
	unknown := unknownOutcome()
	lost, err := s.Advance(t.Context(), id, dispatch.Step{Version: 1, State: dispatch.StateUnknown, Attempt: 1, Outcome: &unknown})
	check(t, err, "record it unknown")
	var wg sync.WaitGroup
	var won, lostRace atomic.Int32
	for r := range racers {
		wg.Go(func() {
			step := running(lost.Version, 2, fmt.Sprintf("owner-%d", r), base.Add(time.Minute))
			if r%2 == 1 {
				// Each racer's own output: a store may take a write
				// equal to the one that landed for its own (see
				// dispatch.CallStore.Advance).
				out := completed("call_0", fmt.Sprintf("refunded, says racer %d", r))
				step = dispatch.Step{Version: lost.Version, State: dispatch.StateFinished, Attempt: 1, Outcome: &out, Reconciled: true}
			}
			_, err := s.Advance(context.Background(), id, step)
			switch {
			case err == nil:
				won.Add(1)
			case errors.Is(err, dispatch.ErrConflict):
				lostRace.Add(1)
			default:
				t.Errorf("racer %d: %v", r, err)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || lostRace.Load() != racers-1 {
		t.Fatalf("%d racers deciding one unknown call: %d landed and %d conflicted, want 1 and %d", racers, won.Load(), lostRace.Load(), racers-1)
	}
}

// A call record written running is stranded once its lease ended, as one
// started by Advance is; one recorded unknown is not (it waits for a
// reconciliation, not for a process), and neither is one finished.
func testStrandedRuns(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	now := base.Add(time.Hour)
	for _, c := range []dispatch.Claim{
		runRecord(0, "owner-a", now.Add(-time.Minute)), // stranded
		runRecord(1, "owner-a", now.Add(time.Minute)),  // held
		runRecord(2, "owner-a", now.Add(-time.Minute)), // recorded unknown below
		runRecord(3, "owner-a", now.Add(-time.Minute)), // finished below
	} {
		_, err := s.Claim(ctx, c)
		check(t, err, "claim %s", c.CallID)
	}
	unknown := unknownOutcome()
	_, err := s.Advance(ctx, runRecord(2, "", time.Time{}).CheckpointID, dispatch.Step{Version: 1, State: dispatch.StateUnknown, Attempt: 1, Outcome: &unknown})
	check(t, err, "unknown")
	check(t, s.Finish(ctx, runRecord(3, "", time.Time{}).CheckpointID, completed("call_3", "done")), "finish")
	got, err := s.Stranded(ctx, dispatch.StrandedQuery{Now: now})
	check(t, err, "stranded")
	if len(got) != 1 || got[0].CallID != "call_0" || got[0].State != dispatch.StateRunning || got[0].Attempt != 1 {
		t.Fatalf("stranded: got %+v, want the running record whose lease ended", got)
	}
}
