package dispatch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// At most $5,000 of refunds per hour in each conversation: the amounts
// (in cents) of the refunds of the last hour are summed, those still
// running included, and a refund that would pass the limit is refused
// before it runs. Of three refunds of $2,000, the third is refused.
func ExampleSumLimit_refundsPerHour() {
	events, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: refundRegistry(), Events: events, Rules: []dispatch.Rule{
		dispatch.SumLimit{Name: "refunds-per-hour", Tools: []string{"refund"}, Member: "/cents", Limit: 500_000, Window: time.Hour},
	}})
	if err != nil {
		panic(err)
	}
	for _, order := range []string{"A-1", "A-2", "A-3"} {
		o := d.Run(context.Background(), dispatch.Call{ID: order, Scope: "conversation-42",
			Request: tool.Request{Name: "refund", Arguments: `{"order":"` + order + `","cents":200000}`}})
		fmt.Println(order, o.Kind, o.Text())
	}
	// Output:
	// A-1 completed refunded A-1
	// A-2 completed refunded A-2
	// A-3 failed The call to refund was refused: the sum of /cents over calls of refund is limited to 500000 per hour.
}

// refundInput is the input of the examples' refund tool.
type refundInput struct {
	Order string `json:"order"`
	Cents int    `json:"cents"`
}

// refundRegistry holds a refund tool that refunds at once.
func refundRegistry() *tool.Registry {
	refund, err := tool.NewFunc(tool.FuncConfig{Name: "refund", Description: "refund an order", Effect: tool.EffectIdempotent},
		func(_ context.Context, in refundInput) (string, error) { return "refunded " + in.Order, nil })
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(refund)
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	return registry
}
