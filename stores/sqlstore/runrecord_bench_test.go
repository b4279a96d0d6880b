package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// countingStore counts the round trips of a Store's CallStore.
type countingStore struct {
	dispatch.Store
	trips atomic.Int64
}

func (c *countingStore) Claim(ctx context.Context, cl dispatch.Claim) (*dispatch.Claim, error) {
	c.trips.Add(1)
	return c.Store.Claim(ctx, cl)
}

func (c *countingStore) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	c.trips.Add(1)
	return c.Store.Advance(ctx, id, s)
}

func (c *countingStore) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	c.trips.Add(1)
	return c.Store.Finish(ctx, id, o)
}

func (c *countingStore) Claimed(ctx context.Context, id string) (dispatch.Claim, error) {
	c.trips.Add(1)
	return c.Store.Claimed(ctx, id)
}

// BenchmarkRunRecord is the cost of the exactly-once promise when nothing
// fails, on a database: an effectful call on a dispatcher without
// records (a registry alone), and the same call run under its call
// record on SQLite and PostgreSQL (when TOOL_TEST_POSTGRES names a
// server). It reports the store round trips of each call (the record and
// its outcome: 2), and fails if there are more. Each round trip of the
// store is one or two statements (Finish reads the record, then writes
// it at its version).
func BenchmarkRunRecord(b *testing.B) {
	bound, err := tool.Bind(refundNow{})
	if err != nil {
		b.Fatal(err)
	}
	reg, err := tool.NewRegistry(bound)
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, d *dispatch.Dispatcher, store *countingStore) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n++
			o := d.Run(context.Background(), dispatch.Call{ID: "c", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7"}`},
				IdempotencyKey: tool.IdempotencyKey(fmt.Sprintf("k-%d", n))})
			if o.Kind != dispatch.KindCompleted {
				b.Fatal(o.Kind, o.Err)
			}
		}
		if store != nil {
			b.ReportMetric(float64(store.trips.Load())/float64(n), "roundtrips/op")
			if store.trips.Load() != int64(2*n) {
				b.Fatalf("%d store round trips for %d calls, want 2 each", store.trips.Load(), n)
			}
		}
	}
	b.Run("NoRecords", func(b *testing.B) {
		d, err := dispatch.New(dispatch.Config{Registry: reg})
		if err != nil {
			b.Fatal(err)
		}
		run(b, d, nil)
	})
	for _, be := range backends {
		b.Run(be.name, func(b *testing.B) {
			store := &countingStore{Store: be.new(b).store(b, sqlstore.Config{})}
			d, err := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}})
			if err != nil {
				b.Fatal(err)
			}
			run(b, d, store)
		})
	}
}

// refundNow is an effectful tool that completes at once.
type refundNow struct{}

func (refundNow) Definition() tool.Definition {
	return tool.Definition{Name: "refund", Description: "refund an order", InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (refundNow) Call(context.Context, tool.Invocation) (tool.Result, error) {
	return tool.Result{Output: tool.NewTextOutput("refunded")}, nil
}
