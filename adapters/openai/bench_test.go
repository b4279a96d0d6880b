package toolopenai_test

import (
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

// BenchmarkProject100Tools: New in strict mode over a registry of 100
// tools, then the tool parameters of one API. Target: at most 10 ms; on a
// shared machine, read cpu-ns/op. The tools of chat and responses all have
// schemas of their own, as in a real catalogue; those of shared (chat) share
// one input schema, as tools NewFunc derives from one Go type do, which New
// lowers once.
func BenchmarkProject100Tools(b *testing.B) {
	distinct := adaptertest.DistinctTools(b, 100)
	shared := adaptertest.Tools(b, 100)
	for _, bc := range []struct {
		name  string
		reg   *tool.Registry
		count func(*toolopenai.Tools) int
	}{
		{"chat", distinct, func(t *toolopenai.Tools) int { return len(t.ChatTools()) }},
		{"responses", distinct, func(t *toolopenai.Tools) int { return len(t.ResponseTools()) }},
		{"shared", shared, func(t *toolopenai.Tools) int { return len(t.ChatTools()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			adaptertest.LoopCPU(b, func() {
				tools, err := toolopenai.New(toolopenai.Config{Registry: bc.reg, Strict: true})
				if err != nil || bc.count(tools) != 100 || len(tools.Lints()) != 0 {
					b.Fatal(err, tools.Lints())
				}
			})
		})
	}
}

// BenchmarkCall measures what the adapter adds to one dispatched call —
// the model's call turned into a request (a null removed) and the outcome
// into the answer the API takes — against the dispatch of that call (see
// adaptertest.Overhead). Target: overhead-% at most 20.
//
// The sdk-values benchmarks are the bound below each API: only the values
// the SDK's types make every adapter allocate (the call with its argument
// text, the answer's message or item and its text), with no logic; what
// chat and responses cost beyond them is this package's.
func BenchmarkCall(b *testing.B) {
	reg := adaptertest.Registry(b)
	d := adaptertest.Dispatcher(b, reg)
	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: true})
	require.NoError(b, err)
	sent := `{"customer":"ana@example.com","status":"open","limit":null}`
	msg := chatMessage(b, "search_orders", sent)
	canonical := chatCalls(b, tools, msg)[0]
	require.Equal(b, `{"customer":"ana@example.com","status":"open"}`, canonical.Request.Arguments)

	outcome, dispatchOnly := adaptertest.DispatchBase(b, d, canonical)
	b.Run("chat", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			calls, _ := tools.ChatCalls(msg)
			if _, err := toolopenai.ChatResults([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != canonical.Request {
				b.Fatal(calls, err)
			}
		})
	})
	b.Run("chat-sdk-values", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			tc := &msg.ToolCalls[0]
			sinkCalls = []dispatch.Call{{ID: tc.ID, Request: tool.Request{Name: tc.Function.Name, Arguments: strings.Clone(canonical.Request.Arguments)}}}
			answer := &struct {
				msgs  [1]openai.ChatCompletionMessageParamUnion
				tools [1]openai.ChatCompletionToolMessageParam
			}{}
			answer.tools[0].Content.OfString = openai.String(string(outcome.Output.Details))
			answer.tools[0].ToolCallID = outcome.CallID
			answer.msgs[0].OfTool = &answer.tools[0]
			sinkChat = answer.msgs[:]
		})
	})
	resp := responseWithCall(b, "search_orders", sent)
	b.Run("responses", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			calls, _ := tools.ResponseCalls(resp)
			if _, err := toolopenai.ResponseResults([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != canonical.Request {
				b.Fatal(calls, err)
			}
		})
	})
	b.Run("responses-sdk-values", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			item := &resp.Output[0]
			sinkCalls = []dispatch.Call{{ID: item.CallID, Request: tool.Request{Name: item.Name, Arguments: strings.Clone(canonical.Request.Arguments)}}}
			answer := &struct {
				items   [1]responses.ResponseInputItemUnionParam
				outputs [1]responses.ResponseInputItemFunctionCallOutputParam
			}{}
			answer.outputs[0].Output.OfString = openai.String(string(outcome.Output.Details))
			answer.outputs[0].CallID = openai.String(outcome.CallID)
			answer.items[0].OfFunctionCallOutput = &answer.outputs[0]
			sinkResponses = answer.items[:]
		})
	})
}

// sinkCalls, sinkChat and sinkResponses keep what the sdk-values
// benchmarks make on the heap, as the adapter's results are.
var (
	sinkCalls     []dispatch.Call
	sinkChat      []openai.ChatCompletionMessageParamUnion
	sinkResponses []responses.ResponseInputItemUnionParam
)
