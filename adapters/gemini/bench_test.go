package toolgemini_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// hundredDefinitions are 100 Definitions with the schemas NewFunc derives for
// a flat, a nested and a recursive input, and a hand-written one with
// constraints the JSON path drops. When distinct, every tool's schema
// differs from the others (one member's description names the tool), as in
// a real catalogue, so that nothing learnt from one schema serves another;
// otherwise the four schemas are shared, as by tools NewFunc derives from
// one Go type.
func hundredDefinitions(b *testing.B, distinct bool) []tool.Definition {
	schemas := []string{
		derivedSchema[propFlat](b), derivedSchema[propNested](b), derivedSchema[propTree](b),
		`{"type":"object","properties":{"s":{"type":"string","pattern":"^[a-z]+$","maxLength":8},"e":{"enum":["a","b",null]},
		"v":{"oneOf":[{"type":"integer"},{"type":"string"}]}},"required":["s"],"additionalProperties":false}`,
	}
	defs := make([]tool.Definition, 100)
	for i := range defs {
		name := fmt.Sprintf("tool_%03d", i)
		schema := schemas[i%len(schemas)]
		if distinct {
			schema = strings.Replace(schema, `"properties":{`, `"description":"The input of `+name+`.","properties":{`, 1)
		}
		defs[i] = tool.Definition{Name: name, Description: "A tool of the benchmark.", InputSchema: json.RawMessage(schema)}
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
// at most 10 ms; on a shared machine, read cpu-ns/op): distinct, every
// schema different, the honest case; shared, four schemas shared by the 100
// tools, each lowered once.
func BenchmarkProject100(b *testing.B) {
	benchmarkProject(b, toolgemini.Config{}, nil)
}

// BenchmarkProject100OpenAPI is the same on the OpenAPI path, without the
// recursive schema, which that path refuses.
func BenchmarkProject100OpenAPI(b *testing.B) {
	flat := json.RawMessage(derivedSchema[propFlat](b))
	benchmarkProject(b, toolgemini.Config{OpenAPI: true}, func(defs []tool.Definition, distinct bool) {
		for i := range defs {
			if i%4 != 2 {
				continue
			}
			defs[i].InputSchema = flat
			if distinct {
				defs[i].InputSchema = bytes.Replace(flat, []byte(`"properties":{`), []byte(`"description":"The input of `+defs[i].Name+`.","properties":{`), 1)
			}
		}
	})
}

// benchmarkProject runs New over a registry of the distinct or the shared hundred
// definitions (after adjust, when not nil, has changed them), then Tools.
func benchmarkProject(b *testing.B, config toolgemini.Config, adjust func(defs []tool.Definition, distinct bool)) {
	for _, bc := range []struct {
		name     string
		distinct bool
	}{{"distinct", true}, {"shared", false}} {
		defs := hundredDefinitions(b, bc.distinct)
		if adjust != nil {
			adjust(defs, bc.distinct)
		}
		// A registry, as the other adapters' benchmarks use: its
		// definitions were validated when registered, so New measures the
		// projection alone.
		bindings := make([]tool.Binding, len(defs))
		for i, d := range defs {
			bound, err := tool.Bind(adaptertest.Func{Def: d})
			require.NoError(b, err)
			bindings[i] = bound
		}
		reg, err := tool.NewRegistry(bindings...)
		require.NoError(b, err)
		config.Registry = reg
		b.Run(bc.name, func(b *testing.B) {
			adaptertest.LoopCPU(b, func() {
				tools, err := toolgemini.New(config)
				if err != nil || len(tools.Tools()) != 1 {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkCall measures what the adapter adds to one dispatched call of
// search_orders — the call read from a decoded Gemini response and the
// outcome turned into the function-response content — against the dispatch
// of that call (see adaptertest.Overhead). Target: overhead-% at most 20.
//
// sdk-values is the bound below it: only the values the SDK's types make
// every adapter allocate (the call with its argument text, the content, its
// part and function response, the response map, a copy of the details),
// with no logic; what adapter costs beyond sdk-values is this package's.
func BenchmarkCall(b *testing.B) {
	reg := newRegistry(b)
	d := adaptertest.Dispatcher(b, reg)
	var resp genai.GenerateContentResponse
	if err := json.Unmarshal([]byte(`{"candidates":[{"content":{"role":"model","parts":[
		{"functionCall":{"id":"fc-1","name":"search_orders","args":{"customer":"c-42","limit":2}}}]}}]}`), &resp); err != nil {
		b.Fatal(err)
	}
	call := dispatch.Call{ID: "fc-1", Request: tool.Request{Name: "search_orders", Arguments: `{"customer":"c-42","limit":2}`}}
	outcome, dispatchOnly := adaptertest.DispatchBase(b, d, call)
	b.Run("adapter", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			turn, err := toolgemini.NewTurn(&resp)
			if err != nil {
				b.Fatal(err)
			}
			calls := turn.Calls()
			if _, err := turn.Reply([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != call.Request {
				b.Fatal(calls, err)
			}
		})
	})
	fc := resp.Candidates[0].Content.Parts[0].FunctionCall
	b.Run("sdk-values", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			calls := []dispatch.Call{{ID: fc.ID, Request: tool.Request{Name: fc.Name, Arguments: strings.Clone(call.Request.Arguments)}}}
			reply := &struct {
				content  genai.Content
				parts    [1]*genai.Part
				part     genai.Part
				response genai.FunctionResponse
				details  json.RawMessage
			}{}
			reply.details = bytes.Clone(outcome.Output.Details)
			reply.response = genai.FunctionResponse{ID: outcome.CallID, Name: outcome.Tool, Response: map[string]any{"output": &reply.details}}
			reply.part.FunctionResponse = &reply.response
			reply.parts[0] = &reply.part
			reply.content = genai.Content{Role: genai.RoleUser, Parts: reply.parts[:]}
			sink, sinkCalls = &reply.content, calls
		})
	})
}

// sink and sinkCalls keep what sdk-values makes on the heap, as the
// adapter's results are.
var (
	sink      *genai.Content
	sinkCalls []dispatch.Call
)
