package shop_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/examples/shop"
)

// newShop returns a dispatcher over both tools, with keys key-1, key-2, …,
// and the ledger the refund moves money through.
func newShop(t *testing.T) (*dispatch.Dispatcher, *shop.Ledger) {
	t.Helper()
	orders, err := shop.SearchOrders()
	require.NoError(t, err)
	l := &shop.Ledger{}
	refund, err := shop.NewRefund(l)
	require.NoError(t, err)
	var bindings []tool.Binding
	for _, x := range []tool.Tool{orders, refund} {
		b, err := tool.Bind(x, tool.Recover)
		require.NoError(t, err)
		bindings = append(bindings, b)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	var n atomic.Int64
	d, err := dispatch.New(dispatch.Config{
		Registry: reg,
		Store:    store,
		SealKeys: []dispatch.SealKey{{ID: "test", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		NewKey: func() (tool.IdempotencyKey, error) {
			return tool.IdempotencyKey(fmt.Sprintf("key-%d", n.Add(1))), nil
		},
	})
	require.NoError(t, err)
	return d, l
}

func call(name, args string) dispatch.Call {
	return dispatch.Call{ID: "call", Request: tool.Request{Name: name, Arguments: args}}
}

func TestSearchOrders(t *testing.T) {
	d, _ := newShop(t)
	for _, c := range []struct {
		name, args, want string
		kind             dispatch.Kind
	}{
		{"every order of a customer", `{"customer":"C-042"}`,
			`{"orders":[{"id":"A-1001","status":"open","total_eur":42.5},{"id":"A-1002","status":"shipped","total_eur":950}]}`, dispatch.KindCompleted},
		{"only the orders in the status asked for", `{"customer":"C-042","status":"shipped"}`,
			`{"orders":[{"id":"A-1002","status":"shipped","total_eur":950}]}`, dispatch.KindCompleted},
		{"a customer without orders has an empty list, not null", `{"customer":"C-999"}`, `{"orders":[]}`, dispatch.KindCompleted},
		{"a customer ID outside the pattern is the model's to correct", `{"customer":"ana@example.com"}`, "", dispatch.KindRejected},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := d.Run(t.Context(), call(shop.SearchOrdersName, c.args))
			require.Equal(t, c.kind, o.Kind, o.Text())
			if c.want != "" {
				require.JSONEq(t, c.want, o.Text())
			}
		})
	}
}

// A refund asks first, moves money once the person approves, and only
// once per idempotency key.
func TestRefundApproved(t *testing.T) {
	d, l := newShop(t)
	asked := d.Run(t.Context(), call(shop.RefundName, `{"order_id":"A-1001","amount":12.5}`))
	require.Equal(t, dispatch.KindSuspended, asked.Kind)
	require.JSONEq(t, `"Refund 12.50 EUR on order A-1001?"`, string(asked.Checkpoint.InputRequest().Prompt()))
	require.Zero(t, l.Count(), "nothing moves before the approval")

	done, err := d.Resume(t.Context(), *asked.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"approve":true,"note":"sorry"}`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, done.Kind)
	require.Equal(t, "Refunded 12.50 EUR on order A-1001, reference R-0001. Note: sorry", done.Text())
	require.Equal(t, 1, l.Count())

	// The same key again (a retry of the same call) gets the first
	// recorded outcome: the same question, whose answer stands.
	again := d.Run(t.Context(), dispatch.Call{ID: "retry", Request: tool.Request{Name: shop.RefundName, Arguments: `{"order_id":"A-1001","amount":12.5}`}, IdempotencyKey: asked.IdempotencyKey})
	require.Equal(t, dispatch.KindSuspended, again.Kind)
	require.True(t, again.Replayed)
	require.Equal(t, asked.Checkpoint.ID(), again.Checkpoint.ID())
	done, err = d.Resume(t.Context(), *again.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"approve":true,"note":"sorry"}`)})
	require.NoError(t, err)
	require.True(t, done.Replayed)
	require.Equal(t, "Refunded 12.50 EUR on order A-1001, reference R-0001. Note: sorry", done.Text())
	require.Equal(t, 1, l.Count())
}

func TestRefundDeclined(t *testing.T) {
	d, l := newShop(t)
	asked := d.Run(t.Context(), call(shop.RefundName, `{"order_id":"A-1002","amount":20}`))
	require.Equal(t, dispatch.KindSuspended, asked.Kind)
	done, err := d.Resume(t.Context(), *asked.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"approve":false}`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindFailed, done.Kind)
	require.Equal(t, "The approver declined the refund of 20.00 EUR on order A-1002. Nothing was refunded.", done.Text())
	require.Zero(t, l.Count())
}

// An answer outside the form is refused before the tool runs; the call
// can still be answered rightly.
func TestRefundAnswerOutsideTheForm(t *testing.T) {
	d, _ := newShop(t)
	asked := d.Run(t.Context(), call(shop.RefundName, `{"order_id":"A-1001","amount":1}`))
	_, err := d.Resume(t.Context(), *asked.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"approve":"yes"}`)})
	require.ErrorIs(t, err, dispatch.ErrInvalidAnswer)
	done, err := d.Resume(t.Context(), *asked.Checkpoint, dispatch.Answer{Response: json.RawMessage(`{"approve":true}`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, done.Kind)
}

func TestRefundArguments(t *testing.T) {
	d, _ := newShop(t)
	for _, args := range []string{
		`{"order_id":"A-1001","amount":500.01}`,
		`{"order_id":"A-1001","amount":0}`,
		`{"order_id":"1001","amount":1}`,
		`{"order_id":"A-1001","amount":1,"reason":"not a member"}`,
	} {
		require.Equal(t, dispatch.KindRejected, d.Run(t.Context(), call(shop.RefundName, args)).Kind, args)
	}
}

func TestRefundForm(t *testing.T) {
	refund, err := shop.NewRefund(&shop.Ledger{})
	require.NoError(t, err)
	require.NoError(t, refund.Form().Validate(json.RawMessage(`{"approve":true,"note":"ok"}`)))
	require.Error(t, refund.Form().Validate(json.RawMessage(`{"approved":true}`)))
	require.Equal(t, tool.EffectIdempotent, refund.Definition().Effect)
}

func TestNewRefundWithoutLedger(t *testing.T) {
	_, err := shop.NewRefund(nil)
	require.EqualError(t, err, "shop: NewRefund needs a ledger")
}

// The zero Ledger is empty.
func TestZeroLedger(t *testing.T) {
	var l shop.Ledger
	require.Zero(t, l.Count())
}
