package dispatch_test

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
)

// refunds is a refund tool that asks before it pays: its input schema
// leaves the object open (so that a call with an extra member is admitted,
// and only a grant's predicate can refuse it), and its response schema
// caps the cents a person may answer at the cents asked for.
type refunds struct {
	asked, paid *atomic.Int32
	schema      string // the input schema: change it to change the contract
}

const refundSchema = `{"type":"object","properties":{"order":{"type":"string"},"cents":{"type":"integer","minimum":1}},"required":["order","cents"]}`

func newRefunds() refunds {
	return refunds{asked: new(atomic.Int32), paid: new(atomic.Int32), schema: refundSchema}
}

func (r refunds) Definition() tool.Definition {
	return tool.Definition{Name: "refund", Description: "refund an order", InputSchema: json.RawMessage(r.schema)}
}

func (r refunds) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	var in struct {
		Order string `json:"order"`
		Cents int    `json:"cents"`
	}
	if err := json.Unmarshal(inv.Arguments(), &in); err != nil {
		return tool.Result{}, err
	}
	c, resumed := inv.Continuation()
	if !resumed {
		r.asked.Add(1)
		schema, err := tool.ParseSchema(fmt.Appendf(nil, `{"type":"object","properties":{"approve":{"type":"boolean"},"cents":{"type":"integer","maximum":%d}},"required":["approve"]}`, in.Cents))
		if err != nil {
			return tool.Result{}, err
		}
		ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: fmt.Appendf(nil, `"Refund %d on %s?"`, in.Cents, in.Order), ResponseSchema: schema})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &ir}, nil
	}
	var answer struct {
		Approve bool `json:"approve"`
	}
	if err := json.Unmarshal(c.Response(), &answer); err != nil || !answer.Approve {
		return tool.Result{Output: tool.NewTextOutput("not refunded")}, nil
	}
	r.paid.Add(1)
	return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("refunded %d on %s", in.Cents, in.Order))}, nil
}

// grantRig is a dispatcher of refunds with grants, on its own store.
type grantRig struct {
	refunds
	store *dispatch.MemoryStore
	d     *dispatch.Dispatcher
	keys  []dispatch.SealKey
	now   time.Time
	mu    sync.Mutex
}

func newGrantRig(t *testing.T, edit ...func(*dispatch.Config)) *grantRig {
	t.Helper()
	g := &grantRig{refunds: newRefunds(), store: memoryStore(t), keys: []dispatch.SealKey{{ID: "k1", Secret: secret}},
		now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
	g.d = g.dispatcher(t, g.refunds, edit...)
	return g
}

func (g *grantRig) clock() time.Time {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.now
}

func (g *grantRig) advance(d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.now = g.now.Add(d)
}

// dispatcher is another dispatcher on the rig's store, keys and clock,
// with the tool r.
func (g *grantRig) dispatcher(t *testing.T, r refunds, edit ...func(*dispatch.Config)) *dispatch.Dispatcher {
	t.Helper()
	reg := registryOf(t, r)
	config := dispatch.Config{Registry: reg, Store: g.store, SealKeys: g.keys, Grants: g.store, Clock: g.clock}
	for _, e := range edit {
		e(&config)
	}
	d, err := dispatch.New(config)
	require.NoError(t, err)
	return d
}

func refundCall(principal, args string) dispatch.Call {
	return dispatch.Call{ID: "call-" + args, Principal: principal, Request: tool.Request{Name: "refund", Arguments: args}}
}

// ask runs a call that must ask, and returns its checkpoint.
func (g *grantRig) ask(t *testing.T, principal, args string) dispatch.Checkpoint {
	t.Helper()
	o := g.d.Run(t.Context(), refundCall(principal, args))
	require.Equal(t, dispatch.KindSuspended, o.Kind, o.Text())
	return *o.Checkpoint
}

const approve = `{"approve":true}`

// The case: a grant minted for {"order":"A-7","cents":1250}
// with cents widened to at most 5,000 covers {"order":"A-7","cents":4000}
// and nothing else: not another order, not an extra member, not another
// principal's call, not a call under a changed contract, and nothing once
// revoked.
func TestGrantCoversWhatWasApproved(t *testing.T) {
	g := newGrantRig(t)
	cp := g.ask(t, "ana", `{"order":"A-7","cents":1250}`)
	grant, err := g.d.Mint(t.Context(), cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 10,
		Widen: []dispatch.Widening{{Member: "cents", Maximum: "5000"}}})
	require.NoError(t, err)
	require.Equal(t, []dispatch.Widening{{Member: "cents", Maximum: "5000", Approved: "1250"}}, grant.Widened)
	require.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["cents","order"],
		"properties":{"cents":{"type":"integer","maximum":5000},"order":{"const":"A-7"}}}`, string(grant.Predicate))

	o := g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":4000}`))
	require.Equal(t, dispatch.KindCompleted, o.Kind, o.Text())
	require.Equal(t, "refunded 4000 on A-7", o.Text())

	for _, c := range []struct {
		why       string
		principal string
		args      string
	}{
		{"another order", "ana", `{"order":"B-9","cents":1250}`},
		{"an extra member", "ana", `{"order":"A-7","cents":1250,"note":"x"}`},
		{"beyond the widened maximum", "ana", `{"order":"A-7","cents":5001}`},
		{"another principal's call", "bo", `{"order":"A-7","cents":1250}`},
		{"a call sealed for nobody", "", `{"order":"A-7","cents":1250}`},
	} {
		o := g.d.Run(t.Context(), refundCall(c.principal, c.args))
		require.Equal(t, dispatch.KindSuspended, o.Kind, "%s must ask: %s", c.why, o.Text())
	}

	// The tool's input schema changes: its contract's digest with it.
	changed := g.refunds
	changed.schema = strings.Replace(refundSchema, `"minimum":1`, `"minimum":2`, 1)
	later := g.dispatcher(t, changed)
	o = later.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":4000}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind, "a schema change voids the grant: %s", o.Text())

	// Revoked: the next call asks.
	_, err = g.d.Revoke(t.Context(), grant.ID, "ana")
	require.NoError(t, err)
	o = g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":4000}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind, "revoked: %s", o.Text())
	_, err = g.d.Revoke(t.Context(), grant.ID, "ana")
	require.ErrorIs(t, err, dispatch.ErrGrantNotLive)

	require.EqualValues(t, 1, g.paid.Load(), "one call ran without asking")
	gs, err := g.d.Grants(t.Context(), dispatch.GrantQuery{ID: grant.ID})
	require.NoError(t, err)
	require.Len(t, gs, 1)
	require.Equal(t, 1, gs[0].Used)
	require.Equal(t, "ana", gs[0].RevokedBy)
	require.Equal(t, g.clock(), gs[0].RevokedAt)
}

// A covered call is answered through the claim Resume makes: it runs once,
// its claim names the grant and the person who granted it, and the
// Observer sees it as OpGrant.
func TestGrantAnswersThroughTheClaim(t *testing.T) {
	var infos []dispatch.CallInfo
	var mu sync.Mutex
	observer := &dispatch.Observer{CallStart: func(ctx context.Context, info dispatch.CallInfo) context.Context {
		mu.Lock()
		infos = append(infos, info)
		mu.Unlock()
		return ctx
	}}
	g := newGrantRig(t, func(c *dispatch.Config) { c.Observer = observer })
	cp := g.ask(t, "ana", `{"order":"A-7","cents":1250}`)
	grant, err := g.d.Mint(t.Context(), cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1})
	require.NoError(t, err)
	o := g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":1250}`))
	require.Equal(t, dispatch.KindCompleted, o.Kind, o.Text())
	require.Equal(t, "call-"+`{"order":"A-7","cents":1250}`, o.CallID)

	all, err := g.store.Claims(t.Context(), dispatch.ClaimQuery{})
	require.NoError(t, err)
	var claims []dispatch.Claim // the answers, without the records of the runs that asked
	for _, c := range all {
		if c.AnswerSHA256 != dispatch.RunSHA256 {
			claims = append(claims, c)
		}
	}
	require.Len(t, claims, 1)
	c := claims[0]
	require.Equal(t, grant.ID, c.GrantID)
	require.Equal(t, "ana", c.Principal)
	require.Equal(t, "ana", c.SealedPrincipal)
	require.JSONEq(t, approve, string(c.Response))
	require.Equal(t, dispatch.KindCompleted, c.Outcome.Kind)
	require.Equal(t, []dispatch.Op{dispatch.OpRun, dispatch.OpRun, dispatch.OpGrant}, []dispatch.Op{infos[0].Op, infos[1].Op, infos[2].Op})
	require.Equal(t, "ana", infos[2].AnsweredBy)

	// Used up: the next asks.
	o = g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":1250}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind)
	require.EqualValues(t, 1, g.paid.Load())
	require.EqualValues(t, 3, g.asked.Load(), "each call asked first; the grant answered one")
}

// Expired, spent, or giving an answer the call's response schema refuses:
// the call asks as before, and no use is taken by an answer it refuses.
func TestGrantThatCannotAnswerAsks(t *testing.T) {
	g := newGrantRig(t, func(c *dispatch.Config) { c.MaxGrantTTL = time.Hour })
	cp := g.ask(t, "ana", `{"order":"A-7","cents":1250}`)
	grant, err := g.d.Mint(t.Context(), cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(`{"approve":true,"cents":1250}`), Uses: 5,
		Widen: []dispatch.Widening{{Member: "cents", Minimum: "500", Maximum: "5000"}}, TTL: 48 * time.Hour})
	require.NoError(t, err)
	require.Equal(t, grant.CreatedAt.Add(time.Hour), grant.ExpiresAt, "the TTL is cut to MaxGrantTTL")

	// The answer caps cents at 1250, and this call's schema at 1000.
	o := g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":1000}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind, o.Text())
	o = g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":2000}`))
	require.Equal(t, dispatch.KindCompleted, o.Kind, o.Text())

	g.advance(time.Hour)
	o = g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":2000}`))
	require.Equal(t, dispatch.KindSuspended, o.Kind, "expired: %s", o.Text())
	gs, err := g.d.Grants(t.Context(), dispatch.GrantQuery{ID: grant.ID})
	require.NoError(t, err)
	require.Equal(t, 1, gs[0].Used)
}

// Of 64 calls at once against a grant of 3 uses, 3 run without asking
// and 61 ask.
func TestGrantUsesAreCounted(t *testing.T) {
	g := newGrantRig(t)
	cp := g.ask(t, "ana", `{"order":"A-7","cents":1250}`)
	_, err := g.d.Mint(t.Context(), cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 3})
	require.NoError(t, err)
	kinds := runConcurrently(t, []*dispatch.Dispatcher{g.d}, refundCall("ana", `{"order":"A-7","cents":1250}`), 64)
	require.Equal(t, map[dispatch.Kind]int{dispatch.KindCompleted: 3, dispatch.KindSuspended: 61}, kinds)
	require.EqualValues(t, 3, g.paid.Load())
}

// runConcurrently runs n copies of call at once, across ds in turn, and
// counts their kinds.
func runConcurrently(t *testing.T, ds []*dispatch.Dispatcher, call dispatch.Call, n int) map[dispatch.Kind]int {
	t.Helper()
	kinds := map[dispatch.Kind]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			o := ds[i%len(ds)].Run(context.Background(), call)
			mu.Lock()
			kinds[o.Kind]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	return kinds
}

// Mint refuses, before anything is recorded, what would make a grant
// broader than the person decided or that the engine cannot bound.
func TestMintRefuses(t *testing.T) {
	g := newGrantRig(t)
	cp := g.ask(t, "ana", `{"order":"A-7","cents":1250}`)
	nobody := g.ask(t, "", `{"order":"A-7","cents":1250}`)
	// Each level of this predicate names the one below twice: 2^40
	// applications of a subschema to one value. The engine's static cost
	// bound refuses it when it is compiled.
	var hostile strings.Builder
	hostile.WriteString(`{"$defs":{"d0":{"type":"object"}`)
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&hostile, `,"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i-1, i-1)
	}
	hostile.WriteString(`},"$ref":"#/$defs/d40"}`)
	for _, c := range []struct {
		why  string
		cp   dispatch.Checkpoint
		mint dispatch.Mint
		want error
		text string
	}{
		{"another person", cp, dispatch.Mint{By: "bo", Answer: json.RawMessage(approve), Uses: 1}, dispatch.ErrWrongPrincipal, ""},
		{"a call sealed for nobody", nobody, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1}, dispatch.ErrInvalidGrant, "names no principal"},
		{"an answer the call refuses", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(`{"approve":"yes"}`), Uses: 1}, dispatch.ErrInvalidAnswer, "/approve"},
		{"no use", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve)}, dispatch.ErrInvalidGrant, "0 uses"},
		{"too many uses", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: dispatch.MaxGrantUses + 1}, dispatch.ErrInvalidGrant, "10001 uses"},
		{"a negative TTL", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, TTL: -time.Second}, dispatch.ErrInvalidGrant, "TTL"},
		{"a string widened", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Widen: []dispatch.Widening{{Member: "order", Maximum: "9"}}},
			dispatch.ErrInvalidGrant, `widened member "order" is a string: only a number can be widened`},
		{"a member the call lacks", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Widen: []dispatch.Widening{{Member: "tip", Maximum: "9"}}},
			dispatch.ErrInvalidGrant, `"tip" is not a member`},
		{"bounds that leave out the approved value", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Widen: []dispatch.Widening{{Member: "cents", Minimum: "2000"}}},
			dispatch.ErrInvalidGrant, "do not admit its approved value 1250"},
		{"a bound that is no number", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Widen: []dispatch.Widening{{Member: "cents", Maximum: `"5000"`}}},
			dispatch.ErrInvalidGrant, "is not a JSON number"},
		{"no bound", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Widen: []dispatch.Widening{{Member: "cents"}}},
			dispatch.ErrInvalidGrant, "has no bound"},
		{"a hostile predicate", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Predicate: json.RawMessage(hostile.String())},
			dispatch.ErrInvalidGrant, "the predicate is refused: validating one value could apply 1001 subschemas, more than the limit of 1000"},
		{"a predicate that refuses its own call", cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 1, Predicate: json.RawMessage(`{"properties":{"cents":{"maximum":10}}}`)},
			dispatch.ErrInvalidGrant, "does not accept the arguments of the call"},
	} {
		_, err := g.d.Mint(t.Context(), c.cp, c.mint)
		require.ErrorIs(t, err, c.want, c.why)
		require.Contains(t, err.Error(), c.text, c.why)
	}
	gs, err := g.d.Grants(t.Context(), dispatch.GrantQuery{})
	require.NoError(t, err)
	require.Empty(t, gs, "nothing refused was recorded")
}

// Each change of a grant and each covered call leaves a receipt that
// verifies under every seal key, and one altered does not.
func TestGrantReceipts(t *testing.T) {
	g := newGrantRig(t)
	cp := g.ask(t, "ana", `{"order":"A-7","cents":1250}`)
	grant, err := g.d.Mint(t.Context(), cp, dispatch.Mint{By: "ana", Answer: json.RawMessage(approve), Uses: 2})
	require.NoError(t, err)
	o := g.d.Run(t.Context(), refundCall("ana", `{"order":"A-7","cents":1250}`))
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	g.advance(time.Second)
	_, err = g.d.Revoke(t.Context(), grant.ID, "ana")
	require.NoError(t, err)

	rs, err := g.store.Receipts(t.Context(), dispatch.ReceiptQuery{GrantID: grant.ID})
	require.NoError(t, err)
	var kinds []dispatch.ReceiptKind
	rotated := []dispatch.SealKey{{ID: "k2", Secret: []byte("another secret of thirty-two bytes!")}, g.keys[0]}
	for _, r := range rs {
		kinds = append(kinds, r.Kind)
		data, err := json.Marshal(r)
		require.NoError(t, err)
		verified, err := dispatch.VerifyReceipt(data, rotated)
		require.NoError(t, err, string(data))
		require.Equal(t, r.ID, verified.ID)
		require.Equal(t, "k1", verified.KeyID)
	}
	require.ElementsMatch(t, []dispatch.ReceiptKind{dispatch.ReceiptMade, dispatch.ReceiptSpent, dispatch.ReceiptCovered, dispatch.ReceiptRevoked}, kinds)
	byKind := map[dispatch.ReceiptKind]dispatch.Receipt{}
	for _, r := range rs {
		byKind[r.Kind] = r
	}
	require.Equal(t, grant.Predicate, byKind[dispatch.ReceiptMade].Grant.Predicate)
	require.Equal(t, `{"order":"A-7","cents":1250}`, byKind[dispatch.ReceiptSpent].Arguments)
	require.Equal(t, 1, byKind[dispatch.ReceiptCovered].Use)
	require.Equal(t, dispatch.KindCompleted, byKind[dispatch.ReceiptCovered].Outcome)
	require.Equal(t, "ana", byKind[dispatch.ReceiptRevoked].By)

	data, err := json.Marshal(byKind[dispatch.ReceiptSpent])
	require.NoError(t, err)
	for _, c := range []struct {
		why  string
		data string
		keys []dispatch.SealKey
		text string
	}{
		{"altered arguments", strings.Replace(string(data), `A-7`, `A-8`, 1), g.keys, "the HMAC does not match"},
		{"a key not given", string(data), rotated[:1], `key "k1", which is not among the keys given`},
		{"not a receipt", `{"id":1}`, g.keys, "does not decode"},
	} {
		_, err := dispatch.VerifyReceipt([]byte(c.data), c.keys)
		require.ErrorIs(t, err, dispatch.ErrInvalidReceipt, c.why)
		require.Contains(t, err.Error(), c.text, c.why)
	}
}

// Grants are configured with the suspension layer, or not at all.
func TestGrantConfig(t *testing.T) {
	reg := registry(t, nil)
	store := memoryStore(t)
	keys := []dispatch.SealKey{{ID: "k1", Secret: secret}}
	for _, c := range []struct {
		config dispatch.Config
		text   string
	}{
		{dispatch.Config{Registry: reg, Grants: store}, "Grants without a Store and seal keys"},
		{dispatch.Config{Registry: reg, Store: store, SealKeys: keys, MaxGrantTTL: time.Hour}, "MaxGrantTTL is set but Grants is nil"},
		{dispatch.Config{Registry: reg, Store: store, SealKeys: keys, Grants: store, MaxGrantTTL: -time.Hour}, "MaxGrantTTL is -1h0m0s"},
	} {
		_, err := dispatch.New(c.config)
		require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
		require.Contains(t, err.Error(), c.text)
	}
	d := newDispatcher(t, reg)
	require.Zero(t, d.MaxGrantTTL())
	_, err := d.Grants(t.Context(), dispatch.GrantQuery{})
	require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
	d = newDispatcher(t, reg, func(c *dispatch.Config) { c.Grants = store })
	require.Equal(t, dispatch.DefaultMaxGrantTTL, d.MaxGrantTTL())
}
