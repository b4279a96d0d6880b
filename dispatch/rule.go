package dispatch

import (
	"context"
	"encoding/json"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Rule is a policy over a scope: it decides whether a call may run from
// what came before it in its scope ([Call.Scope]), which it reads in the
// scope's log. The package has four ([RateLimit], [SumLimit],
// [RequiresPrior], [Taint]); [Shadow] tries one without enforcing it. A
// runtime may write its own on the same ScopeLog.
//
// A Dispatcher decides the rules that name a call's tool (RuleSpec.Tools)
// after the call was admitted (its tool resolved, its arguments checked)
// and before its tool runs, all of them, in the order of Config.Rules,
// while its EventStore holds the scope's lock: the decision and the
// reservation of the call's place in the log are one step, so that
// calls that run at the same moment, on any number of replicas, cannot
// all take the last place. The first rule that denies decides the
// outcome; the rules after it are still decided, so that each is
// observed.
//
// A Rule must be safe for concurrent use. Decide must not keep log or
// call's Arguments, must not block on anything but log (it runs under
// the scope's lock), and may be called more than once for one call (a
// store may decide again); it must not panic (a panic is recovered, and
// the call does not run).
type Rule interface {
	// Spec says what the rule is: its name, the tools whose calls it
	// decides and how far back it reads. New reads it once and refuses
	// a Config whose rules' specs are not valid, with the error of Spec
	// wrapped in ErrInvalidConfig.
	Spec() (RuleSpec, error)
	// Decide decides call with its scope's log in view. An error means
	// no decision could be made: the call does not run (see Config.Rules).
	Decide(ctx context.Context, call ScopedCall, log ScopeLog) (Decision, error)
}

// RuleSpec is what a Rule says of itself.
type RuleSpec struct {
	// Name names the rule in the Observer's RuleDecision, in logs and in
	// traces: 1 to 64 ASCII letters, digits, '_' or '-', different from
	// the names of the other rules of the Config.
	Name string
	// Tools are the tools whose calls the rule decides: 1 to 64 tool
	// names, each once.
	Tools []string
	// Window is how far back the rule reads the scope's log: positive,
	// at most MaxRuleWindow. The longest window of a Dispatcher's rules
	// bounds how long its events must be kept (Config.EventRetention).
	Window time.Duration
}

// MaxRuleWindow bounds RuleSpec.Window: a year and a day.
const MaxRuleWindow = 366 * 24 * time.Hour

// Decision is what a Rule decides for one call. The zero Decision
// allows it.
type Decision struct {
	// Deny refuses the call: it does not run, and its Outcome is
	// KindFailed, a *tool.Failure of kind rejected whose public Output is
	// Reason.
	Deny bool
	// Reason is why, for the model: public text, which must hold no
	// private data (an Observer and a log see the rule's name, never its
	// reason). Empty gives a generic sentence.
	Reason string
}

// ScopedCall is what a Rule is given of the call it decides. It is the
// rule's own copy.
type ScopedCall struct {
	// Scope is the call's Call.Scope.
	Scope string
	// Tool is the called tool's name.
	Tool string
	// IdempotencyKey is the key the call runs under, which names its
	// event in the scope's log.
	IdempotencyKey tool.IdempotencyKey
	// Arguments are the admitted arguments, as canonical JSON (compact,
	// members sorted by name, numbers as written), as the log keeps
	// them.
	Arguments json.RawMessage
	// At is the time of the decision, on the Dispatcher's clock
	// (Config.Clock): the Now of the rule's queries.
	At time.Time
}

// Member returns a copy of the value at member (a JSON pointer, as
// WindowQuery.Member) of c's arguments, and false when there is none or
// member is not a valid path.
func (c ScopedCall) Member(member string) (json.RawMessage, bool) {
	path, err := MemberPath(member)
	if err != nil {
		return nil, false
	}
	v, ok := memberValue(c.Arguments, path)
	return json.RawMessage(v), ok
}

// Shadow is a Rule that is decided as its Rule is, and observed and
// logged as it is, but never refuses a call: a team tries a policy on
// live traffic and reads what it would have denied (RuleDecision.Shadow
// and Denied) before enforcing it. The calls it would have denied run
// and join the log, so its later decisions see them.
type Shadow struct {
	// Rule is the rule tried. Required.
	Rule Rule
}

// Spec returns the Spec of s.Rule; a Shadow without a Rule is an error.
func (s Shadow) Spec() (RuleSpec, error) {
	if s.Rule == nil || isTypedNil(s.Rule) {
		return RuleSpec{}, errprefix.Errorf("%w: a Shadow without a Rule", ErrInvalidConfig)
	}
	return s.Rule.Spec()
}

// Decide returns what s.Rule decides. The Dispatcher enforces no denial
// of a Shadow.
func (s Shadow) Decide(ctx context.Context, call ScopedCall, log ScopeLog) (Decision, error) {
	return s.Rule.Decide(ctx, call, log)
}

// RuleDecision is what an Observer is told of one rule decided for a
// call (Observer.RuleDecided): which rule, and what it decided. It holds
// no argument and no reason.
type RuleDecision struct {
	// Rule is the rule's RuleSpec.Name.
	Rule string
	// Denied is true when the rule denied the call.
	Denied bool
	// Shadow is true for a Shadow rule, whose denial did not refuse the
	// call.
	Shadow bool
	// Enforced is true for the one decision that refused the call: the
	// first denial of a rule that is not a Shadow.
	Enforced bool
}
