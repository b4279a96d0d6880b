package tooltemporal

import (
	"errors"
	"log/slog"
	"slices"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Names under which a [Runtime]'s parts are known to Temporal. A client sends
// [UpdateAnswer] ([SendAnswer]), [QueryPending] ([ListPending]) and
// [QueryReceipt] ([ReadReceipt]) to a workflow that holds a [Session];
// [ActivityName] is what [Runtime.Register] registers and what the
// workflow schedules.
const (
	// ActivityName is the activity that runs one admitted call.
	ActivityName = "tool.call"
	// UpdateAnswer is the workflow update that carries a person's Answer
	// to a suspended call and returns its Receipt. Its validator refuses
	// an answer without an ID, one that breaks the call's response
	// schema, one that names no suspended call, and an ID used before for
	// another answer; a refused update leaves no trace in the workflow
	// history. An answer accepted before, sent again with its ID, gets
	// the same Receipt and changes nothing.
	UpdateAnswer = "tool.answer"
	// QueryPending is the workflow query that lists the calls waiting for
	// an answer, as []Pending, in the order they suspended.
	QueryPending = "tool.pending"
	// QueryReceipt is the workflow query that returns the Receipt of the
	// answer whose ID it is given, or an error wrapping ErrUnknownAnswer.
	QueryReceipt = "tool.receipt"
)

// Config is what a worker decides for every tool call it admits and runs.
type Config struct {
	// Registry holds the tools. Required. The workflow resolves and
	// admits calls with it, and the activity runs them with it, so every
	// worker of a task queue must build the same tools, and the registry
	// must not change once New has it: a workflow replayed against other
	// definitions is not the workflow that ran.
	Registry *tool.Registry
	// SealKeys seal the checkpoints of suspended calls, as in
	// dispatch.Config: the first seals, every key opens. Every worker
	// that may resume a call must hold its key. At least one is required.
	SealKeys []dispatch.SealKey
	// ActivityOptions are the options of the activity that runs a call.
	// StartToCloseTimeout or ScheduleToCloseTimeout is required.
	// RetryPolicy is the policy of replayable tools (tool.EffectSafe and
	// tool.EffectIdempotent) and of tools with a Reconciler; nil leaves
	// Temporal's default, which retries without limit. Every other tool
	// runs at most once: its RetryPolicy is replaced by one with
	// MaximumAttempts 1. ActivityID is ignored
	// (Temporal numbers activities itself); an empty Summary becomes the
	// tool's name. HeartbeatTimeout is worth setting only if the tools
	// report progress, which is what heartbeats the activity.
	ActivityOptions workflow.ActivityOptions
	// Logger, when not nil, gets the activity side's record of every call,
	// as dispatch.Config.Logger, with its private error (a Failure's
	// cause, a panic, a tool's own error), and a record of every resume
	// refused before it ran. It is the only place the private error goes:
	// the workflow's history gets public text and a class (see the
	// package documentation). The workflow side logs with the workflow's
	// logger instead (the worker client's, silent during replay): a
	// call refused in workflow code, at admission or for the result its
	// activity returned, with its private cause.
	Logger *slog.Logger
	// Observer, when not nil, observes every call the activity runs (and
	// every resume it refuses), as dispatch.Config.Observer: its hooks get
	// the activity's context, so that a tracer's span for the call is a
	// child of the activity's span when the worker's client carries a
	// tracing interceptor (Temporal's own OpenTelemetry interceptor,
	// say: see the package documentation). The workflow side, whose code
	// must be deterministic, observes nothing.
	Observer *dispatch.Observer
	// Reconcilers are the tools' reconcilers, by tool name, as in
	// dispatch.Config.Reconcilers: a retried attempt of a call's activity
	// asks the one of its tool what became of the earlier attempts
	// before it runs anything (see "Exactly once" in the package
	// documentation). A tool of neither tool.EffectSafe nor
	// tool.EffectIdempotent that has one is retried under RetryPolicy;
	// without one it runs at most once. The map is copied; the
	// functions are kept, and must be safe for concurrent use. nil is
	// none. A nil function or an empty name is refused (an error that
	// wraps dispatch.ErrInvalidConfig).
	Reconcilers map[string]dispatch.Reconciler
}

// Runtime runs tool calls on Temporal: calls are admitted in workflow code
// ([Session]) and run by the activity [Runtime.Register] installs on a
// worker. It is made by [New], is immutable, and is safe for concurrent use
// by any number of workflows and activities. The zero Runtime is invalid.
type Runtime struct {
	registry *tool.Registry
	// sealKeys are the Config's, copied: each Session builds its own
	// Dispatcher with them, on workflow time.
	sealKeys []dispatch.SealKey
	// execute runs calls in the activity.
	execute *dispatch.Dispatcher
	logger  *slog.Logger
	options workflow.ActivityOptions
	// reconciled names the tools that have a Reconciler: their
	// activities are retried, and an unknown outcome of a run of their
	// tool is retried too, so that the next attempt reconciles it.
	reconciled map[string]bool
}

// New checks config and returns a [Runtime]. Errors wrap [ErrInvalidConfig],
// or [dispatch.ErrInvalidConfig] for what [dispatch.New] refuses (a nil
// Registry, no or bad seal keys).
func New(config Config) (*Runtime, error) {
	o := config.ActivityOptions
	if o.StartToCloseTimeout <= 0 && o.ScheduleToCloseTimeout <= 0 {
		return nil, errprefix.Errorf("%w: ActivityOptions need a StartToCloseTimeout or a ScheduleToCloseTimeout", ErrInvalidConfig)
	}
	if o.RetryPolicy != nil {
		policy := *o.RetryPolicy
		policy.NonRetryableErrorTypes = append([]string(nil), policy.NonRetryableErrorTypes...)
		o.RetryPolicy = &policy
	}
	o.ActivityID = ""
	// The activity side: history is the claim (see historyClaims), and a
	// call may wait for its answer as long as the workflow does, so its
	// checkpoints live as long as dispatch allows. Its clock is the
	// machine's: it judges the expiry of the checkpoints it resumes.
	execute, err := dispatch.New(dispatch.Config{
		Registry:      config.Registry,
		Store:         historyClaims{},
		SealKeys:      config.SealKeys,
		NewKey:        noKey,
		CheckpointTTL: dispatch.MaxCheckpointTTL,
		Logger:        config.Logger,
		Observer:      config.Observer,
		Reconcilers:   config.Reconcilers,
	})
	if err != nil {
		return nil, err
	}
	keys := make([]dispatch.SealKey, len(config.SealKeys))
	for i, k := range config.SealKeys {
		keys[i] = dispatch.SealKey{ID: k.ID, Secret: slices.Clone(k.Secret)}
	}
	reconciled := make(map[string]bool, len(config.Reconcilers))
	for name := range config.Reconcilers {
		reconciled[name] = true
	}
	return &Runtime{registry: config.Registry, sealKeys: keys, execute: execute, logger: config.Logger, options: o, reconciled: reconciled}, nil
}

// errNoKey is what a Dispatcher of this package would get if it ever had
// to choose a key: keys come from workflow state only.
var errNoKey = errors.New("idempotency keys come from workflow state; none was given")

func noKey() (tool.IdempotencyKey, error) { return "", errNoKey }

// ActivityRegistry is the part of a Temporal worker that [Runtime.Register]
// needs: [go.temporal.io/sdk/worker.Worker] and the test suite's environments
// have it.
type ActivityRegistry interface {
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register installs the call activity on w under [ActivityName]. Register it
// on every worker of the task queue the activities run on (by default the
// workflow's own).
func (r *Runtime) Register(w ActivityRegistry) {
	w.RegisterActivityWithOptions(r.callActivity, activity.RegisterOptions{Name: ActivityName})
}

// activityOptions are the options of one call of a tool with effect.
func (r *Runtime) activityOptions(name string, effect tool.Effect) workflow.ActivityOptions {
	o := r.options
	if o.Summary == "" {
		o.Summary = name
	}
	if !effect.Replayable() && !r.reconciled[name] {
		// Running it again could repeat its effect, and nothing can tell
		// whether it had it: once, and an outcome that is not known then
		// stays unknown. A tool with a Reconciler is retried: a retried
		// attempt asks it first (see callActivity).
		o.RetryPolicy = &temporal.RetryPolicy{MaximumAttempts: 1}
	}
	return o
}
