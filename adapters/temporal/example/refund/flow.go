package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
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
// refund the dented kettle.
var script = [][]dispatch.Call{
	{{ID: "call_1", Request: tool.Request{Name: "search_orders", Arguments: `{"customer":"ana@example.com"}`}}},
	{{ID: "call_2", Request: tool.Request{Name: "refund_order", Arguments: `{"order_id":"A-1001","amount":42.5,"reason":"kettle arrived dented"}`}}},
}

// sealKey seals the checkpoints of suspended refunds. A real deployment
// reads it from a secret store; every worker holds the same one.
var sealKey = dispatch.SealKey{ID: "demo-2026", Secret: []byte("demo key: replace with 32+ random bytes")}

// newRuntime builds the tools from scratch and the [tooltemporal.Runtime]
// around them: what a worker does when it starts. Only the ledger, which
// stands for the payments system, outlives a worker.
func newRuntime(l *ledger) (*tooltemporal.Runtime, error) {
	orders, err := tool.NewFunc(tool.FuncConfig{
		Name:        "search_orders",
		Description: "List a customer's orders.",
		Effect:      tool.EffectSafe,
	}, searchOrders)
	if err != nil {
		return nil, err
	}
	refund, err := newRefundTool(l)
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

type ordersInput struct {
	Customer string `json:"customer" jsonschema:"format=email"`
}

type order struct {
	ID       string  `json:"id"`
	Item     string  `json:"item"`
	TotalEUR float64 `json:"total_eur"`
}

func searchOrders(_ context.Context, in ordersInput) ([]order, error) {
	if in.Customer != "ana@example.com" {
		return []order{}, nil
	}
	return []order{{ID: "A-1001", Item: "kettle", TotalEUR: 42.50}, {ID: "A-1002", Item: "espresso machine", TotalEUR: 950}}, nil
}

type refundInput struct {
	OrderID string  `json:"order_id" jsonschema:"pattern=^A-[0-9]{4}$"`
	Amount  float64 `json:"amount" jsonschema:"exclusiveMinimum=0,multipleOf=0.01"`
	Reason  string  `json:"reason" jsonschema:"minLength=1,maxLength=200"`
}

// refundTool asks a person before it moves money, and moves it through
// a ledger that deduplicates on the call's idempotency key: that is what
// makes its [tool.EffectIdempotent] promise true, and lets Temporal retry it.
type refundTool struct {
	signature tool.Signature[refundInput, string]
	approval  tool.Schema
	ledger    *ledger
}

func newRefundTool(l *ledger) (refundTool, error) {
	signature, err := tool.NewSignature[refundInput, string]()
	if err != nil {
		return refundTool{}, err
	}
	approval, err := tool.ParseSchema([]byte(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"],"additionalProperties":false}`))
	if err != nil {
		return refundTool{}, err
	}
	return refundTool{signature: signature, approval: approval, ledger: l}, nil
}

func (t refundTool) Definition() tool.Definition {
	return tool.Definition{
		Name:        "refund_order",
		Description: "Refund an order; a person approves every refund.",
		InputSchema: t.signature.InputSchema(),
		Effect:      tool.EffectIdempotent,
	}
}

func (t refundTool) InputValidator() func([]byte) error { return t.signature.InputValidator() }

func (t refundTool) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	in, err := t.signature.Decode(inv)
	if err != nil {
		return tool.Result{}, err
	}
	cents := int64(math.Round(in.Amount * 100))
	c, resumed := inv.Continuation()
	if !resumed {
		prompt, err := json.Marshal(map[string]string{"question": fmt.Sprintf("Refund %s on order %s? Reason: %s", euros(cents), in.OrderID, in.Reason)})
		if err != nil {
			return tool.Result{}, err
		}
		ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: prompt, ResponseSchema: t.approval})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &ir}, nil
	}
	var answer struct {
		Approved bool `json:"approved"`
	}
	if err := json.Unmarshal(c.Response(), &answer); err != nil {
		return tool.Result{}, err
	}
	if !answer.Approved {
		failure, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected, Output: tool.NewTextOutput("The approver declined the refund.")})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{}, failure
	}
	if inv.IdempotencyKey() == "" {
		return tool.Result{}, errors.New("refund_order: no idempotency key")
	}
	ref := t.ledger.refund(inv.IdempotencyKey(), cents)
	out, err := t.signature.Encode(fmt.Sprintf("Refunded %s on order %s, reference %s.", euros(cents), in.OrderID, ref))
	return tool.Result{Output: out}, err
}

// ledger stands for the payments system: one refund per idempotency key.
type ledger struct {
	mu      sync.Mutex
	refunds map[tool.IdempotencyKey]string
}

func newLedger() *ledger { return &ledger{refunds: map[tool.IdempotencyKey]string{}} }

func (l *ledger) refund(key tool.IdempotencyKey, cents int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ref, ok := l.refunds[key]; ok {
		return ref
	}
	sum := sha256.Sum256([]byte(key))
	ref := fmt.Sprintf("RF-%s (%s)", hex.EncodeToString(sum[:3]), euros(cents))
	l.refunds[key] = ref
	return ref
}

func (l *ledger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.refunds)
}

func euros(cents int64) string { return fmt.Sprintf("%d.%02d EUR", cents/100, cents%100) }
