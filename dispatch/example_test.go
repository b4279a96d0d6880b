package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// One model turn with three proposed calls: one completes, one has an
// argument mistake the model can correct, one names a tool that does not
// exist.
func ExampleDispatcher_RunAll() {
	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in struct {
			A int `json:"a"`
			B int `json:"b"`
		}) (int, error) {
			return in.A + in.B, nil
		})
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
	d, err := dispatch.New(dispatch.Config{
		Registry: registry,
		// In production: 32 bytes from crypto/rand, kept in a secret store.
		SealKeys:       []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		MaxConcurrency: 4,
	})
	if err != nil {
		panic(err)
	}

	outcomes := d.RunAll(context.Background(), []dispatch.Call{
		{ID: "call_1", Request: tool.Request{Name: "add", Arguments: `{"a":2,"b":3}`}},
		{ID: "call_2", Request: tool.Request{Name: "add", Arguments: `{"a":2,"b":"3"}`}},
		{ID: "call_3", Request: tool.Request{Name: "subtract", Arguments: `{"a":2,"b":3}`}},
	})
	for _, o := range outcomes {
		fmt.Printf("%s %s error=%t: %s\n", o.CallID, o.Kind, o.IsError, o.Text())
	}
	// Output:
	// call_1 completed error=false: 5
	// call_2 rejected error=true: arguments of "add" do not match its input schema at /b: got string, want integer
	// call_3 unknown_tool error=true: There is no tool named "subtract". Available tools: add.
}

// A call that asks a person for approval is suspended; its checkpoint is
// stored as JSON and resumed later, here by a dispatcher that could be in
// another process.
func ExampleDispatcher_Resume() {
	registry := &tool.Registry{}
	binding, err := tool.Bind(approval{})
	if err != nil {
		panic(err)
	}
	if err := registry.Register(binding); err != nil {
		panic(err)
	}
	keys := []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}}
	d, err := dispatch.New(dispatch.Config{Registry: registry, SealKeys: keys})
	if err != nil {
		panic(err)
	}

	call := dispatch.Call{ID: "toolu_01", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1001"}`}, IdempotencyKey: "order-A-1001-refund"}
	o := d.Run(context.Background(), call)
	fmt.Println(o.Kind, string(o.Checkpoint.InputRequest().Prompt()))
	stored, err := json.Marshal(o.Checkpoint)
	if err != nil {
		panic(err)
	}

	// Later, when a person approved.
	var cp dispatch.Checkpoint
	if err := json.Unmarshal(stored, &cp); err != nil {
		panic(err)
	}
	o, err = d.Resume(context.Background(), cp, json.RawMessage(`true`), nil)
	if err != nil {
		panic(err) // an edited checkpoint or an invalid answer: nothing ran
	}
	fmt.Println(o.CallID, o.Kind, o.Text())
	// Output:
	// suspended "Approve?"
	// toolu_01 completed answer true state {"step":1} key order-A-1001-refund
}

// Text keeps a note of every media block for providers that carry text only.
func ExampleText() {
	out := tool.Output{Content: []tool.Block{
		tool.NewTextBlock("The chart:"),
		tool.NewMediaBlock("image/png", make([]byte, 2048)),
	}}
	fmt.Println(dispatch.Text(out))
	// Output:
	// The chart:
	// [attachment image/png, 2048 bytes]
}
