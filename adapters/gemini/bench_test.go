package toolgemini_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/adaptertest"
	"google.golang.org/genai"
)

// hundredDefinitions are 100 Definitions with the schemas NewFunc derives for
// a flat, a nested and a recursive input, and a hand-written one with
// constraints the JSON path drops.
func hundredDefinitions(b *testing.B) []tool.Definition {
	schemas := []string{
		derivedSchema[propFlat](b), derivedSchema[propNested](b), derivedSchema[propTree](b),
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]+$","maxLength":8},"e":{"enum":["a","b",null]},
		"v":{"oneOf":[{"type":"integer"},{"type":"string"}]}},"required":["s"],"additionalProperties":false}`,
	}
	defs := make([]tool.Definition, 100)
	for i := range defs {
		defs[i] = tool.Definition{Name: fmt.Sprintf("tool_%03d", i), Description: "A tool of the benchmark.",
			InputSchema: json.RawMessage(schemas[i%len(schemas)])}
	}
	return defs
}

func derivedSchema[T any](b *testing.B) string {
	s, err := tool.SchemaFor[T]()
	if err != nil {
		b.Fatal(err)
	}
	return string(s.JSON())
}

// BenchmarkProject100 projects 100 tools onto parametersJsonSchema (target:
// at most 10 ms).
func BenchmarkProject100(b *testing.B) {
	defs := hundredDefinitions(b)
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := toolgemini.Project(defs, toolgemini.Config{}); err != nil {
			b.Fatal(err)
		}
	}
}

// reportCPU reports the process's CPU time per iteration as cpu-ns/op:
// call it before the loop and defer what it returns.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// BenchmarkProject100OpenAPI is the same on the OpenAPI path, without the
// recursive schema, which that path refuses.
func BenchmarkProject100OpenAPI(b *testing.B) {
	defs := hundredDefinitions(b)
	for i := range defs {
		if i%4 == 2 {
			defs[i].InputSchema = json.RawMessage(derivedSchema[propFlat](b))
		}
	}
	defer reportCPU(b)()
	for b.Loop() {
		if _, err := toolgemini.Project(defs, toolgemini.Config{OpenAPI: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCall measures what the adapter adds to one dispatched call of
// search_orders — the call read from a decoded Gemini response and the
// outcome turned into the function-response content — against the dispatch
// of that call (see adaptertest.Overhead). Target: overhead-% at most 20.
func BenchmarkCall(b *testing.B) {
	reg := newRegistry(b)
	d := newDispatcher(b, reg)
	ctx := context.Background()
	var resp genai.GenerateContentResponse
	if err := json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":[
		{"functionCall":{"id":"fc-1","name":"search_orders","args":{"customer":"c-42","limit":2}}}]}}]}`), &resp); err != nil {
		b.Fatal(err)
	}
	call := dispatch.Call{ID: "fc-1", Request: tool.Request{Name: "search_orders", Arguments: `{"customer":"c-42","limit":2}`}}
	outcome := d.Run(ctx, call)
	if outcome.Kind != dispatch.KindCompleted {
		b.Fatal(outcome.Kind, outcome.Err)
	}
	adaptertest.Overhead(b, func() {
		if o := d.Run(ctx, call); o.Kind != dispatch.KindCompleted {
			b.Fatal(o.Kind, o.Err)
		}
	}, func() {
		turn, err := toolgemini.NewTurn(&resp)
		if err != nil {
			b.Fatal(err)
		}
		calls := turn.Calls()
		if _, err := turn.Reply([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != call.Request {
			b.Fatal(calls, err)
		}
	})
}
