// Package demo holds the tools the example MCP server serves: a small shop
// back office with a weather lookup, an order search, a refund that a
// person approves, and a report export that reports progress and returns
// an attachment. They stand for the agentloop example's tools.
package demo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/internal/errprefix"
)

// New builds every tool, binds it with [tool.Recover] and registers it. It
// returns the [tool.Registry] and the MCP options of the tools
// ([toolmcp.ToolOptions]): the refund's approval form, and which tools reach
// only this shop's own systems.
func New() (*tool.Registry, map[string]toolmcp.ToolOptions, error) {
	weather, err := tool.NewFunc(tool.FuncConfig{
		Name:        "get_weather",
		Description: "Current weather in a city.",
		Effect:      tool.EffectSafe,
	}, getWeather)
	if err != nil {
		return nil, nil, err
	}
	orders, err := tool.NewFunc(tool.FuncConfig{
		Name:        "search_orders",
		Description: "Find a customer's orders, optionally only those in one status.",
		Effect:      tool.EffectSafe,
	}, searchOrders)
	if err != nil {
		return nil, nil, err
	}
	export, err := tool.NewFunc(tool.FuncConfig{
		Name:        "export_report",
		Description: "Export the monthly sales report as CSV.",
		Effect:      tool.EffectSafe,
	}, exportReport)
	if err != nil {
		return nil, nil, err
	}
	refund, err := newRefund(&ledger{})
	if err != nil {
		return nil, nil, err
	}
	reg := &tool.Registry{}
	for _, t := range []tool.Tool{weather, orders, export, refund} {
		b, err := tool.Bind(t, tool.Recover)
		if err != nil {
			return nil, nil, err
		}
		if err := reg.Register(b); err != nil {
			return nil, nil, err
		}
	}
	options := map[string]toolmcp.ToolOptions{
		"get_weather":   {Title: "Weather"},
		"search_orders": {Title: "Search orders", ClosedWorld: true},
		"export_report": {Title: "Export the sales report", ClosedWorld: true},
		"refund_order":  {Title: "Refund an order", ClosedWorld: true, Additive: true, ResponseSchemas: []tool.Schema{refund.form}},
	}
	return reg, options, nil
}

type weatherInput struct {
	City string `json:"city" jsonschema:"minLength=1,description=City name\\, e.g. Oslo"`
}

type weather struct {
	City       string  `json:"city"`
	TempC      float64 `json:"temp_c"`
	Conditions string  `json:"conditions"`
}

func getWeather(_ context.Context, in weatherInput) (weather, error) {
	known := map[string]weather{
		"oslo":   {City: "Oslo", TempC: -3.5, Conditions: "snow"},
		"lisbon": {City: "Lisbon", TempC: 17, Conditions: "sunny"},
		"lima":   {City: "Lima", TempC: 22, Conditions: "overcast"},
	}
	w, ok := known[strings.ToLower(in.City)]
	if !ok {
		return weather{}, failed(fmt.Sprintf("No weather station for %q; try Oslo, Lisbon or Lima.", in.City), errors.New("unknown city"))
	}
	return w, nil
}

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

func searchOrders(_ context.Context, in ordersInput) (orderList, error) {
	out := orderList{Orders: []order{}}
	for _, o := range allOrders[in.Customer] {
		if in.Status == "" || o.Status == in.Status {
			out.Orders = append(out.Orders, o)
		}
	}
	return out, nil
}

type exportInput struct {
	Month string `json:"month" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}$,description=Month as YYYY-MM"`
}

func exportReport(ctx context.Context, in exportInput) (tool.Output, error) {
	steps := []string{"querying orders", "aggregating totals", "rendering CSV"}
	for i, step := range steps {
		if err := ctx.Err(); err != nil {
			return tool.Output{}, err
		}
		_ = tool.ReportProgress(ctx, tool.Progress{Completed: float64(i + 1), Total: float64(len(steps)), Message: step})
	}
	csv := "order_id,status,total_eur\nA-1001,open,42.50\nA-1002,shipped,950.00\nA-1003,refunded,19.90\n"
	return tool.Output{Content: []tool.Block{
		tool.NewTextBlock(fmt.Sprintf("Sales report for %s: 3 orders, 1012.40 EUR gross. The CSV is attached.", in.Month)),
		tool.NewMediaBlock("text/csv", []byte(csv)),
	}}, nil
}

// failed is a definite failure with a public message for the model.
func failed(message string, cause error) error {
	f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput(message), Cause: cause})
	if err != nil {
		return err
	}
	return f
}

type refundInput struct {
	OrderID string  `json:"order_id" jsonschema:"pattern=^A-[0-9]{4}$,description=Order to refund\\, e.g. A-1001"`
	Amount  float64 `json:"amount" jsonschema:"exclusiveMinimum=0,maximum=500,multipleOf=0.01,description=Amount in EUR"`
}

// refundAnswer is what the approver fills in: the elicitation form.
type refundAnswer struct {
	Approve bool   `json:"approve" jsonschema:"description=true refunds the amount"`
	Note    string `json:"note,omitempty" jsonschema:"maxLength=200,description=Optional note for the customer"`
}

// refund moves money only after a person approved it, and only once per
// idempotency key: the ledger deduplicates on the key, which is why its
// Effect may be [tool.EffectIdempotent]. It implements [tool.Tool] around a
// [tool.Signature] because it needs the call's key
// ([tool.Invocation.IdempotencyKey]) and [tool.Continuation].
type refund struct {
	signature tool.Signature[refundInput, string]
	form      tool.Schema
	ledger    *ledger
}

func newRefund(l *ledger) (refund, error) {
	signature, err := tool.NewSignature[refundInput, string]()
	if err != nil {
		return refund{}, err
	}
	form, err := tool.SchemaFor[refundAnswer]()
	if err != nil {
		return refund{}, err
	}
	return refund{signature: signature, form: form, ledger: l}, nil
}

func (t refund) Definition() tool.Definition {
	return tool.Definition{
		Name:        "refund_order",
		Description: "Refund part or all of an order (at most 500 EUR). A person approves every refund.",
		InputSchema: t.signature.InputSchema(),
		Effect:      tool.EffectIdempotent,
	}
}

func (t refund) InputValidator() func([]byte) error { return t.signature.InputValidator() }

func (t refund) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
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
	var answer refundAnswer
	if err := json.Unmarshal(c.Response(), &answer); err != nil {
		return tool.Result{}, errprefix.Part("refund_order: unreadable answer: %w", err)
	}
	if !answer.Approve {
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
	if answer.Note != "" {
		text += " Note: " + answer.Note
	}
	out, err := t.signature.Encode(text)
	return tool.Result{Output: out}, err
}

// ledger stands for a payments system that deduplicates on the key.
type ledger struct {
	mu   sync.Mutex
	refs map[tool.IdempotencyKey]string
}

func (l *ledger) refund(key tool.IdempotencyKey) string {
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
