package toolotel

import (
	"context"
	"errors"
	"slices"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ErrInstrument is wrapped by the error of New when the meter cannot make
// an instrument.
var ErrInstrument = errprefix.New("an OpenTelemetry instrument could not be created")

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/agentcontract/tool/adapters/otel"

// The attribute keys of the GenAI semantic conventions this package sets,
// as constants of its own (the Go semconv packages do not have them all).
const (
	// AttrOperationName is always "execute_tool".
	AttrOperationName = attribute.Key("gen_ai.operation.name")
	// AttrToolName is the requested tool name, at most MaxToolNameBytes
	// of UTF-8 (a longer or invalid name, which only a model invents, is
	// cut and mended); on the histogram, OtherToolName for a tool the
	// registry does not have.
	AttrToolName = attribute.Key("gen_ai.tool.name")
	// AttrToolCallID is the provider's correlation ID (dispatch.Call.ID),
	// when there is one, at most MaxAttributeBytes.
	AttrToolCallID = attribute.Key("gen_ai.tool.call.id")
	// AttrToolType is always "function".
	AttrToolType = attribute.Key("gen_ai.tool.type")
	// AttrToolDescription is the registered tool's description, with
	// Config.Registry.
	AttrToolDescription = attribute.Key("gen_ai.tool.description")
	// AttrToolArguments is the argument text, with Config.CaptureContent,
	// at most MaxContentBytes.
	AttrToolArguments = attribute.Key("gen_ai.tool.call.arguments")
	// AttrToolResult is the text of a completed call's Output, with
	// Config.CaptureContent, at most MaxContentBytes.
	AttrToolResult = attribute.Key("gen_ai.tool.call.result")
	// AttrErrorType is the class of a call that ended in error: one of the
	// Error constants.
	AttrErrorType = attribute.Key("error.type")
)

// The attribute keys of what only this library knows.
const (
	// AttrOutcome is the call's dispatch.Kind: completed, suspended,
	// failed, rejected, unknown_tool or unknown.
	AttrOutcome = attribute.Key("agentcontract.call.outcome")
	// AttrRetryable is the Outcome's retry verdict (Outcome.Retryable).
	AttrRetryable = attribute.Key("agentcontract.call.retryable")
	// AttrReplayed is true for an Outcome returned again for an answer
	// already claimed (Outcome.Replayed): nothing ran.
	AttrReplayed = attribute.Key("agentcontract.call.replayed")
	// AttrOp is the method that ran the call: run, resume, decline or
	// settle (dispatch.Op).
	AttrOp = attribute.Key("agentcontract.call.op")
	// AttrCheckpointID is the checkpoint a call suspended as (on
	// EventSuspended) or resumes (on the span of Resume and Decline), at
	// most MaxAttributeBytes.
	AttrCheckpointID = attribute.Key("agentcontract.checkpoint.id")
	// AttrCheckpointExpires is when a suspension's checkpoint expires, in
	// RFC 3339.
	AttrCheckpointExpires = attribute.Key("agentcontract.checkpoint.expires_at")
	// AttrRefusal says why a call or a resume was refused: see EventRefused
	// and EventResumeRefused.
	AttrRefusal = attribute.Key("agentcontract.refusal")
	// AttrLinkType is set on the link from a resumption to its suspension,
	// with the value "resumes".
	AttrLinkType = attribute.Key("agentcontract.link.type")
	// AttrRule names the scope rule of an EventRuleDecided
	// (dispatch.RuleDecision.Rule): the runtime's configuration, never
	// the call's data.
	AttrRule = attribute.Key("agentcontract.policy.rule")
	// AttrDecision is what the rule of an EventRuleDecided decided:
	// "allow" or "deny".
	AttrDecision = attribute.Key("agentcontract.policy.decision")
	// AttrShadow is true on an EventRuleDecided of a rule in shadow mode
	// (dispatch.Shadow), whose denial refused nothing.
	AttrShadow = attribute.Key("agentcontract.policy.shadow")
)

// The span events this package adds.
const (
	// EventSuspended: the call asked for input and suspended; with
	// AttrCheckpointID and AttrCheckpointExpires.
	EventSuspended = "agentcontract.call.suspended"
	// EventRefused: the call was refused, with AttrRefusal:
	// "invalid_arguments" (refused at Prepare: the model can correct
	// them), "policy" (a guard or the tool refused permission),
	// "declined" (a person declined it) or "unknown_tool".
	EventRefused = "agentcontract.call.refused"
	// EventOutcomeUnknown: the call's outcome is unknown, with
	// AttrRetryable.
	EventOutcomeUnknown = "agentcontract.call.outcome_unknown"
	// EventResumeRefused: Resume or Decline refused a checkpoint and ran
	// nothing, with AttrRefusal: "invalid_checkpoint" (an altered, forged
	// or foreign seal, or a tool no longer admitted), "invalid_answer",
	// "expired", "wrong_principal", "already_answered" (a refused replay),
	// "store" or "invalid_config".
	EventResumeRefused = "agentcontract.resume.refused"
	// EventRuleDecided: a scope rule decided the call (see
	// dispatch.Config.Rules), before its tool ran: one event a rule,
	// with AttrRule, AttrDecision and AttrShadow. It carries no argument
	// and no reason. A call a rule refused also has an EventRefused of
	// refusal "policy".
	EventRuleDecided = "agentcontract.policy.decided"
)

// The values of error.type, one for each way a call ends in error.
const (
	// ErrorInvalidArguments: KindRejected, the arguments were refused.
	ErrorInvalidArguments = "invalid_arguments"
	// ErrorDenied: KindFailed with a rejected Failure: a policy or a
	// person refused the call.
	ErrorDenied = "denied"
	// ErrorFailed: KindFailed, a definite failure.
	ErrorFailed = "failed"
	// ErrorUnknownTool: KindUnknownTool.
	ErrorUnknownTool = "unknown_tool"
	// ErrorTimeout: KindUnknown, the call's deadline passed.
	ErrorTimeout = "timeout"
	// ErrorCanceled: KindUnknown, the call's context was canceled.
	ErrorCanceled = "canceled"
	// ErrorPanic: KindUnknown, the tool panicked.
	ErrorPanic = "panic"
	// ErrorUnknownOutcome: KindUnknown for any other reason.
	ErrorUnknownOutcome = "unknown_outcome"
)

// Metric names.
const (
	// MetricDuration is the GenAI conventions' histogram of tool
	// execution durations, in seconds.
	MetricDuration = "gen_ai.execute_tool.duration"
	// MetricResumeRefusals counts refused resumes, by AttrRefusal and
	// AttrOp.
	MetricResumeRefusals = "agentcontract.resume.refusals"
)

// durationBuckets are the bucket boundaries the GenAI conventions advise
// for operation durations, in seconds.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

// ContentKind says which content a Config.Redact hook is given.
type ContentKind string

// The kinds of content.
const (
	// ContentArguments: the call's argument text, as the model wrote it.
	ContentArguments ContentKind = "arguments"
	// ContentResult: the text of a completed call's Output.
	ContentResult ContentKind = "result"
)

// Config says where a Telemetry records and what.
type Config struct {
	// TracerProvider makes the tracer; nil means otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
	// MeterProvider makes the meter; nil means otel.GetMeterProvider().
	MeterProvider metric.MeterProvider
	// Propagator reads and writes trace context in ExtractMeta and
	// InjectMeta; nil means W3C Trace Context (traceparent, tracestate),
	// whatever the global propagator is.
	Propagator propagation.TextMapPropagator
	// Registry, when not nil, gives gen_ai.tool.description (the
	// description of the registered tool of the call's name) and decides,
	// as each call starts, whether its span is named after its tool: a
	// name it does not have makes the span "execute_tool _OTHER" (see
	// OtherToolName). Give the Dispatcher's own Registry. nil leaves that
	// to the Dispatcher's verdict, known only when the call ends: the span
	// starts named after the requested name (which a sampler sees) and is
	// renamed "execute_tool _OTHER" when the Dispatcher found no such tool
	// or refused the call before looking (an invalid Config or Call).
	Registry *tool.Registry
	// Links keeps the span context of each suspended call until its
	// resumption links to it. nil means a MemoryLinks of
	// DefaultMemoryLinks entries, which links within this process only.
	Links Links
	// CaptureContent records gen_ai.tool.call.arguments and, for a
	// completed call, gen_ai.tool.call.result. They hold whatever the
	// model wrote and the tool returned: personal data, secrets. false,
	// the default, records neither.
	CaptureContent bool
	// Redact, when not nil and CaptureContent is set, is given each
	// content before it is recorded, and returns what is recorded ("" to
	// record nothing). It must be safe for concurrent use, and must not
	// panic (a panic is recovered, and nothing is recorded).
	Redact func(toolName string, kind ContentKind, text string) string
}

// Telemetry records the calls of the Dispatchers that use its Observer.
// It is made by New, is immutable, and is safe for concurrent use.
type Telemetry struct {
	tracer     trace.Tracer
	duration   metric.Float64Histogram
	refusals   metric.Int64Counter
	propagator propagation.TextMapPropagator
	registry   *tool.Registry
	links      Links
	capture    bool
	redact     func(string, ContentKind, string) string
	observer   dispatch.Observer
	names      *nameCache
}

// New makes a Telemetry from config; it copies nothing it does not keep
// (the providers, the registry and Links are shared, not copied). Its
// only error wraps ErrInstrument, and the meter's error beside it, when
// the meter cannot make an instrument.
func New(config Config) (*Telemetry, error) {
	tp := config.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	mp := config.MeterProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	duration, err := meter.Float64Histogram(MetricDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of tool executions."),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil {
		return nil, errprefix.Errorf("%w: the histogram %s: %w", ErrInstrument, MetricDuration, err)
	}
	refusals, err := meter.Int64Counter(MetricResumeRefusals,
		metric.WithUnit("{refusal}"),
		metric.WithDescription("Resumes of suspended tool calls refused before anything ran."))
	if err != nil {
		return nil, errprefix.Errorf("%w: the counter %s: %w", ErrInstrument, MetricResumeRefusals, err)
	}
	propagator := config.Propagator
	if propagator == nil {
		propagator = propagation.TraceContext{}
	}
	links := config.Links
	if links == nil {
		links = NewMemoryLinks(DefaultMemoryLinks)
	}
	t := &Telemetry{
		tracer:     tp.Tracer(ScopeName),
		duration:   duration,
		refusals:   refusals,
		propagator: propagator,
		registry:   config.Registry,
		links:      links,
		capture:    config.CaptureContent,
		redact:     config.Redact,
		names:      &nameCache{},
	}
	t.observer = dispatch.Observer{CallStart: t.callStart, CallDone: t.callDone, ResumeRefused: t.resumeRefused, RuleDecided: t.ruleDecided}
	return t, nil
}

// Observer returns the hooks to set as dispatch.Config.Observer: a new
// copy for each call, sharing this Telemetry.
func (t *Telemetry) Observer() *dispatch.Observer {
	o := t.observer
	return &o
}

func (t *Telemetry) callStart(ctx context.Context, info dispatch.CallInfo) context.Context {
	return t.startSpan(ctx, info, time.Time{})
}

// startSpan starts the span of a call, at the time given or, when it is
// zero, now.
func (t *Telemetry) startSpan(ctx context.Context, info dispatch.CallInfo, at time.Time) context.Context {
	name := toolName(info.Tool)
	binding, registered := t.registry.Resolve(info.Tool)
	// What a sampler may need is given at creation; the rest only to a
	// span that records, so that a no-op provider costs little.
	var start spanStart
	switch {
	case registered:
		start = t.names.start(name, true)
	case t.registry != nil:
		start = otherStart(name)
	default:
		// Without a registry, callDone renames the span if the
		// Dispatcher finds no such tool, and keeps the name once it does.
		start = t.names.start(name, false)
	}
	opts := start.opts
	if info.CheckpointID != "" {
		if sc, ok := t.links.Load(ctx, info.CheckpointID); ok && sc.IsValid() {
			opts = append(slices.Clip(opts), trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{AttrLinkType.String("resumes")}}))
		}
	}
	if !at.IsZero() {
		opts = append(slices.Clip(opts), trace.WithTimestamp(at))
	}
	ctx, span := t.tracer.Start(ctx, start.name, opts...)
	if !span.IsRecording() {
		return ctx
	}
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, AttrToolType.String("function"), AttrOp.String(string(info.Op)))
	if info.CallID != "" {
		attrs = append(attrs, AttrToolCallID.String(bounded(info.CallID, MaxAttributeBytes)))
	}
	if registered {
		if d := binding.Contract().Definition().Description; d != "" {
			attrs = append(attrs, AttrToolDescription.String(d))
		}
	}
	if info.CheckpointID != "" {
		attrs = append(attrs, AttrCheckpointID.String(bounded(info.CheckpointID, MaxAttributeBytes)))
	}
	if t.capture {
		if args := t.redacted(info.Tool, ContentArguments, info.Arguments); args != "" {
			attrs = append(attrs, AttrToolArguments.String(bounded(args, MaxContentBytes)))
		}
	}
	span.SetAttributes(attrs...)
	return ctx
}

func (t *Telemetry) callDone(ctx context.Context, info dispatch.CallInfo, o dispatch.Outcome) {
	end := time.Now()
	var span trace.Span
	if info.Op == dispatch.OpSettle {
		// Settle has no CallStart: its span starts and ends here, as long
		// as the call took.
		ctx = t.startSpan(ctx, info, end.Add(-o.Duration))
		span = trace.SpanFromContext(ctx)
	} else {
		span = trace.SpanFromContext(ctx)
	}
	errType := ErrorType(o)
	known := t.known(o)
	if span.IsRecording() {
		if !known {
			span.SetName(otherSpanName)
		}
		t.annotate(span, info, o, errType)
	}
	if o.Kind == dispatch.KindSuspended && o.Checkpoint != nil {
		if sc := span.SpanContext(); sc.IsValid() {
			t.links.Save(ctx, o.Checkpoint.ID(), sc, o.Checkpoint.ExpiresAt())
		}
	}
	span.End(trace.WithTimestamp(end))
	name := OtherToolName
	if known {
		name = toolName(o.Tool)
		if t.registry == nil {
			t.names.start(name, true)
		}
	}
	t.duration.Record(ctx, o.Duration.Seconds(), t.names.recordOptions(name, o.Kind, errType)...)
}

// annotate records o on span.
func (t *Telemetry) annotate(span trace.Span, info dispatch.CallInfo, o dispatch.Outcome, errType string) {
	span.SetAttributes(
		AttrOutcome.String(string(o.Kind)),
		AttrRetryable.Bool(o.Retryable),
		AttrReplayed.Bool(o.Replayed))
	switch o.Kind {
	case dispatch.KindCompleted:
		if t.capture {
			if result := t.redacted(info.Tool, ContentResult, o.Text()); result != "" {
				span.SetAttributes(AttrToolResult.String(bounded(result, MaxContentBytes)))
			}
		}
	case dispatch.KindSuspended:
		if o.Checkpoint != nil {
			span.AddEvent(EventSuspended, trace.WithAttributes(
				AttrCheckpointID.String(bounded(o.Checkpoint.ID(), MaxAttributeBytes)),
				AttrCheckpointExpires.String(o.Checkpoint.ExpiresAt().Format(time.RFC3339))))
		}
	case dispatch.KindRejected, dispatch.KindUnknownTool:
		span.AddEvent(EventRefused, trace.WithAttributes(AttrRefusal.String(errType)))
	case dispatch.KindFailed:
		if errType == ErrorDenied {
			refusal := "policy"
			if info.Op == dispatch.OpDecline {
				refusal = "declined"
			}
			span.AddEvent(EventRefused, trace.WithAttributes(AttrRefusal.String(refusal)))
		}
	case dispatch.KindUnknown:
		span.AddEvent(EventOutcomeUnknown, trace.WithAttributes(AttrRetryable.Bool(o.Retryable)))
	}
	if errType != "" {
		span.SetAttributes(AttrErrorType.String(errType))
		span.SetStatus(codes.Error, errType)
	}
}

// ErrorType is the error.type of o: "" for a completed or suspended call,
// otherwise one of the Error constants, chosen by o's Kind and the class
// of its private error (never its text).
func ErrorType(o dispatch.Outcome) string {
	switch o.Kind {
	case dispatch.KindCompleted, dispatch.KindSuspended:
		return ""
	case dispatch.KindRejected:
		return ErrorInvalidArguments
	case dispatch.KindUnknownTool:
		return ErrorUnknownTool
	case dispatch.KindFailed:
		var f *tool.Failure
		if errors.As(o.Err, &f) && f.Kind() == tool.FailureKindRejected {
			return ErrorDenied
		}
		return ErrorFailed
	}
	var p *tool.PanicError
	switch {
	case errors.As(o.Err, &p):
		return ErrorPanic
	case errors.Is(o.Err, context.DeadlineExceeded):
		return ErrorTimeout
	case errors.Is(o.Err, context.Canceled):
		return ErrorCanceled
	}
	return ErrorUnknownOutcome
}

// Refusal is the AttrRefusal of an error of Resume or Decline: one of the
// values listed on EventResumeRefused, or "other".
func Refusal(err error) string {
	switch {
	case errors.Is(err, dispatch.ErrAlreadyAnswered):
		return "already_answered"
	case errors.Is(err, dispatch.ErrExpired):
		return "expired"
	case errors.Is(err, dispatch.ErrWrongPrincipal):
		return "wrong_principal"
	case errors.Is(err, dispatch.ErrInvalidCheckpoint):
		return "invalid_checkpoint"
	case errors.Is(err, dispatch.ErrInvalidAnswer):
		return "invalid_answer"
	case errors.Is(err, dispatch.ErrStore):
		return "store"
	case errors.Is(err, dispatch.ErrInvalidConfig):
		return "invalid_config"
	}
	return "other"
}

func (t *Telemetry) resumeRefused(ctx context.Context, info dispatch.CallInfo, err error) {
	refusal := Refusal(err)
	attrs := []attribute.KeyValue{
		AttrToolName.String(toolName(info.Tool)),
		AttrOp.String(string(info.Op)),
		AttrRefusal.String(refusal),
	}
	if info.CheckpointID != "" {
		attrs = append(attrs, AttrCheckpointID.String(bounded(info.CheckpointID, MaxAttributeBytes)))
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attrs...)}
	// The fields of a checkpoint whose seal did not verify may be forged:
	// no link is drawn from them.
	if refusal != "invalid_checkpoint" && info.CheckpointID != "" {
		if sc, ok := t.links.Load(ctx, info.CheckpointID); ok && sc.IsValid() {
			opts = append(opts, trace.WithLinks(trace.Link{SpanContext: sc, Attributes: []attribute.KeyValue{AttrLinkType.String("resumes")}}))
		}
	}
	_, span := t.tracer.Start(ctx, "resume_refused", opts...)
	span.AddEvent(EventResumeRefused, trace.WithAttributes(AttrRefusal.String(refusal)))
	span.SetStatus(codes.Error, refusal)
	span.End()
	t.refusals.Add(ctx, 1, metric.WithAttributes(AttrRefusal.String(refusal), AttrOp.String(string(info.Op))))
}

// ruleDecided adds an EventRuleDecided to the call's span.
func (t *Telemetry) ruleDecided(ctx context.Context, _ dispatch.CallInfo, d dispatch.RuleDecision) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	decision := "allow"
	if d.Denied {
		decision = "deny"
	}
	span.AddEvent(EventRuleDecided, trace.WithAttributes(
		AttrRule.String(bounded(d.Rule, MaxAttributeBytes)), AttrDecision.String(decision), AttrShadow.Bool(d.Shadow)))
}

// known reports whether the tool of o may name its span and its
// histogram point: a tool Config.Registry has, or, without a Registry, a
// call the Dispatcher did not refuse as KindUnknownTool or before it
// looked for the tool (an unknown outcome wrapping
// dispatch.ErrInvalidConfig).
func (t *Telemetry) known(o dispatch.Outcome) bool {
	if o.Kind == dispatch.KindUnknownTool {
		return false
	}
	if t.registry != nil {
		_, ok := t.registry.Resolve(o.Tool)
		return ok
	}
	return o.Kind != dispatch.KindUnknown || !errors.Is(o.Err, dispatch.ErrInvalidConfig)
}

// redacted is text after Config.Redact; "" when the hook panics.
func (t *Telemetry) redacted(name string, kind ContentKind, text string) (out string) {
	if t.redact == nil {
		return text
	}
	defer func() {
		if recover() != nil {
			out = ""
		}
	}()
	return t.redact(name, kind, text)
}
