package sqlstore_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// Stranded is one query on the index of the records not finished: it
// reads no other claim. (On PostgreSQL the plan is read with sequential
// scans turned off, since a table this small is cheaper to read whole;
// the question is which index serves the query. PostgreSQL may then sort
// the few open records it found, or walk the index in order; SQLite walks
// it in order.)
func TestStrandedPlan(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			d := b.new(t)
			s := d.store(t, sqlstore.Config{})
			for n := range 50 {
				_, err := s.Claim(ctx, claim(n, n))
				require.NoError(t, err)
				if n%10 != 0 {
					require.NoError(t, s.Finish(ctx, hexN(n, 32), dispatch.SavedOutcome{CallID: "call_1", Tool: "refund", Kind: dispatch.KindCompleted}))
				}
			}
			conn, err := d.open(t).Conn(ctx)
			require.NoError(t, err)
			defer conn.Close()
			explain := "EXPLAIN QUERY PLAN "
			if d.dialect == sqlstore.PostgreSQL {
				explain = "EXPLAIN "
				for _, stmt := range []string{"ANALYZE tool_claims", "SET enable_seqscan = off"} {
					_, err := conn.ExecContext(ctx, stmt)
					require.NoError(t, err)
				}
			} else {
				_, err := conn.ExecContext(ctx, "ANALYZE")
				require.NoError(t, err)
			}
			for _, q := range []dispatch.StrandedQuery{{Now: time.Now()}, {Now: time.Now(), Limit: 2}} {
				query, args := sqlstore.StrandedQuery(s, q)
				rows, err := conn.QueryContext(ctx, explain+query, args...)
				require.NoError(t, err)
				cols, err := rows.Columns()
				require.NoError(t, err)
				var plan []string
				for rows.Next() {
					dest := make([]any, len(cols))
					for i := range dest {
						dest[i] = new(any)
					}
					require.NoError(t, rows.Scan(dest...))
					line := *(dest[len(dest)-1].(*any))
					plan = append(plan, toString(line))
				}
				require.NoError(t, rows.Err())
				require.NoError(t, rows.Close())
				text := strings.Join(plan, "\n")
				require.Contains(t, text, "tool_claims_open", "the plan of %s:\n%s", query, text)
				require.NotContains(t, text, "Seq Scan", text)
				if d.dialect == sqlstore.SQLite {
					require.NotContains(t, text, "TEMP B-TREE", "the index gives the order:\n"+text)
				}
			}
			got, err := s.Stranded(ctx, dispatch.StrandedQuery{Now: time.Now()})
			require.NoError(t, err)
			require.Len(t, got, 5)
		})
	}
}

func toString(v any) string {
	if b, ok := v.([]byte); ok {
		return string(b)
	}
	s, _ := v.(string)
	return s
}

// A page of pending calls reads the summaries SaveTurn wrote in columns,
// not the outcomes' JSON: with every outcome unreadable, the page is
// listed, and only a query for the whole outcomes (Full) fails.
func TestPendingReadsSummaries(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := t.Context()
			d := b.new(t)
			s := d.store(t, sqlstore.Config{})
			ms, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
			require.NoError(t, err)
			var runs atomic.Int32
			dispatcher := refunds(t, ms, &runs)
			now := time.Now().UTC()
			turn := dispatch.Turn{ID: "t", SavedAt: now, ExpiresAt: now.Add(time.Hour)}
			for _, id := range []string{"call_a", strings.Repeat("c", 600)} {
				o := dispatcher.Run(ctx, dispatch.Call{ID: id, Request: tool.Request{Name: "refund", Arguments: `{}`}})
				require.Equal(t, dispatch.KindSuspended, o.Kind)
				turn.Outcomes = append(turn.Outcomes, dispatch.NewSavedOutcome(o))
			}
			require.NoError(t, s.SaveTurn(ctx, turn))
			_, err = d.open(t).ExecContext(ctx, "UPDATE tool_turn_outcomes SET outcome = 'not json'")
			require.NoError(t, err)

			page, err := s.Pending(ctx, dispatch.PendingQuery{})
			require.NoError(t, err, "a page reads no outcome")
			require.Len(t, page, 2)
			for i, p := range page {
				requireSummary(t, dispatch.NewPending("t", i, turn.Outcomes[i], false), p, "the summary of pending call "+p.CallID)
			}
			require.Less(t, len(page[1].CallID), 600, "a summary's text is cut")
			_, err = s.Pending(ctx, dispatch.PendingQuery{Full: true})
			require.ErrorIs(t, err, dispatch.ErrInvalidRecord, "the whole outcomes are read with Full")
		})
	}
}
