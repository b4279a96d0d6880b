package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	toolotel "github.com/agentcontract/tool/adapters/otel"
)

// tracing records the run's spans in memory, as an exporter to a tracing
// backend would receive them, and prints them as a tree.
type tracing struct {
	spans    *tracetest.InMemoryExporter
	provider *sdktrace.TracerProvider
	tel      *toolotel.Telemetry
}

func newTracing() (*tracing, error) {
	spans := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	tel, err := toolotel.New(toolotel.Config{TracerProvider: provider})
	if err != nil {
		return nil, err
	}
	return &tracing{spans: spans, provider: provider, tel: tel}, nil
}

// start starts the run's root span.
func (tr *tracing) start(ctx context.Context) (context.Context, trace.Span) {
	return tr.provider.Tracer("agentloop").Start(ctx, "agentloop run")
}

// print writes the span tree: each span under its parent, in the order
// they started, with the outcome the tool call had; a span that another
// links to is numbered, and the link names that number.
func (tr *tracing) print(w io.Writer) error {
	spans := tr.spans.GetSpans()
	slices.SortStableFunc(spans, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	children := map[trace.SpanID][]tracetest.SpanStub{}
	known := map[trace.SpanID]bool{}
	for _, s := range spans {
		known[s.SpanContext.SpanID()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if parent := s.Parent.SpanID(); s.Parent.IsValid() && known[parent] {
			children[parent] = append(children[parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	numbers := map[trace.SpanID]int{}
	for _, s := range spans {
		for _, l := range s.Links {
			if _, ok := numbers[l.SpanContext.SpanID()]; !ok {
				numbers[l.SpanContext.SpanID()] = len(numbers) + 1
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\ntrace: %d spans\n", len(spans))
	var walk func(s tracetest.SpanStub, prefix string, last, root bool)
	walk = func(s tracetest.SpanStub, prefix string, last, root bool) {
		branch, next := "├─ ", "│  "
		if last {
			branch, next = "└─ ", "   "
		}
		if root {
			branch, next = "", ""
		}
		fmt.Fprintf(&b, "%s%s%s%s\n", prefix, branch, s.Name, describe(s, numbers))
		kids := children[s.SpanContext.SpanID()]
		for i, c := range kids {
			walk(c, prefix+next, i == len(kids)-1, false)
		}
	}
	for _, r := range roots {
		walk(r, "", true, true)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// describe is what the tree shows of a span beside its name.
func describe(s tracetest.SpanStub, numbers map[trace.SpanID]int) string {
	a := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		a[kv.Key] = kv.Value
	}
	var parts []string
	if v, ok := a[toolotel.AttrOutcome]; ok {
		parts = append(parts, v.AsString())
	}
	if v, ok := a[toolotel.AttrErrorType]; ok {
		parts = append(parts, "error.type="+v.AsString())
	}
	if v, ok := a[toolotel.AttrRefusal]; ok {
		parts = append(parts, "refusal="+v.AsString())
	}
	if v, ok := a[toolotel.AttrReplayed]; ok && v.AsBool() {
		parts = append(parts, "replayed")
	}
	for _, e := range s.Events {
		if e.Name == toolotel.EventSuspended {
			parts = append(parts, "checkpoint sealed")
		}
	}
	out := ""
	if len(parts) > 0 {
		out = " [" + strings.Join(parts, ", ") + "]"
	}
	if n, ok := numbers[s.SpanContext.SpanID()]; ok {
		out += fmt.Sprintf(" (#%d)", n)
	}
	for _, l := range s.Links {
		out += fmt.Sprintf(" ↪ resumes #%d", numbers[l.SpanContext.SpanID()])
	}
	return out
}
