package toolotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
)

// InjectMeta writes traceparent into a _meta, ExtractMeta reads it back
// as the remote parent; members that are not strings, or a malformed
// traceparent, extract nothing.
func TestMetaPropagation(t *testing.T) {
	r := newRig(t, nil)
	ctx, span := r.tp.Tracer("test").Start(context.Background(), "client")
	defer span.End()
	meta := map[string]any{"progressToken": 7}
	r.tel.InjectMeta(ctx, meta)
	sc := span.SpanContext()
	require.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", meta["traceparent"])
	require.Equal(t, 7, meta["progressToken"])

	got := trace.SpanContextFromContext(r.tel.ExtractMeta(context.Background(), meta))
	require.True(t, got.IsRemote())
	require.Equal(t, sc.TraceID(), got.TraceID())
	require.Equal(t, sc.SpanID(), got.SpanID())

	for _, bad := range []map[string]any{
		nil,
		{},
		{"traceparent": 42},
		{"traceparent": "00-zz-yy-01"},
		{"traceparent": "00-00000000000000000000000000000000-0000000000000000-01"},
	} {
		got := trace.SpanContextFromContext(r.tel.ExtractMeta(context.Background(), bad))
		require.False(t, got.IsValid(), "%v", bad)
	}
	r.tel.InjectMeta(context.Background(), meta) // no span: nothing changes
	r.tel.InjectMeta(ctx, nil)                   // no map: nothing to write
}

// A client writes _meta: whatever it holds, extracting never panics, and
// yields either no span context or a valid remote one.
func FuzzExtractMeta(f *testing.F) {
	f.Add("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "vendor=x")
	f.Add("", "")
	f.Add("ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "a=b,c=d")
	r := newRig(f, nil)
	f.Fuzz(func(t *testing.T, traceparent, tracestate string) {
		ctx := r.tel.ExtractMeta(context.Background(), map[string]any{"traceparent": traceparent, "tracestate": tracestate})
		sc := trace.SpanContextFromContext(ctx)
		if sc.IsValid() && !sc.IsRemote() {
			t.Fatalf("a valid extracted span context is remote: %v", sc)
		}
	})
}
