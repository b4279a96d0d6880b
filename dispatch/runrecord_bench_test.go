package dispatch_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// BenchmarkRunRecord is the cost of the exactly-once promise when nothing
// fails: an effectful call on a dispatcher without records (a registry
// alone), and the same call run under its call record on a MemoryStore.
// It reports the store round trips of each call (the record and its
// outcome: 2), and fails if there are more.
func BenchmarkRunRecord(b *testing.B) {
	var runs atomic.Int32
	reg := countingRegistry(b, &runs)
	for _, bb := range []struct {
		name    string
		records bool
	}{{"NoRecords", false}, {"MemoryStore", true}} {
		b.Run(bb.name, func(b *testing.B) {
			config := dispatch.Config{Registry: reg}
			var store *counting
			if bb.records {
				big, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: 1 << 30})
				if err != nil {
					b.Fatal(err)
				}
				store = &counting{Store: big}
				config.Store, config.SealKeys = store, []dispatch.SealKey{{ID: "k1", Secret: secret}}
			}
			d, err := dispatch.New(config)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				o := d.Run(context.Background(), keyed("c", "refund", `{"order":"A-7"}`, tool.IdempotencyKey(fmt.Sprintf("k-%s-%d", bb.name, n))))
				if o.Kind != dispatch.KindCompleted {
					b.Fatal(o.Kind, o.Err)
				}
			}
			if store != nil {
				b.ReportMetric(float64(store.total())/float64(n), "roundtrips/op")
				if store.total() != int32(2*n) {
					b.Fatalf("%d store round trips for %d calls, want 2 each", store.total(), n)
				}
			}
		})
	}
}
