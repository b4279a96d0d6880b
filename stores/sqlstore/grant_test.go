package sqlstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// The replicas of the conformance tests keep grants too: each call goes
// to the next Store.

func (r *roundRobin) AddGrant(ctx context.Context, g dispatch.Grant, made dispatch.Receipt) error {
	return r.next().AddGrant(ctx, g, made)
}

func (r *roundRobin) Grants(ctx context.Context, q dispatch.GrantQuery) ([]dispatch.Grant, error) {
	return r.next().Grants(ctx, q)
}

func (r *roundRobin) SpendGrant(ctx context.Context, id string, now time.Time, spent dispatch.Receipt) (dispatch.Grant, error) {
	return r.next().SpendGrant(ctx, id, now, spent)
}

func (r *roundRobin) RevokeGrant(ctx context.Context, id, by string, at time.Time, revoked dispatch.Receipt) (dispatch.Grant, error) {
	return r.next().RevokeGrant(ctx, id, by, at, revoked)
}

func (r *roundRobin) AddReceipt(ctx context.Context, rc dispatch.Receipt) error {
	return r.next().AddReceipt(ctx, rc)
}

func (r *roundRobin) Receipts(ctx context.Context, q dispatch.ReceiptQuery) ([]dispatch.Receipt, error) {
	return r.next().Receipts(ctx, q)
}

// refundIn and refundAnswer are the refund tool's arguments and answer.
type refundIn struct {
	Order string `json:"order"`
	Cents int    `json:"cents"`
}

type refundAnswer struct {
	Approve bool `json:"approve"`
}

// refundRegistry is a registry of a refund tool that asks before it
// pays, and counts what it paid.
func refundRegistry(t *testing.T, paid *atomic.Int32) *tool.Registry {
	t.Helper()
	refund, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in refundIn) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d on %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in refundIn, a refundAnswer) (string, error) {
			if !a.Approve {
				return "not refunded", nil
			}
			paid.Add(1)
			return fmt.Sprintf("refunded %d on %s", in.Cents, in.Order), nil
		})
	require.NoError(t, err)
	b, err := tool.Bind(refund)
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	return reg
}

// 64 calls at once against a grant of 3 uses, on two Dispatchers each on
// its own *sql.DB of one database (two replicas): exactly 3 run without
// asking, and 61 ask.
func TestGrantAcrossReplicas(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := b.new(t)
			var paid atomic.Int32
			reg := refundRegistry(t, &paid)
			keys := []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}
			var ds []*dispatch.Dispatcher
			var stores []*sqlstore.Store
			for range 2 {
				s := db.store(t, sqlstore.Config{})
				d, err := dispatch.New(dispatch.Config{Registry: reg, Store: s, SealKeys: keys, Grants: s})
				require.NoError(t, err)
				ds, stores = append(ds, d), append(stores, s)
			}
			call := dispatch.Call{ID: "call_1", Principal: "ana", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7","cents":1250}`}}
			o := ds[0].Run(t.Context(), call)
			require.Equal(t, dispatch.KindSuspended, o.Kind, o.Text())
			grant, err := ds[0].Mint(t.Context(), *o.Checkpoint, dispatch.Mint{By: "ana", Answer: json.RawMessage(`{"approve":true}`), Uses: 3})
			require.NoError(t, err)

			const calls = 64
			kinds := map[dispatch.Kind]int{}
			var mu sync.Mutex
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range calls {
				wg.Go(func() {
					<-start
					o := ds[i%2].Run(context.Background(), call)
					mu.Lock()
					kinds[o.Kind]++
					mu.Unlock()
				})
			}
			close(start)
			wg.Wait()
			require.Equal(t, map[dispatch.Kind]int{dispatch.KindCompleted: 3, dispatch.KindSuspended: calls - 3}, kinds)
			require.EqualValues(t, 3, paid.Load())

			gs, err := stores[1].Grants(t.Context(), dispatch.GrantQuery{ID: grant.ID})
			require.NoError(t, err)
			require.Equal(t, 3, gs[0].Used)
			rs, err := stores[1].Receipts(t.Context(), dispatch.ReceiptQuery{GrantID: grant.ID})
			require.NoError(t, err)
			count := map[dispatch.ReceiptKind]int{}
			for _, r := range rs {
				data, err := json.Marshal(r)
				require.NoError(t, err)
				_, err = dispatch.VerifyReceipt(data, keys)
				require.NoError(t, err, "a receipt read back from the database verifies")
				count[r.Kind]++
			}
			require.Equal(t, map[dispatch.ReceiptKind]int{dispatch.ReceiptMade: 1, dispatch.ReceiptSpent: 3, dispatch.ReceiptCovered: 3}, count)
			claims, err := stores[0].Claims(t.Context(), dispatch.ClaimQuery{})
			require.NoError(t, err)
			covered := 0
			for _, c := range claims {
				if c.GrantID == grant.ID {
					covered++
				}
			}
			require.Equal(t, 3, covered, "each covered call's claim names the grant")
		})
	}
}

// The grants' migration adds two tables of its own, and nothing else.
func TestGrantMigration(t *testing.T) {
	for _, d := range []sqlstore.Dialect{sqlstore.PostgreSQL, sqlstore.SQLite} {
		m := sqlstore.Migrations(d)
		grants := m[2] // version 3
		require.Contains(t, grants, "CREATE TABLE tool_grants (", d.String())
		require.Contains(t, grants, "CREATE TABLE tool_grant_receipts (", d.String())
		require.NotContains(t, grants, "ALTER TABLE", "the migration touches no table of another")
		require.True(t, strings.HasSuffix(grants, "INSERT INTO tool_schema_version (version) VALUES (3);\n"))
	}
}
