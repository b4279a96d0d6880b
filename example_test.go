package tool_test

import (
	"context"
	"fmt"

	"github.com/agentcontract/tool"
)

// A typed function becomes a tool, is bound, registered, and called with
// arguments a model proposed.
func Example() {
	type input struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add, err := tool.NewFunc(tool.FuncConfig{
		Name:        "add",
		Description: "add two integers",
	}, func(_ context.Context, in input) (int, error) {
		return in.A + in.B, nil
	})
	if err != nil {
		panic(err)
	}
	bound, err := tool.Bind(add)
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(bound)
	if err != nil {
		panic(err)
	}
	fmt.Println(registry.Definitions()[0].Name)

	binding, ok := registry.Resolve("add")
	if !ok {
		panic("add is not registered")
	}
	invocation, err := binding.Contract().Prepare(tool.Request{Name: "add", Arguments: `{"a":2,"b":3}`}, tool.Admission{})
	if err != nil {
		panic(err)
	}
	result, err := binding.Call(context.Background(), invocation)
	if err != nil {
		panic(err)
	}
	text, _ := result.Output.Text()
	fmt.Println(text)
	// Output:
	// add
	// 5
}
