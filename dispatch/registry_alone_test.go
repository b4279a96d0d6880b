package dispatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// A dispatcher of a registry alone runs every call that does not ask a
// person; a tool that asks gets an unknown outcome that says why, logged
// as an error, and nothing of the suspension layer answers.
func TestRegistryAlone(t *testing.T) {
	var calls atomic.Int32
	var logs bytes.Buffer
	d, err := dispatch.New(dispatch.Config{Registry: registry(t, &calls), Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	require.NoError(t, err)
	ctx := t.Context()

	outcomes := d.RunAll(ctx, []dispatch.Call{
		call("c1", "add", `{"a":2,"b":3}`),
		call("c2", "fail", `{}`),
		call("c3", "nope", `{}`),
	})
	require.Equal(t, []dispatch.Kind{dispatch.KindCompleted, dispatch.KindFailed, dispatch.KindUnknownTool},
		[]dispatch.Kind{outcomes[0].Kind, outcomes[1].Kind, outcomes[2].Kind})
	require.Equal(t, "5", outcomes[0].Text())

	o := d.Run(ctx, call("c4", "refund", `{"order":"A-7"}`))
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.True(t, o.IsError)
	require.Nil(t, o.Checkpoint, "nothing to resume")
	require.Equal(t, int32(1), calls.Load(), "the tool ran and asked")
	require.ErrorIs(t, o.Err, dispatch.ErrInvalidConfig)
	require.EqualError(t, o.Err, `tool: invalid dispatch config: tool "refund" asked a person (it returned an InputRequest), and this dispatcher has no Store and seal keys to suspend the call with: nobody was asked, and the call cannot be resumed`)
	require.Equal(t, `The call to "refund" did not complete and its outcome is unknown.`, o.Text())
	require.True(t, o.Retryable, "refund is idempotent: asking again is safe once the runtime can suspend")
	var record struct{ Level, Tool, Kind string }
	for line := range bytes.Lines(logs.Bytes()) {
		require.NoError(t, json.Unmarshal(line, &record))
	}
	require.Equal(t, struct{ Level, Tool, Kind string }{"ERROR", "refund", "unknown"}, record, "the last record, the suspension's, is an error")

	// Settle, which a workflow uses, says the same.
	schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
	require.NoError(t, err)
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: schema})
	require.NoError(t, err)
	o = d.Settle(call("c5", "refund", `{}`), "key-5", tool.EffectIdempotent, tool.Result{InputRequest: &ir}, nil)
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.ErrorIs(t, o.Err, dispatch.ErrInvalidConfig)

	// Nothing of the suspension layer answers: every method says why.
	const why = "this Dispatcher was made of a registry alone, without a Store and seal keys"
	var cp dispatch.Checkpoint
	for name, err := range map[string]error{
		"Open":      d.Open(cp),
		"Resume":    second(d.Resume(ctx, cp, dispatch.Answer{Response: json.RawMessage(`true`)})),
		"Decline":   second(d.Decline(ctx, cp, dispatch.Answer{})),
		"Supersede": second(d.Supersede(ctx, cp, dispatch.Edit{Arguments: `{}`})),
		"SaveTurn":  d.SaveTurn(ctx, "turn-1", outcomes),
		"Turn":      second(d.Turn(ctx, "turn-1")),
	} {
		require.ErrorIs(t, err, dispatch.ErrInvalidConfig, name)
		require.ErrorContains(t, err, why, name)
	}
}

// A store that keeps no turns serves Resume; SaveTurn and Turn say that
// it keeps none.
func TestCallStoreAlone(t *testing.T) {
	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) { c.Store = callsOnly{memoryStore(t)} })
	ctx := t.Context()
	o := d.Run(ctx, call("c1", "refund", `{"order":"A-7"}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	resumed, err := d.Resume(ctx, *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, resumed.Kind)

	err = d.SaveTurn(ctx, "turn-1", []dispatch.Outcome{o})
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
	require.ErrorContains(t, err, "keeps no turns")
	_, err = d.Turn(ctx, "turn-1")
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
}

// callsOnly is a CallStore and nothing more.
type callsOnly struct{ s *dispatch.MemoryStore }

func (c callsOnly) Claim(ctx context.Context, claim dispatch.Claim) (*dispatch.Claim, error) {
	return c.s.Claim(ctx, claim)
}

func (c callsOnly) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	return c.s.Finish(ctx, id, o)
}

func (c callsOnly) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	return c.s.Advance(ctx, id, s)
}

func (c callsOnly) Claimed(ctx context.Context, id string) (dispatch.Claim, error) {
	return c.s.Claimed(ctx, id)
}

// second returns the error of a pair.
func second[T any](_ T, err error) error { return err }
