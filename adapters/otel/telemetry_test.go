package toolotel_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentcontract/tool"
	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

type wantEvent struct {
	name  string
	attrs map[string]any
}

// Each outcome kind: the exact span name, kind, attributes, status and
// events, and one point of the duration histogram with the outcome kind
// and the tool name; no private text anywhere.
func TestOutcomeKinds(t *testing.T) {
	tests := []struct {
		name      string
		call      dispatch.Call
		timeout   time.Duration
		kind      dispatch.Kind
		errType   string
		retryable bool
		desc      string
		events    []wantEvent
	}{
		{name: "completed", call: runCall("c1", "add", `{"a":1,"b":2}`), kind: dispatch.KindCompleted, desc: "add two integers"},
		{name: "suspended", call: runCall("c2", "refund", `{"order":"A-1"}`), kind: dispatch.KindSuspended, desc: "refund an order after approval",
			events: []wantEvent{{name: toolotel.EventSuspended}}},
		{name: "failed", call: runCall("c3", "fail", `{}`), kind: dispatch.KindFailed, errType: toolotel.ErrorFailed, desc: "the fail tool"},
		{name: "denied by policy", call: runCall("c4", "deny", `{}`), kind: dispatch.KindFailed, errType: toolotel.ErrorDenied, desc: "the deny tool",
			events: []wantEvent{{toolotel.EventRefused, map[string]any{"agentcontract.refusal": "policy"}}}},
		{name: "rejected at prepare", call: runCall("c5", "add", `{"a":"one"}`), kind: dispatch.KindRejected, errType: toolotel.ErrorInvalidArguments, desc: "add two integers",
			events: []wantEvent{{toolotel.EventRefused, map[string]any{"agentcontract.refusal": "invalid_arguments"}}}},
		{name: "unknown tool", call: runCall("c6", "transfer", `{}`), kind: dispatch.KindUnknownTool, errType: toolotel.ErrorUnknownTool,
			events: []wantEvent{{toolotel.EventRefused, map[string]any{"agentcontract.refusal": "unknown_tool"}}}},
		{name: "unknown, replayable", call: runCall("c7", "flaky", `{}`), kind: dispatch.KindUnknown, errType: toolotel.ErrorUnknownOutcome, retryable: true, desc: "the flaky tool",
			events: []wantEvent{{toolotel.EventOutcomeUnknown, map[string]any{"agentcontract.call.retryable": true}}}},
		{name: "unknown after a panic", call: runCall("c8", "boom", `{}`), kind: dispatch.KindUnknown, errType: toolotel.ErrorPanic, retryable: true, desc: "the boom tool",
			events: []wantEvent{{toolotel.EventOutcomeUnknown, map[string]any{"agentcontract.call.retryable": true}}}},
		{name: "unknown after the deadline", call: runCall("c9", "slow", `{}`), timeout: within, kind: dispatch.KindUnknown, errType: toolotel.ErrorTimeout, desc: "the slow tool",
			events: []wantEvent{{toolotel.EventOutcomeUnknown, map[string]any{"agentcontract.call.retryable": false}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil, func(c *dispatch.Config) { c.CallTimeout = tt.timeout })
			o := r.d.Run(context.Background(), tt.call)
			require.Equal(t, tt.kind, o.Kind)
			require.Equal(t, tt.retryable, o.Retryable)
			spans := r.take()
			require.Len(t, spans, 1)
			s := spans[0]
			name := tt.call.Request.Name
			if tt.kind == dispatch.KindUnknownTool {
				name = toolotel.OtherToolName
			}
			require.Equal(t, "execute_tool "+name, s.Name, "a span is named after a tool only when the registry has it")
			require.Equal(t, trace.SpanKindInternal, s.SpanKind)
			require.Equal(t, toolotel.ScopeName, s.InstrumentationScope.Name)
			want := map[string]any{
				"gen_ai.operation.name":        "execute_tool",
				"gen_ai.tool.name":             tt.call.Request.Name,
				"gen_ai.tool.type":             "function",
				"gen_ai.tool.call.id":          tt.call.ID,
				"agentcontract.call.op":        "run",
				"agentcontract.call.outcome":   string(tt.kind),
				"agentcontract.call.retryable": tt.retryable,
				"agentcontract.call.replayed":  false,
			}
			if tt.desc != "" {
				want["gen_ai.tool.description"] = tt.desc
			}
			if tt.errType != "" {
				want["error.type"] = tt.errType
				require.Equal(t, codes.Error, s.Status.Code)
				require.Equal(t, tt.errType, s.Status.Description)
			} else {
				require.Equal(t, codes.Unset, s.Status.Code)
			}
			require.Equal(t, want, attrs(s.Attributes))
			require.Len(t, s.Events, len(tt.events))
			for i, e := range tt.events {
				require.Equal(t, e.name, s.Events[i].Name)
				if e.attrs != nil {
					require.Equal(t, e.attrs, attrs(s.Events[i].Attributes))
				}
			}
			if tt.kind == dispatch.KindSuspended {
				require.Equal(t, map[string]any{
					"agentcontract.checkpoint.id":         o.Checkpoint.ID(),
					"agentcontract.checkpoint.expires_at": o.Checkpoint.ExpiresAt().Format(time.RFC3339),
				}, attrs(s.Events[0].Attributes))
			}
			require.Empty(t, s.Links)

			kvs := []attribute.KeyValue{
				toolotel.AttrOperationName.String("execute_tool"), toolotel.AttrToolName.String(name),
				toolotel.AttrToolType.String("function"), toolotel.AttrOutcome.String(string(tt.kind)),
			}
			if tt.errType != "" {
				kvs = append(kvs, toolotel.AttrErrorType.String(tt.errType))
			}
			set := attribute.NewSet(kvs...)
			require.Equal(t, map[string]uint64{set.Encoded(attribute.DefaultEncoder()): 1}, r.durations(t))

			var rm metricdata.ResourceMetrics
			require.NoError(t, r.reader.Collect(context.Background(), &rm))
			requireNoSecret(t, spans, rm)
		})
	}
}

// The span of a call is the parent of what the tool does, and the child
// of the span in the caller's ctx.
func TestSpanParentage(t *testing.T) {
	r := newRig(t, nil)
	ctx, parent := r.tp.Tracer("test").Start(context.Background(), "turn")
	r.d.Run(ctx, runCall("c1", "add", `{"a":1,"b":2}`))
	parent.End()
	spans := r.take()
	require.Len(t, spans, 2)
	require.Equal(t, "execute_tool add", spans[0].Name)
	require.Equal(t, spans[1].SpanContext.SpanID(), spans[0].Parent.SpanID())
	require.Equal(t, spans[1].SpanContext.TraceID(), spans[0].SpanContext.TraceID())
}

// A suspended call's span is linked from its resumption's span, and from
// the resumption's replay; the link's context is kept by Links, not in the
// checkpoint, whose wire form holds no trace or span ID.
func TestSuspensionLinkedToResumption(t *testing.T) {
	r := newRig(t, nil)
	o := r.d.Run(context.Background(), runCall("c1", "refund", `{"order":"A-1"}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	suspended := r.take()
	require.Len(t, suspended, 1)
	sc := suspended[0].SpanContext

	wire, err := json.Marshal(o.Checkpoint)
	require.NoError(t, err)
	require.NotContains(t, string(wire), sc.TraceID().String())
	require.NotContains(t, string(wire), sc.SpanID().String())

	// The resumption starts a new trace (another request, another
	// process) and links back to the suspension.
	var cp dispatch.Checkpoint
	require.NoError(t, json.Unmarshal(wire, &cp))
	resumed, err := r.d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, resumed.Kind)
	spans := r.take()
	require.Len(t, spans, 1)
	s := spans[0]
	require.Equal(t, "execute_tool refund", s.Name)
	a := attrs(s.Attributes)
	require.Equal(t, "resume", a["agentcontract.call.op"])
	require.Equal(t, o.Checkpoint.ID(), a["agentcontract.checkpoint.id"])
	require.Equal(t, "completed", a["agentcontract.call.outcome"])
	require.Len(t, s.Links, 1)
	require.Equal(t, sc.TraceID(), s.Links[0].SpanContext.TraceID())
	require.Equal(t, sc.SpanID(), s.Links[0].SpanContext.SpanID())
	require.Equal(t, map[string]any{"agentcontract.link.type": "resumes"}, attrs(s.Links[0].Attributes))

	// The same answer again: a replay, linked too, marked as replayed.
	_, err = r.d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	spans = r.take()
	require.Len(t, spans, 1)
	require.Equal(t, true, attrs(spans[0].Attributes)["agentcontract.call.replayed"])
	require.Len(t, spans[0].Links, 1)
	require.Equal(t, sc.SpanID(), spans[0].Links[0].SpanContext.SpanID())
}

// A decline is a refusal by a person, linked to the suspension.
func TestDeclineLinked(t *testing.T) {
	r := newRig(t, nil)
	o := r.d.Run(context.Background(), runCall("c1", "refund", `{"order":"A-1"}`))
	sc := r.take()[0].SpanContext
	_, err := r.d.Decline(context.Background(), *o.Checkpoint, dispatch.Answer{Principal: "user-9"})
	require.NoError(t, err)
	spans := r.take()
	require.Len(t, spans, 1)
	s := spans[0]
	require.Equal(t, "decline", attrs(s.Attributes)["agentcontract.call.op"])
	require.Equal(t, toolotel.ErrorDenied, attrs(s.Attributes)["error.type"])
	require.Equal(t, codes.Error, s.Status.Code)
	require.Len(t, s.Events, 1)
	require.Equal(t, map[string]any{"agentcontract.refusal": "declined"}, attrs(s.Events[0].Attributes))
	require.Len(t, s.Links, 1)
	require.Equal(t, sc.SpanID(), s.Links[0].SpanContext.SpanID())
}

// Every security refusal of a resume is a span with status Error, an
// event that names the check, and a count; nothing ran, so no
// execute_tool span and no duration.
func TestResumeRefused(t *testing.T) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	r := newRig(t, nil, func(c *dispatch.Config) { c.Clock = clock; c.CheckpointTTL = time.Hour })
	c := runCall("c1", "refund", `{"order":"A-1"}`)
	c.Principal = "user-7"
	o := r.d.Run(context.Background(), c)
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	sc := r.take()[0].SpanContext
	cp := *o.Checkpoint
	yes := func(who string) dispatch.Answer {
		return dispatch.Answer{Response: json.RawMessage(`true`), Principal: who}
	}

	// A forged seal: the checkpoint's wire form with another MAC.
	wire, err := json.Marshal(cp)
	require.NoError(t, err)
	var w map[string]any
	require.NoError(t, json.Unmarshal(wire, &w))
	w["seal"].(map[string]any)["hmac_sha256"] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="
	forgedWire, err := json.Marshal(w)
	require.NoError(t, err)
	var forged dispatch.Checkpoint
	require.NoError(t, json.Unmarshal(forgedWire, &forged))

	steps := []struct {
		name    string
		resume  func() error
		refusal string
		linked  bool
	}{
		{"forged seal", func() error { _, err := r.d.Resume(context.Background(), forged, yes("user-7")); return err }, "invalid_checkpoint", false},
		{"wrong principal", func() error { _, err := r.d.Resume(context.Background(), cp, yes("user-8")); return err }, "wrong_principal", true},
		{"invalid answer", func() error {
			_, err := r.d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`"maybe"`), Principal: "user-7"})
			return err
		}, "invalid_answer", true},
		{"answered", func() error { _, err := r.d.Resume(context.Background(), cp, yes("user-7")); return err }, "", false},
		{"refused replay", func() error {
			_, err := r.d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`false`), Principal: "user-7"})
			return err
		}, "already_answered", true},
	}
	for _, step := range steps {
		err := step.resume()
		spans := r.take()
		require.Len(t, spans, 1, step.name)
		s := spans[0]
		if step.refusal == "" {
			require.NoError(t, err, step.name)
			require.Equal(t, "execute_tool refund", s.Name)
			continue
		}
		require.Error(t, err, step.name)
		require.Equal(t, "resume_refused", s.Name, step.name)
		require.Equal(t, codes.Error, s.Status.Code, step.name)
		require.Equal(t, step.refusal, s.Status.Description, step.name)
		require.Equal(t, map[string]any{
			"gen_ai.tool.name":            "refund",
			"agentcontract.call.op":       "resume",
			"agentcontract.refusal":       step.refusal,
			"agentcontract.checkpoint.id": cp.ID(),
		}, attrs(s.Attributes), step.name)
		require.Len(t, s.Events, 1, step.name)
		require.Equal(t, toolotel.EventResumeRefused, s.Events[0].Name)
		if step.linked {
			require.Len(t, s.Links, 1, step.name)
			require.Equal(t, sc.SpanID(), s.Links[0].SpanContext.SpanID())
		} else {
			require.Empty(t, s.Links, "%s: a checkpoint whose seal failed links nothing", step.name)
		}
	}

	// An expired checkpoint, from another suspension.
	c.ID = "c2"
	o = r.d.Run(context.Background(), c)
	r.take()
	mu.Lock()
	now = now.Add(2 * time.Hour)
	mu.Unlock()
	_, err = r.d.Decline(context.Background(), *o.Checkpoint, dispatch.Answer{Principal: "user-7"})
	require.ErrorIs(t, err, dispatch.ErrExpired)
	spans := r.take()
	require.Len(t, spans, 1)
	require.Equal(t, "expired", attrs(spans[0].Attributes)["agentcontract.refusal"])
	require.Equal(t, "decline", attrs(spans[0].Attributes)["agentcontract.call.op"])
	require.Len(t, spans[0].Links, 1, "a late answer is linked to its suspension")

	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != toolotel.MetricResumeRefusals {
				continue
			}
			for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
				refusal, _ := p.Attributes.Value(toolotel.AttrRefusal)
				op, _ := p.Attributes.Value(toolotel.AttrOp)
				counts[op.AsString()+"/"+refusal.AsString()] += p.Value
			}
		}
	}
	require.Equal(t, map[string]int64{
		"resume/invalid_checkpoint": 1, "resume/wrong_principal": 1, "resume/invalid_answer": 1,
		"resume/already_answered": 1, "decline/expired": 1,
	}, counts)
}

// Arguments and results are recorded only on opt-in, after the redaction
// hook; by default neither key is present on any span.
func TestContentOptIn(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		r := newRig(t, nil)
		r.d.Run(context.Background(), runCall("c1", "add", `{"a":1,"b":2}`))
		for _, s := range r.take() {
			a := attrs(s.Attributes)
			require.NotContains(t, a, "gen_ai.tool.call.arguments")
			require.NotContains(t, a, "gen_ai.tool.call.result")
		}
	})
	t.Run("opt-in", func(t *testing.T) {
		r := newRig(t, func(c *toolotel.Config) { c.CaptureContent = true })
		r.d.Run(context.Background(), runCall("c1", "add", `{"a":1,"b":2}`))
		a := attrs(r.take()[0].Attributes)
		require.Equal(t, `{"a":1,"b":2}`, a["gen_ai.tool.call.arguments"])
		require.Equal(t, "3", a["gen_ai.tool.call.result"])
	})
	t.Run("redacted", func(t *testing.T) {
		var seen []string
		var mu sync.Mutex
		r := newRig(t, func(c *toolotel.Config) {
			c.CaptureContent = true
			c.Redact = func(name string, kind toolotel.ContentKind, text string) string {
				mu.Lock()
				seen = append(seen, name+"/"+string(kind))
				mu.Unlock()
				if kind == toolotel.ContentResult {
					return ""
				}
				return strings.ReplaceAll(text, "1", "#")
			}
		})
		r.d.Run(context.Background(), runCall("c1", "add", `{"a":1,"b":2}`))
		a := attrs(r.take()[0].Attributes)
		require.Equal(t, `{"a":#,"b":2}`, a["gen_ai.tool.call.arguments"])
		require.NotContains(t, a, "gen_ai.tool.call.result")
		require.Equal(t, []string{"add/arguments", "add/result"}, seen)
	})
	t.Run("a panicking redaction records nothing", func(t *testing.T) {
		r := newRig(t, func(c *toolotel.Config) {
			c.CaptureContent = true
			c.Redact = func(string, toolotel.ContentKind, string) string { panic("no") }
		})
		o := r.d.Run(context.Background(), runCall("c1", "add", `{"a":1,"b":2}`))
		require.Equal(t, dispatch.KindCompleted, o.Kind)
		a := attrs(r.take()[0].Attributes)
		require.NotContains(t, a, "gen_ai.tool.call.arguments")
		require.NotContains(t, a, "gen_ai.tool.call.result")
	})
	t.Run("no result for a failure", func(t *testing.T) {
		r := newRig(t, func(c *toolotel.Config) { c.CaptureContent = true })
		r.d.Run(context.Background(), runCall("c1", "fail", `{}`))
		spans := r.take()
		require.NotContains(t, attrs(spans[0].Attributes), "gen_ai.tool.call.result")
		var rm metricdata.ResourceMetrics
		require.NoError(t, r.reader.Collect(context.Background(), &rm))
		requireNoSecret(t, spans, rm)
	})
}

// Settle has no CallStart: its span is made when it is done, and
// records the settled outcome.
func TestSettle(t *testing.T) {
	r := newRig(t, nil)
	o := r.d.Settle(runCall("c1", "flaky", `{}`), "key-1", tool.EffectIdempotent, tool.Result{}, errors.New(secretDial))
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	spans := r.take()
	require.Len(t, spans, 1)
	s := spans[0]
	require.Equal(t, "execute_tool flaky", s.Name)
	require.Equal(t, o.Duration, s.EndTime.Sub(s.StartTime), "the span lasts as long as the call")
	a := attrs(s.Attributes)
	require.Equal(t, "settle", a["agentcontract.call.op"])
	require.Equal(t, toolotel.ErrorUnknownOutcome, a["error.type"])
	require.Equal(t, true, a["agentcontract.call.retryable"])
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.reader.Collect(context.Background(), &rm))
	requireNoSecret(t, spans, rm)
}
