package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/examples/shop"
)

// The refund flow under Temporal's test suite: the refund waits, a wrong
// answer is refused, the right one resumes it, and the ledger moves money
// once.
func TestRefundWorkflow(t *testing.T) {
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	l := &shop.Ledger{}
	rt, err := newRuntime(l)
	require.NoError(t, err)
	rt.Register(env)
	env.RegisterWorkflowWithOptions(refundWorkflow(rt), workflow.RegisterOptions{Name: workflowName})

	var refused error
	accepted := false
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(tooltemporal.QueryPending)
		require.NoError(t, err)
		var pending []tooltemporal.Pending
		require.NoError(t, v.Get(&pending))
		require.Len(t, pending, 1)
		require.Equal(t, "refund_order", pending[0].Tool)
		require.JSONEq(t, `"Refund 42.50 EUR on order A-1001?"`, string(pending[0].Prompt))
		key := pending[0].IdempotencyKey
		env.UpdateWorkflow(tooltemporal.UpdateAnswer, "wrong", &testsuite.TestUpdateCallback{
			OnReject: func(err error) { refused = err }, OnAccept: func() {}, OnComplete: func(any, error) {},
		}, tooltemporal.Answer{ID: "wrong", IdempotencyKey: key, Response: json.RawMessage(`{"approve":"yes"}`)})
		env.UpdateWorkflow(tooltemporal.UpdateAnswer, "right", &testsuite.TestUpdateCallback{
			OnReject: func(error) {}, OnAccept: func() { accepted = true }, OnComplete: func(any, error) {},
		}, tooltemporal.Answer{ID: "right", IdempotencyKey: key, Response: json.RawMessage(`{"approve":true}`)})
	}, 24*time.Hour)

	env.ExecuteWorkflow(workflowName, script)
	require.NoError(t, env.GetWorkflowError())
	var transcript []line
	require.NoError(t, env.GetWorkflowResult(&transcript))
	require.EqualError(t, refused, "tool: invalid answer: the answer does not match the response schema: at /approve: got string, want boolean")
	require.True(t, accepted)
	require.Len(t, transcript, 2)
	require.Equal(t, line{CallID: "call_1", Tool: "search_orders", Kind: dispatch.KindCompleted,
		Text: `{"orders":[{"id":"A-1001","status":"open","total_eur":42.5},{"id":"A-1002","status":"shipped","total_eur":950}]}`}, transcript[0])
	require.Equal(t, dispatch.KindCompleted, transcript[1].Kind)
	require.Equal(t, "Refunded 42.50 EUR on order A-1001, reference R-0001.", transcript[1].Text)
	require.Equal(t, 1, l.Count())
}

// Without a server the program says how to start one and exits with 2.
func TestNoServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	address := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now

	var stdout, stderr bytes.Buffer
	status := run(context.Background(), []string{"-address", address, "-dial-timeout", "1s"}, &stdout, &stderr)
	require.Equal(t, 2, status)
	require.Empty(t, stdout.String())
	require.Contains(t, stderr.String(), "No Temporal server answered at "+address)
	require.Contains(t, stderr.String(), "    temporal server start-dev\n")
}
