package toolotel_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

// Each scope rule decided for a call is an event on its span: the rule's
// name, what it decided and whether it is a shadow; a refused call also
// has the refusal of a policy. No argument reaches the span.
func TestRuleDecided(t *testing.T) {
	events, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	r := newRig(t, nil, func(c *dispatch.Config) {
		c.Events = events
		c.Rules = []dispatch.Rule{
			dispatch.RateLimit{Name: "adds-per-hour", Tools: []string{"add"}, Limit: 1, Window: time.Hour},
			dispatch.Shadow{Rule: dispatch.RateLimit{Name: "strict", Tools: []string{"add"}, Limit: 1, Window: time.Hour}},
		}
	})
	call := runCall("c1", "add", `{"a":1,"b":20260}`)
	call.Scope = "conversation-1"
	require.Equal(t, dispatch.KindCompleted, r.d.Run(context.Background(), call).Kind)
	require.Equal(t, dispatch.KindFailed, r.d.Run(context.Background(), call).Kind)
	spans := r.take()
	require.Len(t, spans, 2)
	var got [][]map[string]any
	for _, s := range spans {
		var decided []map[string]any
		for _, e := range s.Events {
			if e.Name == toolotel.EventRuleDecided {
				decided = append(decided, attrs(e.Attributes))
			}
		}
		got = append(got, decided)
		require.NotContains(t, fmtSpan(s.Attributes, s.Events), "20260", "no argument on the span")
	}
	allow := func(rule string, shadow bool) map[string]any {
		return map[string]any{"agentcontract.policy.rule": rule, "agentcontract.policy.decision": "allow", "agentcontract.policy.shadow": shadow}
	}
	deny := func(rule string, shadow bool) map[string]any {
		return map[string]any{"agentcontract.policy.rule": rule, "agentcontract.policy.decision": "deny", "agentcontract.policy.shadow": shadow}
	}
	require.Equal(t, [][]map[string]any{
		{allow("adds-per-hour", false), allow("strict", true)},
		{deny("adds-per-hour", false), deny("strict", true)},
	}, got)
	require.Equal(t, toolotel.ErrorDenied, attrs(spans[1].Attributes)["error.type"])
	var refusal any
	for _, e := range spans[1].Events {
		if e.Name == toolotel.EventRefused {
			refusal = attrs(e.Attributes)["agentcontract.refusal"]
		}
	}
	require.Equal(t, "policy", refusal)
}

// fmtSpan writes a span's attributes and events as text.
func fmtSpan(kvs []attribute.KeyValue, events []sdktrace.Event) string {
	return fmt.Sprintf("%v %v", kvs, events)
}
