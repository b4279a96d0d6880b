package tooltemporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// envClient is a client of the workflow running in a test environment,
// used from a goroutine of its own while the environment's loop runs the
// workflow. Each call is posted to that loop and waited for, as a
// client's request waits for a server. Like the server, it hands an
// update sent under an ID it has seen the outcome of the first update
// with that ID (the first is never shown the workflow's validator
// again), and forgets an update the validator refused. What it returns
// crosses Temporal's converters, as it would the wire. Any other method
// of client.Client panics.
type envClient struct {
	client.Client
	env *testsuite.TestWorkflowEnvironment

	mu      sync.Mutex
	updates map[string]*envUpdate // by update ID
	sent    int
}

func newEnvClient(env *testsuite.TestWorkflowEnvironment) *envClient {
	return &envClient{env: env, updates: map[string]*envUpdate{}}
}

// envUpdate is one update as the server keeps it: done is closed when
// its outcome (value or err) is known.
type envUpdate struct {
	id    string
	done  chan struct{}
	value converter.EncodedValue
	err   error
}

func (u *envUpdate) WorkflowID() string { return "" }
func (u *envUpdate) RunID() string      { return "" }
func (u *envUpdate) UpdateID() string   { return u.id }

func (u *envUpdate) Get(ctx context.Context, valuePtr any) error {
	select {
	case <-u.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if u.err != nil {
		return u.err
	}
	return u.value.Get(valuePtr)
}

func (c *envClient) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u, ok := c.updates[o.UpdateID]; ok {
		return u, nil // the first update's outcome, whatever this one carries
	}
	u := &envUpdate{id: o.UpdateID, done: make(chan struct{})}
	c.updates[o.UpdateID] = u
	c.sent++
	// Each delivery has an ID of its own in the environment, whose own
	// deduplication would never forget a refused update.
	envID := fmt.Sprintf("%s#%d", o.UpdateID, c.sent)
	fc := temporal.GetDefaultFailureConverter()
	dc := converter.GetDefaultDataConverter()
	c.env.RegisterDelayedCallback(func() {
		c.env.UpdateWorkflow(o.UpdateName, envID, &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) {
				c.mu.Lock()
				delete(c.updates, o.UpdateID)
				c.mu.Unlock()
				u.err = fc.FailureToError(fc.ErrorToFailure(err))
				close(u.done)
			},
			OnComplete: func(v any, err error) {
				if err != nil {
					u.err = fc.FailureToError(fc.ErrorToFailure(err))
				} else if p, perr := dc.ToPayloads(v); perr != nil {
					u.err = perr
				} else {
					u.value = newEncodedValue(dc, p)
				}
				close(u.done)
			},
		}, o.Args...)
	}, 0)
	return u, nil
}

// DescribeWorkflow tells the one run of the environment.
func (c *envClient) DescribeWorkflow(_ context.Context, workflowID, _ string) (*client.WorkflowExecutionDescription, error) {
	return describeRun(workflowID, "default-test-run-id"), nil
}

func describeRun(workflowID, runID string) *client.WorkflowExecutionDescription {
	var d client.WorkflowExecutionDescription
	d.WorkflowExecution = workflow.Execution{ID: workflowID, RunID: runID}
	return &d
}

func (c *envClient) QueryWorkflow(ctx context.Context, _, _ string, queryType string, args ...any) (converter.EncodedValue, error) {
	type answer struct {
		v   converter.EncodedValue
		err error
	}
	done := make(chan answer, 1)
	c.env.RegisterDelayedCallback(func() {
		v, err := c.env.QueryWorkflow(queryType, args...)
		done <- answer{v, err}
	}, 0)
	select {
	case a := <-done:
		return a.v, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// encodedValue is payloads and the converter that reads them.
type encodedValue struct {
	dc converter.DataConverter
	p  *commonpb.Payloads
}

func (v encodedValue) HasValue() bool         { return v.p != nil }
func (v encodedValue) Get(valuePtr any) error { return v.dc.FromPayloads(v.p, valuePtr) }

func newEncodedValue(dc converter.DataConverter, p *commonpb.Payloads) converter.EncodedValue {
	return encodedValue{dc: dc, p: p}
}

// sendAll runs sends, one after the other, on a client of env from a
// goroutine of its own, starting once the environment's clock reaches
// at; done is closed when the last returned. A send must not wait for
// anything after the workflow completes: the environment's loop would
// be gone. The environment must have no timer pending while the
// client works (no run timeout, say: SetWorkflowRunTimeout(0)), or its
// loop, idle while the client is between requests, skips to it.
func sendAll(t *testing.T, env *testsuite.TestWorkflowEnvironment, at time.Duration, sends func(ctx context.Context, c client.Client)) (done <-chan struct{}) {
	t.Helper()
	finished := make(chan struct{})
	env.RegisterDelayedCallback(func() {
		go func() {
			defer close(finished)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			sends(ctx, newEnvClient(env))
		}()
	}, at)
	return finished
}

// An answer ID names one answer to one call. Sent again under its ID, the
// same answer (in any spelling) gets its receipt; another answer, or an
// answer to another call, under that ID is refused with an
// *AnswerIDError that carries the receipt which stands, although the
// server hands SendAnswer the first update's outcome and the workflow
// never sees the second. The refused answers change nothing: the second
// call still waits, and is answered under an ID of its own.
func TestSendAnswerRefusesAReusedID(t *testing.T) {
	b := newBackend()
	env := newEnv(t, newRuntime(t, newRegistry(t, b)))
	// The client works in real time, between the environment's steps.
	// An idle environment skips its clock to the next timer: with no run
	// timeout there is none while the calls wait, so it waits for the
	// client instead, and a hang fails by the test timeout.
	env.SetWorkflowRunTimeout(0)
	env.SetTestTimeout(time.Minute)
	key1, key2 := tool.IdempotencyKey(keyPrefix+"1"), tool.IdempotencyKey(keyPrefix+"2")
	const workflowID = "default-test-workflow-id"
	declined := tooltemporal.Answer{ID: "approval-1", IdempotencyKey: key1, Response: json.RawMessage(`{"approved":false}`)}

	var first, resent tooltemporal.Receipt
	var otherAnswer, otherCall, badJSON error
	var pendingAfter []tooltemporal.Pending
	var read tooltemporal.Receipt
	done := sendAll(t, env, time.Hour, func(ctx context.Context, c client.Client) {
		var err error
		first, err = tooltemporal.SendAnswer(ctx, c, workflowID, declined)
		require.NoError(t, err)

		// Another answer to the same call, under the used ID: the
		// server answers with the first update's outcome.
		flipped := declined
		flipped.Response = json.RawMessage(`{"approved":true}`)
		_, otherAnswer = tooltemporal.SendAnswer(ctx, c, workflowID, flipped)
		// An answer to another call, under the used ID.
		_, otherCall = tooltemporal.SendAnswer(ctx, c, workflowID, tooltemporal.Answer{ID: "approval-1", IdempotencyKey: key2, Response: json.RawMessage(`{"approved":true}`)})
		// Not one JSON document: refused before anything is sent.
		_, badJSON = tooltemporal.SendAnswer(ctx, c, workflowID, tooltemporal.Answer{ID: "approval-9", IdempotencyKey: key2, Response: json.RawMessage(`{"approved":`)})
		// The same answer, written another way.
		again := declined
		again.Response = json.RawMessage(` { "approved" : false } `)
		resent, err = tooltemporal.SendAnswer(ctx, c, workflowID, again)
		require.NoError(t, err)

		pendingAfter, err = tooltemporal.ListPending(ctx, c, workflowID)
		require.NoError(t, err)
		read, err = tooltemporal.ReadReceipt(ctx, c, workflowID, "approval-1")
		require.NoError(t, err)
		// The second call, answered under an ID of its own. The
		// workflow completes after this: nothing may follow.
		_, err = tooltemporal.SendAnswer(ctx, c, workflowID, tooltemporal.Answer{ID: "approval-2", IdempotencyKey: key2, Response: json.RawMessage(`{"approved":true}`)})
		require.NoError(t, err)
	})

	got := runTurns(t, env, []dispatch.Call{call("c1", "refund", `{"item":"A-1"}`), call("c2", "refund", `{"item":"A-2"}`)})
	<-done

	require.Equal(t, dispatch.KindFailed, got[0][0].Kind, "the first answer stands: declined")
	require.Equal(t, dispatch.KindCompleted, got[0][1].Kind, "the second call was approved under its own ID")
	require.ElementsMatch(t, []tool.IdempotencyKey{key1, key2, key1, key2}, b.attempts("refund"), "each call asked, then resumed once")

	for _, tt := range []struct {
		name string
		err  error
	}{
		{"another answer under a used ID", otherAnswer},
		{"an answer to another call under a used ID", otherCall},
	} {
		var idErr *tooltemporal.AnswerIDError
		require.ErrorAs(t, tt.err, &idErr, tt.name)
		require.ErrorIs(t, tt.err, dispatch.ErrInvalidAnswer, tt.name)
		require.Equal(t, first, idErr.Receipt, "%s: the receipt of the answer that stands", tt.name)
		require.EqualError(t, tt.err, fmt.Sprintf(`tool: invalid answer: answer ID "approval-1" was used for another answer: the answer accepted under it, for the call with idempotency key %q at %s, stands; this one was not accepted`,
			key1, first.AcceptedAt.UTC().Format(time.RFC3339)), tt.name)
	}
	require.ErrorIs(t, badJSON, dispatch.ErrInvalidAnswer)
	require.ErrorContains(t, badJSON, "the answer is not one JSON document")

	require.Equal(t, first, resent, "the same answer again gets its receipt")
	require.Equal(t, key1, first.IdempotencyKey)
	require.Len(t, pendingAfter, 1, "the answers refused under a used ID answered nothing")
	require.Equal(t, key2, pendingAfter[0].IdempotencyKey)
	require.Equal(t, first.AnswerSHA256, read.AnswerSHA256, "the workflow recorded the declined answer under the ID")
}

// A nil *AnswerIDError still says what it is.
func TestAnswerIDErrorNil(t *testing.T) {
	var e *tooltemporal.AnswerIDError
	require.EqualError(t, e, "tool: invalid answer")
	require.True(t, errors.Is(e, dispatch.ErrInvalidAnswer))
}

// stubClient answers every update with err, as a server would, and
// describes the workflow as one run, or with describeErr.
type stubClient struct {
	client.Client
	err, describeErr error
}

func (c stubClient) DescribeWorkflow(_ context.Context, workflowID, _ string) (*client.WorkflowExecutionDescription, error) {
	if c.describeErr != nil {
		return nil, c.describeErr
	}
	return describeRun(workflowID, "run-1"), nil
}

func (c stubClient) UpdateWorkflow(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return nil, c.err
}

// After the workflow completed, the server refuses an update under an ID
// it never accepted (the loser of two answers, or one too late) with a
// NotFound that says so: that is an invalid answer, like any other that
// finds no call waiting. A workflow that does not exist is the client's
// error, as it is.
func TestSendAnswerToACompletedWorkflow(t *testing.T) {
	answer := tooltemporal.Answer{ID: "approval-2", IdempotencyKey: keyPrefix + "1", Response: json.RawMessage(`{"approved":true}`)}
	ctx := context.Background()

	_, err := tooltemporal.SendAnswer(ctx, stubClient{err: serviceerror.NewNotFound("workflow execution already completed")}, "w", answer)
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	require.EqualError(t, err, "tool: invalid answer: the workflow has completed: no call waits for an answer, and no answer with this ID was accepted (ReadReceipt tells which one was)")

	missing := serviceerror.NewNotFound("workflow not found for ID: w")
	_, err = tooltemporal.SendAnswer(ctx, stubClient{err: missing}, "w", answer)
	require.NotErrorIs(t, err, dispatch.ErrInvalidAnswer)
	require.Equal(t, missing, err)
	_, err = tooltemporal.SendAnswer(ctx, stubClient{describeErr: missing}, "w", answer)
	require.Equal(t, missing, err)
}
