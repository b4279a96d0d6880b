package toolotel

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcontract/tool/dispatch"
)

// maxCached bounds each map of nameCache: only the names of tools the
// registry has are kept, and they, the outcome kinds and the error
// classes make far fewer entries; past the bound (a registry that keeps
// growing), names and options are made anew on each call.
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

// OtherToolName stands for the name of a tool the registry does not have,
// in the span name ("execute_tool _OTHER") and in the histogram's
// gen_ai.tool.name, as the GenAI conventions advise: the names a model
// invents then make no new span names and no new series.
const OtherToolName = "_OTHER"

// otherSpanName is the span name of a call of a tool the registry does
// not have.
const otherSpanName = "execute_tool " + OtherToolName

// start returns the span name "execute_tool {gen_ai.tool.name}" of a tool
// the registry has, and the options every span of the tool starts with:
// its kind and what a sampler may need (the operation and the tool's
// name). keep says whether the name is known to be a tool's, and may be
// kept for the calls after; a name not kept is made anew on each call.
func (c *nameCache) start(name string, keep bool) spanStart {
	c.mu.RLock()
	s, ok := c.starts[name]
	c.mu.RUnlock()
	if ok {
		return s
	}
	s = newStart("execute_tool "+name, name)
	if !keep {
		return s
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

// otherStart is how the span of a call of a tool the registry does not
// have starts: named otherSpanName, with the requested name (bounded) as
// gen_ai.tool.name. It is made anew on each call.
func otherStart(name string) spanStart { return newStart(otherSpanName, name) }

func newStart(spanName, toolName string) spanStart {
	return spanStart{
		name: spanName,
		opts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(AttrOperationName.String("execute_tool"), AttrToolName.String(toolName)),
		},
	}
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
