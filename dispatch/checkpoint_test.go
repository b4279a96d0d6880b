package dispatch_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// suspend runs the refund tool until it asks for approval and returns the
// checkpoint's JSON.
func suspend(t *testing.T, d *dispatch.Dispatcher) []byte {
	t.Helper()
	c := call("toolu_1", "refund", `{"order":"A-1"}`)
	c.IdempotencyKey = "key-1"
	o := d.Run(context.Background(), c)
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	require.False(t, o.IsError)
	require.Zero(t, o.Output)
	data, err := json.Marshal(o.Checkpoint)
	require.NoError(t, err)
	return data
}

func decode(t *testing.T, data []byte) dispatch.Checkpoint {
	t.Helper()
	var cp dispatch.Checkpoint
	require.NoError(t, json.Unmarshal(data, &cp))
	return cp
}

// A checkpoint written by one process is resumed by another whose registry
// and dispatcher were built from scratch.
func TestResumeAfterRestart(t *testing.T) {
	data := suspend(t, newDispatcher(t, registry(t, nil)))

	var calls atomic.Int32
	d := newDispatcher(t, registry(t, &calls))
	cp := decode(t, data)
	require.Equal(t, "toolu_1", cp.CallID())
	require.Equal(t, tool.Request{Name: "refund", Arguments: `{"order":"A-1"}`}, cp.Request())
	require.Equal(t, tool.IdempotencyKey("key-1"), cp.IdempotencyKey())
	require.Equal(t, `"Approve?"`, string(cp.InputRequest().Prompt()))
	require.Equal(t, "k1", cp.KeyID())

	o, err := d.Resume(context.Background(), cp, json.RawMessage(`true`), nil)
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, "toolu_1", o.CallID)
	require.Equal(t, tool.IdempotencyKey("key-1"), o.IdempotencyKey)
	require.Equal(t, `answer true state {"step":1} key key-1`, o.Text())
	require.Equal(t, int32(1), calls.Load())

	again, err := json.Marshal(cp)
	require.NoError(t, err)
	require.JSONEq(t, string(data), string(again), "a decoded checkpoint encodes as it was read")
}

func TestResumeKeyRotation(t *testing.T) {
	old := newDispatcher(t, registry(t, nil))
	data := suspend(t, old)
	rotated := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.SealKeys = []dispatch.SealKey{{ID: "k2", Secret: []byte("a brand new secret of 32 bytes!!")}, {ID: "k1", Secret: secret}}
	})
	o, err := rotated.Resume(context.Background(), decode(t, data), json.RawMessage(`false`), nil)
	require.NoError(t, err, "the old key still opens")
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, "k2", decode(t, suspend(t, rotated)).KeyID(), "the first key seals")

	dropped := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.SealKeys = []dispatch.SealKey{{ID: "k2", Secret: []byte("a brand new secret of 32 bytes!!")}}
	})
	_, err = dropped.Resume(context.Background(), decode(t, data), json.RawMessage(`true`), nil)
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
	require.EqualError(t, err, `tool: invalid checkpoint: sealed with key "k1", which this dispatcher does not hold`)
}

// Every refused checkpoint or answer runs nothing.
func TestResumeRefuses(t *testing.T) {
	genuine := suspend(t, newDispatcher(t, registry(t, nil)))
	// A checkpoint issued by another runtime with its own secret but the
	// same key ID: consistent in every field and stamp, and forged.
	foreign := suspend(t, newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.SealKeys = []dispatch.SealKey{{ID: "k1", Secret: []byte("another secret, also 32 bytes!!!")}}
	}))
	edit := func(from, to string) []byte {
		require.Contains(t, string(genuine), from)
		return []byte(strings.Replace(string(genuine), from, to, 1))
	}
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(genuine, &fields))

	tests := []struct {
		name   string
		data   []byte
		answer string
		decode string // the decode error, or "" when the checkpoint decodes
		resume string // the Resume error
	}{
		{name: "forged with another secret", data: foreign, answer: `true`,
			resume: `tool: invalid checkpoint: the seal does not match its content: the checkpoint was altered or not issued with key "k1"`},
		{name: "other arguments", data: edit(`{\"order\":\"A-1\"}`, `{\"order\":\"A-2\"}`), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "other idempotency key", data: edit(`"idempotency_key":"key-1"`, `"idempotency_key":"key-2"`), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "other call ID", data: edit(`"call_id":"toolu_1"`, `"call_id":"toolu_2"`), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "other state", data: edit(`"state":{"step":1}`, `"state":{"step":9}`), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "other response schema", data: edit(`"response_schema":{"type":"boolean"}`, `"response_schema":{"type":"string"}`), answer: `"yes"`,
			resume: "the seal does not match its content"},
		{name: "unknown key ID", data: edit(`"key_id":"k1"`, `"key_id":"k9"`), answer: `true`,
			resume: `sealed with key "k9"`},
		{name: "answer breaks the response schema", data: genuine, answer: `"yes"`,
			resume: `tool: invalid answer: the answer does not match the response schema: at the root: got string, want boolean`},
		{name: "answer is not JSON", data: genuine, answer: `tru`,
			resume: `tool: invalid answer:`},
		{name: "not JSON", data: []byte(`{"version":1`), decode: "tool: invalid checkpoint: does not decode"},
		{name: "unknown member", data: edit(`"version":1`, `"version":1,"admin":true`), decode: "tool: invalid checkpoint: does not decode"},
		{name: "duplicate member", data: edit(`"version":1`, `"version":1,"version":1`), decode: "tool: invalid checkpoint: does not decode"},
		{name: "another version", data: edit(`"version":1`, `"version":2`), decode: "tool: invalid checkpoint: version 2, want 1"},
		{name: "input request of another form", data: edit(`"prompt":"Approve?"`, `"prompt":"Approve?","extra":1`), decode: "tool: invalid checkpoint: input request: invalid input request"},
		{name: "seal cut short", data: edit(string(fields["seal"]), `{"key_id":"k1","hmac_sha256":"AAAA"}`), decode: "tool: invalid checkpoint: seal: the MAC is 3 bytes, want 32"},
		{name: "no seal", data: edit(`,"seal":`+string(fields["seal"]), ``), decode: "tool: invalid checkpoint: seal: key ID"},
		{name: "stamp removed from the input request", data: edit(string(fields["input_request"]), `{"prompt":"Approve?","response_schema":{"type":"boolean"}}`), answer: `true`,
			resume: "the seal does not match its content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			d := newDispatcher(t, registry(t, &calls))
			var cp dispatch.Checkpoint
			err := cp.UnmarshalJSON(tt.data)
			if tt.decode != "" {
				require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
				require.ErrorContains(t, err, tt.decode)
				require.Equal(t, 1, strings.Count(err.Error(), "tool: "), "one prefix: %s", err)
				_, err = d.Resume(context.Background(), cp, json.RawMessage(`true`), nil)
				require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint, "the zero checkpoint is refused")
				require.Zero(t, calls.Load())
				return
			}
			require.NoError(t, err)
			o, err := d.Resume(context.Background(), cp, json.RawMessage(tt.answer), nil)
			require.ErrorContains(t, err, tt.resume)
			require.Equal(t, 1, strings.Count(err.Error(), "tool: "), "one prefix: %s", err)
			require.Zero(t, o)
			require.Zero(t, calls.Load(), "nothing ran")
		})
	}
}

func TestResumeToolChanged(t *testing.T) {
	data := suspend(t, newDispatcher(t, registry(t, nil)))
	cp := decode(t, data)
	t.Run("gone", func(t *testing.T) {
		d := newDispatcher(t, &tool.Registry{})
		_, err := d.Resume(context.Background(), cp, json.RawMessage(`true`), nil)
		require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
		require.EqualError(t, err, `tool: invalid checkpoint: no tool named "refund" in the registry`)
	})
	t.Run("definition changed", func(t *testing.T) {
		var calls atomic.Int32
		changed := toolFunc{def: approval{}.Definition(), fn: approval{calls: &calls}.Call}
		changed.def.Description = "refund an order, now with a new description"
		b, err := tool.Bind(changed)
		require.NoError(t, err)
		reg, err := tool.NewRegistry(b)
		require.NoError(t, err)
		_, err = newDispatcher(t, reg).Resume(context.Background(), cp, json.RawMessage(`true`), nil)
		require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
		require.ErrorIs(t, err, tool.ErrInvalidInvocation)
		require.ErrorContains(t, err, "another contract")
		require.Equal(t, 1, strings.Count(err.Error(), "tool: "), "one prefix: %s", err)
		require.Zero(t, calls.Load())
	})
}

func TestCheckpointZero(t *testing.T) {
	_, err := json.Marshal(dispatch.Checkpoint{})
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
	_, err = newDispatcher(t, registry(t, nil)).Resume(context.Background(), dispatch.Checkpoint{}, json.RawMessage(`true`), nil)
	require.EqualError(t, err, "tool: invalid checkpoint: the zero Checkpoint")
}

// Settle classifies a result the runtime obtained itself, a suspension
// included, as Run would.
func TestSettle(t *testing.T) {
	reg := registry(t, nil)
	d := newDispatcher(t, reg)
	b, _ := reg.Resolve("refund")
	c := call("id", "refund", `{"order":"A-1"}`)
	inv, err := b.Contract().Prepare(c.Request, tool.Admission{IdempotencyKey: "k"})
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	o := d.Settle(c, "k", tool.EffectIdempotent, result, err)
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	o, err = d.Resume(context.Background(), *o.Checkpoint, json.RawMessage(`true`), nil)
	require.NoError(t, err)
	require.Equal(t, `answer true state {"step":1} key k`, o.Text())
}

// CheckAnswer refuses what Resume refuses for the answer, with the same
// message, and runs nothing.
func TestCheckpointCheckAnswer(t *testing.T) {
	cp := decode(t, suspend(t, newDispatcher(t, registry(t, nil))))
	require.NoError(t, cp.CheckAnswer(json.RawMessage(`true`)))
	err := cp.CheckAnswer(json.RawMessage(`"yes"`))
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	require.EqualError(t, err, "tool: invalid answer: the answer does not match the response schema: at the root: got string, want boolean")
	_, resumeErr := newDispatcher(t, registry(t, nil)).Resume(context.Background(), cp, json.RawMessage(`"yes"`), nil)
	require.EqualError(t, resumeErr, err.Error())
}
