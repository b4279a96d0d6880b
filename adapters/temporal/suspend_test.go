package tooltemporal_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// updates sends answers to the running test workflow and records, by
// update ID, whether each was accepted or refused (and why). The test
// environment calls back later, from its own loop.
type updates struct {
	env      *testsuite.TestWorkflowEnvironment
	refused  map[string]error
	accepted map[string]bool
	receipts map[string]tooltemporal.Receipt
}

func newUpdates(env *testsuite.TestWorkflowEnvironment) *updates {
	return &updates{env: env, refused: map[string]error{}, accepted: map[string]bool{}, receipts: map[string]tooltemporal.Receipt{}}
}

// send sends a under the update ID id, which is also the answer's ID
// unless a names its own.
func (u *updates) send(id string, a tooltemporal.Answer) {
	if a.ID == "" {
		a.ID = id
	}
	u.sendAsIs(id, a)
}

// sendAsIs sends a under the update ID id.
func (u *updates) sendAsIs(id string, a tooltemporal.Answer) {
	u.env.UpdateWorkflow(tooltemporal.UpdateAnswer, id, &testsuite.TestUpdateCallback{
		OnReject: func(err error) { u.refused[id] = err },
		OnAccept: func() { u.accepted[id] = true },
		OnComplete: func(v any, err error) {
			if r, ok := v.(tooltemporal.Receipt); ok && err == nil {
				u.receipts[id] = r
			}
		},
	}, a)
}

func pending(t *testing.T, env *testsuite.TestWorkflowEnvironment) []tooltemporal.Pending {
	t.Helper()
	v, err := env.QueryWorkflow(tooltemporal.QueryPending)
	require.NoError(t, err)
	var p []tooltemporal.Pending
	require.NoError(t, v.Get(&p))
	return p
}

// A call that asks for approval waits as workflow state; an answer that
// breaks the response schema, or names no waiting call, is refused to its
// sender while the call keeps waiting; a valid answer resumes the same
// call, with the same key, in the activity.
func TestSuspendedCallResumesWithValidAnswer(t *testing.T) {
	b := newBackend()
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	key := tool.IdempotencyKey(keyPrefix + "2")
	want := []tooltemporal.Pending{{
		CallID: "c2", Tool: "refund", IdempotencyKey: key,
		Prompt:         json.RawMessage(`{"question":"Refund the order?"}`),
		ResponseSchema: json.RawMessage(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"],"additionalProperties":false}`),
	}}
	u := newUpdates(env)
	env.RegisterDelayedCallback(func() {
		require.Equal(t, want, pending(t, env))
		u.send("bad-type", tooltemporal.Answer{IdempotencyKey: key, Response: json.RawMessage(`{"approved":"yes"}`)})
		u.send("duplicate", tooltemporal.Answer{IdempotencyKey: key, Response: json.RawMessage(`{"approved":false,"approved":true}`)})
		u.send("bad-key", tooltemporal.Answer{IdempotencyKey: "elsewhere", Response: json.RawMessage(`{"approved":true}`)})
	}, time.Hour)
	env.RegisterDelayedCallback(func() {
		require.EqualError(t, u.refused["bad-type"], "tool: invalid answer: the answer does not match the response schema: at /approved: got string, want boolean")
		require.EqualError(t, u.refused["duplicate"], `tool: invalid answer: the answer does not match the response schema: invalid JSON at /approved (byte 18): duplicate member name "approved"`)
		require.EqualError(t, u.refused["bad-key"], `tool: invalid answer: no call is waiting for an answer with idempotency key "elsewhere"`)
		require.Empty(t, u.accepted)
		require.Equal(t, want, pending(t, env), "still waiting")
		require.Equal(t, []tool.IdempotencyKey{key}, b.attempts("refund"), "nothing ran again")
		u.send("good", tooltemporal.Answer{IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)})
	}, 2*time.Hour)

	got := runTurns(t, env, []dispatch.Call{
		call("c1", "lookup", `{"item":"kettle"}`),
		call("c2", "refund", `{"item":"A-1"}`),
	})
	require.Equal(t, dispatch.KindCompleted, got[0][0].Kind)
	require.Equal(t, outcome{CallID: "c2", Tool: "refund", Kind: dispatch.KindCompleted,
		Output: tool.NewTextOutput(`refunded with key ` + string(key) + ` after {"asked":1}`), Key: key}, got[0][1])
	require.Equal(t, []tool.IdempotencyKey{key, key}, b.attempts("refund"), "asked, then resumed with the same key")
	require.Equal(t, map[string]bool{"good": true}, u.accepted)
	require.NotContains(t, u.refused, "good")
	require.Empty(t, pending(t, env))
}

// A declined approval is a definite failure of the resumed call, and the
// next turn's keys go on numbering.
func TestDeclinedAnswerFailsTheCall(t *testing.T) {
	b := newBackend()
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	u := newUpdates(env)
	env.RegisterDelayedCallback(func() {
		u.send("no", tooltemporal.Answer{IdempotencyKey: keyPrefix + "1", Response: json.RawMessage(`{"approved":false}`)})
	}, time.Minute)
	got := runTurns(t, env,
		[]dispatch.Call{call("c1", "refund", `{"item":"A-1"}`)},
		[]dispatch.Call{call("c2", "reserve", `{"item":"A-1"}`)},
	)
	require.Equal(t, dispatch.KindFailed, got[0][0].Kind)
	require.Equal(t, tool.NewTextOutput("The refund was declined."), got[0][0].Output)
	require.Equal(t, tool.IdempotencyKey(keyPrefix+"2"), got[1][0].Key)
	require.True(t, u.accepted["no"])
}

// The workflow's worker and the activity's worker need not be the same:
// here the activity runs on a Runtime whose registry was built from
// scratch, and resumes the call the workflow's Runtime sealed. A worker
// without the seal key refuses to resume, and the outcome is unknown.
func TestActivityOnAnotherWorker(t *testing.T) {
	for _, tt := range []struct {
		name     string
		secret   []byte
		wantKind dispatch.Kind
	}{
		{"same seal key", secret, dispatch.KindCompleted},
		{"another seal key", []byte("another secret of thirty-two bytes!"), dispatch.KindUnknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newBackend()
			workflowSide := newRuntime(t, newRegistry(t, b))
			activitySide, err := tooltemporal.New(tooltemporal.Config{
				Registry:        newRegistry(t, b),
				SealKeys:        []dispatch.SealKey{{ID: "k1", Secret: tt.secret}},
				ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute},
			})
			require.NoError(t, err)
			env := newEnv(t, workflowSide, activitySide)
			u := newUpdates(env)
			env.RegisterDelayedCallback(func() {
				u.send("yes", tooltemporal.Answer{IdempotencyKey: keyPrefix + "1", Response: json.RawMessage(`{"approved":true}`)})
			}, time.Minute)
			got := runTurns(t, env, []dispatch.Call{call("c1", "refund", `{"item":"A-1"}`)})
			require.Equal(t, tt.wantKind, got[0][0].Kind, got[0][0].Err)
			if tt.wantKind == dispatch.KindUnknown {
				require.Contains(t, got[0][0].Err, `the call to "refund" was not resumed: tool: invalid checkpoint`)
				require.Len(t, b.attempts("refund"), 1, "nothing ran with the forged checkpoint")
			}
		})
	}
}

func receipt(t *testing.T, env *testsuite.TestWorkflowEnvironment, answerID string) (tooltemporal.Receipt, error) {
	t.Helper()
	v, err := env.QueryWorkflow(tooltemporal.QueryReceipt, answerID)
	if err != nil {
		return tooltemporal.Receipt{}, err
	}
	var r tooltemporal.Receipt
	require.NoError(t, v.Get(&r))
	return r, nil
}

// Answers carry IDs, and the workflow's validator keeps them apart: a
// resend of an accepted answer gets its receipt and changes nothing; an
// ID names one answer; an answer for a call already answered is refused
// with the ID that answered it; and the receipt, asked for later, tells
// the resumed call's outcome.
//
// The updates here go under update IDs of their own, so that each
// reaches the validator: that is what an update sent by other means than
// SendAnswer does. SendAnswer derives the update's ID from the answer's,
// and the server then hands a second answer under a used ID the first
// update's outcome without the validator seeing it; that path is
// TestSendAnswerRefusesAReusedID's.
func TestAnswerIDsAndReceipts(t *testing.T) {
	b := newBackend()
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	key := tool.IdempotencyKey(keyPrefix + "1")
	approve := tooltemporal.Answer{ID: "approval-1", IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)}
	u := newUpdates(env)
	env.RegisterDelayedCallback(func() {
		u.sendAsIs("no-id", tooltemporal.Answer{IdempotencyKey: key, Response: json.RawMessage(`{"approved":true}`)})
		_, err := receipt(t, env, "approval-1")
		require.ErrorIs(t, err, tooltemporal.ErrUnknownAnswer, "nothing accepted yet")
		u.send("first", approve)
		// The same answer again, with the same answer ID, written another
		// way, under another update ID.
		resend := approve
		resend.Response = json.RawMessage(`{ "approved" : true }`)
		u.send("resend", resend)
		other := approve
		other.Response = json.RawMessage(`{"approved":false}`)
		u.send("same-id-other-answer", other)
		u.send("second-answer", tooltemporal.Answer{ID: "approval-2", IdempotencyKey: key, Response: json.RawMessage(`{"approved":false}`)})
	}, time.Hour)

	got := runTurns(t, env, []dispatch.Call{call("c1", "refund", `{"item":"A-1"}`)})
	require.Equal(t, dispatch.KindCompleted, got[0][0].Kind)
	require.Equal(t, []tool.IdempotencyKey{key, key}, b.attempts("refund"), "asked, then resumed once")

	for _, tt := range []struct {
		update, why, msg string
	}{
		{"no-id", "an answer without an ID could not be sent again safely", "tool: invalid answer: an answer needs an ID of 1 to 256 bytes of UTF-8"},
		{"same-id-other-answer", "an ID names one answer", `tool: invalid answer: answer ID "approval-1" was used for another answer`},
		{"second-answer", "the call was answered; it waits no more", `tool: invalid answer: the call with idempotency key "` + string(key) + `" is not waiting: answer "approval-1" was accepted for it`},
	} {
		require.ErrorIs(t, u.refused[tt.update], dispatch.ErrInvalidAnswer, "%s: %s", tt.update, tt.why)
		require.EqualError(t, u.refused[tt.update], tt.msg, tt.why)
	}
	first := u.receipts["first"]
	require.Equal(t, tooltemporal.Receipt{
		AnswerID: "approval-1", CallID: "c1", Tool: "refund", IdempotencyKey: key,
		AnswerSHA256: "20ec2f38fc96bc7d416a9af537493ae0bae26c5ad4c5a0f2d94f56f9c3e04958",
		AcceptedAt:   first.AcceptedAt,
	}, first)
	require.False(t, first.AcceptedAt.IsZero())
	require.Equal(t, first, u.receipts["resend"], "a resend gets the first receipt")

	r, err := receipt(t, env, "approval-1")
	require.NoError(t, err)
	want := first
	want.Kind = dispatch.KindCompleted
	require.Equal(t, want, r, "asked later, the receipt tells the outcome")
	_, err = receipt(t, env, "approval-2")
	require.ErrorIs(t, err, tooltemporal.ErrUnknownAnswer)
	require.ErrorContains(t, err, `tool: unknown answer: no answer with ID "approval-2" was accepted by this run`)
}
