package toolanthropic_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"

	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
)

// BenchmarkProject100Tools: New in strict mode over a registry of 100
// tools, then the tool parameters. Target: at most 10 ms; on a shared
// machine, read cpu-ns/op. Only the first 20 tools can be strict
// (MaxStrictTools); the others are sent as written. The tools of distinct,
// the headline, all have schemas of their own, as in a real catalogue;
// those of shared share one input schema, as tools NewFunc derives from one
// Go type do, which New lowers once.
func BenchmarkProject100Tools(b *testing.B) {
	for _, bc := range []struct {
		name string
		reg  *tool.Registry
	}{{"distinct", adaptertest.DistinctTools(b, 100)}, {"shared", adaptertest.Tools(b, 100)}} {
		b.Run(bc.name, func(b *testing.B) {
			adaptertest.LoopCPU(b, func() {
				tools, err := toolanthropic.New(toolanthropic.Config{Registry: bc.reg, Strict: true})
				if err != nil || len(tools.Tools()) != 100 {
					b.Fatal(err)
				}
			})
		})
	}
}

// BenchmarkCall measures what the adapter adds to one dispatched call —
// the tool_use block turned into a request and the outcome into the
// tool_result message — against the dispatch of that call (see
// adaptertest.Overhead). Target: overhead-% at most 20.
//
// sdk-values is the bound below it: only the values the SDK's types make
// every adapter allocate (the call with its argument text, the user
// message with its tool_result block and text), with no logic; what
// adapter costs beyond sdk-values is this package's.
func BenchmarkCall(b *testing.B) {
	reg := adaptertest.Registry(b)
	d := adaptertest.Dispatcher(b, reg)
	tools, err := toolanthropic.New(toolanthropic.Config{Registry: reg, Strict: true})
	require.NoError(b, err)
	var msg anthropic.Message
	require.NoError(b, json.Unmarshal([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","stop_reason":"tool_use",
		"content":[{"type":"tool_use","id":"toolu_1","name":"search_orders","input":{"customer":"ana@example.com","status":"open"}}],
		"usage":{"input_tokens":1,"output_tokens":1}}`), &msg))
	canonical := calls(b, tools, msg)[0]

	outcome, dispatchOnly := adaptertest.DispatchBase(b, d, canonical)
	b.Run("adapter", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			calls, _ := tools.Calls(msg)
			if _, err := toolanthropic.Results([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != canonical.Request {
				b.Fatal(calls, err)
			}
		})
	})
	b.Run("sdk-values", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			use := &msg.Content[0]
			sinkCalls = []dispatch.Call{{ID: use.ID, Request: tool.Request{Name: use.Name, Arguments: string(use.Input)}}}
			answer := &struct {
				msg     anthropic.UserMessageParam
				blocks  [1]anthropic.ContentBlockParamUnion
				result  anthropic.ToolResultBlockParam
				content [1]anthropic.ToolResultBlockParamContentUnion
				text    anthropic.TextBlockParam
			}{}
			answer.text.Text = string(outcome.Output.Details)
			answer.content[0].OfText = &answer.text
			answer.result.ToolUseID = outcome.CallID
			answer.result.Content = answer.content[:]
			answer.blocks[0].OfToolResult = &answer.result
			answer.msg.Content = answer.blocks[:]
			sinkMessage = anthropic.MessageParam{OfUser: &answer.msg}
		})
	})
}

// sinkCalls and sinkMessage keep what sdk-values makes on the heap, as the
// adapter's results are.
var (
	sinkCalls   []dispatch.Call
	sinkMessage anthropic.MessageParam
)
