// Package shop holds the shop back office that the adapters' example
// programs serve: an order search over fixed data, and a refund that a
// person approves through a form before money moves through a [Ledger].
// The MCP example server (cmd/agentloop-mcp) and the Temporal refund flow
// (cmd/refund) serve these same tools, so a reader of either sees the same
// data, prompts and results.
//
// The tools are demo data, in a module that is never published: their
// schemas, texts and references may change with the examples that show
// them. Like every example, it uses only the published API.
package shop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/agentcontract/tool"
)

// Names of the tools, as the model calls them.
const (
	SearchOrdersName = "search_orders"
	RefundName       = "refund_order"
)

type ordersInput struct {
	Customer string `json:"customer" jsonschema:"pattern=^C-[0-9]{3}$,description=Customer ID\\, e.g. C-042"`
	Status   string `json:"status,omitempty" jsonschema:"enum=open,enum=shipped,enum=refunded"`
}

type order struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	TotalEUR float64 `json:"total_eur"`
}

type orderList struct {
	Orders []order `json:"orders"`
}

var allOrders = map[string][]order{
	"C-042": {{ID: "A-1001", Status: "open", TotalEUR: 42.5}, {ID: "A-1002", Status: "shipped", TotalEUR: 950}},
	"C-007": {{ID: "A-1003", Status: "refunded", TotalEUR: 19.9}},
}

// SearchOrders returns search_orders, a safe tool that lists a customer's
// orders (C-042 has two, C-007 one, anyone else none), only those in one
// status when the call names it. Its output is details under an output
// schema. The tool is safe for concurrent use.
func SearchOrders() (tool.Tool, error) {
	return tool.NewFunc(tool.FuncConfig{
		Name:        SearchOrdersName,
		Description: "Find a customer's orders, optionally only those in one status.",
		Effect:      tool.EffectSafe,
	}, searchOrders)
}

func searchOrders(_ context.Context, in ordersInput) (orderList, error) {
	out := orderList{Orders: []order{}}
	for _, o := range allOrders[in.Customer] {
		if in.Status == "" || o.Status == in.Status {
			out.Orders = append(out.Orders, o)
		}
	}
	return out, nil
}

type refundInput struct {
	OrderID string  `json:"order_id" jsonschema:"pattern=^A-[0-9]{4}$,description=Order to refund\\, e.g. A-1001"`
	Amount  float64 `json:"amount" jsonschema:"exclusiveMinimum=0,maximum=500,multipleOf=0.01,description=Amount in EUR"`
}

// answer is what the approver fills in: the approval form.
type answer struct {
	Approve bool   `json:"approve" jsonschema:"description=true refunds the amount"`
	Note    string `json:"note,omitempty" jsonschema:"maxLength=200,description=Optional note for the customer"`
}

// Refund is refund_order: it moves money only after a person approved it,
// and only once per idempotency key, because its [Ledger] deduplicates on
// the key; that is what makes its [tool.EffectIdempotent] promise true.
//
// A new call asks for approval: its [tool.InputRequest] has the question
// ("Refund 12.50 EUR on order A-1001?") as a JSON string and [Refund.Form]
// as the response schema, an object {"approve": bool, "note": string}.
// Resumed with approve true, the call refunds and completes with the
// ledger's reference and the note; with approve false it fails as
// rejected and nothing moves. A call without an idempotency key is an
// error before anything is asked.
//
// Make one with [NewRefund]; the zero Refund is not a usable tool. A
// Refund is a value, safe for concurrent use (its Ledger is).
type Refund struct {
	signature tool.Signature[refundInput, string]
	form      tool.Schema
	ledger    *Ledger
}

// NewRefund returns refund_order, moving money through l. l must not be
// nil; the Refund keeps it, so a ledger shared by several Refunds (a tool
// rebuilt by a new worker, say) deduplicates across all of them.
func NewRefund(l *Ledger) (Refund, error) {
	if l == nil {
		return Refund{}, errors.New("shop: NewRefund needs a ledger")
	}
	signature, err := tool.NewSignature[refundInput, string]()
	if err != nil {
		return Refund{}, err
	}
	form, err := tool.SchemaFor[answer]()
	if err != nil {
		return Refund{}, err
	}
	return Refund{signature: signature, form: form, ledger: l}, nil
}

// Form returns the approval form: the response schema of every question
// the refund asks, which an MCP server declares as an elicitation form.
func (t Refund) Form() tool.Schema { return t.form }

// Definition describes refund_order.
func (t Refund) Definition() tool.Definition {
	return tool.Definition{
		Name:        RefundName,
		Description: "Refund part or all of an order (at most 500 EUR). A person approves every refund.",
		InputSchema: t.signature.InputSchema(),
		Effect:      tool.EffectIdempotent,
	}
}

// InputValidator makes admission decode the arguments as strictly as Call
// does.
func (t Refund) InputValidator() func([]byte) error { return t.signature.InputValidator() }

// Call asks for approval on a new call, and refunds or declines when the
// call resumes with the approver's answer.
func (t Refund) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	in, err := t.signature.Decode(inv)
	if err != nil {
		return tool.Result{}, err
	}
	if inv.IdempotencyKey() == "" {
		return tool.Result{}, errors.New("refund_order: no idempotency key to deduplicate on")
	}
	cents := int64(math.Round(in.Amount * 100))
	c, resumed := inv.Continuation()
	if !resumed {
		ir, err := tool.NewInputRequest(tool.InputRequestConfig{
			Prompt:         json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf("Refund %s on order %s?", euros(cents), in.OrderID))),
			ResponseSchema: t.form,
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &ir}, nil
	}
	var a answer
	if err := json.Unmarshal(c.Response(), &a); err != nil {
		return tool.Result{}, fmt.Errorf("refund_order: unreadable answer: %w", err)
	}
	if !a.Approve {
		f, err := tool.NewFailure(tool.FailureConfig{
			Kind:   tool.FailureKindRejected,
			Output: tool.NewTextOutput(fmt.Sprintf("The approver declined the refund of %s on order %s. Nothing was refunded.", euros(cents), in.OrderID)),
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{}, f
	}
	ref := t.ledger.refund(inv.IdempotencyKey())
	text := fmt.Sprintf("Refunded %s on order %s, reference %s.", euros(cents), in.OrderID, ref)
	if a.Note != "" {
		text += " Note: " + a.Note
	}
	out, err := t.signature.Encode(text)
	return tool.Result{Output: out}, err
}

// Ledger stands for a payments system that deduplicates on the idempotency
// key: the first refund of a key gets the next reference (R-0001, R-0002,
// …), a repeated key gets the first one's and moves nothing. The zero
// Ledger is empty and ready to use; a Ledger is safe for concurrent use
// and must not be copied after first use.
type Ledger struct {
	mu   sync.Mutex
	refs map[tool.IdempotencyKey]string
}

// Count returns how many refunds the ledger holds: one per key.
func (l *Ledger) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.refs)
}

func (l *Ledger) refund(key tool.IdempotencyKey) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.refs == nil {
		l.refs = map[tool.IdempotencyKey]string{}
	}
	if ref, ok := l.refs[key]; ok {
		return ref
	}
	ref := fmt.Sprintf("R-%04d", len(l.refs)+1)
	l.refs[key] = ref
	return ref
}

func euros(cents int64) string {
	return fmt.Sprintf("%d.%02d EUR", cents/100, cents%100)
}
