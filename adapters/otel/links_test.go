package toolotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	toolotel "github.com/agentcontract/tool/adapters/otel"
)

func spanContext(n byte) trace.SpanContext {
	return trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, n}, SpanID: trace.SpanID{2, n}, TraceFlags: trace.FlagsSampled})
}

// MemoryLinks keeps at most its bound: it drops expired links first, then
// the oldest, and returns what it keeps.
func TestMemoryLinksBound(t *testing.T) {
	ctx := context.Background()
	m := toolotel.NewMemoryLinks(3)
	later := time.Now().Add(time.Hour)
	long := time.Now().Add(-time.Hour)
	m.Save(ctx, "a", spanContext(1), later)
	m.Save(ctx, "b", spanContext(2), long) // expired an hour ago
	m.Save(ctx, "c", spanContext(3), later)
	m.Save(ctx, "d", spanContext(4), later)
	require.Equal(t, 3, m.Len())
	_, ok := m.Load(ctx, "b")
	require.False(t, ok, "the expired link goes first")
	sc, ok := m.Load(ctx, "a")
	require.True(t, ok)
	require.Equal(t, spanContext(1), sc)
	m.Save(ctx, "e", spanContext(5), later)
	_, ok = m.Load(ctx, "a")
	require.False(t, ok, "then the oldest")
	for _, id := range []string{"c", "d", "e"} {
		_, ok := m.Load(ctx, id)
		require.True(t, ok, id)
	}
	// Saving the same IDs again and again keeps the bound and the memory.
	for i := range 100 {
		m.Save(ctx, fmt.Sprint("x", i%4), spanContext(byte(i)), later)
	}
	require.Equal(t, 3, m.Len())
}

// MemoryLinks is safe for concurrent use.
func TestMemoryLinksConcurrent(t *testing.T) {
	ctx := context.Background()
	m := toolotel.NewMemoryLinks(0)
	done := make(chan struct{})
	for g := range 4 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range 200 {
				id := fmt.Sprint(g, "-", i)
				m.Save(ctx, id, spanContext(byte(i)), time.Now().Add(time.Hour))
				if _, ok := m.Load(ctx, id); !ok {
					t.Errorf("link %s lost", id)
				}
			}
		}()
	}
	for range 4 {
		<-done
	}
	require.Equal(t, 800, m.Len())
}
