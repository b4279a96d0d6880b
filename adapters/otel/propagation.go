package toolotel

import (
	"context"
	"sort"
)

// ExtractMeta returns ctx with the trace context read from meta, the
// _meta of an MCP request as received, with Config.Propagator (W3C Trace
// Context by default: traceparent and tracestate). meta is only read; a
// nil meta, or one without a valid trace context, returns ctx. It has the
// signature of the MCP adapter's TraceContext.Extract.
func (t *Telemetry) ExtractMeta(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return t.propagator.Extract(ctx, metaCarrier(meta))
}

// InjectMeta writes the trace context of ctx into meta, the _meta of an
// MCP request about to be sent, with Config.Propagator. A ctx without a
// valid span context writes nothing. It has the signature of the MCP
// adapter's TraceContext.Inject.
func (t *Telemetry) InjectMeta(ctx context.Context, meta map[string]any) {
	if meta == nil {
		return
	}
	t.propagator.Inject(ctx, metaCarrier(meta))
}

// metaCarrier is an MCP _meta as a propagation.TextMapCarrier: only
// members whose value is a string are read.
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(key, value string) { m[key] = value }

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k, v := range m {
		if _, ok := v.(string); ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
