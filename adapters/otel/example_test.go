package toolotel_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentcontract/tool"
	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

// A Dispatcher observed by a Telemetry: each call is an execute_tool span
// (here exported to memory; a program exports to its backend).
func Example() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	telemetry, err := toolotel.New(toolotel.Config{TracerProvider: tp})
	if err != nil {
		panic(err)
	}

	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil })
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(add)
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{
		Registry: registry,
		Store:    store,
		SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		Observer: telemetry.Observer(),
	})
	if err != nil {
		panic(err)
	}

	d.Run(context.Background(), dispatch.Call{ID: "call_1", Request: tool.Request{Name: "add", Arguments: `{"A":2,"B":3}`}})
	d.Run(context.Background(), dispatch.Call{ID: "call_2", Request: tool.Request{Name: "add", Arguments: `{"A":"two"}`}})
	for _, s := range spans.GetSpans() {
		fmt.Print(s.Name)
		for _, kv := range s.Attributes {
			switch kv.Key {
			case toolotel.AttrOutcome, toolotel.AttrErrorType, toolotel.AttrToolCallID:
				fmt.Printf(" %s=%s", kv.Key, kv.Value.String())
			}
		}
		fmt.Println(" status:", s.Status.Code)
	}
	// Output:
	// execute_tool add gen_ai.tool.call.id=call_1 agentcontract.call.outcome=completed status: Unset
	// execute_tool add gen_ai.tool.call.id=call_2 agentcontract.call.outcome=rejected error.type=invalid_arguments status: Error
}
