package toolotel

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcontract/tool/dispatch"
)

// maxCached bounds each map of nameCache: the registered tools, the
// outcome kinds and the error classes make far fewer entries; past the
// bound (a registry that keeps changing), names and options are made anew
// on each call.
const maxCached = 4096

// nameCache keeps, for the tools seen, the span name and start options and
// the options that record a duration, so that a call does not build them
// anew (an Observer on a no-op provider then costs little). Safe for
// concurrent use.
type nameCache struct {
	mu     sync.RWMutex
	starts map[string]spanStart
	record map[metricKey][]metric.RecordOption
}

// spanStart is how the span of a call of one tool starts.
type spanStart struct {
	name string
	opts []trace.SpanStartOption
}

type metricKey struct {
	name    string
	kind    dispatch.Kind
	errType string
}

// start returns the span name "execute_tool {gen_ai.tool.name}" and the
// options every span of the tool starts with: its kind and what a sampler
// may need (the operation and the tool's name).
func (c *nameCache) start(name string) spanStart {
	c.mu.RLock()
	s, ok := c.starts[name]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = spanStart{
		name: "execute_tool " + name,
		opts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(AttrOperationName.String("execute_tool"), AttrToolName.String(name)),
		},
	}
	c.mu.Lock()
	if c.starts == nil {
		c.starts = make(map[string]spanStart)
	}
	if len(c.starts) < maxCached {
		c.starts[name] = s
	}
	c.mu.Unlock()
	return s
}

// recordOptions returns the options that record one duration with its
// attribute set.
func (c *nameCache) recordOptions(name string, kind dispatch.Kind, errType string) []metric.RecordOption {
	key := metricKey{name, kind, errType}
	c.mu.RLock()
	opts, ok := c.record[key]
	c.mu.RUnlock()
	if ok {
		return opts
	}
	opts = []metric.RecordOption{metric.WithAttributeSet(metricAttributes(name, kind, errType))}
	c.mu.Lock()
	if c.record == nil {
		c.record = make(map[metricKey][]metric.RecordOption)
	}
	if len(c.record) < maxCached {
		c.record[key] = opts
	}
	c.mu.Unlock()
	return opts
}

// metricAttributes is the attribute set of one duration.
func metricAttributes(name string, kind dispatch.Kind, errType string) attribute.Set {
	kvs := []attribute.KeyValue{
		AttrOperationName.String("execute_tool"),
		AttrToolName.String(name),
		AttrToolType.String("function"),
		AttrOutcome.String(string(kind)),
	}
	if errType != "" {
		kvs = append(kvs, AttrErrorType.String(errType))
	}
	return attribute.NewSet(kvs...)
}
