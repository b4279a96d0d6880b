package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

func yes(principal string) dispatch.Answer {
	return dispatch.Answer{Response: json.RawMessage(`true`), Principal: principal}
}

// suspendFor runs the refund tool on d for principal and returns its
// checkpoint.
func suspendFor(t *testing.T, d *dispatch.Dispatcher, principal string) dispatch.Checkpoint {
	t.Helper()
	c := call("toolu_1", "refund", `{"order":"A-1"}`)
	c.IdempotencyKey, c.Principal = "key-1", principal
	o := d.Run(context.Background(), c)
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	return *o.Checkpoint
}

// The order of a resume: each refusal before the claim leaves the claim
// unused, so a correct answer from the right person still runs once.
func TestResumeOrder(t *testing.T) {
	var calls atomic.Int32
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	store := memoryStore(t)
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Store, c.Clock = store, clock })
	cp := suspendFor(t, d, "user-7")
	calls.Store(0)

	_, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`"yes"`), Principal: "user-7"})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer, "an invalid answer is refused")
	_, err = d.Resume(context.Background(), cp, yes("user-8"))
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal)
	require.EqualError(t, err, `tool: wrong principal: checkpoint `+cp.ID()+` may not be answered by this principal`)
	require.NotContains(t, err.Error(), "user-7", "a refusal names no principal")
	_, err = d.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal, "no principal is not the principal")
	// A wrong principal with an invalid answer hears about the answer
	// first: the schema check comes before the principal check.
	_, err = d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`1`), Principal: "user-8"})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	_, err = store.Claimed(context.Background(), cp.ID())
	require.ErrorIs(t, err, dispatch.ErrNotFound, "no refusal so far used the claim")
	require.Zero(t, calls.Load())

	o, err := d.Resume(context.Background(), cp, yes("user-7"))
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.False(t, o.Replayed)
	require.Equal(t, int32(1), calls.Load())

	claim, err := store.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.Equal(t, "user-7", claim.Principal)
	require.Equal(t, now, claim.ClaimedAt)
	require.Equal(t, cp.ExpiresAt(), claim.ExpiresAt)
	want, err := dispatch.AnswerSHA256(json.RawMessage(`true`))
	require.NoError(t, err)
	require.Equal(t, want, claim.AnswerSHA256)
	require.NotNil(t, claim.Outcome)
	require.Equal(t, dispatch.KindCompleted, claim.Outcome.Kind)

	// Expired: refused before the claim is even looked at.
	now = cp.ExpiresAt()
	_, err = d.Resume(context.Background(), cp, yes("user-7"))
	require.ErrorIs(t, err, dispatch.ErrExpired)
	require.Equal(t, int32(1), calls.Load())
}

// A wrong principal is refused before the tool is looked up again: an
// answer from someone the checkpoint does not name hears ErrWrongPrincipal
// even when the tool has left the registry, and learns nothing of it.
func TestResumePrincipalBeforeTool(t *testing.T) {
	var calls atomic.Int32
	store := memoryStore(t)
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Store = store })
	cp := suspendFor(t, d, "user-7")
	calls.Store(0)
	gone := newDispatcher(t, &tool.Registry{}, func(c *dispatch.Config) { c.Store = store })

	_, err := gone.Resume(context.Background(), cp, yes("user-8"))
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal)
	require.NotErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
	_, err = gone.Supersede(context.Background(), cp, dispatch.Edit{Arguments: `{"order":"A-2"}`, Principal: "user-8"})
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal, "an edit is refused in the same order")

	_, err = gone.Resume(context.Background(), cp, yes("user-7"))
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint, "the right principal learns that the tool is gone")
	require.EqualError(t, err, `tool: invalid checkpoint: no tool named "refund" in the registry`)
	_, err = store.Claimed(context.Background(), cp.ID())
	require.ErrorIs(t, err, dispatch.ErrNotFound, "no refusal used the claim")
	require.Zero(t, calls.Load())
}

// The same answer again returns the recorded outcome, marked replayed,
// and runs nothing; another answer is an *AnsweredError with the outcome.
func TestResumeTwice(t *testing.T) {
	var calls atomic.Int32
	d := newDispatcher(t, registry(t, &calls))
	cp := suspendFor(t, d, "")
	first, err := d.Resume(context.Background(), cp, yes(""))
	require.NoError(t, err)

	// The same answer written differently is the same answer.
	again, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(" true ")})
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.Equal(t, first.Kind, again.Kind)
	require.Equal(t, first.Text(), again.Text())
	require.Equal(t, first.IdempotencyKey, again.IdempotencyKey)

	_, err = d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`false`)})
	require.ErrorIs(t, err, dispatch.ErrAlreadyAnswered)
	var answered *dispatch.AnsweredError
	require.ErrorAs(t, err, &answered)
	recorded, ok := answered.Outcome()
	require.True(t, ok)
	require.True(t, recorded.Replayed)
	require.Equal(t, first.Text(), recorded.Text())
	require.Regexp(t, `^tool: checkpoint already answered: checkpoint [0-9a-f]{32} was answered at \S+; outcome completed$`, err.Error())
	require.Equal(t, int32(2), calls.Load(), "the tool ran once after suspending")
}

// The same answer sent again, in the same process, after the call it
// resumed has returned but before its outcome is written, waits for the
// record and replays it: it is not refused as a call that still runs.
func TestResumeAgainWhileItsOutcomeIsRecorded(t *testing.T) {
	var calls atomic.Int32
	store := newPausing(t, false)
	store.armed.Store(false)
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Store = store })
	cp := suspendFor(t, d, "")
	store.armed.Store(true)
	type answered struct {
		o   dispatch.Outcome
		err error
	}
	first, second := make(chan answered, 1), make(chan answered, 1)
	go func() {
		o, err := d.Resume(context.Background(), cp, yes(""))
		first <- answered{o, err}
	}()
	<-store.paused
	go func() {
		o, err := d.Resume(context.Background(), cp, yes(""))
		second <- answered{o, err}
	}()
	select {
	case a := <-second:
		t.Fatalf("the answer sent again was answered while the call's outcome was being recorded: %s (%v)", a.o.Kind, a.err)
	case <-time.After(50 * time.Millisecond):
	}
	close(store.release)
	again, ran := <-second, <-first
	require.NoError(t, ran.err)
	require.NoError(t, again.err)
	require.True(t, again.o.Replayed)
	require.Equal(t, ran.o.Kind, again.o.Kind)
	require.Equal(t, ran.o.Text(), again.o.Text())
	require.Equal(t, int32(2), calls.Load(), "the tool ran once after suspending")
}

// Many goroutines answer one checkpoint at once, half of them with
// another answer: the tool runs once.
func TestResumeConcurrent(t *testing.T) {
	var calls atomic.Int32
	d := newDispatcher(t, registry(t, &calls))
	cp := suspendFor(t, d, "")
	calls.Store(0)
	var wg sync.WaitGroup
	var ran, replayed, refused atomic.Int32
	for i := range 32 {
		wg.Go(func() {
			answer := `true`
			if i%2 == 1 {
				answer = `false`
			}
			o, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(answer)})
			switch {
			case err == nil && !o.Replayed:
				ran.Add(1)
			case err == nil:
				replayed.Add(1)
			case errors.Is(err, dispatch.ErrAlreadyAnswered):
				refused.Add(1)
			default:
				t.Error(err)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int32(1), ran.Load())
	require.Equal(t, int32(1), calls.Load())
	require.Equal(t, int32(31), replayed.Load()+refused.Load())
}

func TestDecline(t *testing.T) {
	var calls atomic.Int32
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Clock = func() time.Time { return now } })
	cp := suspendFor(t, d, "user-7")
	calls.Store(0)

	_, err := d.Decline(context.Background(), cp, dispatch.Answer{Principal: "user-8"})
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal)

	o, err := d.Decline(context.Background(), cp, dispatch.Answer{Principal: "user-7"})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindFailed, o.Kind)
	require.True(t, o.IsError)
	require.False(t, o.Retryable)
	require.Equal(t, `The person declined the call to "refund".`, o.Text())
	require.Equal(t, tool.EffectIdempotent, o.Effect)
	failure, ok := tool.ClassifyFailure(o.Err)
	require.True(t, ok)
	require.Equal(t, tool.FailureKindRejected, failure.Kind())

	again, err := d.Decline(context.Background(), cp, dispatch.Answer{Principal: "user-7"})
	require.NoError(t, err, "declining again is the same answer")
	require.True(t, again.Replayed)
	require.Equal(t, o.Text(), again.Text())
	failure, ok = tool.ClassifyFailure(again.Err)
	require.True(t, ok, "the recorded outcome keeps its Failure")
	require.Equal(t, tool.FailureKindRejected, failure.Kind())

	_, err = d.Resume(context.Background(), cp, yes("user-7"))
	var answered *dispatch.AnsweredError
	require.ErrorAs(t, err, &answered)
	require.True(t, answered.Claim.Declined)
	require.Regexp(t, `was declined at`, err.Error())
	require.Zero(t, calls.Load(), "nothing ran, ever")

	now = cp.ExpiresAt()
	other := suspendFor(t, d, "")
	now = other.ExpiresAt()
	_, err = d.Decline(context.Background(), other, dispatch.Answer{})
	require.ErrorIs(t, err, dispatch.ErrExpired)
}

// failingStore fails every call about a checkpoint's claim, as an
// unreachable database would; the records of the runs that asked (Run's
// call records) pass, so that the tests fault the resume alone.
type failingStore struct {
	dispatch.Store
	claims, finishes atomic.Int32
	failClaim        bool
	finishOK         atomic.Bool
	runs             sync.Map // the IDs of Run's call records
}

func (f *failingStore) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	if c.AnswerSHA256 == dispatch.RunSHA256 {
		f.runs.Store(c.CheckpointID, true)
		return f.Store.Claim(ctx, c)
	}
	f.claims.Add(1)
	if f.failClaim {
		return nil, errors.New("dial tcp 10.0.0.5:5432: connection refused")
	}
	return f.Store.Claim(ctx, c)
}

func (f *failingStore) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	if _, run := f.runs.Load(id); run {
		return f.Store.Finish(ctx, id, o)
	}
	f.finishes.Add(1)
	if f.finishOK.Load() {
		return f.Store.Finish(ctx, id, o)
	}
	return errors.New("disk full")
}

// A store that fails refuses the resume before anything runs; a store
// that fails after the run reports it beside the Outcome.
func TestResumeStoreFails(t *testing.T) {
	var calls atomic.Int32
	store := &failingStore{Store: memoryStore(t), failClaim: true}
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Store = store })
	cp := suspendFor(t, d, "")
	calls.Store(0)
	o, err := d.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrStore)
	require.EqualError(t, err, "tool: claim store failed: checkpoint "+cp.ID()+" not claimed: dial tcp 10.0.0.5:5432: connection refused")
	require.Zero(t, o)
	require.Zero(t, calls.Load())
	_, err = d.Decline(context.Background(), cp, dispatch.Answer{})
	require.ErrorIs(t, err, dispatch.ErrStore)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = d.Resume(ctx, cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrStore)
	require.ErrorIs(t, err, context.Canceled)

	store.failClaim = false
	o, err = d.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrStore)
	require.ErrorContains(t, err, "the call ran (outcome completed) but its outcome was not recorded")
	require.Equal(t, dispatch.KindCompleted, o.Kind, "the Outcome of the run is returned")
	require.Equal(t, int32(1), calls.Load())

	// A resend while the store still fails: nothing runs again, and the
	// error says the outcome is still not recorded.
	_, err = d.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrStore)
	require.ErrorContains(t, err, "its outcome was not recorded")
	require.Equal(t, int32(1), calls.Load())

	// Once the store works again, a resend records the outcome this
	// process kept, and returns it; the tool did not run again.
	store.finishOK.Store(true)
	o, err = d.Resume(context.Background(), cp, yes(""))
	require.NoError(t, err)
	require.True(t, o.Replayed)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, int32(1), calls.Load())
	c, err := store.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.NotNil(t, c.Outcome, "recorded late")
}

// A turn with one pending call is saved; after a restart (a new registry
// and dispatcher on the same store) the call is resumed, and the turn
// reads back complete.
func TestTurnAcrossRestart(t *testing.T) {
	store := memoryStore(t)
	before := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) { c.Store = store })
	outcomes := before.RunAll(context.Background(), []dispatch.Call{
		call("c1", "add", `{"a":2,"b":3}`),
		call("c2", "refund", `{"order":"A-9"}`),
		call("c3", "fail", `{}`),
		call("c4", "boom", `{}`),
	})
	require.Equal(t, dispatch.KindSuspended, outcomes[1].Kind)
	require.NoError(t, before.SaveTurn(context.Background(), "conv-1/turn-1", outcomes))

	pending, err := store.Pending(context.Background(), dispatch.PendingQuery{TurnID: "conv-1/turn-1", Full: true})
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, 1, pending[0].Index)
	require.Equal(t, dispatch.ErrorClassPanic, outcomesSaved(t, store, "conv-1/turn-1")[3].ErrorClass)
	require.Equal(t, dispatch.ErrorClassFailure, outcomesSaved(t, store, "conv-1/turn-1")[2].ErrorClass)

	var calls atomic.Int32
	after := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Store = store })
	waiting, err := after.Turn(context.Background(), "conv-1/turn-1")
	require.NoError(t, err)
	require.Equal(t, dispatch.KindSuspended, waiting[1].Kind, "not answered yet")

	cp := *pending[0].Outcome.Checkpoint
	_, err = after.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)

	done, err := after.Turn(context.Background(), "conv-1/turn-1")
	require.NoError(t, err)
	kinds := []dispatch.Kind{}
	for _, o := range done {
		kinds = append(kinds, o.Kind)
	}
	require.Equal(t, []dispatch.Kind{dispatch.KindCompleted, dispatch.KindCompleted, dispatch.KindFailed, dispatch.KindUnknown}, kinds)
	require.Equal(t, "5", done[0].Text())
	require.Contains(t, done[1].Text(), "answer true")
	require.Equal(t, "the order is closed", done[2].Text())
	require.True(t, done[2].IsError)
	_, isFailure := tool.ClassifyFailure(done[2].Err)
	require.True(t, isFailure)
	require.NotContains(t, done[2].Err.Error(), "row 7 locked", "the private cause is not stored")
	require.NotContains(t, done[3].Err.Error(), "10.0.0.1", "nor a panic's value")
	require.Equal(t, int32(1), calls.Load())

	pending, err = store.Pending(context.Background(), dispatch.PendingQuery{})
	require.NoError(t, err)
	require.Empty(t, pending)

	_, err = after.Turn(context.Background(), "no such turn")
	require.ErrorIs(t, err, dispatch.ErrNotFound)
}

func outcomesSaved(t *testing.T, s dispatch.Store, id string) []dispatch.SavedOutcome {
	t.Helper()
	turn, err := s.Turn(context.Background(), id)
	require.NoError(t, err)
	return turn.Outcomes
}

// A SavedOutcome round-trips through JSON, and back to an Outcome with the
// same public parts.
func TestSavedOutcomeJSON(t *testing.T) {
	d := newDispatcher(t, registry(t, nil))
	for _, c := range []dispatch.Call{
		call("c1", "add", `{"a":2,"b":3}`), call("c2", "refund", `{"order":"A-9"}`),
		call("c3", "fail", `{}`), call("c4", "boom", `{}`), call("c5", "nope", `{}`),
		call("c6", "add", `{"a":"x"}`), call("c7", "picture", `{}`),
	} {
		o := d.Run(context.Background(), c)
		saved := dispatch.NewSavedOutcome(o)
		data, err := json.Marshal(saved)
		require.NoError(t, err)
		var back dispatch.SavedOutcome
		require.NoError(t, json.Unmarshal(data, &back), "%s", data)
		again, err := json.Marshal(back)
		require.NoError(t, err)
		require.JSONEq(t, string(data), string(again))
		restored, err := back.Outcome()
		require.NoError(t, err)
		require.Equal(t, o.Kind, restored.Kind)
		require.Equal(t, o.Text(), restored.Text())
		require.Equal(t, o.IsError, restored.IsError)
		require.Equal(t, o.Err != nil, restored.Err != nil)
		_, wasRejection := tool.ClassifyInputRejection(o.Err)
		_, isRejection := tool.ClassifyInputRejection(restored.Err)
		require.Equal(t, wasRejection, isRejection)
	}
	var bad dispatch.SavedOutcome
	err := json.Unmarshal([]byte(`{"tool":"x","kind":"completed","error_class":"panic"}`), &bad)
	require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
	err = json.Unmarshal([]byte(`{"tool":"x","kind":"completed","extra":1}`), &bad)
	require.ErrorIs(t, err, dispatch.ErrInvalidRecord)
}

func TestAnswerSHA256(t *testing.T) {
	a, err := dispatch.AnswerSHA256(json.RawMessage(`{"b":1,"a":[true, "x"]}`))
	require.NoError(t, err)
	b, err := dispatch.AnswerSHA256(json.RawMessage(` {"a":[true,"x"],"b":1}`))
	require.NoError(t, err)
	require.Equal(t, a, b, "member order and whitespace do not make another answer")
	c, err := dispatch.AnswerSHA256(json.RawMessage(`{"a":[true,"x"],"b":1.0}`))
	require.NoError(t, err)
	require.NotEqual(t, a, c, "number text is kept: no rounding")
	big1, _ := dispatch.AnswerSHA256(json.RawMessage(`9007199254740993`))
	big2, _ := dispatch.AnswerSHA256(json.RawMessage(`9007199254740992`))
	require.NotEqual(t, big1, big2)
	_, err = dispatch.AnswerSHA256(json.RawMessage(`{`))
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
}
