package main

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// call is the model's refund call with args, sealed for the operator.
func operatorsCall(id, args string) dispatch.Call {
	return dispatch.Call{ID: id, Principal: person, Request: tool.Request{Name: "refund", Arguments: args}}
}

// testGrants drives the desk in Chromium: the operator approves a refund
// and, in the same form, its like up to $50.00 three times; the next
// refund of that order up to the limit runs without asking, one of
// another order asks; the grant's page shows what is pinned and what is
// widened; revoked there, the next call asks.
func testGrants(t *testing.T, ctx context.Context) {
	s := newDeskServer(t)
	_, err := s.app.suspend(t.Context(), "t1", operatorsCall("call-t1", `{"order":"A-7","cents":1250}`))
	require.NoError(t, err)
	tb := newTab(t, ctx)
	tb.openFirst(t, s.url)
	tb.run(t,
		chromedp.Click(chromedp.CSS(approveYes)),
		chromedp.Click(chromedp.CSS(`details.grant summary`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="grant.max.1"]`)),
	)
	require.Equal(t, "exactly as approved", tb.text(t, `tr.member[data-member="order"] .pinned`))
	tb.run(t,
		chromedp.SendKeys(chromedp.CSS(`input[name="grant.max.1"]`), "5000"),
		chromedp.SetValue(chromedp.CSS(`input[name="grant.uses"]`), "3"),
		chromedp.Click(chromedp.CSS(`button[value="grant"]`)),
	)
	require.Contains(t, tb.text(t, `p.granted`), "Approved in advance: the next 3 calls like this one")
	require.Contains(t, tb.text(t, `p.outcome`), "Refunded $12.50 on order A-7.")
	require.EqualValues(t, 1, s.paid.Load())

	// Covered: runs without asking. Another order: asks.
	o := s.d.Run(t.Context(), operatorsCall("call-2", `{"order":"A-7","cents":4000}`))
	require.Equal(t, dispatch.KindCompleted, o.Kind, o.Text())
	require.Equal(t, "Refunded $40.00 on order A-7.", o.Text())
	o = s.d.Run(t.Context(), operatorsCall("call-3", `{"order":"B-9","cents":1250}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind)

	tb.run(t, chromedp.Click(chromedp.CSS(`p.granted a`)), chromedp.WaitVisible(chromedp.CSS(`table.rules`)))
	require.Equal(t, "any number up to 5000 (approved: 1250) widened", tb.text(t, `tr.rule.widened[data-member="cents"] td:nth-child(2)`))
	require.Equal(t, `exactly "A-7"`, tb.text(t, `tr.rule[data-member="order"] td:nth-child(2)`))
	require.Equal(t, "1 of 3 used", tb.text(t, `dd.uses`))
	tb.run(t, chromedp.Click(chromedp.CSS(`button[value="revoke"]`)), chromedp.WaitVisible(chromedp.CSS(`p.notice`)))
	require.Contains(t, tb.text(t, `p.notice`), "Revoked")
	require.Equal(t, "revoked by operator at", tb.text(t, `dd.state`)[:len("revoked by operator at")])

	o = s.d.Run(t.Context(), operatorsCall("call-4", `{"order":"A-7","cents":4000}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind, "the next call after a revocation asks")
	require.EqualValues(t, 2, s.paid.Load())

	// The list of standing approvals, from the header's link.
	tb.run(t, chromedp.Click(chromedp.CSS(`header a.grants`)), chromedp.WaitVisible(chromedp.CSS(`li.grant`)))
	require.Equal(t, "revoked", tb.text(t, `li.grant .state`))
	require.Empty(t, tb.recorded())
}
