package benchmarks

import (
	"context"
	"testing"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// BenchmarkDispatch is BenchmarkTool's call through dispatch.Run: the
// registry lookup, the idempotency key (a fixed one here, as a runtime that
// names its own calls gives; the default random key costs one
// crypto/rand read more), Prepare, Call and the classification of the
// outcome. Its ratio to BenchmarkTool at the same size is what dispatch
// adds.
func BenchmarkDispatch(b *testing.B) {
	registry, err := tool.NewRegistry(searchTool(b))
	if err != nil {
		b.Fatal(err)
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		b.Fatal(err)
	}
	d, err := dispatch.New(dispatch.Config{
		Registry: registry,
		Store:    store,
		SealKeys: []dispatch.SealKey{{ID: "bench", Secret: []byte("0123456789abcdef0123456789abcdef")}},
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range Payloads {
		b.Run(p.Name, func(b *testing.B) {
			call := dispatch.Call{ID: "call_1", Request: tool.Request{Name: "search", Arguments: string(p.Data)}, IdempotencyKey: "key-1"}
			b.SetBytes(int64(len(p.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if o := d.Run(ctx, call); o.Kind != dispatch.KindCompleted {
					b.Fatal(o.Kind, o.Err)
				}
			}
		})
	}
}
