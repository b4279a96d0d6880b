package dispatch_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// scopeEvents is how many events the scope of a benchmarked decision
// holds: every one a refund of the last hour, each in the window.
const scopeEvents = 10_000

// refundsPerHour is the rule of ExampleSumLimit_refundsPerHour, with a
// limit the benchmark's refunds never reach.
var refundsPerHour = dispatch.SumLimit{Name: "refunds-per-hour", Tools: []string{"refund"}, Member: "/cents", Limit: 1e15, Window: time.Hour}

// fillScope returns a MemoryStore whose scope "conversation-42" holds
// scopeEvents refunds of the hour before now, completed.
func fillScope(b *testing.B, now time.Time) *dispatch.MemoryStore {
	b.Helper()
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		b.Fatal(err)
	}
	for i := range scopeEvents {
		at := now.Add(-time.Hour + time.Duration(i+1)*time.Hour/scopeEvents)
		e := dispatch.Event{Scope: "conversation-42", ID: fmt.Sprintf("old-%d", i), Tool: "refund",
			Arguments: json.RawMessage(fmt.Sprintf(`{"cents":%d,"order":"B-%d"}`, 100+i%5000, i)), At: at, KeepUntil: at.Add(2 * time.Hour), State: dispatch.EventReserved}
		if _, err := store.ReserveEvent(b.Context(), e, func(dispatch.ScopeLog) (bool, error) { return true, nil }); err != nil {
			b.Fatal(err)
		}
		if err := store.SettleEvent(b.Context(), e.Scope, e.ID, dispatch.KindCompleted, false); err != nil {
			b.Fatal(err)
		}
	}
	return store
}

// refillEvery bounds how many decisions one filled scope takes, so that
// the scope holds from scopeEvents to scopeEvents+refillEvery events.
const refillEvery = 5_000

// BenchmarkRefundsPerHour measures one decision of the "refunds per
// hour" rule of ExampleSumLimit_refundsPerHour in a scope of 10,000
// events in a MemoryStore, and reports the latency of each at the 50th
// and 99th percentiles: Decision is the decision and the reservation it
// makes (EventStore.ReserveEvent with the rule's Decide), Run a whole
// call of Dispatcher.Run (admission, decision, tool, outcome). The clock
// moves 10 ms a decision, so that the window moves on.
func BenchmarkRefundsPerHour(b *testing.B) {
	b.Run("Decision", func(b *testing.B) {
		var store *dispatch.MemoryStore
		now := time.Now()
		latencies := make([]time.Duration, 0, b.N)
		for i := range b.N {
			if i%refillEvery == 0 {
				b.StopTimer()
				store = fillScope(b, now)
				b.StartTimer()
			}
			now = now.Add(10 * time.Millisecond)
			call := dispatch.ScopedCall{Scope: "conversation-42", Tool: "refund", IdempotencyKey: tool.IdempotencyKey(fmt.Sprint("new-", i)),
				Arguments: json.RawMessage(`{"cents":200000,"order":"A-1"}`), At: now}
			e := dispatch.Event{Scope: call.Scope, ID: string(call.IdempotencyKey), Tool: call.Tool, Arguments: call.Arguments, At: now, KeepUntil: now.Add(2 * time.Hour), State: dispatch.EventReserved}
			start := time.Now()
			ok, err := store.ReserveEvent(b.Context(), e, func(log dispatch.ScopeLog) (bool, error) {
				d, err := refundsPerHour.Decide(b.Context(), call, log)
				return !d.Deny, err
			})
			latencies = append(latencies, time.Since(start))
			if err != nil || !ok {
				b.Fatalf("decision %d: %v %v", i, ok, err)
			}
		}
		reportPercentiles(b, latencies)
	})
	b.Run("Run", func(b *testing.B) {
		var d *dispatch.Dispatcher
		now := time.Now()
		clock := func() time.Time { return now }
		latencies := make([]time.Duration, 0, b.N)
		for i := range b.N {
			if i%refillEvery == 0 {
				b.StopTimer()
				var err error
				d, err = dispatch.New(dispatch.Config{Registry: refundRegistry(), Events: fillScope(b, now), Rules: []dispatch.Rule{refundsPerHour}, Clock: clock})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			now = now.Add(10 * time.Millisecond)
			start := time.Now()
			o := d.Run(b.Context(), dispatch.Call{ID: "c", Scope: "conversation-42", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-1","cents":200000}`}})
			latencies = append(latencies, time.Since(start))
			if o.Kind != dispatch.KindCompleted {
				b.Fatalf("call %d: %s %v", i, o.Kind, o.Err)
			}
		}
		reportPercentiles(b, latencies)
	})
}

// reportPercentiles reports the 50th and 99th percentiles of latencies.
func reportPercentiles(b *testing.B, latencies []time.Duration) {
	slices.Sort(latencies)
	at := func(p float64) float64 { return float64(latencies[int(p*float64(len(latencies)-1))].Nanoseconds()) }
	b.ReportMetric(at(0.50), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
}
