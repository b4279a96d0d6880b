package dispatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// bank is a registry of the tools the scope rules are tried on:
// transfer and refund ({"account" or "order", "amount"}), get_balance
// ({"account"}), fetch_page ({"url"}) and send_email ({"to"}). Every
// call is counted by tool; a transfer from the account "closed" fails
// (a definite failure); while gate is not nil, transfer waits for it,
// after telling started.
type bank struct {
	mu      sync.Mutex
	runs    map[string]int
	gate    chan struct{}
	started chan struct{}
}

func (b *bank) ran(name string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.runs[name]
}

func (b *bank) registry(t testing.TB) *tool.Registry {
	t.Helper()
	reg := &tool.Registry{}
	add := func(name, schema string, effect tool.Effect) {
		def := tool.Definition{Name: name, InputSchema: json.RawMessage(schema), Effect: effect}
		fn := func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
			b.mu.Lock()
			if b.runs == nil {
				b.runs = map[string]int{}
			}
			b.runs[name]++
			gate, started := b.gate, b.started
			b.mu.Unlock()
			if name == "transfer" && gate != nil {
				started <- struct{}{}
				select {
				case <-gate:
				case <-ctx.Done():
					return tool.Result{}, ctx.Err()
				}
			}
			if strings.Contains(string(inv.Arguments()), `"closed"`) {
				f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput("the account is closed"), Cause: errors.New("closed")})
				if err != nil {
					return tool.Result{}, err
				}
				return tool.Result{}, f
			}
			return tool.Result{Output: tool.NewTextOutput(name + " done")}, nil
		}
		binding, err := tool.Bind(toolFunc{def: def, fn: fn})
		require.NoError(t, err)
		require.NoError(t, reg.Register(binding))
	}
	money := `{"type":"object","properties":{"account":{"type":"string"},"order":{"type":"string"},"amount":{"type":"number"}},"additionalProperties":false}`
	add("transfer", money, "")
	add("refund", money, tool.EffectIdempotent)
	add("get_balance", `{"type":"object","properties":{"account":{}},"additionalProperties":false}`, tool.EffectSafe)
	add("fetch_page", `{"type":"object","properties":{"url":{"type":"string"}}}`, tool.EffectSafe)
	add("send_email", `{"type":"object","properties":{"to":{"type":"string"}}}`, "")
	return reg
}

// scopedDispatcher returns a Dispatcher of b's tools with rules, whose
// logs are kept in events and whose time is clk's.
func scopedDispatcher(t testing.TB, b *bank, events dispatch.EventStore, clk *clock, rules []dispatch.Rule, edit ...func(*dispatch.Config)) *dispatch.Dispatcher {
	t.Helper()
	config := dispatch.Config{Registry: b.registry(t), Rules: rules, Events: events, Clock: clk.time, MaxConcurrency: 8}
	for _, e := range edit {
		e(&config)
	}
	d, err := dispatch.New(config)
	require.NoError(t, err)
	return d
}

func scoped(scope, name, args string) dispatch.Call {
	return dispatch.Call{ID: "call", Scope: scope, Request: tool.Request{Name: name, Arguments: args}}
}

// refusedBy requires o to be a call a rule refused with a reason that
// contains want.
func refusedBy(t *testing.T, o dispatch.Outcome, want string) {
	t.Helper()
	require.Equal(t, dispatch.KindFailed, o.Kind, "%v", o.Err)
	require.True(t, o.IsError)
	f, ok := tool.ClassifyFailure(o.Err)
	require.True(t, ok, "the refusal is a *tool.Failure: %v", o.Err)
	require.Equal(t, tool.FailureKindRejected, f.Kind())
	require.Contains(t, o.Text(), want)
	require.False(t, o.Retryable)
}

func TestRateLimit(t *testing.T) {
	b, clk := &bank{}, newClock()
	d := scopedDispatcher(t, b, memoryStore(t), clk, []dispatch.Rule{
		dispatch.RateLimit{Name: "emails-per-hour", Tools: []string{"send_email"}, Limit: 2, Window: time.Hour},
	})
	ctx := t.Context()
	email := scoped("customer-7", "send_email", `{"to":"a@example.com"}`)
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, email).Kind)
	clk.advance(10 * time.Minute)
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, email).Kind)
	clk.advance(10 * time.Minute)
	o := d.Run(ctx, email)
	refusedBy(t, o, "The call to send_email was refused: at most 2 calls of send_email are allowed per hour.")
	require.Equal(t, 2, b.ran("send_email"), "the refused call did not run")

	other := email
	other.Scope = "customer-8"
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, other).Kind, "another scope has its own count")
	unscoped := email
	unscoped.Scope = ""
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, unscoped).Kind, "a call without a scope is subject to no rule")
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("customer-7", "fetch_page", `{}`)).Kind, "the rule names send_email only")

	clk.advance(41 * time.Minute) // the first email is more than an hour old
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, email).Kind)
	refusedBy(t, d.Run(ctx, email), "at most 2 calls")
}

// A call that failed definitely releases its place; one whose outcome is
// unknown keeps it.
func TestReservationReleasedOnFailure(t *testing.T) {
	b, clk := &bank{}, newClock()
	d := scopedDispatcher(t, b, memoryStore(t), clk, []dispatch.Rule{
		dispatch.RateLimit{Name: "one-transfer", Tools: []string{"transfer"}, Limit: 1, Window: time.Hour},
	})
	ctx := t.Context()
	o := d.Run(ctx, scoped("s", "transfer", `{"account":"closed","amount":1}`))
	require.Equal(t, dispatch.KindFailed, o.Kind)
	require.Equal(t, "the account is closed", o.Text(), "the tool's own failure")
	rejected := d.Run(ctx, scoped("s", "transfer", `{"account":7}`))
	require.Equal(t, dispatch.KindRejected, rejected.Kind, "rejected at admission: no rule decided, nothing reserved")
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("s", "transfer", `{"account":"A","amount":1}`)).Kind, "the failed call released its place")

	// A call whose ctx ended while it ran: its outcome is unknown, and it
	// keeps its place.
	b.gate, b.started = make(chan struct{}), make(chan struct{}, 1)
	running, cancel := context.WithCancel(ctx)
	done := make(chan dispatch.Outcome)
	go func() { done <- d.Run(running, scoped("t", "transfer", `{"account":"A","amount":1}`)) }()
	<-b.started
	cancel()
	require.Equal(t, dispatch.KindUnknown, (<-done).Kind)
	b.mu.Lock()
	b.gate = nil
	b.mu.Unlock()
	refusedBy(t, d.Run(ctx, scoped("t", "transfer", `{"account":"A","amount":1}`)), "at most 1 calls")

	// A call whose ctx ended before it was decided reserves nothing.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	o = d.Run(cancelled, scoped("u", "transfer", `{"account":"A","amount":1}`))
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.ErrorIs(t, o.Err, context.Canceled)
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("u", "transfer", `{"account":"A","amount":1}`)).Kind)
}

// Three $2,000 transfers at once under "$5,000 per hour": two run, one is
// refused, whichever it is.
func TestSumLimitConcurrent(t *testing.T) {
	b, clk := &bank{}, newClock()
	d := scopedDispatcher(t, b, memoryStore(t), clk, []dispatch.Rule{
		dispatch.SumLimit{Name: "transfers-per-hour", Tools: []string{"transfer"}, Member: "/amount", Limit: 5000, Window: time.Hour},
	})
	b.gate, b.started = make(chan struct{}), make(chan struct{}, 3)
	calls := make([]dispatch.Call, 3)
	for i := range calls {
		calls[i] = scoped("conv-1", "transfer", `{"account":"A","amount":2000}`)
		calls[i].ID = fmt.Sprint("call-", i)
	}
	done := make(chan []dispatch.Outcome)
	go func() { done <- d.RunAll(t.Context(), calls) }()
	<-b.started
	<-b.started // both allowed transfers are in flight, and counted
	close(b.gate)
	outcomes := <-done
	kinds := map[dispatch.Kind]int{}
	for _, o := range outcomes {
		kinds[o.Kind]++
		if o.Kind == dispatch.KindFailed {
			refusedBy(t, o, "the sum of /amount over calls of transfer is limited to 5000 per hour")
		}
	}
	require.Equal(t, map[dispatch.Kind]int{dispatch.KindCompleted: 2, dispatch.KindFailed: 1}, kinds)
	require.Equal(t, 2, b.ran("transfer"))

	b.mu.Lock()
	b.gate = nil
	b.mu.Unlock()
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), scoped("conv-1", "transfer", `{"account":"A","amount":1000}`)).Kind, "exactly the limit")
	refusedBy(t, d.Run(t.Context(), scoped("conv-1", "transfer", `{"account":"A","amount":0.5}`)), "limited to 5000")
	for _, args := range []string{`{"account":"A"}`, `{"account":"A","amount":-5}`} {
		refusedBy(t, d.Run(t.Context(), scoped("conv-2", "transfer", args)), "its argument /amount must be a number of 0 or more")
	}
}

func TestRequiresPrior(t *testing.T) {
	b, clk := &bank{}, newClock()
	d := scopedDispatcher(t, b, memoryStore(t), clk, []dispatch.Rule{
		dispatch.RequiresPrior{Name: "balance-first", Tools: []string{"transfer"}, Prior: "get_balance", Member: "/account", Window: 15 * time.Minute},
	})
	ctx := t.Context()
	transferA := scoped("s", "transfer", `{"account":"A","amount":5}`)
	refusedBy(t, d.Run(ctx, transferA), "it must come after a completed call of get_balance whose /account is this call's /account, within 15 minutes")
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("s", "get_balance", `{"account":"A"}`)).Kind)
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, transferA).Kind)
	refusedBy(t, d.Run(ctx, scoped("s", "transfer", `{"account":"B","amount":5}`)), "get_balance")
	refusedBy(t, d.Run(ctx, scoped("other", "transfer", `{"account":"A","amount":5}`)), "get_balance")
	refusedBy(t, d.Run(ctx, scoped("s", "transfer", `{"amount":5}`)), "its argument /account must be a string")

	// A balance read that failed is not a completed one.
	require.Equal(t, dispatch.KindFailed, d.Run(ctx, scoped("s", "get_balance", `{"account":"closed"}`)).Kind)
	refusedBy(t, d.Run(ctx, scoped("s", "transfer", `{"account":"closed","amount":5}`)), "get_balance")
	// Nor one read too long ago.
	clk.advance(16 * time.Minute)
	refusedBy(t, d.Run(ctx, transferA), "get_balance")
	require.Equal(t, 1, b.ran("transfer"))
}

func TestTaint(t *testing.T) {
	b, clk := &bank{}, newClock()
	d := scopedDispatcher(t, b, memoryStore(t), clk, []dispatch.Rule{
		dispatch.Taint{Name: "no-exfiltration", Sources: []string{"fetch_page"}, Tools: []string{"send_email", "transfer"}, Window: 24 * time.Hour},
	})
	ctx := t.Context()
	email := scoped("conv", "send_email", `{"to":"a@example.com"}`)
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, email).Kind, "nothing untrusted read yet")
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("conv", "fetch_page", `{"url":"https://example.com"}`)).Kind)
	refusedBy(t, d.Run(ctx, email), "The call to send_email was refused: it is not allowed after a call of fetch_page, which reads untrusted content.")
	refusedBy(t, d.Run(ctx, scoped("conv", "transfer", `{"account":"A","amount":1}`)), "fetch_page")
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("conv", "get_balance", `{}`)).Kind, "a tool the rule does not name")
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, scoped("other-conv", "send_email", `{}`)).Kind, "another scope is not tainted")
	clk.advance(25 * time.Hour)
	require.Equal(t, dispatch.KindCompleted, d.Run(ctx, email).Kind, "the taint lasts its window")
	require.Equal(t, 3, b.ran("send_email"))
}

// A rule in shadow mode changes no outcome: the same calls end the same
// way with and without it, while the Observer and the log are told what
// it would have denied.
func TestShadowChangesNoOutcome(t *testing.T) {
	rules := []dispatch.Rule{
		dispatch.Shadow{Rule: dispatch.RateLimit{Name: "strict-rate", Tools: []string{"send_email", "transfer"}, Limit: 1, Window: time.Hour}},
		dispatch.Shadow{Rule: dispatch.Taint{Name: "strict-taint", Sources: []string{"fetch_page"}, Tools: []string{"send_email"}, Window: time.Hour}},
	}
	calls := []dispatch.Call{
		scoped("s", "send_email", `{}`),
		scoped("s", "fetch_page", `{}`),
		scoped("s", "send_email", `{}`),
		scoped("s", "transfer", `{"account":"closed","amount":1}`),
		scoped("s", "transfer", `{"account":"A","amount":1}`),
		scoped("s", "transfer", `{"account":1}`),
	}
	var logged bytes.Buffer
	run := func(rules []dispatch.Rule, observer *dispatch.Observer) []dispatch.Outcome {
		b, clk := &bank{}, newClock()
		edit := func(c *dispatch.Config) {
			c.Observer = observer
			c.Logger = slog.New(slog.NewJSONHandler(&logged, nil))
		}
		var d *dispatch.Dispatcher
		if rules == nil {
			d = newDispatcher(t, b.registry(t), func(c *dispatch.Config) { c.Clock = clk.time })
		} else {
			d = scopedDispatcher(t, b, memoryStore(t), clk, rules, edit)
		}
		var out []dispatch.Outcome
		for _, c := range calls {
			o := d.Run(t.Context(), c)
			o.Duration, o.IdempotencyKey = 0, ""
			out = append(out, o)
		}
		return out
	}
	var mu sync.Mutex
	var decisions []string
	observer := &dispatch.Observer{RuleDecided: func(_ context.Context, info dispatch.CallInfo, d dispatch.RuleDecision) {
		mu.Lock()
		defer mu.Unlock()
		decisions = append(decisions, fmt.Sprintf("%s %s denied=%v shadow=%v enforced=%v", info.Tool, d.Rule, d.Denied, d.Shadow, d.Enforced))
	}}
	require.Equal(t, run(nil, nil), run(rules, observer))
	require.Equal(t, []string{
		"send_email strict-rate denied=false shadow=true enforced=false",
		"send_email strict-taint denied=false shadow=true enforced=false",
		"send_email strict-rate denied=true shadow=true enforced=false",
		"send_email strict-taint denied=true shadow=true enforced=false",
		"transfer strict-rate denied=true shadow=true enforced=false",
		"transfer strict-rate denied=true shadow=true enforced=false",
	}, decisions)
	require.Equal(t, 4, strings.Count(logged.String(), `"msg":"scope rule in shadow mode would deny","rule":"strict-`), logged.String())
	require.NotContains(t, logged.String(), `"account"`, "no argument in the log")
}

// A call whose process left it in flight (it reserved its place and
// never recorded an outcome) holds its place however long it is gone,
// until a recovery says its effect did not happen.
func TestStrandedReservationHeld(t *testing.T) {
	store, clk := memoryStore(t), newClock()
	rules := []dispatch.Rule{dispatch.SumLimit{Name: "transfers-per-hour", Tools: []string{"transfer"}, Member: "/amount", Limit: 5000, Window: time.Hour}}
	// The dead process: its call reserved 4000 and was never settled.
	dead := &bank{gate: make(chan struct{}), started: make(chan struct{}, 1)}
	d1 := scopedDispatcher(t, dead, store, clk, rules)
	ctx, stop := context.WithCancel(context.Background())
	ended := make(chan dispatch.Outcome)
	go func() {
		c := scoped("conv", "transfer", `{"account":"A","amount":4000}`)
		c.IdempotencyKey = "stranded-key"
		ended <- d1.Run(ctx, c)
	}()
	<-dead.started
	events, err := store.Events(t.Context(), dispatch.EventQuery{Scope: "conv"})
	require.NoError(t, err)
	require.Len(t, events, 1)
	require.Equal(t, dispatch.EventReserved, events[0].State)

	// Another replica of the runtime, on the same store.
	live := &bank{}
	d2 := scopedDispatcher(t, live, store, clk, rules)
	transfer := scoped("conv", "transfer", `{"account":"A","amount":2000}`)
	refusedBy(t, d2.Run(t.Context(), transfer), "limited to 5000")
	clk.advance(50 * time.Minute) // far beyond any lease, within the window
	refusedBy(t, d2.Run(t.Context(), transfer), "limited to 5000")
	require.Equal(t, 0, live.ran("transfer"))

	// Recovery says the stranded call's effect did not happen.
	require.NoError(t, d2.ReleaseReservation(t.Context(), "conv", "stranded-key"))
	require.Equal(t, dispatch.KindCompleted, d2.Run(t.Context(), transfer).Kind)
	require.ErrorIs(t, d2.ReleaseReservation(t.Context(), "conv", "no-such-key"), dispatch.ErrNotFound)

	// The dead process's call, if it ever ends, records its outcome; the
	// released place stays released.
	stop()
	require.Equal(t, dispatch.KindUnknown, (<-ended).Kind)
	events, err = store.Events(t.Context(), dispatch.EventQuery{Scope: "conv"})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindUnknown, events[0].Outcome)
	require.Equal(t, dispatch.EventReleased, events[0].State)
}

// The same call sent again under its key is the same call: it is not
// counted twice, and it runs even when the window is full.
func TestSameKeyCountedOnce(t *testing.T) {
	b, clk := &bank{}, newClock()
	d := scopedDispatcher(t, b, memoryStore(t), clk, []dispatch.Rule{
		dispatch.RateLimit{Name: "one-refund", Tools: []string{"refund"}, Limit: 1, Window: time.Hour},
	})
	c := scoped("s", "refund", `{"order":"A-7","amount":10}`)
	c.IdempotencyKey = "refund-A-7"
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), c).Kind)
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), c).Kind, "sent again under its key")
	c.IdempotencyKey = "refund-A-8"
	refusedBy(t, d.Run(t.Context(), c), "at most 1 calls")
}

// A store that fails, a rule that errs and one that panics: the call
// does not run, and ends failed with PolicyUnavailableText.
func TestPolicyUnavailable(t *testing.T) {
	boom := errors.New("backend down")
	tests := []struct {
		name   string
		events dispatch.EventStore
		rule   dispatch.Rule
		is     error
	}{
		{"store fails", failingEvents{}, dispatch.RateLimit{Name: "r", Tools: []string{"transfer"}, Limit: 5, Window: time.Hour}, dispatch.ErrStore},
		{"rule errs", nil, ruleFunc(func(dispatch.ScopeLog) (dispatch.Decision, error) { return dispatch.Decision{}, boom }), dispatch.ErrRule},
		{"rule panics", nil, ruleFunc(func(dispatch.ScopeLog) (dispatch.Decision, error) { panic("oops") }), dispatch.ErrRule},
		{"bad query", nil, ruleFunc(func(log dispatch.ScopeLog) (dispatch.Decision, error) {
			_, err := log.Totals(dispatch.WindowQuery{Tools: []string{"transfer"}, Member: "amount", Now: time.Now(), Window: time.Hour})
			return dispatch.Decision{}, err
		}), dispatch.ErrInvalidConfig},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := &bank{}
			events := tc.events
			if events == nil {
				events = memoryStore(t)
			}
			d := scopedDispatcher(t, b, events, newClock(), []dispatch.Rule{tc.rule})
			o := d.Run(t.Context(), scoped("s", "transfer", `{"account":"A","amount":1}`))
			require.Equal(t, dispatch.KindFailed, o.Kind)
			require.Equal(t, fmt.Sprintf(dispatch.PolicyUnavailableText, `"transfer"`), o.Text())
			f, ok := tool.ClassifyFailure(o.Err)
			require.True(t, ok)
			require.Equal(t, tool.FailureKindFailed, f.Kind())
			require.ErrorIs(t, f.Cause(), tc.is)
			require.Equal(t, 0, b.ran("transfer"))
		})
	}
}

// ruleFunc is a Rule of transfer decided by a function.
type ruleFunc func(dispatch.ScopeLog) (dispatch.Decision, error)

func (f ruleFunc) Spec() (dispatch.RuleSpec, error) {
	return dispatch.RuleSpec{Name: "custom", Tools: []string{"transfer"}, Window: time.Hour}, nil
}

func (f ruleFunc) Decide(_ context.Context, _ dispatch.ScopedCall, log dispatch.ScopeLog) (dispatch.Decision, error) {
	return f(log)
}

// failingEvents is an EventStore whose every method fails.
type failingEvents struct{}

var errEvents = fmt.Errorf("%w: the database is gone", dispatch.ErrStore)

func (failingEvents) ReserveEvent(context.Context, dispatch.Event, func(dispatch.ScopeLog) (bool, error)) (bool, error) {
	return false, errEvents
}
func (failingEvents) SettleEvent(context.Context, string, string, dispatch.Kind, bool) error {
	return errEvents
}
func (failingEvents) Events(context.Context, dispatch.EventQuery) ([]dispatch.Event, error) {
	return nil, errEvents
}
func (failingEvents) DeleteExpiredEvents(context.Context, time.Time) (int, error) {
	return 0, errEvents
}

// A custom rule's denial: its reason, or a generic sentence without one;
// its decision, with the rule's name and no argument, to the Observer.
func TestCustomRuleDenial(t *testing.T) {
	var seen atomic.Value
	observer := dispatch.Observers(&dispatch.Observer{RuleDecided: func(_ context.Context, info dispatch.CallInfo, d dispatch.RuleDecision) {
		seen.Store(d)
	}})
	for _, reason := range []string{"Not on weekends.", ""} {
		b := &bank{}
		d := scopedDispatcher(t, b, memoryStore(t), newClock(), []dispatch.Rule{
			ruleFunc(func(dispatch.ScopeLog) (dispatch.Decision, error) {
				return dispatch.Decision{Deny: true, Reason: reason}, nil
			}),
		}, func(c *dispatch.Config) { c.Observer = observer })
		o := d.Run(t.Context(), scoped("s", "transfer", `{"account":"A","amount":1}`))
		refusedBy(t, o, cmpOr(reason, "The call to transfer was refused by a policy."))
		f, _ := tool.ClassifyFailure(o.Err)
		require.Equal(t, `refused by the scope rule "custom"`, f.Cause().Error())
		require.Equal(t, dispatch.RuleDecision{Rule: "custom", Denied: true, Enforced: true}, seen.Load())
		require.Equal(t, dispatch.ErrorClassRefused, dispatch.NewSavedOutcome(o).ErrorClass)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestScopeConfigErrors(t *testing.T) {
	reg := (&bank{}).registry(t)
	store := memoryStore(t)
	rate := dispatch.RateLimit{Name: "r", Tools: []string{"transfer"}, Limit: 1, Window: time.Hour}
	tests := []struct {
		name   string
		config dispatch.Config
		want   string
	}{
		{"rules without events", dispatch.Config{Rules: []dispatch.Rule{rate}}, "Rules without an EventStore"},
		{"events without rules", dispatch.Config{Events: store}, "an EventStore without Rules"},
		{"retention without rules", dispatch.Config{EventRetention: time.Hour}, "EventRetention without Rules"},
		{"a nil rule", dispatch.Config{Events: store, Rules: []dispatch.Rule{nil}}, "a nil Rule (Config.Rules[0])"},
		{"a shadow of nothing", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.Shadow{}}}, "a Shadow without a Rule"},
		{"two rules of one name", dispatch.Config{Events: store, Rules: []dispatch.Rule{rate, rate}}, `two rules are named "r" (Config.Rules[1])`},
		{"no name", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RateLimit{Tools: []string{"transfer"}, Limit: 1, Window: time.Hour}}}, `rule name ""`},
		{"no tools", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RateLimit{Name: "r", Limit: 1, Window: time.Hour}}}, "names 0 tools"},
		{"no window", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RateLimit{Name: "r", Tools: []string{"transfer"}, Limit: 1}}}, "a window of 0s"},
		{"a window too long", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RateLimit{Name: "r", Tools: []string{"transfer"}, Limit: 1, Window: 400 * 24 * time.Hour}}}, "longer than MaxRuleWindow"},
		{"a zero limit", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RateLimit{Name: "r", Tools: []string{"transfer"}, Window: time.Hour}}}, "Limit is 0, want 1 or more"},
		{"a sum without a member", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.SumLimit{Name: "s", Tools: []string{"transfer"}, Limit: 5, Window: time.Hour}}}, `member "" is not a JSON pointer`},
		{"a sum without a limit", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.SumLimit{Name: "s", Tools: []string{"transfer"}, Member: "/amount", Window: time.Hour}}}, "want a finite number above 0"},
		{"a prior that is no tool", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RequiresPrior{Name: "p", Tools: []string{"transfer"}, Window: time.Hour}}}, `Prior "" is no tool name`},
		{"a prior member alone", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RequiresPrior{Name: "p", Tools: []string{"transfer"}, Prior: "get_balance", PriorMember: "/a", Window: time.Hour}}}, "a PriorMember without a Member"},
		{"a member with a dot", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RequiresPrior{Name: "p", Tools: []string{"transfer"}, Prior: "get_balance", Member: "/a.b", Window: time.Hour}}}, `the name "a.b"`},
		{"taint without sources", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.Taint{Name: "t", Tools: []string{"send_email"}, Window: time.Hour}}}, "the Sources of Taint"},
		{"a tool named twice", dispatch.Config{Events: store, Rules: []dispatch.Rule{dispatch.RateLimit{Name: "r", Tools: []string{"a", "a"}, Limit: 1, Window: time.Hour}}}, `the tool "a" twice`},
		{"a retention too short", dispatch.Config{Events: store, Rules: []dispatch.Rule{rate}, EventRetention: time.Hour}, "less than the longest window"},
		{"a negative retention", dispatch.Config{Events: store, Rules: []dispatch.Rule{rate}, EventRetention: -1}, "EventRetention is -1ns"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.config.Registry = reg
			_, err := dispatch.New(tc.config)
			require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
			require.Contains(t, err.Error(), tc.want)
			require.True(t, strings.HasPrefix(err.Error(), "tool: "), err.Error())
			require.Equal(t, 1, strings.Count(err.Error(), "tool: "), err.Error())
		})
	}
	// Valid: the events kept for the longest window plus MaxClockSkew, or
	// longer for an audit.
	for _, retention := range []time.Duration{0, time.Hour + dispatch.MaxClockSkew, 48 * time.Hour} {
		_, err := dispatch.New(dispatch.Config{Registry: reg, Events: store, Rules: []dispatch.Rule{rate}, EventRetention: retention})
		require.NoError(t, err)
	}
}

// Scoped calls are kept in their scope's log with their canonical
// arguments, their time and KeepUntil (the longest window plus
// MaxClockSkew), and their outcomes; a scope that is not 1 to 1024 bytes
// of UTF-8 runs nothing.
func TestScopeLogKept(t *testing.T) {
	b, clk, store := &bank{}, newClock(), memoryStore(t)
	d := scopedDispatcher(t, b, store, clk, []dispatch.Rule{
		dispatch.RateLimit{Name: "r", Tools: []string{"transfer", "get_balance"}, Limit: 10, Window: 2 * time.Hour},
	})
	c := scoped("conv-9", "transfer", `{ "amount": 1.50, "account": "A" }`)
	c.IdempotencyKey = "k1"
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), c).Kind)
	c = scoped("conv-9", "get_balance", `{"account":"closed"}`)
	c.IdempotencyKey = "k2"
	require.Equal(t, dispatch.KindFailed, d.Run(t.Context(), c).Kind)
	events, err := store.Events(t.Context(), dispatch.EventQuery{Scope: "conv-9"})
	require.NoError(t, err)
	require.Len(t, events, 2)
	at := clk.time()
	require.Equal(t, dispatch.Event{Scope: "conv-9", ID: "k1", Tool: "transfer", Arguments: json.RawMessage(`{"account":"A","amount":1.50}`),
		At: at, KeepUntil: at.Add(2*time.Hour + dispatch.MaxClockSkew), State: dispatch.EventKept, Outcome: dispatch.KindCompleted}, events[0])
	require.Equal(t, dispatch.EventReleased, events[1].State)
	require.Equal(t, dispatch.KindFailed, events[1].Outcome)

	for _, scope := range []string{strings.Repeat("s", 1025), "\xff"} {
		o := d.Run(t.Context(), scoped(scope, "transfer", `{}`))
		require.Equal(t, dispatch.KindUnknown, o.Kind)
		require.ErrorIs(t, o.Err, dispatch.ErrInvalidConfig)
	}
	require.Equal(t, 1, b.ran("transfer"))
	require.ErrorIs(t, newDispatcher(t, b.registry(t)).ReleaseReservation(t.Context(), "conv-9", "k1"), dispatch.ErrInvalidConfig)
}
