package sqlstore_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// benchEvents is how many events the scope of a benchmarked decision
// holds.
const benchEvents = 10_000

// refundsPerHour is the rule of dispatch's ExampleSumLimit_refundsPerHour,
// with a limit the benchmark's refunds never reach.
var refundsPerHour = dispatch.SumLimit{Name: "refunds-per-hour", Tools: []string{"refund"}, Member: "/cents", Limit: 1e15, Window: time.Hour}

// fillEvents writes benchEvents completed refunds into scope of d, spread
// evenly over the span before now, in one transaction of multi-row
// inserts (as a log that grew over that span holds them).
func fillEvents(b *testing.B, d database, scope string, now time.Time, span time.Duration) {
	b.Helper()
	db := d.open(b)
	tx, err := db.BeginTx(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	keep := now.Add(span + time.Hour).UnixNano()
	if _, err := tx.ExecContext(b.Context(), rebind(d.dialect, "INSERT INTO tool_scopes (scope, keep_until) VALUES (?, ?)"), []byte(scope), keep); err != nil {
		b.Fatal(err)
	}
	const batch = 500
	for start := 0; start < benchEvents; start += batch {
		var values []string
		var args []any
		for i := start; i < min(start+batch, benchEvents); i++ {
			at := now.Add(-span + time.Duration(i+1)*(span/benchEvents)).UnixNano()
			values = append(values, "(?, ?, 'refund', ?, ?, ?, 'kept', 'completed')")
			args = append(args, []byte(scope), []byte(fmt.Sprint("old-", i)), at, keep, fmt.Sprintf(`{"cents":%d,"order":"B-%d"}`, 100+i%5000, i))
		}
		query := "INSERT INTO tool_scope_events (scope, id, tool, at, keep_until, arguments, state, outcome) VALUES " + strings.Join(values, ", ")
		if _, err := tx.ExecContext(b.Context(), rebind(d.dialect, query), args...); err != nil {
			b.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRefundsPerHour measures one decision of the "refunds per
// hour" rule in a scope of 10,000 events on each backend: the decision
// and the reservation it makes (Store.ReserveEvent with the rule's
// Decide), and reports the latency of each at the 50th and 99th
// percentiles. AllInWindow holds the 10,000 events in the last hour,
// which the decision reads; Spread holds them over 30 days, of which
// the hour holds 14.
func BenchmarkRefundsPerHour(b *testing.B) {
	for _, backend := range backends {
		for _, span := range []struct {
			name string
			span time.Duration
		}{{"AllInWindow", time.Hour}, {"Spread", 30 * 24 * time.Hour}} {
			b.Run(backend.name+"/"+span.name, func(b *testing.B) {
				d := backend.new(b)
				store := d.store(b, sqlstore.Config{})
				now := time.Now()
				fillEvents(b, d, "conversation-42", now, span.span)
				latencies := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					now = now.Add(10 * time.Millisecond)
					call := dispatch.ScopedCall{Scope: "conversation-42", Tool: "refund", IdempotencyKey: tool.IdempotencyKey(fmt.Sprint("new-", i)),
						Arguments: json.RawMessage(`{"cents":200000,"order":"A-1"}`), At: now}
					e := dispatch.Event{Scope: call.Scope, ID: string(call.IdempotencyKey), Tool: call.Tool, Arguments: call.Arguments, At: now, KeepUntil: now.Add(2 * time.Hour)}
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
				slices.Sort(latencies)
				at := func(p float64) float64 { return float64(latencies[int(p*float64(len(latencies)-1))].Nanoseconds()) }
				b.ReportMetric(at(0.50), "p50-ns")
				b.ReportMetric(at(0.99), "p99-ns")
			})
		}
	}
}

// rebind writes the ? placeholders of query as d wants them.
func rebind(d sqlstore.Dialect, query string) string {
	if d != sqlstore.PostgreSQL {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
