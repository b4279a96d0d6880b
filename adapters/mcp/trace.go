package toolmcp

import "context"

// TraceContext carries a call's trace context across MCP in the _meta of
// each tools/call request (traceparent and tracestate, as OpenTelemetry's
// MCP semantic conventions say), without this package depending on a
// tracing library: the functions come from one. The module
// github.com/agentcontract/tool/adapters/otel has them, as
// Telemetry.ExtractMeta and Telemetry.InjectMeta. The zero TraceContext
// carries nothing. The functions must be safe for concurrent use and must
// not panic.
type TraceContext struct {
	// Extract, when not nil, is called by every served tool as a
	// tools/call request arrives, with the request's _meta as received
	// (nil when it had none; the client wrote it, so it is read, never
	// trusted, and must not be changed), and returns the ctx the call
	// runs with: the Dispatcher's Observer and the tool see it.
	Extract func(ctx context.Context, meta map[string]any) context.Context
	// Inject, when not nil, is called by every imported tool before it
	// sends a tools/call request, with the call's ctx and the request's
	// _meta, to which it adds the trace context. Nothing else is in the
	// map but what this package put there (a progress token).
	Inject func(ctx context.Context, meta map[string]any)
}

// extract runs Extract, if any, on the _meta of a request.
func (tc TraceContext) extract(ctx context.Context, meta map[string]any) context.Context {
	if tc.Extract == nil {
		return ctx
	}
	if next := tc.Extract(ctx, meta); next != nil {
		return next
	}
	return ctx
}
