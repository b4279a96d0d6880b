package dispatch

import (
	"log/slog"
	"time"

	"github.com/agentcontract/tool"
)

// Config is what the runtime decides for every call a Dispatcher runs. A
// Registry alone is a whole Config: the fields of the suspension layer
// (Store, SealKeys and those after them) are needed only by a runtime
// whose tools ask a person.
type Config struct {
	// Registry holds the tools. Required. It may change while the
	// Dispatcher runs: every call resolves its tool anew.
	Registry *tool.Registry
	// NewKey chooses the idempotency key of a call that does not carry one.
	// nil gives a random 128-bit key written in hex. It is never given
	// anything the model wrote, and must be safe for concurrent use. A
	// key it chooses is new to the call, so such a call is never
	// deduplicated: a runtime that retries a call sets Call.IdempotencyKey
	// itself (see "Exactly once" in the package documentation).
	NewKey func() (tool.IdempotencyKey, error)
	// MaxConcurrency bounds how many calls of one RunAll run at once;
	// 0 and 1 run them in order, one at a time. A call that outlived its
	// CallTimeout keeps its place until its tool really returns.
	MaxConcurrency int
	// CallTimeout, when positive, bounds how long Run, RunAll and Resume
	// wait for one call's tool: the tool's ctx ends after CallTimeout.
	// 0, the default, sets no deadline beyond the caller's ctx (and a
	// resumed call, which runs detached from its caller's ctx, none at
	// all): a default deadline would turn today's long tools (a build, a
	// migration, a person-paced export) into unknown outcomes that did
	// complete. A negative CallTimeout is refused.
	//
	// When the call's ctx ends — at the deadline, or because the caller's
	// ctx did — and the tool has not returned, the call is abandoned: its
	// Outcome is KindUnknown at once (its Err wraps the context's error),
	// while the tool, which ignored its context, goes on in its own
	// goroutine until it returns; what it returns then is dropped, and
	// the progress it reports after that is not passed on. A call whose
	// ctx ended before its tool started does not start it: its Outcome is
	// KindUnknown with the context's error.
	//
	// What the runtime does about it: a tool must honour ctx; a deadline
	// only bounds how long the runtime waits, it does not stop a tool. An
	// unknown outcome of a tool that is not Replayable (Outcome.Retryable
	// false) may have had its effects, or may still have them: do not run
	// the call again blindly — ask the backend or a person what happened.
	// How many abandoned tools may still run is bounded by MaxAbandoned.
	CallTimeout time.Duration
	// MaxAbandoned bounds how many abandoned calls (see CallTimeout) whose
	// tools have not returned yet this Dispatcher lets run in the
	// background, across all its calls. While that many do, a new call is
	// not started: its Outcome is KindUnknown, with an error that says
	// why, and its tool never sees it. 0 means DefaultMaxAbandoned; a
	// negative value is refused. The bound is checked as a call starts,
	// so calls that start at the same moment may each pass it: it can be
	// exceeded by fewer than the number of calls that run at once.
	MaxAbandoned int
	// Logger, when not nil, gets one record per call: the tool, the call
	// ID, the idempotency key, the kind, the duration and the private
	// error. Completed and suspended calls log at Info, failed, rejected
	// and unknown-tool calls at Warn, unknown outcomes at Error.
	Logger *slog.Logger
	// Observer, when not nil, is called as each call starts and ends, and
	// when Resume or Decline refuses a checkpoint; see [Observer] for
	// what its hooks are given and the guarantees they must keep. New
	// copies it. nil, the default, observes nothing and costs nothing.
	Observer *Observer

	// Scope policies: Rules and Events together, or neither. See the
	// package documentation, "Policies over a scope".

	// Rules are decided for each call of Run and RunAll that carries a
	// Call.Scope, after it was admitted and before its tool runs: the
	// rules that name its tool, in this order, with the scope's log in
	// view (see Rule). A call a rule denies does not run: its Outcome is
	// KindFailed, a *tool.Failure of kind rejected with the rule's public
	// reason. A call whose rules cannot be decided (Events failed, a rule
	// erred or panicked) does not run either: KindFailed with
	// PolicyUnavailableText. A call without a Scope is not subject to
	// them, and Resume, Decline, Supersede and Settle decide none (the
	// call was decided when Run admitted it). Rules read the time of
	// Clock (time.Now when nil), with or without the suspension layer.
	// New copies the slice; each Rule's Spec must be valid, and names
	// must differ.
	Rules []Rule
	// Events keeps the scopes' logs: the calls the rules admitted, in
	// flight or with their outcomes. Required with Rules. Replicas share
	// one (the SQL store); a MemoryStore is one process's.
	Events EventStore
	// EventRetention is how long each event is kept (Event.KeepUntil is
	// its time plus EventRetention; EventStore.DeleteExpiredEvents
	// deletes it after that). 0 means the longest Window of the Rules
	// plus MaxClockSkew, the least a rule needs; a longer retention keeps
	// the log for an audit. Less than that least is refused.
	EventRetention time.Duration

	// The suspension layer: Store and SealKeys together, or neither;
	// the fields below are used only with them.

	// Store, with SealKeys, adds the suspension layer: it keeps the
	// claims that make each checkpoint answerable once (and, for
	// SaveTurn and Turn, the turns that wait: a Store does both). nil,
	// with no SealKeys, makes a dispatcher of a registry alone, which
	// runs every call and suspends none: a tool that asks a person gets
	// an unknown outcome that says why (see the package documentation).
	// There is no default store, because one private to a process would
	// silently let every other replica behind a load balancer answer
	// the same checkpoint again: one process uses a MemoryStore, said so
	// explicitly; replicas share one store (and the same SealKeys).
	Store CallStore
	// SealKeys seal and open checkpoints: the first key seals, every key
	// opens, so that a key can be rotated out by putting a new one first
	// and dropping the old one once its checkpoints are resumed. At least
	// one is required with a Store, none without; IDs must differ. New
	// copies them.
	SealKeys []SealKey
	// NewCheckpointID chooses the ID of the checkpoint of a call that
	// suspends. nil draws 128 random bits, which is right for every
	// runtime that can draw them; a runtime that must replay the same way
	// on any machine (a durable workflow) derives the ID from what it has
	// recorded instead. It is called once for each checkpoint sealed (by
	// Run, Settle and Resume), with the call that suspends, whose
	// IdempotencyKey is the key the call ran with; it must be safe for
	// concurrent use.
	//
	// The ID must be 32 lowercase hex digits (128 bits), and it must be
	// unique among the checkpoints sealed with the runtime's keys: it is
	// what a Store claims, so two checkpoints that share an ID are
	// answered once between them. Unique is the function's duty (a
	// digest of a name that is never reused, say), and the ID need not
	// be secret: the seal, not the ID, proves who issued a checkpoint.
	// An error, or an ID of another form, makes the call's outcome
	// unknown, with an error wrapping ErrInvalidCheckpoint.
	NewCheckpointID func(Call) (string, error)
	// CheckpointTTL is how long the checkpoint of a suspended call can be
	// answered, from the moment it is sealed. 0 means
	// DefaultCheckpointTTL; a negative TTL, or one longer than
	// MaxCheckpointTTL, is refused. Expiry is judged on the clock of the
	// process that resumes; see MaxClockSkew.
	CheckpointTTL time.Duration
	// Lease is how long this Dispatcher's hold on a call it runs under a
	// call record (a Run of a tool that is not tool.EffectSafe, a
	// resume, decline or supersede) lasts unless renewed: it renews the
	// hold a third of the way through while the call runs, and another
	// process recovers the call (see Resume, "Uncertain paths", and
	// "Exactly once" in the package documentation) only once the hold
	// ended. 0 means DefaultLease (a minute); a negative Lease is
	// refused. Holds are judged on the clock of the process that reads
	// them (Clock): the replicas' clocks must agree to well within it.
	Lease time.Duration
	// KeyTTL is how long the record of a call Run ran keeps its
	// idempotency key's promise: for KeyTTL after the call started, a
	// call of the same tool, principal and key returns the first
	// recorded outcome and runs nothing (see "Exactly once" in the
	// package documentation); the Store may delete the record after it
	// (Sweeper), and the key then runs a new call. 0 means
	// DefaultKeyTTL (a day); a negative KeyTTL, or one longer than
	// MaxKeyTTL, is refused. A runtime that retries a call later than
	// that must keep its records longer.
	KeyTTL time.Duration
	// Reconcilers are the tools' reconcilers, by tool name: the one a
	// Dispatcher asks, before it runs again a call whose earlier
	// attempt's outcome is unknown, what became of that attempt (see
	// Reconciler). A tool without one is run again only when its
	// Effect makes a replay under its key safe. New copies the map; a
	// nil Reconciler, an empty name, or Reconcilers on a dispatcher
	// without a Store (which keeps no call records, so has nothing to
	// reconcile) is refused with ErrInvalidConfig. A name that no tool
	// of the Registry has is allowed (the tool may be registered later).
	Reconcilers map[string]Reconciler
	// Clock tells the time a checkpoint is issued and the time it is
	// resumed at, and when a lease ends. nil means time.Now. It must be safe for concurrent use.
	// A Clock that is not the machine's (a workflow's own time, say) is
	// read for nothing else: durations in Outcomes are measured on the
	// machine's clock.
	Clock func() time.Time

	// Grants, when not nil, keeps standing approvals (see "Grants" in
	// the package documentation): a call about to suspend for a
	// principal is answered instead by a live grant that covers it, and
	// Mint, Revoke and Grants use it. It needs the suspension layer
	// (Store and SealKeys), whose first key seals the receipts. nil, the
	// default, covers no call: every call that asks, asks.
	Grants GrantStore
	// MaxGrantTTL caps how long a grant lasts (Mint.TTL): 0 means
	// DefaultMaxGrantTTL; a negative one, one above MaxCheckpointTTL, or
	// one without Grants is refused.
	MaxGrantTTL time.Duration
}

// DefaultMaxAbandoned is the Config.MaxAbandoned of a Config that sets
// none.
const DefaultMaxAbandoned = 64

// DefaultKeyTTL is the Config.KeyTTL of a Config that sets none: a day,
// as long as a checkpoint can be answered by default (a runtime's own
// retries of one call come within minutes or hours).
const DefaultKeyTTL = 24 * time.Hour

// MaxKeyTTL is the longest Config.KeyTTL New accepts: MaxCheckpointTTL,
// for the same reason (a record's times must fit Unix nanoseconds).
const MaxKeyTTL = MaxCheckpointTTL
