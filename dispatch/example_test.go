package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// A first tool: a dispatcher made of a registry alone runs every call
// that does not wait for a person. Here the model proposed the call
// "call_1" of add with the arguments {"A":2,"B":3}.
func Example() {
	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in struct{ A, B int }) (int, error) { return in.A + in.B, nil })
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(add, tool.Recover)
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: registry})
	if err != nil {
		panic(err)
	}
	o := d.Run(context.Background(), dispatch.Call{ID: "call_1", Request: tool.Request{Name: "add", Arguments: `{"A":2,"B":3}`}})
	fmt.Println(o.Kind, o.IsError, o.Text())
	// Output: completed false 5
}

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
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{
		Registry: registry,
		Store:    store, // one process; replicas share a store

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

// newRefundDispatcher returns a dispatcher of the refund tool, which asks
// for approval, on store.
func newRefundDispatcher(store dispatch.Store) *dispatch.Dispatcher {
	binding, err := tool.Bind(approval{})
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{
		Registry: registry,
		Store:    store,
		// In production: 32 bytes from crypto/rand, kept in a secret store.
		SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
	})
	if err != nil {
		panic(err)
	}
	return d
}

// A call that asks a person for approval is suspended; its checkpoint is
// stored as JSON and resumed later, here by a dispatcher that could be in
// another process sharing the store. The checkpoint is answered once: the
// same answer sent again gets the recorded outcome back, another answer is
// refused.
func ExampleDispatcher_Resume() {
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	d := newRefundDispatcher(store)
	call := dispatch.Call{ID: "toolu_01", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1001"}`},
		IdempotencyKey: "order-A-1001-refund", Principal: "user-7"}
	o := d.Run(context.Background(), call)
	fmt.Println(o.Kind, string(o.Checkpoint.InputRequest().Prompt()))
	stored, err := json.Marshal(o.Checkpoint)
	if err != nil {
		panic(err)
	}

	// Later, when user-7 approved.
	var cp dispatch.Checkpoint
	if err := json.Unmarshal(stored, &cp); err != nil {
		panic(err)
	}
	later := newRefundDispatcher(store)
	o, err = later.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-7"})
	if err != nil {
		panic(err) // refused before anything ran
	}
	fmt.Println(o.CallID, o.Kind, o.Replayed, o.Text())

	// The response was lost and the same answer is sent again.
	o, _ = later.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-7"})
	fmt.Println(o.Kind, o.Replayed)

	// Someone else, or another answer: refused, nothing runs.
	_, err = later.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-8"})
	fmt.Println(errors.Is(err, dispatch.ErrWrongPrincipal))
	_, err = later.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`false`), Principal: "user-7"})
	var answered *dispatch.AnsweredError
	fmt.Println(errors.As(err, &answered), answered.Claim.Principal)
	// Output:
	// suspended "Approve?"
	// toolu_01 completed false answer true state {"step":1} key order-A-1001-refund
	// completed true
	// true
	// true user-7
}

// A person declines: the checkpoint is claimed with a final outcome for the
// model, and the call can never be answered afterwards.
func ExampleDispatcher_Decline() {
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	d := newRefundDispatcher(store)
	o := d.Run(context.Background(), dispatch.Call{ID: "toolu_02", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1002"}`}})
	cp := *o.Checkpoint

	o, err = d.Decline(context.Background(), cp, dispatch.Answer{Principal: "user-7"})
	if err != nil {
		panic(err)
	}
	fmt.Println(o.Kind, o.IsError, o.Text())

	_, err = d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
	fmt.Println(errors.Is(err, dispatch.ErrAlreadyAnswered))
	// Output:
	// failed true The person declined the call to "refund".
	// true
}

// A MemoryStore keeps the call records of one process; its audit lists
// the calls that ran, who answered what and when, and how each ended.
func ExampleMemoryStore() {
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: 1 << 20})
	if err != nil {
		panic(err)
	}
	d := newRefundDispatcher(store)
	o := d.Run(context.Background(), dispatch.Call{ID: "toolu_03", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1003"}`}})
	if _, err := d.Resume(context.Background(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`false`), Principal: "user-7"}); err != nil {
		panic(err)
	}
	claims, err := store.Claims(context.Background(), dispatch.ClaimQuery{})
	if err != nil {
		panic(err)
	}
	for _, c := range claims {
		if c.AnswerSHA256 == dispatch.RunSHA256 {
			// The record of the run that asked (see "Exactly once").
			fmt.Println("ran", c.Tool, c.CallID, c.Outcome.Kind)
			continue
		}
		fmt.Println("answered", c.Tool, c.CallID, c.Principal, c.Outcome.Kind)
	}
	// Output:
	// ran refund toolu_03 suspended
	// answered refund toolu_03 user-7 completed
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
