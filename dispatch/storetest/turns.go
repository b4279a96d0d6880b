package storetest

import (
	"context"
	"encoding/json"
	"fmt"
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
