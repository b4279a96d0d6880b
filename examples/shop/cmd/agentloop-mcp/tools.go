package main

// The tools this server serves: a small shop back office with a weather
// lookup, an order search, a refund that a person approves, and a report
// export that reports progress and returns an attachment. They stand for
// the agentloop example's tools. The order search and the refund are
// package shop's, which the Temporal example (cmd/refund) serves too.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
	"github.com/agentcontract/tool/examples/shop"
)

// newTools builds every tool, binds it with [tool.Recover] and registers
// it. It returns the [tool.Registry] and the MCP options of the tools
// ([toolmcp.ToolOptions]): the refund's approval form, and which tools reach
// only this shop's own systems.
func newTools() (*tool.Registry, map[string]toolmcp.ToolOptions, error) {
	weather, err := tool.NewFunc(tool.FuncConfig{
		Name:        "get_weather",
		Description: "Current weather in a city.",
		Effect:      tool.EffectSafe,
	}, getWeather)
	if err != nil {
		return nil, nil, err
	}
	orders, err := shop.SearchOrders()
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
	refund, err := shop.NewRefund(&shop.Ledger{})
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
		"get_weather":         {Title: "Weather"},
		shop.SearchOrdersName: {Title: "Search orders", ClosedWorld: true},
		"export_report":       {Title: "Export the sales report", ClosedWorld: true},
		shop.RefundName:       {Title: "Refund an order", ClosedWorld: true, Additive: true, ResponseSchemas: []tool.Schema{refund.Form()}},
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
