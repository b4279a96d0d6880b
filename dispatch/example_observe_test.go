package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// An Observer sees each call from start to outcome, with the private
// error and the retry verdict the model never sees, links a resumption to
// its suspension by the checkpoint's ID, and hears of every refused
// resume. A tracer would start a span in CallStart, return the ctx that
// carries it, and end it in CallDone.
func ExampleObserver() {
	observer := &dispatch.Observer{
		CallStart: func(ctx context.Context, info dispatch.CallInfo) context.Context {
			fmt.Printf("start %s %s checkpoint=%q\n", info.Op, info.Tool, info.CheckpointID)
			return ctx
		},
		CallDone: func(_ context.Context, info dispatch.CallInfo, o dispatch.Outcome) {
			fmt.Printf("done %s %s %s retryable=%t err=%v\n", info.Op, info.Tool, o.Kind, o.Retryable, o.Err)
			if o.Checkpoint != nil {
				fmt.Printf("suspended as checkpoint %s\n", o.Checkpoint.ID())
			}
		},
		ResumeRefused: func(_ context.Context, info dispatch.CallInfo, err error) {
			fmt.Printf("refused %s of checkpoint %s by %s: wrong principal=%t\n",
				info.Op, info.CheckpointID, info.AnsweredBy, errors.Is(err, dispatch.ErrWrongPrincipal))
		},
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
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
		SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		// A fixed ID for the example's output; nil draws a random one.
		NewCheckpointID: func(dispatch.Call) (string, error) { return "0123456789abcdef0123456789abcdef", nil },
		Observer:        observer,
	})
	if err != nil {
		panic(err)
	}

	o := d.Run(context.Background(), dispatch.Call{ID: "toolu_01", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1001"}`},
		IdempotencyKey: "order-A-1001-refund", Principal: "user-7"})
	_, _ = d.Resume(context.Background(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-8"})
	_, _ = d.Resume(context.Background(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`), Principal: "user-7"})
	d.Run(context.Background(), dispatch.Call{ID: "toolu_02", Request: tool.Request{Name: "transfer", Arguments: `{}`}})
	// Output:
	// start run refund checkpoint=""
	// done run refund suspended retryable=false err=<nil>
	// suspended as checkpoint 0123456789abcdef0123456789abcdef
	// refused resume of checkpoint 0123456789abcdef0123456789abcdef by user-8: wrong principal=true
	// start resume refund checkpoint="0123456789abcdef0123456789abcdef"
	// done resume refund completed retryable=false err=<nil>
	// start run transfer checkpoint=""
	// done run transfer unknown_tool retryable=false err=no tool named "transfer" in the registry
}
