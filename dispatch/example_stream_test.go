package dispatch_test

import (
	"context"
	"fmt"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// A call checked while the model writes it: the deltas go to a Stream,
// which refuses the arguments at the first value that cannot be admitted,
// long before the text ends. A call whose deltas all pass goes to Run, and
// so to Prepare, only once the provider's completion event came.
func ExampleStream() {
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

	s := dispatch.NewStream(registry, "add")
	for _, delta := range []string{`{"A":2,`, `"B":"three"`, `, "and a long text after it": "…"}`} {
		if _, err := s.WriteString(delta); err != nil {
			rejection, _ := tool.ClassifyInputRejection(err)
			fmt.Println(rejection.Message())
			break
		}
	}

	s = dispatch.NewStream(registry, "add")
	for _, delta := range []string{`{"A":2,`, `"B":3}`} {
		if _, err := s.WriteString(delta); err != nil {
			panic(err)
		}
	}
	// The completion event carries the whole text: it must be the deltas'.
	if err := s.EndWith(`{"A":2,"B":3}`); err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: registry})
	if err != nil {
		panic(err)
	}
	o := d.Run(context.Background(), dispatch.Call{ID: "call_1", Request: tool.Request{Name: "add", Arguments: `{"A":2,"B":3}`}})
	fmt.Println(o.Kind, o.Text())
	// Output:
	// arguments of "add" do not match its input schema at /B: got string, want integer (refused at byte 11)
	// completed 5
}
