package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentcontract/tool"
)

// The tools: the demo's kind, with fixed data so that a run is easy to
// follow. get_weather and search_orders are safe reads; refund_order moves
// money, behind a policy that refuses refunds over refundLimitEUR, and fails
// definitely on an order refunded already; render_chart returns an image.

const refundLimitEUR = 100

type weatherInput struct {
	City string `json:"city" jsonschema:"description=City name such as Lisbon,minLength=1,maxLength=80"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit,description=Temperature unit; celsius when omitted"`
}

type ordersInput struct {
	Customer string `json:"customer" jsonschema:"description=Customer ID such as c-42,pattern=^c-[0-9]+$"`
	Limit    int    `json:"limit,omitempty" jsonschema:"description=At most this many orders; 5 when omitted,minimum=1,maximum=20"`
}

type order struct {
	ID       string  `json:"id"`
	TotalEUR float64 `json:"total_eur"`
	Status   string  `json:"status"`
}

type refundInput struct {
	Order     string  `json:"order" jsonschema:"description=Order ID such as o-7"`
	AmountEUR float64 `json:"amount_eur" jsonschema:"description=Amount to refund in euros,minimum=0.01"`
}

type chartInput struct {
	Order string `json:"order" jsonschema:"description=Order ID such as o-7"`
}

var orders = map[string][]order{
	"c-42": {{ID: "o-7", TotalEUR: 42.5, Status: "delivered"}, {ID: "o-9", TotalEUR: 180, Status: "refunded"}},
}

// ledger records refunds; it stands for a payments system.
type ledger struct {
	mu       sync.Mutex
	refunded map[string]bool
}

var errAlreadyRefunded = errors.New("ledger: refund exists")

func newRegistry(l *ledger) (*tool.Registry, error) {
	weather, err := tool.NewFunc(tool.FuncConfig{Name: "get_weather", Description: "Current weather of a city.", Effect: tool.EffectSafe},
		func(_ context.Context, in weatherInput) (string, error) {
			c := 21
			if strings.EqualFold(in.City, "oslo") {
				c = 4
			}
			if in.Unit == "fahrenheit" {
				return fmt.Sprintf("%s: %d°F, clear sky", in.City, c*9/5+32), nil
			}
			return fmt.Sprintf("%s: %d°C, clear sky", in.City, c), nil
		})
	if err != nil {
		return nil, err
	}
	search, err := tool.NewFunc(tool.FuncConfig{Name: "search_orders", Description: "Orders of a customer, newest first.", Effect: tool.EffectSafe},
		func(_ context.Context, in ordersInput) ([]order, error) {
			found := orders[in.Customer]
			limit := in.Limit
			if limit == 0 {
				limit = 5
			}
			return append([]order{}, found[:min(limit, len(found))]...), nil
		})
	if err != nil {
		return nil, err
	}
	refund, err := tool.NewFunc(tool.FuncConfig{Name: "refund_order", Description: "Refund part or all of an order to the customer's card. Refunds over 100 EUR need a person."},
		func(_ context.Context, in refundInput) (string, error) {
			l.mu.Lock()
			defer l.mu.Unlock()
			if in.Order == "o-9" || l.refunded[in.Order] {
				return "", definite("Order "+in.Order+" was refunded already; nothing was paid.", errAlreadyRefunded)
			}
			l.refunded[in.Order] = true
			return fmt.Sprintf("Refunded %.2f EUR on order %s.", in.AmountEUR, in.Order), nil
		})
	if err != nil {
		return nil, err
	}
	chart, err := tool.NewFunc(tool.FuncConfig{Name: "render_chart", Description: "A chart of an order's deliveries, as a PNG image.", Effect: tool.EffectSafe},
		func(_ context.Context, in chartInput) (tool.Output, error) {
			return tool.Output{Content: []tool.Block{tool.NewTextBlock("Deliveries of " + in.Order + ":"), tool.NewMediaBlock("image/png", chartPNG)}}, nil
		})
	if err != nil {
		return nil, err
	}
	guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: refundLimit{}})
	if err != nil {
		return nil, err
	}
	var bindings []tool.Binding
	for _, b := range []struct {
		t           tool.Tool
		middlewares []tool.CallMiddleware
	}{
		{weather, []tool.CallMiddleware{tool.Recover}},
		{search, []tool.CallMiddleware{tool.Recover}},
		{refund, []tool.CallMiddleware{tool.Recover, guard.Call}},
		{chart, []tool.CallMiddleware{tool.Recover}},
	} {
		bound, err := tool.Bind(b.t, b.middlewares...)
		if err != nil {
			return nil, err
		}
		bindings = append(bindings, bound)
	}
	return tool.NewRegistry(bindings...)
}

// definite is a Failure: the outcome is certain and its text is for the model.
func definite(public string, cause error) error {
	f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput(public), Cause: cause})
	if err != nil {
		return err
	}
	return f
}

// refundLimit refuses refunds over refundLimitEUR.
type refundLimit struct{}

func (refundLimit) Authorize(_ context.Context, a tool.Authorization) (bool, error) {
	var args refundInput
	if err := json.Unmarshal(a.Arguments(), &args); err != nil {
		return false, fmt.Errorf("refund limit: %w", err)
	}
	return args.AmountEUR <= refundLimitEUR, nil
}

// chartPNG is the chart render_chart returns: a 32×16 bar chart, kept as
// a file so that its bytes do not depend on the Go release's PNG encoder.
//
//go:embed chart.png
var chartPNG []byte
