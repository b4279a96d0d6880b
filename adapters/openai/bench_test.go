package toolopenai_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/adaptertest"

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
func BenchmarkCall(b *testing.B) {
	reg := adaptertest.Registry(b)
	d := adaptertest.Dispatcher(b, reg)
	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: true})
	require.NoError(b, err)
	ctx := context.Background()
	sent := `{"customer":"ana@example.com","status":"open","limit":null}`
	msg := chatMessage(b, "search_orders", sent)
	canonical := tools.ChatCalls(msg)[0]
	require.Equal(b, `{"customer":"ana@example.com","status":"open"}`, canonical.Request.Arguments)

	outcome := d.Run(ctx, canonical)
	require.Equal(b, dispatch.KindCompleted, outcome.Kind)
	dispatchOnly := func() {
		if o := d.Run(ctx, canonical); o.Kind != dispatch.KindCompleted {
			b.Fatal(o.Kind, o.Err)
		}
	}
	b.Run("chat", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			calls := tools.ChatCalls(msg)
			if _, err := toolopenai.ChatMessages([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != canonical.Request {
				b.Fatal(calls, err)
			}
		})
	})
	resp := responseWithCall(b, "search_orders", sent)
	b.Run("responses", func(b *testing.B) {
		adaptertest.Overhead(b, dispatchOnly, func() {
			calls := tools.ResponseCalls(resp)
			if _, err := toolopenai.ResponseOutputs([]dispatch.Outcome{outcome}); err != nil || calls[0].Request != canonical.Request {
				b.Fatal(calls, err)
			}
		})
	})
}
