package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcontract/tool"
)

// newRegistry builds every tool of the demo, binds it and registers it. It
// is called once at start-up and again after the simulated restart, so it
// must build everything from scratch: only the ledger, which stands for an
// external payments system, survives. note receives the refund policy's
// reasons for the runtime's log; it may be nil.
func newRegistry(ledger *ledger, note func(string)) (*tool.Registry, error) {
	weather, err := newWeatherTool()
	if err != nil {
		return nil, err
	}
	orders, err := newSearchOrdersTool()
	if err != nil {
		return nil, err
	}
	refund, err := newRefundTool(ledger)
	if err != nil {
		return nil, err
	}
	export, err := newExportReportTool()
	if err != nil {
		return nil, err
	}
	flaky, err := newFlakyLookupTool()
	if err != nil {
		return nil, err
	}
	guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: refundLimit{max: refundLimitEUR, note: note}})
	if err != nil {
		return nil, err
	}

	var bindings []tool.Binding
	for _, b := range []struct {
		t           tool.Tool
		middlewares []tool.CallMiddleware
	}{
		{weather, []tool.CallMiddleware{tool.Recover}},
		{orders, []tool.CallMiddleware{tool.Recover}},
		// Recover first, so that it is outermost and also covers a panic
		// in the Guard's Authorizer.
		{refund, []tool.CallMiddleware{tool.Recover, guard.Call}},
		{export, []tool.CallMiddleware{tool.Recover}},
		{flaky, []tool.CallMiddleware{tool.Recover}},
	} {
		bound, err := tool.Bind(b.t, b.middlewares...)
		if err != nil {
			return nil, err
		}
		bindings = append(bindings, bound)
	}
	return tool.NewRegistry(bindings...)
}

// get_weather: a safe tool with text output.

type weatherInput struct {
	City string `json:"city" jsonschema:"description=City name\\, e.g. Lisbon,minLength=1,maxLength=80"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit,description=Temperature unit; celsius when omitted"`
}

// forecasts is the demo's weather service: fixed data, so the transcript is
// the same on every run.
var forecasts = map[string]struct {
	celsius int
	sky     string
	windKMH int
}{
	"lisbon":  {21, "clear sky", 12},
	"oslo":    {4, "light snow", 20},
	"nairobi": {24, "scattered clouds", 9},
}

func newWeatherTool() (tool.Tool, error) {
	return tool.NewFunc(tool.FuncConfig{
		Name:        "get_weather",
		Description: "Current weather for a city.",
		Effect:      tool.EffectSafe,
	}, func(_ context.Context, in weatherInput) (string, error) {
		f, ok := forecasts[strings.ToLower(in.City)]
		if !ok {
			return fmt.Sprintf("No weather station reports for %s.", in.City), nil
		}
		temp, unit := f.celsius, "°C"
		if in.Unit == "fahrenheit" {
			temp, unit = f.celsius*9/5+32, "°F"
		}
		return fmt.Sprintf("%s: %d%s, %s, wind %d km/h.", in.City, temp, unit, f.sky, f.windKMH), nil
	})
}

// search_orders: a safe tool with structured output; the Out struct becomes
// the Output's Details and declares the tool's output schema.

type searchOrdersInput struct {
	Customer string `json:"customer" jsonschema:"format=email,description=Customer e-mail address"`
	Status   string `json:"status,omitempty" jsonschema:"enum=open,enum=shipped,enum=refunded"`
	Limit    int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=20,description=At most this many orders; 5 when omitted"`
}

type order struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	TotalEUR float64 `json:"total_eur"`
	Item     string  `json:"item"`
}

type searchOrdersOutput struct {
	Customer string  `json:"customer"`
	Orders   []order `json:"orders"`
}

var ordersByCustomer = map[string][]order{
	"ana@example.com": {
		{ID: "A-1001", Status: "open", TotalEUR: 42.50, Item: "kettle"},
		{ID: "A-1002", Status: "shipped", TotalEUR: 950.00, Item: "espresso machine"},
		{ID: "A-1003", Status: "refunded", TotalEUR: 19.90, Item: "descaler"},
	},
}

func newSearchOrdersTool() (tool.Tool, error) {
	return tool.NewFunc(tool.FuncConfig{
		Name:        "search_orders",
		Description: "Find a customer's orders, newest first.",
		Effect:      tool.EffectSafe,
	}, func(_ context.Context, in searchOrdersInput) (searchOrdersOutput, error) {
		limit := in.Limit
		if limit == 0 {
			limit = 5
		}
		out := searchOrdersOutput{Customer: in.Customer, Orders: []order{}}
		for _, o := range ordersByCustomer[strings.ToLower(in.Customer)] {
			if in.Status != "" && o.Status != in.Status {
				continue
			}
			if len(out.Orders) == limit {
				break
			}
			out.Orders = append(out.Orders, o)
		}
		return out, nil
	})
}

// export_report: a long tool that reports progress and returns text and a
// media block (a CSV file).

type exportReportInput struct {
	Month string `json:"month" jsonschema:"pattern=^[0-9]{4}-(0[1-9]|1[0-2])$,description=Month to report on\\, as YYYY-MM"`
}

func newExportReportTool() (tool.Tool, error) {
	return tool.NewFunc(tool.FuncConfig{
		Name:        "export_report",
		Description: "Export the monthly sales report as CSV.",
		Effect:      tool.EffectSafe,
	}, func(ctx context.Context, in exportReportInput) (tool.Output, error) {
		steps := []string{"querying orders", "aggregating totals", "rendering CSV", "done"}
		for i, step := range steps {
			if err := ctx.Err(); err != nil {
				return tool.Output{}, err
			}
			// Progress is observation only: a reporter's error does not
			// change what this tool returns.
			_ = tool.ReportProgress(ctx, tool.Progress{
				Completed: float64(i + 1),
				Total:     float64(len(steps)),
				Message:   step,
			})
		}
		csv := "order_id,status,total_eur\n" +
			"A-1001,open,42.50\n" +
			"A-1002,shipped,950.00\n" +
			"A-1003,refunded,19.90\n"
		return tool.Output{Content: []tool.Block{
			tool.NewTextBlock(fmt.Sprintf("Sales report for %s: 3 orders, 1012.40 EUR gross, 19.90 EUR refunded. The CSV is attached.", in.Month)),
			tool.NewMediaBlock("text/csv", []byte(csv)),
		}}, nil
	})
}

// flaky_lookup: a safe tool whose backend is down. Binding.Call turns its
// ordinary error into a definite Failure, because running a safe tool
// changed nothing.

type flakyLookupInput struct {
	SKU string `json:"sku" jsonschema:"minLength=1"`
}

func newFlakyLookupTool() (tool.Tool, error) {
	return tool.NewFunc(tool.FuncConfig{
		Name:        "flaky_lookup",
		Description: "Look up the stock level of a product in the warehouse.",
		Effect:      tool.EffectSafe,
	}, func(_ context.Context, in flakyLookupInput) (int, error) {
		return 0, errors.New("warehouse API: dial tcp 10.0.3.7:443: connection refused")
	})
}
