package toolotel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

// The private texts the tools put in their errors: none may reach any
// span, event, status or metric.
const (
	secretCause = "db: row 7 locked by secret-user@10.0.0.1"
	secretDial  = "dial tcp 10.0.3.7:443: secret connection refused"
	secretPanic = "secret detail at 10.0.0.1"
	secretDeny  = "policy secret: tenant 42 is blocked"
)

var sealSecret = []byte("0123456789abcdef0123456789abcdef")

type addInput struct {
	A int `json:"a"`
	B int `json:"b"`
}

// objectTool is a tool named name that takes any object and is
// described as "the name tool".
func objectTool(name string, effect tool.Effect, fn func(context.Context, tool.Invocation) (tool.Result, error)) adaptertest.Func {
	return adaptertest.Object(name, "the "+name+" tool", effect, fn)
}

// approval asks for a boolean answer, then completes with it.
var approval = adaptertest.Approval{
	Name: "refund", Prompt: `"Approve?"`, Form: `{"type":"boolean"}`,
	Done: func(c tool.Continuation) string { return fmt.Sprintf("refunded: %s", c.Response()) },
}

// registry binds the test tools: add (completes), refund (suspends),
// fail (a Failure), deny (a policy's refusal), flaky (an unknown outcome),
// slow (outlives its deadline), boom (panics).
func registry(t testing.TB) *tool.Registry {
	t.Helper()
	add, err := tool.NewFunc(tool.FuncConfig{Name: "add", Description: "add two integers", Effect: tool.EffectSafe},
		func(_ context.Context, in addInput) (int, error) { return in.A + in.B, nil })
	require.NoError(t, err)
	fail := objectTool("fail", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, adaptertest.Failure(tool.FailureKindFailed, "the order is closed", errors.New(secretCause))
	})
	deny := objectTool("deny", "", func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, adaptertest.Failure(tool.FailureKindRejected, "not allowed", errors.New(secretDeny))
	})
	flaky := objectTool("flaky", tool.EffectIdempotent, func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, errors.New(secretDial)
	})
	slow := objectTool("slow", "", func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	})
	boom := objectTool("boom", tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
		panic(secretPanic)
	})
	reg := &tool.Registry{}
	for _, executable := range []tool.Tool{add, approval, fail, deny, flaky, slow, boom} {
		b, err := tool.Bind(executable)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	return reg
}

// rig is a Dispatcher observed by a Telemetry that records into the real
// SDK: an in-memory span exporter and a manual metric reader.
type rig struct {
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	tel    *toolotel.Telemetry
	d      *dispatch.Dispatcher
	tp     *sdktrace.TracerProvider
}

func newRig(t testing.TB, edit func(*toolotel.Config), editDispatch ...func(*dispatch.Config)) *rig {
	t.Helper()
	r := &rig{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	reg := registry(t)
	config := toolotel.Config{TracerProvider: r.tp, MeterProvider: mp, Registry: reg}
	if edit != nil {
		edit(&config)
	}
	tel, err := toolotel.New(config)
	require.NoError(t, err)
	r.tel = tel
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	dc := dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: sealSecret}}, Observer: tel.Observer()}
	for _, e := range editDispatch {
		e(&dc)
	}
	r.d, err = dispatch.New(dc)
	require.NoError(t, err)
	return r
}

// take returns the spans ended so far and forgets them.
func (r *rig) take() tracetest.SpanStubs {
	s := r.spans.GetSpans()
	r.spans.Reset()
	return s
}

// attrs returns a span's (or event's) attributes as a map.
func attrs(kvs []attribute.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

// durations collects the points of the duration histogram, by the
// attributes of each point written as sorted key=value pairs.
func (r *rig) durations(t testing.TB) map[string]uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	out := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		require.Equal(t, toolotel.ScopeName, sm.Scope.Name)
		for _, m := range sm.Metrics {
			if m.Name != toolotel.MetricDuration {
				continue
			}
			require.Equal(t, "s", m.Unit)
			h, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "a float64 histogram")
			for _, p := range h.DataPoints {
				out[p.Attributes.Encoded(attribute.DefaultEncoder())] += p.Count
			}
		}
	}
	return out
}

// requireNoSecret fails when any private text appears in any span, event,
// link, status or metric recorded so far.
func requireNoSecret(t testing.TB, spans tracetest.SpanStubs, rm metricdata.ResourceMetrics) {
	t.Helper()
	var b strings.Builder
	for _, s := range spans {
		fmt.Fprintf(&b, "%s|%v|%v|", s.Name, s.Attributes, s.Status)
		for _, e := range s.Events {
			fmt.Fprintf(&b, "%s|%v|", e.Name, e.Attributes)
		}
		for _, l := range s.Links {
			fmt.Fprintf(&b, "%v|", l.Attributes)
		}
	}
	fmt.Fprintf(&b, "%+v", rm)
	for _, secret := range []string{secretCause, secretDial, secretPanic, secretDeny, "secret", "10.0.", "panic("} {
		require.NotContains(t, b.String(), secret)
	}
}

func runCall(id, name, args string) dispatch.Call {
	return dispatch.Call{ID: id, Request: tool.Request{Name: name, Arguments: args}}
}

// within is a time bound for a call that waits on its deadline.
const within = 50 * time.Millisecond
