// Package storetest holds the conformance tests of a dispatch.Store and
// of each small interface it joins: every implementation (in memory, on
// SQLite, on PostgreSQL) runs the same tests, so that they cannot drift
// apart. A whole Store runs Run; an implementation of one interface alone
// runs that interface's function (CallStore, TurnStore, GrantStore).
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
	"encoding/json"
	"errors"
	"fmt"
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

// Run runs the conformance tests of every interface a dispatch.Store
// joins (CallStore, TurnStore, TurnWaiter, Lister, Sweeper) against the
// stores newStore makes, and one test of them together under two
// Dispatchers: two calls of one saved turn answered at the same moment,
// each asking again, keep both new questions pending in the turn (100
// rounds; 10 under -short); and a turn waited for on one Dispatcher
// finishes when a person answers on the other; and the fault matrix of
// calls run under their call records (ExactlyOnce). A Store that is also
// a dispatch.GrantStore runs GrantStore's tests too.
func Run(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	t.Helper()
	t.Run("CallStore", func(t *testing.T) {
		CallStore(t, func(t *testing.T) dispatch.CallStore { return newStore(t) })
	})
	t.Run("TurnStore", func(t *testing.T) {
		TurnStore(t, func(t *testing.T) dispatch.TurnStore { return newStore(t) })
	})
	t.Run("TurnWaiter", func(t *testing.T) { TurnWaiter(t, newStore) })
	t.Run("Lister", func(t *testing.T) { Lister(t, newStore) })
	t.Run("Sweeper", func(t *testing.T) { Sweeper(t, newStore) })
	t.Run("ExactlyOnce", func(t *testing.T) { ExactlyOnce(t, newStore) })
	t.Run("QuestionsKept", func(t *testing.T) { testQuestionsKept(t, newStore(t)) })
	t.Run("TurnFinishes", func(t *testing.T) { testTurnFinishes(t, newStore(t)) })
	t.Run("GrantStore", func(t *testing.T) { runGrants(t, newStore) })
}

// CallStore runs the conformance tests of a dispatch.CallStore against
// the stores newStore makes: a checkpoint claimed once, concurrent claims
// of one ID (exactly one wins), the same answer returning the recorded
// claim, another answer refused with a *dispatch.AnsweredError, Finish,
// a recorded answer and an edit's three sets of arguments kept as
// claimed, a full store that refuses with dispatch.ErrStore and evicts no
// unexpired claim, invalid claims, a cancelled context, a claim whose
// context ends at any point of its work (its result must be what the
// store holds), a claim sent again with its own nonce, which is told it
// won, and the record's steps (Advance and Finish): each allowed step,
// each refused one, and concurrent steps decided on one version, of
// which one lands; a claim written running at attempt 1 with its lease
// (a call whose tool starts at once, as a run record), and the steps of
// a call recorded unknown (its next attempt, its reconciliation), with
// concurrent reconciliations of which one lands.
func CallStore(t *testing.T, newStore func(t *testing.T) dispatch.CallStore) {
	t.Helper()
	t.Run("ClaimOnce", func(t *testing.T) { testClaimOnce(t, newStore(t)) })
	t.Run("ConcurrentClaims", func(t *testing.T) { testConcurrentClaims(t, newStore(t)) })
	t.Run("Advance", func(t *testing.T) { testAdvance(t, newStore(t)) })
	t.Run("ConcurrentAdvance", func(t *testing.T) { testConcurrentAdvance(t, newStore(t)) })
	t.Run("Finish", func(t *testing.T) { testFinish(t, newStore(t)) })
	t.Run("AnswersAndEdits", func(t *testing.T) { testAnswersAndEdits(t, newStore(t)) })
	t.Run("Full", func(t *testing.T) { testFull(t, newStore(t)) })
	t.Run("InvalidRecords", func(t *testing.T) { testInvalid(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceledCalls(t, newStore(t)) })
	t.Run("ClaimWhateverTheContext", func(t *testing.T) { testClaimWhateverTheContext(t, newStore(t)) })
	t.Run("SameNonce", func(t *testing.T) { testSameNonce(t, newStore(t)) })
	t.Run("ClaimRunning", func(t *testing.T) { testClaimRunning(t, newStore(t)) })
	t.Run("UnknownSteps", func(t *testing.T) { testUnknownSteps(t, newStore(t)) })
	t.Run("ConcurrentReconcile", func(t *testing.T) { testConcurrentReconcile(t, newStore(t)) })
}

// TurnStore runs the conformance tests of a dispatch.TurnStore against
// the stores newStore makes: a turn read back as saved, replaced when
// saved again at its version, saves decided on a stale version refused
// (of concurrent ones, one lands), an invalid turn refused, and a
// cancelled context.
func TurnStore(t *testing.T, newStore func(t *testing.T) dispatch.TurnStore) {
	t.Helper()
	t.Run("Turns", func(t *testing.T) { testTurns(t, newStore(t)) })
	t.Run("Versions", func(t *testing.T) { testTurnVersions(t, newStore(t)) })
	t.Run("InvalidRecords", func(t *testing.T) { testInvalidTurn(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceledTurns(t, newStore(t)) })
}

// Lister runs the conformance tests of a dispatch.Lister against the
// stores newStore makes. A Lister lists what the store's CallStore and
// TurnStore wrote, so it is tested through a whole dispatch.Store: the
// audit listing of claims (in order, since a time, limited, with a
// recorded answer and an edit), pending calls (a claimed one no longer
// listed; a bounded summary, the whole outcome on request), newest first
// and in pages, the records stranded by a lease that ended (a claim
// written running among them, and not one recorded unknown), a claim
// placed in its turn by the store, and a cancelled context.
func Lister(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	t.Helper()
	t.Run("Claims", func(t *testing.T) { testClaims(t, newStore(t)) })
	t.Run("Pending", func(t *testing.T) { testPending(t, newStore(t)) })
	t.Run("PendingPages", func(t *testing.T) { testPendingPages(t, newStore(t)) })
	t.Run("Stranded", func(t *testing.T) { testStranded(t, newStore(t)) })
	t.Run("StrandedRuns", func(t *testing.T) { testStrandedRuns(t, newStore(t)) })
	t.Run("ClaimPlaced", func(t *testing.T) { testClaimPlaced(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceledLists(t, newStore(t)) })
}

// TurnWaiter runs the conformance tests of a dispatch.TurnWaiter against
// the stores newStore makes, through a whole dispatch.Store as for
// Lister: a wait for a turn not saved yet, for one past the version
// given, for the next save, and one whose context ends.
func TurnWaiter(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	t.Helper()
	t.Run("WaitTurn", func(t *testing.T) { testWaitTurn(t, newStore(t)) })
}

// Sweeper runs the conformance tests of a dispatch.Sweeper against the
// stores newStore makes, through a whole dispatch.Store as for Lister:
// claims and turns deleted MaxClockSkew after they expired and not
// before, and a cancelled context.
func Sweeper(t *testing.T, newStore func(t *testing.T) dispatch.Store) {
	t.Helper()
	t.Run("DeleteExpired", func(t *testing.T) { testDeleteExpired(t, newStore(t)) })
	t.Run("Canceled", func(t *testing.T) { testCanceledSweep(t, newStore(t)) })
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
