package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

	o, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
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
	o, err := rotated.Resume(context.Background(), decode(t, data), dispatch.Answer{Response: json.RawMessage(`false`)})
	require.NoError(t, err, "the old key still opens")
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, "k2", decode(t, suspend(t, rotated)).KeyID(), "the first key seals")

	dropped := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.SealKeys = []dispatch.SealKey{{ID: "k2", Secret: []byte("a brand new secret of 32 bytes!!")}}
	})
	_, err = dropped.Resume(context.Background(), decode(t, data), dispatch.Answer{Response: json.RawMessage(`true`)})
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
	editID := func() []byte {
		var id string
		require.NoError(t, json.Unmarshal(fields["id"], &id))
		other := "0" + id[1:]
		if other == id {
			other = "1" + id[1:]
		}
		return edit(`"id":"`+id+`"`, `"id":"`+other+`"`)
	}

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
		{name: "other ID", data: editID(), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "other expiry", data: edit(`"expires_at":"20`, `"expires_at":"21`), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "principal added", data: edit(`"call_id"`, `"principal":"mallory","call_id"`), answer: `true`,
			resume: "the seal does not match its content"},
		{name: "not JSON", data: []byte(`{"version":2`), decode: "tool: invalid checkpoint: does not decode"},
		{name: "unknown member", data: edit(`"version":2`, `"version":2,"admin":true`), decode: "tool: invalid checkpoint: does not decode"},
		{name: "duplicate member", data: edit(`"version":2`, `"version":2,"version":2`), decode: "tool: invalid checkpoint: does not decode"},
		{name: "another version", data: edit(`"version":2`, `"version":3`), decode: "tool: invalid checkpoint: version 3, want 2"},
		{name: "version 1", data: edit(`"version":2`, `"version":1`), decode: "tool: invalid checkpoint: version 1 predates single-use checkpoints (it has no ID and no expiry) and cannot be resumed: run the suspended call again to suspend it with a new checkpoint"},
		{name: "ID not hex", data: edit(`"id":"`, `"id":"x`), decode: "is not 32 lowercase hex digits"},
		{name: "expiry before issue", data: edit(`"expires_at":"20`, `"expires_at":"19`), decode: "not after it was issued at"},
		{name: "no expiry", data: edit(`"expires_at":`, `"expires_atx":`), decode: "does not decode"},
		{name: "principal not UTF-8", data: edit(`"call_id"`, `"principal":"\udc00","call_id"`), decode: "does not decode"},
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
				_, err = d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
				require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint, "the zero checkpoint is refused")
				require.Zero(t, calls.Load())
				return
			}
			require.NoError(t, err)
			o, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(tt.answer)})
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
		_, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
		require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
		require.EqualError(t, err, `tool: invalid checkpoint: no tool named "refund" in the registry`)
	})
	t.Run("description changed", func(t *testing.T) {
		// The description is text for the model: a release that rewords
		// it keeps the pending checkpoints valid.
		var calls atomic.Int32
		changed := toolFunc{def: approval{}.Definition(), fn: approval{calls: &calls}.Call}
		changed.def.Description = "refund an order, now with a new description"
		reg := registryOf(t, changed)
		o, err := newDispatcher(t, reg).Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
		require.NoError(t, err)
		require.Equal(t, dispatch.KindCompleted, o.Kind)
		require.Equal(t, int32(1), calls.Load())
	})
	t.Run("schema changed", func(t *testing.T) {
		var calls atomic.Int32
		changed := toolFunc{def: approval{}.Definition(), fn: approval{calls: &calls}.Call}
		changed.def.InputSchema = json.RawMessage(`{"type":"object","properties":{"order":{"type":"string","maxLength":10}},"required":["order"]}`)
		reg := registryOf(t, changed)
		_, err := newDispatcher(t, reg).Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
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
	_, err = newDispatcher(t, registry(t, nil)).Resume(context.Background(), dispatch.Checkpoint{}, dispatch.Answer{Response: json.RawMessage(`true`)})
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
	o, err = d.Resume(context.Background(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
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
	_, resumeErr := newDispatcher(t, registry(t, nil)).Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`"yes"`)})
	require.EqualError(t, resumeErr, err.Error())
}

// The checkpoint names its suspension and its life: a random ID, the time
// it was issued on the Dispatcher's clock, and the expiry a TTL later.
func TestCheckpointIdentityAndExpiry(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) { c.Clock = clock; c.CheckpointTTL = time.Hour })
	c := call("toolu_1", "refund", `{"order":"A-1"}`)
	c.Principal = "user-7"
	first := d.Run(context.Background(), c).Checkpoint
	second := d.Run(context.Background(), c).Checkpoint
	require.Len(t, first.ID(), 32)
	require.NotEqual(t, first.ID(), second.ID(), "every suspension has its own ID")
	require.Equal(t, now, first.IssuedAt())
	require.Equal(t, now.Add(time.Hour), first.ExpiresAt())
	require.Equal(t, "user-7", first.Principal())
	data, err := json.Marshal(first)
	require.NoError(t, err)
	require.Contains(t, string(data), `"issued_at":"2026-12-01T09:00:00Z","expires_at":"2026-12-01T10:00:00Z","principal":"user-7"`)
	again := decode(t, data)
	require.Equal(t, first.ID(), again.ID())
	require.True(t, first.ExpiresAt().Equal(again.ExpiresAt()))

	t.Run("default TTL", func(t *testing.T) {
		d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) { c.Clock = clock })
		cp := d.Run(context.Background(), call("toolu_1", "refund", `{"order":"A-1"}`)).Checkpoint
		require.Equal(t, now.Add(dispatch.DefaultCheckpointTTL), cp.ExpiresAt())
		require.Equal(t, 24*time.Hour, dispatch.DefaultCheckpointTTL)
	})

	for _, tc := range []struct {
		name, why string
		at        time.Time
		err       error
		msg       string
	}{
		{name: "just before expiry", why: "valid until the instant it expires", at: now.Add(time.Hour - time.Nanosecond)},
		{name: "at expiry", why: "the expiry instant is already too late", at: now.Add(time.Hour), err: dispatch.ErrExpired,
			msg: "tool: checkpoint expired: checkpoint " + first.ID() + " expired at 2026-12-01T10:00:00Z (now 2026-12-01T10:00:00Z)"},
		{name: "clock behind within skew", why: "a resuming clock up to MaxClockSkew behind the issuer is tolerated", at: now.Add(-dispatch.MaxClockSkew)},
		{name: "clock behind beyond skew", why: "a checkpoint from further in the future than the skew allows", at: now.Add(-dispatch.MaxClockSkew - time.Second), err: dispatch.ErrInvalidCheckpoint,
			msg: "more than 5m0s after this process's clock"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			resumer := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) { c.Clock = func() time.Time { return tc.at } })
			o, err := resumer.Resume(context.Background(), *first, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-7"})
			if tc.err == nil {
				require.NoError(t, err, tc.why)
				require.Equal(t, dispatch.KindCompleted, o.Kind)
				return
			}
			require.ErrorIs(t, err, tc.err, tc.why)
			require.ErrorContains(t, err, tc.msg)
			require.Zero(t, calls.Load(), "nothing ran")
		})
	}
}

func TestNewCheckpointTTL(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name, why string
		ttl       time.Duration
		msg       string // "" when New accepts the TTL
	}{
		{name: "negative", why: "a checkpoint would expire before it was issued", ttl: -time.Second,
			msg: "tool: invalid dispatch config: CheckpointTTL is -1s, want 0 (the default) to MaxCheckpointTTL (876000h0m0s)"},
		{name: "above the maximum", why: "the expiry of a checkpoint issued today could leave the seal's range of times", ttl: dispatch.MaxCheckpointTTL + time.Nanosecond,
			msg: "tool: invalid dispatch config: CheckpointTTL is 876000h0m0.000000001s, want 0 (the default) to MaxCheckpointTTL (876000h0m0s)"},
		{name: "the maximum", why: "a runtime whose history counts each answer once lets a call wait that long", ttl: dispatch.MaxCheckpointTTL},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dispatch.New(dispatch.Config{Registry: registry(t, nil), Store: memoryStore(t), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}},
				CheckpointTTL: tt.ttl, Clock: func() time.Time { return now }})
			if tt.msg != "" {
				require.ErrorIs(t, err, dispatch.ErrInvalidConfig, tt.why)
				require.EqualError(t, err, tt.msg)
				return
			}
			require.NoError(t, err, tt.why)
			cp := d.Run(context.Background(), call("c1", "refund", `{"order":"A-1"}`)).Checkpoint
			require.NotNil(t, cp)
			require.Equal(t, now.Add(tt.ttl), cp.ExpiresAt())
			require.Equal(t, 2126, cp.ExpiresAt().Year())
			again := decode(t, mustJSON(t, cp))
			require.True(t, cp.ExpiresAt().Equal(again.ExpiresAt()), "the expiry survives the wire form")
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

// NewCheckpointID chooses the ID of every checkpoint sealed, from the call
// that suspends and the key it ran with; what it returns is checked like
// any ID.
func TestNewCheckpointID(t *testing.T) {
	const chosen = "0123456789abcdef0123456789abcdef"
	for _, tt := range []struct {
		name, why string
		newID     func(dispatch.Call) (string, error)
		call      dispatch.Call
		wantID    string // "" with msg: the outcome is unknown
		msg       string
	}{
		{name: "the runtime's ID", why: "a deterministic runtime names its checkpoints itself",
			newID:  func(dispatch.Call) (string, error) { return chosen, nil },
			call:   call("c1", "refund", `{"order":"A-1"}`),
			wantID: chosen},
		{name: "an error", why: "no checkpoint without an ID: the call's outcome is unknown",
			newID: func(dispatch.Call) (string, error) { return "", errors.New("ledger unreachable") },
			call:  call("c1", "refund", `{"order":"A-1"}`),
			msg:   "tool: invalid checkpoint: choosing a checkpoint ID: ledger unreachable"},
		{name: "not hex", why: "an ID of another form could not be claimed",
			newID: func(dispatch.Call) (string, error) { return "0123456789ABCDEF0123456789ABCDEF", nil },
			call:  call("c1", "refund", `{"order":"A-1"}`),
			msg:   `tool: invalid checkpoint: ID "0123456789ABCDEF0123456789ABCDEF" is not 32 lowercase hex digits`},
		{name: "too short", why: "fewer than 128 bits",
			newID: func(dispatch.Call) (string, error) { return "0123", nil },
			call:  call("c1", "refund", `{"order":"A-1"}`),
			msg:   `tool: invalid checkpoint: ID "0123" is not 32 lowercase hex digits`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var seen []dispatch.Call
			d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
				c.NewKey = func() (tool.IdempotencyKey, error) { return "key-1", nil }
				c.NewCheckpointID = func(c dispatch.Call) (string, error) {
					seen = append(seen, c)
					return tt.newID(c)
				}
			})
			o := d.Run(context.Background(), tt.call)
			want := tt.call
			want.IdempotencyKey = "key-1"
			require.Equal(t, []dispatch.Call{want}, seen, "called once, with the call and the key it ran with")
			if tt.msg != "" {
				require.Equal(t, dispatch.KindUnknown, o.Kind, tt.why)
				require.ErrorIs(t, o.Err, dispatch.ErrInvalidCheckpoint)
				require.EqualError(t, o.Err, tt.msg)
				require.Nil(t, o.Checkpoint)
				return
			}
			require.Equal(t, dispatch.KindSuspended, o.Kind, tt.why)
			require.Equal(t, tt.wantID, o.Checkpoint.ID())
		})
	}

	t.Run("only for suspensions", func(t *testing.T) {
		called := false
		d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
			c.NewCheckpointID = func(dispatch.Call) (string, error) { called = true; return chosen, nil }
		})
		require.Equal(t, dispatch.KindCompleted, d.Run(context.Background(), call("c1", "add", `{"a":1,"b":2}`)).Kind)
		require.False(t, called)
	})

	t.Run("nil: random, one per suspension", func(t *testing.T) {
		d := newDispatcher(t, registry(t, nil))
		first := d.Run(context.Background(), call("c1", "refund", `{"order":"A-1"}`)).Checkpoint
		second := d.Run(context.Background(), call("c1", "refund", `{"order":"A-1"}`)).Checkpoint
		require.Regexp(t, `^[0-9a-f]{32}$`, first.ID())
		require.NotEqual(t, first.ID(), second.ID())
	})
}

// With its own clock and IDs, a runtime that settles the same result
// twice, on two Dispatchers built from scratch, seals the same checkpoint:
// what a workflow replayed on another worker needs. Unique IDs are its
// duty: two checkpoints that share one are answered once between them.
func TestSettleDeterministic(t *testing.T) {
	const id = "fedcba9876543210fedcba9876543210"
	issued := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	store := memoryStore(t)
	settle := func() dispatch.Checkpoint {
		reg := registry(t, nil)
		d := newDispatcher(t, reg, func(c *dispatch.Config) {
			c.Store = store
			c.Clock = func() time.Time { return issued }
			c.NewCheckpointID = func(dispatch.Call) (string, error) { return id, nil }
			c.CheckpointTTL = dispatch.MaxCheckpointTTL
		})
		b, _ := reg.Resolve("refund")
		c := call("c1", "refund", `{"order":"A-1"}`)
		inv, err := b.Contract().Prepare(c.Request, tool.Admission{IdempotencyKey: "wf/run/1"})
		require.NoError(t, err)
		result, err := b.Call(context.Background(), inv)
		o := d.Settle(c, "wf/run/1", tool.EffectIdempotent, result, err)
		require.Equal(t, dispatch.KindSuspended, o.Kind)
		return *o.Checkpoint
	}
	first, second := settle(), settle()
	require.Equal(t, string(mustJSON(t, first)), string(mustJSON(t, second)))
	require.Equal(t, id, first.ID())
	require.Equal(t, issued, first.IssuedAt())

	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.Store = store
		c.Clock = func() time.Time { return issued.Add(time.Hour) }
	})
	o, err := d.Resume(context.Background(), first, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	_, err = d.Resume(context.Background(), second, dispatch.Answer{Response: json.RawMessage(`false`)})
	require.ErrorIs(t, err, dispatch.ErrAlreadyAnswered, "the same ID: one claim between them")
}

// Settle never seals an input request stamped for another call: its
// resume would be refused once the person had answered, so the outcome
// is unknown now, before anyone is asked.
func TestSettleRefusesAnotherCallsRequest(t *testing.T) {
	reg := registry(t, nil)
	b, _ := reg.Resolve("refund")
	asked := call("c1", "refund", `{"order":"A-1"}`)
	inv, err := b.Contract().Prepare(asked.Request, tool.Admission{IdempotencyKey: "wf/base-run/1"})
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	for _, tt := range []struct {
		name, why string
		call      dispatch.Call
		key       tool.IdempotencyKey
		msg       string // "" when sealed
	}{
		{name: "the call it was stamped for", why: "same tool, same key", call: asked, key: "wf/base-run/1"},
		{name: "another key", why: "a runtime that lost the key (a workflow keyed by a run ID that a reset changed)", call: asked, key: "wf/reset-run/1",
			msg: `tool: invalid checkpoint: the input request was stamped for idempotency key "wf/base-run/1", not the call's "wf/reset-run/1": its answer could never resume the call`},
		{name: "another tool", why: "the result of one tool settled as another's", call: call("c1", "picture", `{}`), key: "wf/base-run/1",
			msg: `tool: invalid checkpoint: the input request was stamped for tool "refund", not "picture"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := newDispatcher(t, reg).Settle(tt.call, tt.key, tool.EffectIdempotent, result, nil)
			if tt.msg == "" {
				require.Equal(t, dispatch.KindSuspended, o.Kind, tt.why)
				return
			}
			require.Equal(t, dispatch.KindUnknown, o.Kind, tt.why)
			require.Nil(t, o.Checkpoint)
			require.ErrorIs(t, o.Err, dispatch.ErrInvalidCheckpoint)
			require.EqualError(t, o.Err, tt.msg)
		})
	}
}
