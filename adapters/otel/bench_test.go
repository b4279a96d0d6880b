package toolotel_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	noopmetric "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	nooptrace "go.opentelemetry.io/otel/trace/noop"

	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

// BenchmarkRun is the cost of one completed call: without an Observer,
// with this package's Observer on OpenTelemetry's no-op providers (what a
// program that never installs an SDK pays), and with the SDK recording
// every span (always sampled, exported synchronously to an exporter that
// drops it) and the histogram (read by a manual reader).
func BenchmarkRun(b *testing.B) {
	reg := registry(b)
	call := runCall("c1", "add", `{"a":1,"b":2}`)
	call.IdempotencyKey = "key-1"
	observers := []struct {
		name   string
		config *toolotel.Config
	}{
		{"unset", nil},
		{"noop", &toolotel.Config{TracerProvider: nooptrace.NewTracerProvider(), MeterProvider: noopmetric.NewMeterProvider()}},
		{"sdk", &toolotel.Config{
			TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter())),
			MeterProvider:  sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader())),
		}},
	}
	for _, o := range observers {
		b.Run("observer="+o.name, func(b *testing.B) {
			store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
			require.NoError(b, err)
			config := dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: sealSecret}}}
			if o.config != nil {
				tel, err := toolotel.New(*o.config)
				require.NoError(b, err)
				config.Observer = tel.Observer()
			}
			d, err := dispatch.New(config)
			require.NoError(b, err)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if o := d.Run(ctx, call); o.Kind != dispatch.KindCompleted {
					b.Fatal(o.Kind)
				}
			}
		})
	}
}
