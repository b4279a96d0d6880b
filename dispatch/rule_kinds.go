package dispatch

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/agentcontract/tool/internal/errprefix"
)

// RateLimit allows at most Limit calls of its Tools, together, in any
// Window of a scope: "at most 10 emails an hour per customer". The calls
// that count are those in flight and those whose outcome kept their
// reservation (completed, suspended, unknown), this one included; a call
// that failed or was rejected does not count.
type RateLimit struct {
	// Name names the rule (RuleSpec.Name).
	Name string
	// Tools are the tools whose calls it counts and decides.
	Tools []string
	// Limit is how many calls the window holds: 1 or more.
	Limit int
	// Window is the period the calls are counted over.
	Window time.Duration
	// Reason, when not empty, is what the model reads when a call is
	// denied; otherwise a sentence that states the limit.
	Reason string
}

// Spec implements Rule. Errors wrap ErrInvalidConfig: a Limit below 1.
func (r RateLimit) Spec() (RuleSpec, error) {
	if r.Limit < 1 {
		return RuleSpec{}, errprefix.Errorf("%w: RateLimit %q: Limit is %d, want 1 or more", ErrInvalidConfig, truncate(r.Name, 80), r.Limit)
	}
	return RuleSpec{Name: r.Name, Tools: r.Tools, Window: r.Window}, nil
}

// Decide implements Rule: it denies a call when the window already holds
// Limit calls.
func (r RateLimit) Decide(ctx context.Context, call ScopedCall, log ScopeLog) (Decision, error) {
	t, err := log.Totals(WindowQuery{Tools: r.Tools, Now: call.At, Window: r.Window})
	if err != nil || t.Count < int64(r.Limit) {
		return Decision{}, err
	}
	return deny(r.Reason, call, fmt.Sprintf("at most %d calls of %s are allowed %s", r.Limit, toolList(r.Tools), per(r.Window))), nil
}

// SumLimit bounds the running sum of a numeric argument over the calls of
// its Tools in any Window of a scope: "no more than $5,000 of refunds per
// hour". A call is denied when the sum of the calls that count (as for
// RateLimit) and its own amount would be above Limit. A call whose
// Member is missing, not a number, or negative is denied: it cannot be
// counted. Sums are float64: keep amounts in whole units (cents) for an
// exact limit.
type SumLimit struct {
	// Name names the rule (RuleSpec.Name).
	Name string
	// Tools are the tools whose calls it adds up and decides.
	Tools []string
	// Member is the numeric argument added up, as a JSON pointer
	// ("/amount"; see WindowQuery.Member).
	Member string
	// Limit is the most the sum may reach: a finite number above 0.
	Limit float64
	// Window is the period the sum is taken over.
	Window time.Duration
	// Reason, when not empty, is what the model reads when a call is
	// denied; otherwise a sentence that states the limit.
	Reason string
}

// Spec implements Rule. Errors wrap ErrInvalidConfig: a Limit that is
// not a finite number above 0, a Member that is not a valid path.
func (r SumLimit) Spec() (RuleSpec, error) {
	if !(r.Limit > 0) || math.IsInf(r.Limit, 0) {
		return RuleSpec{}, errprefix.Errorf("%w: SumLimit %q: Limit is %v, want a finite number above 0", ErrInvalidConfig, truncate(r.Name, 80), r.Limit)
	}
	if _, err := MemberPath(r.Member); err != nil {
		return RuleSpec{}, errprefix.Errorf("%w (SumLimit %q)", err, truncate(r.Name, 80))
	}
	return RuleSpec{Name: r.Name, Tools: r.Tools, Window: r.Window}, nil
}

// Decide implements Rule.
func (r SumLimit) Decide(ctx context.Context, call ScopedCall, log ScopeLog) (Decision, error) {
	path, err := MemberPath(r.Member)
	if err != nil {
		return Decision{}, err
	}
	amount, ok := memberNumber(call.Arguments, path)
	if !ok || amount < 0 {
		return deny("", call, fmt.Sprintf("its argument %s must be a number of 0 or more", r.Member)), nil
	}
	t, err := log.Totals(WindowQuery{Tools: r.Tools, Member: r.Member, Now: call.At, Window: r.Window})
	if err != nil || t.Sum+amount <= r.Limit {
		return Decision{}, err
	}
	return deny(r.Reason, call, fmt.Sprintf("the sum of %s over calls of %s is limited to %s %s",
		r.Member, toolList(r.Tools), formatLimit(r.Limit), per(r.Window))), nil
}

// RequiresPrior allows a call of its Tools only after a call of Prior
// completed in the same scope within Window: "no transfer before the
// balance was read". With Member, the calls are correlated: the earlier
// call's PriorMember (Member when empty) must be the same string as
// this call's Member ("/account" of the balance read and of the
// transfer); a call whose Member is not a string is denied.
type RequiresPrior struct {
	// Name names the rule (RuleSpec.Name).
	Name string
	// Tools are the tools whose calls it decides.
	Tools []string
	// Prior is the tool whose completed call must come first.
	Prior string
	// Member, when not empty, is the argument of the decided call that
	// correlates it with the earlier one, as a JSON pointer.
	Member string
	// PriorMember is the earlier call's argument compared with Member;
	// empty means the same path as Member.
	PriorMember string
	// Window is how long ago the earlier call may have been.
	Window time.Duration
	// Reason, when not empty, is what the model reads when a call is
	// denied; otherwise a sentence that names the call to make first.
	Reason string
}

// Spec implements Rule. Errors wrap ErrInvalidConfig: a Prior that is no
// tool name, a Member or PriorMember that is not a valid path, a
// PriorMember without a Member.
func (r RequiresPrior) Spec() (RuleSpec, error) {
	switch {
	case !plainName(r.Prior):
		return RuleSpec{}, errprefix.Errorf("%w: RequiresPrior %q: Prior %q is no tool name", ErrInvalidConfig, truncate(r.Name, 80), truncate(r.Prior, 80))
	case r.Member == "" && r.PriorMember != "":
		return RuleSpec{}, errprefix.Errorf("%w: RequiresPrior %q: a PriorMember without a Member", ErrInvalidConfig, truncate(r.Name, 80))
	}
	for _, m := range []string{r.Member, r.PriorMember} {
		if m == "" {
			continue
		}
		if _, err := MemberPath(m); err != nil {
			return RuleSpec{}, errprefix.Errorf("%w (RequiresPrior %q)", err, truncate(r.Name, 80))
		}
	}
	return RuleSpec{Name: r.Name, Tools: r.Tools, Window: r.Window}, nil
}

// Decide implements Rule.
func (r RequiresPrior) Decide(ctx context.Context, call ScopedCall, log ScopeLog) (Decision, error) {
	q := MatchQuery{Tools: []string{r.Prior}, Now: call.At, Window: r.Window, Outcome: KindCompleted}
	first := "a completed call of " + r.Prior
	if r.Member != "" {
		path, err := MemberPath(r.Member)
		if err != nil {
			return Decision{}, err
		}
		v, ok := memberString(call.Arguments, path)
		if !ok {
			return deny("", call, fmt.Sprintf("its argument %s must be a string", r.Member)), nil
		}
		q.Member, q.Equals = r.PriorMember, v
		if q.Member == "" {
			q.Member = r.Member
		}
		first += fmt.Sprintf(" whose %s is this call's %s", q.Member, r.Member)
	}
	found, err := log.Exists(q)
	if err != nil || found {
		return Decision{}, err
	}
	return deny(r.Reason, call, fmt.Sprintf("it must come after %s, within %s", first, about(r.Window))), nil
}

// Taint refuses the calls of its Tools after a call of any of its
// Sources in the same scope within Window: the Sources read untrusted
// content (a web page, an email from outside), and the Tools send data
// out or act on it: "after reading an untrusted web page, nothing that
// sends data out". Any call of a Source taints, whatever its outcome
// (a failure's message may carry what it read), from the moment it was
// admitted. The marks live here, in the rule, never in a tool's
// Definition or Effect.
type Taint struct {
	// Name names the rule (RuleSpec.Name).
	Name string
	// Sources are the tools that read untrusted content: 1 to 64 tool
	// names.
	Sources []string
	// Tools are the tools refused after one of them.
	Tools []string
	// Window is how long a scope stays tainted: set it to outlast the
	// scope (a conversation's life) for "never again in this
	// conversation".
	Window time.Duration
	// Reason, when not empty, is what the model reads when a call is
	// denied; otherwise a sentence that names the sources.
	Reason string
}

// Spec implements Rule. Errors wrap ErrInvalidConfig: Sources that are
// not 1 to 64 tool names, each once.
func (r Taint) Spec() (RuleSpec, error) {
	if err := checkQuery(r.Sources, time.Unix(0, 0), time.Second); err != nil {
		return RuleSpec{}, errprefix.Errorf("%w (the Sources of Taint %q)", err, truncate(r.Name, 80))
	}
	return RuleSpec{Name: r.Name, Tools: r.Tools, Window: r.Window}, nil
}

// Decide implements Rule.
func (r Taint) Decide(ctx context.Context, call ScopedCall, log ScopeLog) (Decision, error) {
	found, err := log.Exists(MatchQuery{Tools: r.Sources, Now: call.At, Window: r.Window})
	if err != nil || !found {
		return Decision{}, err
	}
	return deny(r.Reason, call, fmt.Sprintf("it is not allowed after a call of %s, which reads untrusted content", toolList(r.Sources))), nil
}

// deny is the denial of call with reason, or with the sentence of why
// when reason is empty.
func deny(reason string, call ScopedCall, why string) Decision {
	if reason == "" {
		reason = fmt.Sprintf("The call to %s was refused: %s.", call.Tool, why)
	}
	return Decision{Deny: true, Reason: reason}
}

// toolList names tools in a sentence.
func toolList(tools []string) string {
	switch len(tools) {
	case 0:
		return "no tool"
	case 1:
		return tools[0]
	}
	return strings.Join(tools[:len(tools)-1], ", ") + " or " + tools[len(tools)-1]
}

// formatLimit writes a limit without a needless fraction.
func formatLimit(f float64) string {
	return fmt.Sprintf("%g", f)
}

// per says "per hour", "per 30 minutes", … of a window.
func per(d time.Duration) string {
	switch d {
	case time.Hour:
		return "per hour"
	case time.Minute:
		return "per minute"
	case 24 * time.Hour:
		return "per day"
	}
	return "per " + about(d)
}

// about says "1 hour", "30 minutes", … of a duration.
func about(d time.Duration) string {
	unit := func(n int64, name string) string {
		if n == 1 {
			return "1 " + name
		}
		return fmt.Sprintf("%d %ss", n, name)
	}
	switch {
	case d%(24*time.Hour) == 0:
		return unit(int64(d/(24*time.Hour)), "day")
	case d%time.Hour == 0:
		return unit(int64(d/time.Hour), "hour")
	case d%time.Minute == 0:
		return unit(int64(d/time.Minute), "minute")
	case d%time.Second == 0:
		return unit(int64(d/time.Second), "second")
	}
	return d.String()
}
