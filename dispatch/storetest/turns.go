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

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

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

// suspended returns n suspended outcomes, made by a Dispatcher of its
// own (Run does not touch the store).
func suspended(t *testing.T, n int) []dispatch.SavedOutcome {
	t.Helper()
	s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	check(t, err, "memory store")
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

func testTurns(t *testing.T, s dispatch.TurnStore) {
	ctx := t.Context()
	sus := suspended(t, 1)
	failed := dispatch.SavedOutcome{CallID: "call_f", Tool: "refund", Kind: dispatch.KindFailed, IsError: true,
		Output: tool.NewTextOutput("the order is closed"), ErrorClass: dispatch.ErrorClassFailure}
	want := turn("conversation-1/turn-3", base, completed("call_c", "5"), sus[0], failed)
	check(t, s.SaveTurn(ctx, want), "save")
	want.Version = 1
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
	replaced.Version = 1
	check(t, s.SaveTurn(ctx, replaced), "save again")
	got, err = s.Turn(ctx, want.ID)
	check(t, err, "read again")
	if len(got.Outcomes) != 1 {
		t.Fatalf("saving a turn again replaces it: got %d outcomes, want 1", len(got.Outcomes))
	}
	_, err = s.Turn(ctx, "no such turn")
	wantIs(t, err, dispatch.ErrNotFound, "an unknown turn")
}

func testInvalidTurn(t *testing.T, s dispatch.TurnStore) {
	err := s.SaveTurn(t.Context(), dispatch.Turn{ID: "", SavedAt: base, ExpiresAt: base})
	wantIs(t, err, dispatch.ErrInvalidRecord, "a turn without an ID")
}

func testCanceledTurns(t *testing.T, s dispatch.TurnStore) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := s.SaveTurn(ctx, turn("t", base, completed("c", "x")))
	wantIs(t, err, context.Canceled, "SaveTurn with a cancelled context")
	_, err = s.Turn(ctx, "t")
	wantIs(t, err, context.Canceled, "Turn with a cancelled context")
	_, err = s.Turn(t.Context(), "t")
	wantIs(t, err, dispatch.ErrNotFound, "a turn saved with a cancelled context is not saved")
}

func testTurnVersions(t *testing.T, s dispatch.TurnStore) {
	ctx := t.Context()
	first := turn("t", base, completed("c", "1"))
	check(t, s.SaveTurn(ctx, first), "save a new turn")
	got, err := s.Turn(ctx, "t")
	check(t, err, "read")
	if got.Version != 1 {
		t.Fatalf("a new turn is at version 1, got %d", got.Version)
	}
	wantIs(t, s.SaveTurn(ctx, first), dispatch.ErrConflict, "a second new turn of the same ID")
	stale := turn("t", base, completed("c", "stale"))
	stale.Version = 2
	wantIs(t, s.SaveTurn(ctx, stale), dispatch.ErrConflict, "a save decided on a version the turn never had")
	got, err = s.Turn(ctx, "t")
	check(t, err, "read")
	if text, _ := got.Outcomes[0].Output.Text(); got.Version != 1 || text != "1" {
		t.Fatalf("a refused save changes nothing: got version %d, %q", got.Version, text)
	}

	// Of the saves decided on one version, one lands.
	const racers = 16
	var wg sync.WaitGroup
	var won, lost atomic.Int32
	for r := range racers {
		wg.Go(func() {
			next := turn("t", base, completed("c", fmt.Sprintf("racer %d", r)))
			next.Version = 1
			switch err := s.SaveTurn(context.Background(), next); {
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
		t.Fatalf("%d saves decided on one version: %d landed and %d conflicted, want 1 and %d", racers, won.Load(), lost.Load(), racers-1)
	}
	got, err = s.Turn(ctx, "t")
	check(t, err, "read")
	if got.Version != 2 {
		t.Fatalf("after one more save the turn is at version 2, got %d", got.Version)
	}
}

// waitBound bounds how long the wait tests wait for a save to be seen: a
// store that looks at an interval sees it within one.
const waitBound = 10 * time.Second

func testWaitTurn(t *testing.T, s dispatch.Store) {
	ctx := t.Context()
	type waited struct {
		turn dispatch.Turn
		err  error
	}
	done := make(chan waited, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, waitBound)
		defer cancel()
		got, err := s.WaitTurn(wctx, "t", 0)
		done <- waited{got, err}
	}()
	select {
	case w := <-done:
		t.Fatalf("WaitTurn returned before the turn was saved: %+v, %v", w.turn, w.err)
	case <-time.After(50 * time.Millisecond):
	}
	check(t, s.SaveTurn(ctx, turn("t", base, completed("c", "1"))), "save")
	w := <-done
	check(t, w.err, "waiting for the first save")
	if w.turn.Version != 1 || w.turn.ID != "t" {
		t.Fatalf("the wait returns the turn saved: got %+v", w.turn)
	}

	got, err := s.WaitTurn(ctx, "t", 0)
	check(t, err, "a turn already past the version")
	if got.Version != 1 {
		t.Fatalf("got version %d, want 1", got.Version)
	}

	go func() {
		wctx, cancel := context.WithTimeout(ctx, waitBound)
		defer cancel()
		got, err := s.WaitTurn(wctx, "t", 1)
		done <- waited{got, err}
	}()
	next := turn("t", base, completed("c", "2"))
	next.Version = 1
	check(t, s.SaveTurn(ctx, next), "save again")
	w = <-done
	check(t, w.err, "waiting for the second save")
	if w.turn.Version != 2 {
		t.Fatalf("the wait returns the turn after the version it was given: got version %d", w.turn.Version)
	}

	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = s.WaitTurn(short, "t", 2)
	wantIs(t, err, dispatch.ErrStore, "a wait whose context ends")
	wantIs(t, err, context.DeadlineExceeded, "a wait whose context ends")
}

// twice is a tool that asks a person, asks again once answered, then
// completes.
type twice struct{}

func (twice) Definition() tool.Definition {
	return tool.Definition{Name: "transfer", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectIdempotent}
}

func (twice) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	c, resumed := inv.Continuation()
	if resumed && string(c.State()) == `2` {
		return tool.Result{Output: tool.NewTextOutput("transferred")}, nil
	}
	schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
	if err != nil {
		return tool.Result{}, err
	}
	state := json.RawMessage(`1`)
	if resumed {
		state = json.RawMessage(`2`)
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Sure?"`), ResponseSchema: schema, ContinuationState: state})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{InputRequest: &ir}, nil
}

// questionsRounds is how many rounds testQuestionsKept runs; under
// -short, a tenth of them.
const questionsRounds = 100

// testQuestionsKept answers two calls of one saved turn at the same
// moment, through two Dispatchers on s (two replicas), with a tool that
// asks again: both new questions must be pending in the turn afterwards,
// round after round.
func testQuestionsKept(t *testing.T, s dispatch.Store) {
	b, err := tool.Bind(twice{})
	check(t, err, "bind")
	reg, err := tool.NewRegistry(b)
	check(t, err, "registry")
	replicas := make([]*dispatch.Dispatcher, 2)
	for i := range replicas {
		replicas[i], err = dispatch.New(dispatch.Config{
			Registry: reg, Store: s,
			SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("storetest secret, thirty-two b!!")}},
		})
		check(t, err, "dispatcher")
	}
	rounds := questionsRounds
	if testing.Short() {
		rounds /= 10
	}
	ctx := t.Context()
	for round := range rounds {
		id := fmt.Sprintf("turn-%d", round)
		outcomes := replicas[0].RunAll(ctx, []dispatch.Call{
			{ID: "a", Request: tool.Request{Name: "transfer", Arguments: `{}`}},
			{ID: "b", Request: tool.Request{Name: "transfer", Arguments: `{}`}},
		})
		check(t, replicas[0].SaveTurn(ctx, id, outcomes), "round %d: save", round)
		var wg sync.WaitGroup
		errs := make([]error, len(outcomes))
		for i, o := range outcomes {
			if o.Checkpoint == nil {
				t.Fatalf("round %d: call %d did not suspend: %s %v", round, i, o.Kind, o.Err)
			}
			wg.Go(func() {
				again, err := replicas[i].Resume(ctx, *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
				if err == nil && again.Kind != dispatch.KindSuspended {
					err = fmt.Errorf("the call did not ask again: %s %v", again.Kind, again.Err)
				}
				errs[i] = err
			})
		}
		wg.Wait()
		for i, err := range errs {
			check(t, err, "round %d: resume call %d", round, i)
		}
		pending, err := s.Pending(ctx, dispatch.PendingQuery{TurnID: id})
		check(t, err, "round %d: pending", round)
		if len(pending) != 2 {
			t.Fatalf("round %d: %d questions pending in the turn, want both new ones", round, len(pending))
		}
		for i, p := range pending {
			if p.Index != i || p.CheckpointID == outcomes[i].Checkpoint.ID() {
				t.Fatalf("round %d: pending %d is %s/%d %s, want the new question of call %d", round, i, p.TurnID, p.Index, p.CheckpointID, i)
			}
		}
	}
}

// testTurnFinishes runs a turn on one Dispatcher on s and answers its
// call through another (a desk on another replica): the first one's
// WaitTurn returns the finished turn, woken by the store.
func testTurnFinishes(t *testing.T, s dispatch.Store) {
	b, err := tool.Bind(twice{})
	check(t, err, "bind")
	reg, err := tool.NewRegistry(b)
	check(t, err, "registry")
	var replicas [2]*dispatch.Dispatcher
	for i := range replicas {
		replicas[i], err = dispatch.New(dispatch.Config{
			Registry: reg, Store: s,
			SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("storetest secret, thirty-two b!!")}},
		})
		check(t, err, "dispatcher")
	}
	runtime, desk := replicas[0], replicas[1]
	ctx := t.Context()
	outcomes := runtime.RunAll(ctx, []dispatch.Call{{ID: "a", Request: tool.Request{Name: "transfer", Arguments: `{}`}, TurnID: "waited"}})
	if outcomes[0].Kind != dispatch.KindSuspended || outcomes[0].Err != nil {
		t.Fatalf("the call did not suspend in a saved turn: %s %v", outcomes[0].Kind, outcomes[0].Err)
	}
	type finished struct {
		outcomes []dispatch.Outcome
		err      error
	}
	done := make(chan finished, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, waitBound)
		defer cancel()
		got, err := runtime.WaitTurn(wctx, "waited")
		done <- finished{got, err}
	}()
	yes := dispatch.Answer{Response: json.RawMessage(`true`)}
	again, err := desk.Resume(ctx, *outcomes[0].Checkpoint, yes)
	check(t, err, "answer")
	select {
	case f := <-done:
		t.Fatalf("the turn finished while its call asks again: %+v, %v", f.outcomes, f.err)
	case <-time.After(50 * time.Millisecond):
	}
	_, err = desk.Resume(ctx, *again.Checkpoint, yes)
	check(t, err, "answer again")
	f := <-done
	check(t, f.err, "waiting for the turn")
	if len(f.outcomes) != 1 || f.outcomes[0].Kind != dispatch.KindCompleted {
		t.Fatalf("the finished turn: %+v", f.outcomes)
	}
}
