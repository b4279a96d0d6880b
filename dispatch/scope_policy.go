package dispatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// scopePolicies is what a Dispatcher with scope rules decides them with:
// the rules, by the tools they name, and the store of the scopes' logs.
// nil for a Dispatcher without rules.
type scopePolicies struct {
	store     EventStore
	byTool    map[string][]scopeRule
	retention time.Duration
	clock     func() time.Time
}

// scopeRule is one rule of a Config, as New read it.
type scopeRule struct {
	rule   Rule
	name   string
	shadow bool
}

// newScopePolicies checks the scope rules of config, as New documents.
func newScopePolicies(config Config) (*scopePolicies, error) {
	switch {
	case len(config.Rules) == 0 && config.Events == nil:
		if config.EventRetention != 0 {
			return nil, errprefix.Errorf("%w: EventRetention without Rules", ErrInvalidConfig)
		}
		return nil, nil
	case len(config.Rules) == 0:
		return nil, errprefix.Errorf("%w: an EventStore without Rules: set both, or neither", ErrInvalidConfig)
	case config.Events == nil || isTypedNil(config.Events):
		return nil, errprefix.Errorf("%w: Rules without an EventStore (Config.Events) to keep the scopes' logs in", ErrInvalidConfig)
	case config.EventRetention < 0:
		return nil, errprefix.Errorf("%w: EventRetention is %s, want 0 (the default) or more", ErrInvalidConfig, config.EventRetention)
	}
	p := &scopePolicies{store: config.Events, byTool: map[string][]scopeRule{}, clock: config.Clock}
	if p.clock == nil {
		p.clock = time.Now
	}
	var names []string
	var longest time.Duration
	for i, r := range config.Rules {
		spec, err := ruleSpec(r)
		if err != nil {
			return nil, errprefix.Errorf("%w (Config.Rules[%d])", err, i)
		}
		if err := checkSpec(spec, names); err != nil {
			return nil, errprefix.Errorf("%w (Config.Rules[%d])", err, i)
		}
		names = append(names, spec.Name)
		longest = max(longest, spec.Window)
		_, shadow := r.(Shadow)
		for _, name := range spec.Tools {
			p.byTool[name] = append(p.byTool[name], scopeRule{rule: r, name: spec.Name, shadow: shadow})
		}
	}
	p.retention = cmp.Or(config.EventRetention, longest+MaxClockSkew)
	if p.retention < longest+MaxClockSkew {
		return nil, errprefix.Errorf("%w: EventRetention is %s, less than the longest window of the rules (%s) and MaxClockSkew", ErrInvalidConfig, config.EventRetention, longest)
	}
	return p, nil
}

// ruleSpec returns r's spec, a panic of Spec or a nil rule an error.
func ruleSpec(r Rule) (spec RuleSpec, err error) {
	if r == nil || isTypedNil(r) {
		return RuleSpec{}, errprefix.Errorf("%w: a nil Rule", ErrInvalidConfig)
	}
	defer func() {
		if v := recover(); v != nil {
			spec, err = RuleSpec{}, errprefix.Errorf("%w: the rule's Spec panicked: %v", ErrInvalidConfig, v)
		}
	}()
	spec, err = r.Spec()
	if err != nil {
		return RuleSpec{}, errprefix.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	return spec, nil
}

// checkSpec checks a rule's spec against the names of the rules before it.
func checkSpec(spec RuleSpec, names []string) error {
	switch {
	case !plainName(spec.Name):
		return errprefix.Errorf("%w: rule name %q is not 1 to 64 ASCII letters, digits, '_' or '-'", ErrInvalidConfig, truncate(spec.Name, 80))
	case slices.Contains(names, spec.Name):
		return errprefix.Errorf("%w: two rules are named %q", ErrInvalidConfig, spec.Name)
	case spec.Window > MaxRuleWindow:
		return errprefix.Errorf("%w: rule %q: a window of %s, longer than MaxRuleWindow", ErrInvalidConfig, spec.Name, spec.Window)
	}
	if err := checkQuery(spec.Tools, time.Unix(0, 0), spec.Window); err != nil {
		return errprefix.Errorf("%w (rule %q)", err, spec.Name)
	}
	return nil
}

// hold names the event a call reserved: the zero hold for none.
type hold struct {
	scope, id string
}

// reserve decides the scope rules of call, admitted as o (with its key)
// and invocation, and reserves its event when they allow it. It returns
// the outcome the call goes on with, the event it holds, and false when
// the call must not run: o is then its final outcome, failed.
func (p *scopePolicies) reserve(ctx context.Context, w watch, call Call, o Outcome, invocation tool.Invocation) (Outcome, hold, bool) {
	if p == nil || call.Scope == "" {
		return o, hold{}, true
	}
	rules := p.byTool[o.Tool]
	if len(call.Scope) > maxRecordText || !utf8.ValidString(call.Scope) {
		return unknown(o, errprefix.Errorf("%w: Call.Scope is not at most %d bytes of UTF-8", ErrInvalidConfig, maxRecordText)), hold{}, false
	}
	args := jsontext.Value(invocation.Arguments())
	if err := args.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return policyFailed(o, errprefix.Part("the admitted arguments do not canonicalize: %w", err)), hold{}, false
	}
	at := p.clock()
	e := Event{Scope: call.Scope, ID: string(o.IdempotencyKey), Tool: o.Tool, Arguments: []byte(args), At: at, KeepUntil: at.Add(p.retention), State: EventReserved}
	sc := ScopedCall{Scope: call.Scope, Tool: o.Tool, IdempotencyKey: o.IdempotencyKey, At: at}
	var decisions []RuleDecision
	var reason string
	allowed, err := p.store.ReserveEvent(ctx, e, func(log ScopeLog) (bool, error) {
		decisions, reason = decisions[:0], ""
		for _, r := range rules {
			sc.Arguments = slices.Clone(e.Arguments)
			d, err := decide(ctx, r.rule, sc, log)
			if err != nil {
				return false, errprefix.Part("rule %q: %w", r.name, err)
			}
			enforced := d.Deny && !r.shadow && reason == ""
			if enforced {
				reason = cmp.Or(d.Reason, fmt.Sprintf("The call to %s was refused by a policy.", o.Tool))
			}
			decisions = append(decisions, RuleDecision{Rule: r.name, Denied: d.Deny, Shadow: r.shadow, Enforced: enforced})
		}
		return reason == "", nil
	})
	if len(decisions) > 0 {
		info := runInfo(call)
		for _, d := range decisions {
			w.ruleDecided(ctx, info, d)
		}
	}
	switch {
	case err != nil && ctx.Err() != nil:
		// As a call whose ctx ended before its tool started.
		return unknown(o, errprefix.Part("the call was not started: %w", context.Cause(ctx))), hold{}, false
	case err != nil:
		return policyFailed(o, err), hold{}, false
	case !allowed:
		return refusedByRule(o, reason, decisions), hold{}, false
	}
	return o, hold{scope: e.Scope, id: e.ID}, true
}

// decide asks r, turning a panic into an error. An error that wraps
// neither ErrStore (the log failed) nor ErrInvalidConfig (a query that
// is not valid) is wrapped in ErrRule.
func decide(ctx context.Context, r Rule, call ScopedCall, log ScopeLog) (d Decision, err error) {
	defer func() {
		if v := recover(); v != nil {
			d, err = Decision{}, errprefix.Errorf("%w: it panicked: %w", ErrRule, &tool.PanicError{Value: v, Stack: debug.Stack()})
		}
	}()
	d, err = r.Decide(ctx, call, log)
	if err != nil && !errors.Is(err, ErrStore) && !errors.Is(err, ErrInvalidConfig) {
		err = errprefix.Errorf("%w: %w", ErrRule, err)
	}
	return d, err
}

// ruleDecided tells the Observer of d, a rule decided for the call of
// info, and logs the denial of a Shadow rule: what the rule would have
// refused.
func (w watch) ruleDecided(ctx context.Context, info CallInfo, d RuleDecision) {
	if d.Shadow && d.Denied && w.logger != nil {
		w.logger.LogAttrs(ctx, slog.LevelInfo, "scope rule in shadow mode would deny",
			slog.String("rule", d.Rule), slog.String("tool", truncate(info.Tool, 128)), slog.String("call_id", info.CallID))
	}
	if w.observer == nil || w.observer.RuleDecided == nil {
		return
	}
	defer func() { _ = recover() }()
	w.observer.RuleDecided(ctx, info, d)
}

// settle records o, the outcome of the call that holds h, in its scope's
// log: a definite failure or rejection releases its reservation, any
// other outcome keeps it. The write is detached from the caller's ctx
// (the call ran); a store that fails leaves the event reserved, which
// counts, and is logged.
func (p *scopePolicies) settle(ctx context.Context, w watch, h hold, o Outcome) {
	if p == nil || h == (hold{}) {
		return
	}
	release := o.Kind == KindFailed || o.Kind == KindRejected
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	if err := p.store.SettleEvent(sctx, h.scope, h.id, o.Kind, release); err != nil && w.logger != nil {
		w.logger.LogAttrs(ctx, slog.LevelError, "scope event not settled",
			slog.String("tool", truncate(o.Tool, 128)), slog.String("call_id", o.CallID), slog.String("kind", string(o.Kind)), slog.String("error", err.Error()))
	}
}

// ReleaseReservation releases the reservation of the call whose
// idempotency key is key in scope, once it is known that its effect did
// not happen: what a recovery or a reconciler of a stranded call says,
// or an operator who checked the backend. Until then a call in flight,
// and one whose outcome is unknown, hold their reservation, however
// long their process has been gone: a limit counts what may have
// happened. The event stays in the log, released. Releasing an event
// released already does nothing.
//
// Errors wrap ErrInvalidConfig (a Dispatcher without scope rules),
// ErrNotFound (no such event in the scope) or ErrStore.
func (d *Dispatcher) ReleaseReservation(ctx context.Context, scope string, key tool.IdempotencyKey) error {
	if d == nil || d.policies == nil {
		return errprefix.Errorf("%w: this Dispatcher has no scope rules (Config.Rules), and so no reservations", ErrInvalidConfig)
	}
	return d.policies.store.SettleEvent(ctx, scope, string(key), "", true)
}

// runInfo is the CallInfo of call in Run.
func runInfo(call Call) CallInfo {
	return CallInfo{Op: OpRun, CallID: call.ID, Tool: call.Request.Name, Arguments: call.Request.Arguments, IdempotencyKey: call.IdempotencyKey, Principal: call.Principal, TurnID: call.TurnID}
}

// ruleDenial is the private cause of a call a scope rule refused.
type ruleDenial struct {
	rule string
}

func (e *ruleDenial) Error() string {
	return fmt.Sprintf("refused by the scope rule %q", e.rule)
}

// refusedByRule makes o the outcome of a call a rule denied with reason.
func refusedByRule(o Outcome, reason string, decisions []RuleDecision) Outcome {
	rule := ""
	for _, d := range decisions {
		if d.Enforced {
			rule = d.Rule
		}
	}
	out := tool.NewTextOutput(reason)
	f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected, Output: out, Cause: &ruleDenial{rule: rule}})
	if err != nil {
		out = tool.NewTextOutput(fmt.Sprintf("The call to %s was refused by a policy.", quoteName(o.Tool)))
		f, _ = tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected, Output: out, Cause: &ruleDenial{rule: rule}})
	}
	o.Kind, o.IsError, o.Output, o.Err = KindFailed, true, out, f
	return o
}

// PolicyUnavailableText is what the model sees of a call that did not
// run because its scope rules could not be decided (the EventStore
// failed, a rule returned an error or panicked), with the tool's name in
// place of the verb. The call ends KindFailed: nothing ran.
const PolicyUnavailableText = "The call to %s was not run: the policies that govern it could not be checked."

// policyFailed makes o the outcome of a call whose rules could not be
// decided because of err: failed, nothing ran.
func policyFailed(o Outcome, err error) Outcome {
	out := tool.NewTextOutput(fmt.Sprintf(PolicyUnavailableText, quoteName(o.Tool)))
	f, ferr := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: out, Cause: err})
	if ferr != nil {
		return unknown(o, err)
	}
	o.Kind, o.IsError, o.Output, o.Err = KindFailed, true, out, f
	return o
}
