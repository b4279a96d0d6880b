package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/agentcontract/tool"
)

// refundLimitEUR is the largest refund the policy lets the agent propose;
// anything above it is for a person to handle outside the agent.
const refundLimitEUR = 500

type refundInput struct {
	OrderID string  `json:"order_id" jsonschema:"pattern=^A-[0-9]{4}$,description=Order to refund\\, e.g. A-1001"`
	Amount  float64 `json:"amount" jsonschema:"exclusiveMinimum=0,multipleOf=0.01,description=Amount to refund in EUR"`
	Reason  string  `json:"reason" jsonschema:"minLength=1,maxLength=200,description=Why the customer is refunded"`
}

// refundState is the checkpoint refund_order keeps in its InputRequest:
// what the approver was shown. On resumption the tool checks it against
// the arguments, because the state made a round trip through storage.
type refundState struct {
	OrderID     string `json:"order_id"`
	AmountCents int64  `json:"amount_cents"`
}

// refundTool is written by hand around a Signature, instead of with
// NewFunc, because it needs the call itself: its IdempotencyKey, which the
// ledger deduplicates on, and its Continuation, which carries the
// approver's answer.
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
	approval, err := tool.ParseSchema([]byte(`{"type":"boolean","description":"true approves the refund, false declines it"}`))
	if err != nil {
		return refundTool{}, err
	}
	return refundTool{signature: signature, approval: approval, ledger: l}, nil
}

// Definition describes refund_order. EffectIdempotent is an honest promise
// only because the ledger deduplicates on the idempotency key.
func (t refundTool) Definition() tool.Definition {
	return tool.Definition{
		Name:        "refund_order",
		Description: "Refund part or all of an order to the customer. A person approves every refund.",
		InputSchema: t.signature.InputSchema(),
		Effect:      tool.EffectIdempotent,
	}
}

// InputValidator makes admission decode the arguments strictly, as the
// Signature will in Call.
func (t refundTool) InputValidator() func([]byte) error {
	return t.signature.InputValidator()
}

// Call asks for approval on a new call and refunds or declines when the
// call resumes with the approver's answer.
func (t refundTool) Call(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
	in, err := t.signature.Decode(invocation)
	if err != nil {
		return tool.Result{}, err
	}
	key := invocation.IdempotencyKey()
	if key == "" {
		return tool.Result{}, errors.New("refund_order: refusing to move money without an idempotency key")
	}
	cents := int64(math.Round(in.Amount * 100))

	continuation, resumed := invocation.Continuation()
	if !resumed {
		return t.askApproval(in, cents)
	}

	var state refundState
	if err := json.Unmarshal(continuation.State(), &state); err != nil {
		return tool.Result{}, fmt.Errorf("refund_order: unreadable checkpoint state: %w", err)
	}
	if state.OrderID != in.OrderID || state.AmountCents != cents {
		return tool.Result{}, errors.New("refund_order: checkpoint state does not match the call's arguments")
	}
	var approved bool
	if err := json.Unmarshal(continuation.Response(), &approved); err != nil {
		return tool.Result{}, fmt.Errorf("refund_order: unreadable answer: %w", err)
	}
	if !approved {
		failure, err := tool.NewFailure(tool.FailureConfig{
			Kind:   tool.FailureKindRejected,
			Output: tool.NewTextOutput(fmt.Sprintf("The approver declined the refund of %s on order %s. Nothing was refunded.", euros(cents), in.OrderID)),
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{}, failure
	}
	reference := t.ledger.refund(key, in.OrderID, cents)
	output, err := t.signature.Encode(fmt.Sprintf("Refunded %s on order %s, reference %s.", euros(cents), in.OrderID, reference))
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Output: output}, nil
}

// askApproval suspends the call before any effect: the prompt says what
// would happen, the response schema says an answer is a boolean, and the
// state is what the tool wants back.
func (t refundTool) askApproval(in refundInput, cents int64) (tool.Result, error) {
	prompt, err := json.Marshal(map[string]any{
		"question": fmt.Sprintf("Approve a refund of %s on order %s?", euros(cents), in.OrderID),
		"reason":   in.Reason,
	})
	if err != nil {
		return tool.Result{}, err
	}
	state, err := json.Marshal(refundState{OrderID: in.OrderID, AmountCents: cents})
	if err != nil {
		return tool.Result{}, err
	}
	request, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:            prompt,
		ResponseSchema:    t.approval,
		ContinuationState: state,
	})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{InputRequest: &request}, nil
}

// refundLimit is the Authorizer of refund_order's Guard: it refuses any
// refund above max EUR. It sees only the admitted arguments, which already
// passed the schema, so a decoding error here is a defect, not a decision.
type refundLimit struct {
	max float64
	// note, when set, is told the reason of every decision, for the
	// runtime's log.
	note func(string)
}

// Authorize permits refunds up to the limit.
func (l refundLimit) Authorize(_ context.Context, authorization tool.Authorization) (bool, error) {
	var args struct {
		Amount float64 `json:"amount"`
	}
	if err := json.Unmarshal(authorization.Arguments(), &args); err != nil {
		return false, fmt.Errorf("refund limit: %w", err)
	}
	cents := int64(math.Round(args.Amount * 100))
	allowed := args.Amount <= l.max
	if l.note != nil {
		if allowed {
			l.note(fmt.Sprintf("policy permits: %s is within the %s limit", euros(cents), euros(int64(l.max*100))))
		} else {
			l.note(fmt.Sprintf("policy refuses: %s is over the %s limit", euros(cents), euros(int64(l.max*100))))
		}
	}
	return allowed, nil
}

// ledger stands for the payments system behind refund_order. It lives
// outside the registry, so it survives the simulated restart, and it
// deduplicates refunds by idempotency key, which is what makes the
// EffectIdempotent promise true.
type ledger struct {
	mu      sync.Mutex
	refunds map[tool.IdempotencyKey]ledgerEntry
}

type ledgerEntry struct {
	Reference string
	OrderID   string
	Cents     int64
}

func newLedger() *ledger {
	return &ledger{refunds: make(map[tool.IdempotencyKey]ledgerEntry)}
}

// refund records a refund once per key and returns its reference; a repeated
// key returns the first refund's reference and moves no money.
func (l *ledger) refund(key tool.IdempotencyKey, orderID string, cents int64) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.refunds[key]; ok {
		return e.Reference
	}
	sum := sha256.Sum256([]byte(key))
	e := ledgerEntry{Reference: "RF-" + hex.EncodeToString(sum[:4]), OrderID: orderID, Cents: cents}
	l.refunds[key] = e
	return e.Reference
}

// entries returns the recorded refunds, sorted by reference.
func (l *ledger) entries() []ledgerEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]ledgerEntry, 0, len(l.refunds))
	for _, e := range l.refunds {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Reference < out[j].Reference })
	return out
}

func euros(cents int64) string {
	return fmt.Sprintf("%d.%02d EUR", cents/100, cents%100)
}
