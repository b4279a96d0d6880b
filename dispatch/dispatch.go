package dispatch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Dispatcher runs proposed calls against a registry; see the package
// documentation. It is made by New, its configuration is immutable, and
// it is safe for concurrent use. Besides its configuration it keeps what
// one process knows of its calls: how many abandoned tools still run, and
// which claimed calls run or could not record their outcome (see Resume).
// The zero Dispatcher is invalid: its methods return outcomes of
// KindUnknown or errors wrapping ErrInvalidConfig.
type Dispatcher struct {
	watch
	registry       *tool.Registry
	newKey         func() (tool.IdempotencyKey, error)
	maxConcurrency int
	callTimeout    time.Duration
	maxAbandoned   int64
	abandoned      *atomic.Int64 // abandoned calls whose tools still run

	// The suspension layer; embedded, so that its store, keys, clock and
	// flights read as the Dispatcher's. nil for a dispatcher of a
	// registry alone.
	*suspension

	// grants answers the calls a live grant covers (Config.Grants); nil
	// without them.
	grants *grantLayer

	// policies are the scope rules (scope_policy.go); nil without them.
	policies *scopePolicies
}

// New checks config and returns a Dispatcher. A Config of a Registry
// alone makes a dispatcher that runs every call and suspends none; a
// Store and seal keys, given together, add the suspension layer. Errors
// wrap ErrInvalidConfig: a nil Registry; a Store without a seal key, or
// seal keys without a Store; a key whose ID is not 1 to 64 printable
// ASCII characters or appears twice, or whose Secret is shorter than 32
// bytes; a CheckpointTTL below zero or above MaxCheckpointTTL; a
// negative MaxConcurrency, CallTimeout or MaxAbandoned; Grants without a
// Store and seal keys, or a MaxGrantTTL out of range; Rules without
// Events or Events without Rules, a rule whose Spec is not valid, two
// rules of one name, an EventRetention shorter than the rules need.
func New(config Config) (*Dispatcher, error) {
	if config.Registry == nil {
		return nil, errprefix.Errorf("%w: the registry is nil", ErrInvalidConfig)
	}
	if config.MaxConcurrency < 0 {
		return nil, errprefix.Errorf("%w: MaxConcurrency is %d, want 0 or more", ErrInvalidConfig, config.MaxConcurrency)
	}
	if config.CallTimeout < 0 {
		return nil, errprefix.Errorf("%w: CallTimeout is %s, want 0 (no deadline beyond ctx) or more", ErrInvalidConfig, config.CallTimeout)
	}
	if config.MaxAbandoned < 0 {
		return nil, errprefix.Errorf("%w: MaxAbandoned is %d, want 0 (the default) or more", ErrInvalidConfig, config.MaxAbandoned)
	}
	s, err := newSuspension(config)
	if err != nil {
		return nil, err
	}
	grants, err := newGrantLayer(config, s)
	if err != nil {
		return nil, err
	}
	policies, err := newScopePolicies(config)
	if err != nil {
		return nil, err
	}
	newKey := config.NewKey
	if newKey == nil {
		newKey = randomKey
	}
	w := watch{logger: config.Logger}
	if config.Observer != nil {
		o := *config.Observer
		w.observer = &o
	}
	return &Dispatcher{
		watch:          w,
		registry:       config.Registry,
		newKey:         newKey,
		maxConcurrency: max(config.MaxConcurrency, 1),
		callTimeout:    config.CallTimeout,
		maxAbandoned:   int64(cmp.Or(config.MaxAbandoned, DefaultMaxAbandoned)),
		abandoned:      new(atomic.Int64),
		suspension:     s,
		grants:         grants,
		policies:       policies,
	}, nil
}

// randomKey returns 128 random bits in hex.
func randomKey() (tool.IdempotencyKey, error) {
	id, err := newCheckpointID()
	return tool.IdempotencyKey(id), err
}

// Run runs one call: it resolves the tool, chooses the idempotency key,
// prepares the call, runs it, and classifies what happened. It never
// panics and never returns an error: every way a call can end is an
// Outcome, with the private error in Outcome.Err. ctx is the call's
// context: a call whose ctx ended before its tool started does not start
// it, and when ctx ends while the tool runs, Run returns at once with an
// unknown outcome, even if the tool ignores ctx (see Config.CallTimeout,
// which also bounds the call).
//
// On a dispatcher with the suspension layer (Config.Store), a call whose
// tool is not tool.EffectSafe runs under a call record, written before
// its tool starts: the same key of the same tool and principal then
// returns the first recorded outcome (Outcome.Replayed) and runs
// nothing, and a call whose earlier outcome is unknown is run again
// only when its Reconciler, or its Effect, says that is safe. See
// "Exactly once" in the package documentation for every case.
func (d *Dispatcher) Run(ctx context.Context, call Call) Outcome {
	return d.runLogged(ctx, call)
}

// runAll runs the calls of one model turn, as RunAll documents.
func (d *Dispatcher) runAll(ctx context.Context, calls []Call) []Outcome {
	outcomes := make([]Outcome, len(calls))
	limit := 1
	if d != nil {
		limit = d.maxConcurrency
	}
	if limit <= 1 || len(calls) <= 1 {
		for i, c := range calls {
			outcomes[i] = d.runLogged(ctx, c)
		}
		return outcomes
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, c := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			outcomes[i] = d.runLogged(ctx, c)
		})
	}
	wg.Wait()
	return outcomes
}

// runLogged is Run.
func (d *Dispatcher) runLogged(ctx context.Context, call Call) Outcome {
	if d == nil {
		o, _, _, _ := d.admit(call)
		return o
	}
	start := time.Now()
	info := CallInfo{Op: OpRun, CallID: call.ID, Tool: call.Request.Name, Arguments: call.Request.Arguments, IdempotencyKey: call.IdempotencyKey, Principal: call.Principal, TurnID: call.TurnID}
	ctx = d.callStart(ctx, info)
	o, verdict := d.run(ctx, call)
	o.Duration = time.Since(start)
	d.log(ctx, o)
	info.Reconciled = verdict
	d.callDone(ctx, info, o)
	return o
}

// run admits call, runs its tool and settles what the tool returned: under
// a call record when the suspension layer keeps one for it (see
// runRecorded), with the verdict of the Reconciler it asked, if any.
func (d *Dispatcher) run(ctx context.Context, call Call) (Outcome, VerdictKind) {
	o, binding, invocation, admitted := d.admit(call)
	if !admitted {
		return o, ""
	}
	// Scope rules: decided, and the call's place reserved, before it runs.
	o, held, allowed := d.policies.reserve(ctx, d.watch, call, o, invocation)
	if !allowed {
		return o, ""
	}
	var verdict VerdictKind
	if d.suspension != nil && o.Effect != tool.EffectSafe {
		o, verdict = d.runRecorded(ctx, call, o, binding, invocation)
	} else {
		result, _, err := d.callTool(ctx, binding, invocation, call.Progress, nil)
		o = d.settle(o, call, result, err)
	}
	o = d.cover(ctx, call, invocation, o)
	d.policies.settle(ctx, d.watch, held, o)
	return o, verdict
}

// admit checks call's principal, resolves its tool, chooses its
// idempotency key and prepares it. When admitted, o is the outcome the
// call settles into, with its Effect and key, and binding and invocation
// are what runs; otherwise o is the call's final outcome and nothing ran.
func (d *Dispatcher) admit(call Call) (o Outcome, binding tool.Binding, invocation tool.Invocation, admitted bool) {
	o = Outcome{CallID: call.ID, Tool: call.Request.Name}
	if d == nil || d.registry == nil {
		return unknown(o, errprefix.Errorf("%w: the zero Dispatcher runs nothing", ErrInvalidConfig)), binding, invocation, false
	}
	if err := checkPrincipal(call.Principal); err != nil {
		return unknown(o, errprefix.Errorf("%w: Call.%v", ErrInvalidConfig, err)), binding, invocation, false
	}
	binding, ok := d.registry.Resolve(call.Request.Name)
	if !ok {
		return d.unknownTool(o), binding, invocation, false
	}
	contract := binding.Contract()
	o.Effect = contract.Effect()
	key := call.IdempotencyKey
	if key == "" {
		var err error
		if key, err = d.newKey(); err != nil {
			return unknown(o, errprefix.Part("choosing an idempotency key: %w", err)), binding, invocation, false
		}
	}
	invocation, err := contract.Prepare(call.Request, tool.Admission{IdempotencyKey: key})
	o.IdempotencyKey = key
	if err != nil {
		return d.settle(o, call, tool.Result{}, err), binding, invocation, false
	}
	return o, binding, invocation, true
}

// maxListedTools bounds the names an unknown-tool message lists.
const maxListedTools = 64

// unknownTool makes o the outcome of a call to a tool the registry lacks.
func (d *Dispatcher) unknownTool(o Outcome) Outcome {
	o.Kind, o.IsError = KindUnknownTool, true
	o.Err = fmt.Errorf("no tool named %s in the registry", quoteName(o.Tool))
	defs := d.registry.Definitions()
	var b strings.Builder
	fmt.Fprintf(&b, "There is no tool named %s.", quoteName(o.Tool))
	switch {
	case len(defs) == 0:
		b.WriteString(" No tools are available.")
	default:
		b.WriteString(" Available tools: ")
		for i, def := range defs[:min(len(defs), maxListedTools)] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(def.Name)
		}
		if len(defs) > maxListedTools {
			fmt.Fprintf(&b, " and %d more", len(defs)-maxListedTools)
		}
		b.WriteString(".")
	}
	o.Output = tool.NewTextOutput(b.String())
	return o
}

// notStarted returns the error of a call that must not start: its ctx
// ended, or Config.MaxAbandoned abandoned tools still run. nil when it
// may start. The error is a *notStartedError.
func (d *Dispatcher) notStarted(ctx context.Context) error {
	if ctx.Err() != nil {
		return &notStartedError{errprefix.Part("the call was not started: %w", context.Cause(ctx))}
	}
	if n := d.abandoned.Load(); n >= d.maxAbandoned {
		return &notStartedError{errprefix.Part("the call was not started: %d calls abandoned at the end of their context still run, the most Config.MaxAbandoned allows", n)}
	}
	return nil
}

// notStartedError is the error of a call whose tool was not started: the
// tool provably did nothing (see ErrorClassNotStarted).
type notStartedError struct{ err error }

func (e *notStartedError) Error() string { return e.err.Error() }
func (e *notStartedError) Unwrap() error { return e.err }

// callTool runs the binding, within Config.CallTimeout when one is set.
// A ctx that ended already starts nothing; a tool that has not returned
// when its ctx ends is abandoned: callTool returns an error that wraps
// the context's cause, and abandoned true, and the tool goes on in its
// goroutine, counted in d.abandoned until it returns; late, when not
// nil, is then called on that goroutine with what the tool returned.
// While Config.MaxAbandoned tools are abandoned, nothing is started.
func (d *Dispatcher) callTool(ctx context.Context, binding tool.Binding, invocation tool.Invocation, progress tool.ProgressReporter, late func(tool.Result, error)) (result tool.Result, abandoned bool, err error) {
	if err := d.notStarted(ctx); err != nil {
		return tool.Result{}, false, err
	}
	if d.callTimeout <= 0 && ctx.Done() == nil {
		result, err := callSafely(ctx, binding, invocation, progress)
		return result, false, err
	}
	cancel := context.CancelFunc(func() {})
	if d.callTimeout > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, d.callTimeout,
			errprefix.Part("the tool did not return within the call timeout of %s: %w", d.callTimeout, context.DeadlineExceeded))
	}
	var lateProgress *lateReporter
	if progress != nil {
		lateProgress = &lateReporter{next: progress}
		progress = lateProgress
	}
	type returned struct {
		result tool.Result
		err    error
	}
	done := make(chan returned, 1)
	// left is set by whichever comes second of the tool's return and its
	// abandonment, and tells the other that it came first.
	var left atomic.Bool
	go func() {
		defer cancel()
		result, err := callSafely(ctx, binding, invocation, progress)
		done <- returned{result, err}
		if left.Swap(true) {
			d.abandoned.Add(-1)
			if late != nil {
				late(result, err)
			}
		}
	}()
	select {
	case r := <-done:
		return r.result, false, r.err
	case <-ctx.Done():
	}
	// A result the tool completed as the deadline came is still its result.
	select {
	case r := <-done:
		return r.result, false, r.err
	default:
	}
	if lateProgress != nil {
		lateProgress.closed.Store(true)
	}
	d.abandoned.Add(1)
	if left.Swap(true) {
		// The tool returned in between: it is no longer abandoned, and
		// what it returned is in done.
		d.abandoned.Add(-1)
		r := <-done
		return r.result, false, r.err
	}
	return tool.Result{}, true, errprefix.Part("the outcome is unknown: %w", context.Cause(ctx))
}

// lateReporter passes progress on until the call it belongs to has ended
// at its deadline, and drops it afterwards.
type lateReporter struct {
	next   tool.ProgressReporter
	closed atomic.Bool
}

func (r *lateReporter) ReportProgress(ctx context.Context, p tool.Progress) error {
	if r.closed.Load() {
		return errors.New("the call ended at its deadline; progress is no longer passed on")
	}
	return r.next.ReportProgress(ctx, p)
}

// callSafely runs the binding and turns a panic that escaped it (a binding
// without tool.Recover) into an error, so that it ends this call only.
func callSafely(ctx context.Context, binding tool.Binding, invocation tool.Invocation, progress tool.ProgressReporter) (result tool.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			result, err = tool.Result{}, &tool.PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	if progress != nil {
		ctx = tool.WithProgressReporter(ctx, progress)
	}
	return binding.Call(ctx, invocation)
}

// Settle classifies the result of a call the runtime ran itself, outside
// Run, as Run would have: for example when Prepare runs in one place and
// Call in another. call is the call as proposed (its ID and Request go on
// the Outcome and on the checkpoint of a suspension), key the idempotency
// key it ran with, effect the tool's Effect, and result and err what
// Binding.Call returned. A suspension is sealed with an ID from
// Config.NewCheckpointID and issued at Config.Clock's time; with both
// deterministic, and a deterministic Registry, Settle reads no clock and
// draws no random number, so a runtime that must replay the same way on
// any machine (a durable workflow) can settle in its replayed code. An
// input request stamped for another tool or idempotency key than call and
// key is never sealed: its answer could not resume the call, so the
// outcome is unknown, with an error wrapping ErrInvalidCheckpoint.
// Config.Observer's CallDone sees the Outcome (a workflow that replays
// Settle calls it on each replay).
func (d *Dispatcher) Settle(call Call, key tool.IdempotencyKey, effect tool.Effect, result tool.Result, err error) Outcome {
	o := Outcome{CallID: call.ID, Tool: call.Request.Name, Effect: effect, IdempotencyKey: key}
	if d == nil || d.registry == nil {
		return unknown(o, errprefix.Errorf("%w: the zero Dispatcher settles nothing", ErrInvalidConfig))
	}
	o = d.settle(o, call, result, err)
	d.callDone(context.Background(), CallInfo{Op: OpSettle, CallID: call.ID, Tool: call.Request.Name, Arguments: call.Request.Arguments, IdempotencyKey: key, Principal: call.Principal}, o)
	return o
}

func (d *Dispatcher) settle(o Outcome, call Call, result tool.Result, err error) Outcome {
	if err == nil {
		if result.InputRequest == nil {
			o.Kind = KindCompleted
			o.Output = result.Output
			return o
		}
		return d.suspension.suspend(o, call, *result.InputRequest)
	}
	if failure, ok := tool.ClassifyFailure(err); ok {
		o.Kind, o.IsError, o.Err = KindFailed, true, err
		o.Output = failure.Output()
		return o
	}
	if rejection, ok := tool.ClassifyInputRejection(err); ok {
		o.Kind, o.IsError, o.Err = KindRejected, true, err
		o.Output = tool.NewTextOutput(rejection.Message())
		return o
	}
	return unknown(o, err)
}
