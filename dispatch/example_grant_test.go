package dispatch_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// A standing approval: Ana approves a refund of order A-7 and, with the
// same answer, its like up to $50.00, three times. The next call that fits
// runs without asking; a call for another order asks.
func Example_grants() {
	ctx := context.Background()
	d := newGrantingDispatcher()
	call := dispatch.Call{ID: "call_1", Principal: "ana", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7","cents":1250}`}}
	asked := d.Run(ctx, call)
	yes := json.RawMessage(`{"approve":true}`)
	_, err := d.Mint(ctx, *asked.Checkpoint, dispatch.Mint{By: "ana", Answer: yes, Uses: 3,
		Widen: []dispatch.Widening{{Member: "cents", Maximum: "5000"}}})
	if err != nil {
		panic(err)
	}
	o, _ := d.Resume(ctx, *asked.Checkpoint, dispatch.Answer{Response: yes, Principal: "ana"})
	fmt.Println(o.Kind, o.Text())

	call.ID, call.Request.Arguments = "call_2", `{"order":"A-7","cents":4000}`
	fmt.Println(d.Run(ctx, call).Text())
	call.ID, call.Request.Arguments = "call_3", `{"order":"B-9","cents":1250}`
	fmt.Println(d.Run(ctx, call).Kind)
	// Output:
	// completed Refunded $12.50 on A-7.
	// Refunded $40.00 on A-7.
	// suspended
}

// newGrantingDispatcher returns a dispatcher of a refund tool that asks
// before it pays, whose store keeps grants.
func newGrantingDispatcher() *dispatch.Dispatcher {
	type refund struct {
		Order string `json:"order"`
		Cents int    `json:"cents"`
	}
	type answer struct {
		Approve bool `json:"approve"`
	}
	ask, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in refund) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d cents on %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in refund, a answer) (string, error) {
			if !a.Approve {
				return "Not refunded.", nil
			}
			return fmt.Sprintf("Refunded $%d.%02d on %s.", in.Cents/100, in.Cents%100, in.Order), nil
		})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(ask)
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
		Grants:   store, // the MemoryStore keeps grants too
		// In production: 32 bytes from crypto/rand, kept in a secret store.
		SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: []byte("0123456789abcdef0123456789abcdef")}},
	})
	if err != nil {
		panic(err)
	}
	return d
}
