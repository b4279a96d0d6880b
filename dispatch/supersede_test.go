package dispatch_test

import (
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

func TestSupersede(t *testing.T) {
	ctx := t.Context()
	var calls atomic.Int32
	store := memoryStore(t)
	d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Store = store })
	first := d.Run(ctx, dispatch.Call{ID: "call_1", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7000"}`}, IdempotencyKey: "key-1", Principal: "ann"})
	require.Equal(t, dispatch.KindSuspended, first.Kind)
	require.NoError(t, d.SaveTurn(ctx, "turn-1", []dispatch.Outcome{first}))
	cp := *first.Checkpoint

	// Arguments the tool refuses claim nothing: the person may try again.
	_, err := d.Supersede(ctx, cp, dispatch.Edit{Arguments: `{"order":7}`, Principal: "ann"})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	require.Contains(t, err.Error(), "/order")
	_, err = d.Supersede(ctx, cp, dispatch.Edit{Arguments: `{"order":"A-7"}`, Principal: "bob"})
	require.ErrorIs(t, err, dispatch.ErrWrongPrincipal)
	_, err = store.Claimed(ctx, cp.ID())
	require.ErrorIs(t, err, dispatch.ErrNotFound)
	require.EqualValues(t, 1, calls.Load())

	// The edit is a new call under a new key, and the tool asks again.
	edited, err := d.Supersede(ctx, cp, dispatch.Edit{Arguments: `{"order": "A-7"}`, Principal: "ann"})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindSuspended, edited.Kind)
	require.Equal(t, "call_1", edited.CallID)
	require.NotEqual(t, cp.IdempotencyKey(), edited.IdempotencyKey)
	require.Equal(t, `{"order": "A-7"}`, edited.Checkpoint.Request().Arguments)
	require.Equal(t, "ann", edited.Checkpoint.Principal())
	require.EqualValues(t, 2, calls.Load())

	claim, err := store.Claimed(ctx, cp.ID())
	require.NoError(t, err)
	require.True(t, claim.Superseded())
	require.Equal(t, dispatch.EditRecord{Proposed: `{"order":"A-7000"}`, Approved: `{"order": "A-7"}`, Executed: `{"order": "A-7"}`, IdempotencyKey: edited.IdempotencyKey}, *claim.Edit)
	require.Equal(t, "ann", claim.Principal)
	require.NotNil(t, claim.Outcome)

	// The old checkpoint can be neither answered nor declined; the same
	// edit again replays.
	_, err = d.Resume(ctx, cp, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "ann"})
	var answered *dispatch.AnsweredError
	require.ErrorAs(t, err, &answered)
	require.Contains(t, err.Error(), "superseded by an edit")
	_, err = d.Decline(ctx, cp, dispatch.Answer{Principal: "ann"})
	require.ErrorAs(t, err, &answered)
	replay, err := d.Supersede(ctx, cp, dispatch.Edit{Arguments: `{"order":"A-7"}`, Principal: "ann"})
	require.NoError(t, err)
	require.True(t, replay.Replayed)
	require.EqualValues(t, 2, calls.Load())

	// Answering the new checkpoint, recorded, completes the model's call.
	done, err := d.Resume(ctx, *edited.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "ann", Record: true})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, done.Kind)
	require.Contains(t, done.Text(), "key "+string(edited.IdempotencyKey))
	outcomes, err := d.Turn(ctx, "turn-1")
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind)
	answeredClaim, err := store.Claimed(ctx, edited.Checkpoint.ID())
	require.NoError(t, err)
	require.JSONEq(t, `true`, string(answeredClaim.Response))
}

func TestSupersedeRefuses(t *testing.T) {
	ctx := t.Context()
	d := newDispatcher(t, registry(t, nil))
	o := d.Run(ctx, call("call_1", "refund", `{"order":"A-7"}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind)

	var zero *dispatch.Dispatcher
	_, err := zero.Supersede(ctx, *o.Checkpoint, dispatch.Edit{Arguments: `{}`})
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
	other := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.SealKeys = []dispatch.SealKey{{ID: "k2", Secret: []byte("another secret of at least 32 bytes!")}}
	})
	_, err = other.Supersede(ctx, *o.Checkpoint, dispatch.Edit{Arguments: `{"order":"A-8"}`})
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
	same := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.NewKey = func() (tool.IdempotencyKey, error) { return o.IdempotencyKey, nil }
	})
	_, err = same.Supersede(ctx, *o.Checkpoint, dispatch.Edit{Arguments: `{"order":"A-8"}`})
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
	failing := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.NewKey = func() (tool.IdempotencyKey, error) { return "", errors.New("no entropy") }
	})
	_, err = failing.Supersede(ctx, *o.Checkpoint, dispatch.Edit{Arguments: `{"order":"A-8"}`})
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
}
