package main

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/examples/shop"
)

// workflowName is the refund-approval workflow: it runs the model's turns
// through a [tooltemporal.Session] and returns what the model was told.
const workflowName = "RefundApproval"

// line is one call of the transcript the workflow returns.
type line struct {
	CallID string        `json:"call_id"`
	Tool   string        `json:"tool"`
	Kind   dispatch.Kind `json:"kind"`
	Text   string        `json:"text"`
}

// refundWorkflow runs each turn the model proposed, one after the other.
// A real agent would ask the model (in an activity) for the next turn
// with the outcomes of this one; the scripted turns stand for it.
func refundWorkflow(rt *tooltemporal.Runtime) func(workflow.Context, [][]dispatch.Call) ([]line, error) {
	return func(ctx workflow.Context, turns [][]dispatch.Call) ([]line, error) {
		session, err := rt.NewSession(ctx)
		if err != nil {
			return nil, err
		}
		var transcript []line
		for _, calls := range turns {
			for _, o := range session.Run(ctx, calls) {
				transcript = append(transcript, line{CallID: o.CallID, Tool: o.Tool, Kind: o.Kind, Text: o.Text()})
			}
		}
		return transcript, nil
	}
}

// script is the model's proposals: find the customer's orders, then
// refund the open one.
var script = [][]dispatch.Call{
	{{ID: "call_1", Request: tool.Request{Name: shop.SearchOrdersName, Arguments: `{"customer":"C-042"}`}}},
	{{ID: "call_2", Request: tool.Request{Name: shop.RefundName, Arguments: `{"order_id":"A-1001","amount":42.5}`}}},
}

// sealKey seals the checkpoints of suspended refunds. A real deployment
// reads it from a secret store; every worker holds the same one.
var sealKey = dispatch.SealKey{ID: "demo-2026", Secret: []byte("demo key: replace with 32+ random bytes")}

// newRuntime builds the tools (package shop's order search and refund)
// from scratch and the [tooltemporal.Runtime] around them: what a worker
// does when it starts. Only the ledger, which stands for the payments
// system, outlives a worker.
func newRuntime(l *shop.Ledger) (*tooltemporal.Runtime, error) {
	orders, err := shop.SearchOrders()
	if err != nil {
		return nil, err
	}
	refund, err := shop.NewRefund(l)
	if err != nil {
		return nil, err
	}
	var bindings []tool.Binding
	for _, t := range []tool.Tool{orders, refund} {
		b, err := tool.Bind(t, tool.Recover)
		if err != nil {
			return nil, err
		}
		bindings = append(bindings, b)
	}
	registry, err := tool.NewRegistry(bindings...)
	if err != nil {
		return nil, err
	}
	return tooltemporal.New(tooltemporal.Config{
		Registry: registry,
		SealKeys: []dispatch.SealKey{sealKey},
		ActivityOptions: workflow.ActivityOptions{
			StartToCloseTimeout: 30 * time.Second,
			RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
		},
	})
}
