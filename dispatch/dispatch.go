package dispatch

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Config is what the runtime decides for every call a Dispatcher runs.
type Config struct {
	// Registry holds the tools. Required. It may change while the
	// Dispatcher runs: every call resolves its tool anew.
	Registry *tool.Registry
	// Store keeps the claims that make each checkpoint answerable once,
	// and the turns that wait for an answer. Required: there is no
	// default, because a store private to one process would silently let
	// every other replica behind a load balancer answer the same
	// checkpoint again. One process uses a MemoryStore, said so
	// explicitly; replicas share one store (and the same SealKeys).
	Store Store
	// SealKeys seal and open checkpoints: the first key seals, every key
	// opens, so that a key can be rotated out by putting a new one first
	// and dropping the old one once its checkpoints are resumed. At least
	// one is required; IDs must differ. New copies them.
	SealKeys []SealKey
	// NewKey chooses the idempotency key of a call that does not carry one.
	// nil gives a random 128-bit key written in hex. It is never given
	// anything the model wrote, and must be safe for concurrent use.
	NewKey func() (tool.IdempotencyKey, error)
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
	// Clock tells the time a checkpoint is issued and the time it is
	// resumed at. nil means time.Now. It must be safe for concurrent use.
	// A Clock that is not the machine's (a workflow's own time, say) is
	// read for nothing else: durations in Outcomes are measured on the
	// machine's clock.
	Clock func() time.Time
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
}

// DefaultMaxAbandoned is the Config.MaxAbandoned of a Config that sets
// none.
const DefaultMaxAbandoned = 64

// Dispatcher runs proposed calls against a registry; see the package
// documentation. It is made by New, its configuration is immutable, and
// it is safe for concurrent use. Besides its configuration it keeps what
// one process knows of its calls: how many abandoned tools still run, and
// which claimed calls run or could not record their outcome (see Resume).
// The zero Dispatcher is invalid: its methods return outcomes of
// KindUnknown or errors wrapping ErrInvalidConfig.
type Dispatcher struct {
	registry       *tool.Registry
	store          Store
	keys           []SealKey
	newKey         func() (tool.IdempotencyKey, error)
	newID          func(Call) (string, error)
	ttl            time.Duration
	clock          func() time.Time
	maxConcurrency int
	callTimeout    time.Duration
	logger         *slog.Logger
	observer       *Observer
	maxAbandoned   int64

	abandoned *atomic.Int64 // abandoned calls whose tools still run
	flights   *flights      // claimed calls that run, or lost their outcome
}

// New checks config and returns a Dispatcher. Errors wrap ErrInvalidConfig:
// a nil Registry, a nil Store, no seal key, a key whose ID is not 1 to 64 printable
// ASCII characters or appears twice, or whose Secret is shorter than 32
// bytes, a CheckpointTTL below zero or above MaxCheckpointTTL, a
// negative MaxConcurrency and a negative CallTimeout.
func New(config Config) (*Dispatcher, error) {
	if config.Registry == nil {
		return nil, errprefix.Errorf("%w: the registry is nil", ErrInvalidConfig)
	}
	if config.Store == nil || isTypedNil(config.Store) {
		return nil, errprefix.Errorf("%w: no Store: a checkpoint must be claimed in a store every replica shares (NewMemoryStore for one process)", ErrInvalidConfig)
	}
	if len(config.SealKeys) == 0 {
		return nil, errprefix.Errorf("%w: no seal key: checkpoints of suspended calls must be sealed", ErrInvalidConfig)
	}
	keys := make([]SealKey, len(config.SealKeys))
	for i, k := range config.SealKeys {
		if err := checkKeyID(k.ID); err != nil {
			return nil, errprefix.Errorf("%w: seal key %d: %v", ErrInvalidConfig, i, err)
		}
		if len(k.Secret) < minSecret {
			return nil, errprefix.Errorf("%w: seal key %q: the secret is %d bytes, want at least %d", ErrInvalidConfig, k.ID, len(k.Secret), minSecret)
		}
		if slices.ContainsFunc(keys[:i], func(o SealKey) bool { return o.ID == k.ID }) {
			return nil, errprefix.Errorf("%w: seal key ID %q appears twice", ErrInvalidConfig, k.ID)
		}
		keys[i] = SealKey{ID: k.ID, Secret: slices.Clone(k.Secret)}
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
	if config.CheckpointTTL < 0 || config.CheckpointTTL > MaxCheckpointTTL {
		return nil, errprefix.Errorf("%w: CheckpointTTL is %s, want 0 (the default) to MaxCheckpointTTL (%s)", ErrInvalidConfig, config.CheckpointTTL, MaxCheckpointTTL)
	}
	newKey := config.NewKey
	if newKey == nil {
		newKey = randomKey
	}
	// The defaults are function values, not calls, so that nothing a
	// Dispatcher with a deterministic NewCheckpointID and Clock runs
	// reaches a clock or a random source.
	newID := config.NewCheckpointID
	if newID == nil {
		newID = randomCheckpointID
	}
	ttl := config.CheckpointTTL
	if ttl == 0 {
		ttl = DefaultCheckpointTTL
	}
	clock := config.Clock
	if clock == nil {
		clock = time.Now
	}
	var observer *Observer
	if config.Observer != nil {
		o := *config.Observer
		observer = &o
	}
	return &Dispatcher{
		observer:       observer,
		registry:       config.Registry,
		store:          config.Store,
		keys:           keys,
		newKey:         newKey,
		newID:          newID,
		ttl:            ttl,
		clock:          clock,
		maxConcurrency: max(config.MaxConcurrency, 1),
		callTimeout:    config.CallTimeout,
		logger:         config.Logger,
		maxAbandoned:   int64(cmp.Or(config.MaxAbandoned, DefaultMaxAbandoned)),
		abandoned:      new(atomic.Int64),
		flights:        new(flights),
	}, nil
}

// isTypedNil reports whether v is an interface holding a nil pointer, map,
// slice, channel or function.
func isTypedNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// randomKey returns 128 random bits in hex.
func randomKey() (tool.IdempotencyKey, error) {
	id, err := newCheckpointID()
	return tool.IdempotencyKey(id), err
}

// randomCheckpointID is the default Config.NewCheckpointID: 128 random
// bits in lowercase hex.
func randomCheckpointID(Call) (string, error) { return newCheckpointID() }

// newCheckpointID returns 128 random bits in lowercase hex.
func newCheckpointID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Call is one call proposed by the model, with what the runtime adds.
type Call struct {
	// ID is the provider's correlation ID for the call (tool_call_id,
	// tool_use_id, …), echoed on the Outcome and the Checkpoint. Opaque.
	ID string
	// Request is the model's proposal, untrusted.
	Request tool.Request
	// IdempotencyKey, when not empty, is the key the runtime chose for this
	// call; otherwise the Dispatcher's NewKey chooses one.
	IdempotencyKey tool.IdempotencyKey
	// Principal, when not empty, is who may answer the call if it
	// suspends: a user ID, a tenant, whatever the runtime authenticates.
	// It is sealed into the Checkpoint, and Resume and Decline refuse an
	// Answer from anyone else with ErrWrongPrincipal. At most 1024 bytes
	// of UTF-8. Never take it from the model.
	Principal string
	// Progress, when not nil, receives the progress the tool reports.
	Progress tool.ProgressReporter
}

// Run runs one call: it resolves the tool, chooses the idempotency key,
// prepares the call, runs it, and classifies what happened. It never
// panics and never returns an error: every way a call can end is an
// Outcome, with the private error in Outcome.Err. ctx is the call's
// context: a call whose ctx ended before its tool started does not start
// it, and when ctx ends while the tool runs, Run returns at once with an
// unknown outcome, even if the tool ignores ctx (see Config.CallTimeout,
// which also bounds the call).
func (d *Dispatcher) Run(ctx context.Context, call Call) Outcome {
	return d.runLogged(ctx, call)
}

// RunAll runs the calls of one model turn, at most Config.MaxConcurrency at
// a time (0 and 1: in order, one after the other), and returns their
// outcomes in the order of calls. Each call is run as by Run: a panic or
// error in one is that call's Outcome and touches no other. A call
// abandoned at its deadline frees its place at once, so the later calls
// run (Config.MaxAbandoned bounds how many abandoned tools may still run);
// when ctx ends, RunAll returns as soon as the calls that run return or
// are abandoned, and the calls not started by then get the Outcome Run
// gives for a done ctx. calls is not retained.
func (d *Dispatcher) RunAll(ctx context.Context, calls []Call) []Outcome {
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
	start := time.Now()
	info := CallInfo{Op: OpRun, CallID: call.ID, Tool: call.Request.Name, Arguments: call.Request.Arguments, IdempotencyKey: call.IdempotencyKey, Principal: call.Principal}
	ctx = d.callStart(ctx, info)
	o := d.run(ctx, call)
	o.Duration = time.Since(start)
	d.log(ctx, o)
	d.callDone(ctx, info, o)
	return o
}

// run admits call, runs its tool and settles what the tool returned.
func (d *Dispatcher) run(ctx context.Context, call Call) Outcome {
	o, binding, invocation, admitted := d.admit(call)
	if !admitted {
		return o
	}
	result, err := d.callTool(ctx, binding, invocation, call.Progress)
	return d.settle(o, call, result, err)
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

// maxPrincipalBytes bounds Call.Principal and Answer.Principal.
const maxPrincipalBytes = 1024

// checkPrincipal reports whether p is a usable principal.
func checkPrincipal(p string) error {
	if len(p) > maxPrincipalBytes {
		return fmt.Errorf("principal of %d bytes, more than %d", len(p), maxPrincipalBytes)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("principal %q is not valid UTF-8", truncate(p, 80))
	}
	return nil
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

// callTool runs the binding, within Config.CallTimeout when one is set.
// A ctx that ended already starts nothing; a tool that has not returned
// when its ctx ends is abandoned: callTool returns an error that wraps
// the context's cause, and the tool goes on in its goroutine, counted in
// d.abandoned until it returns. While Config.MaxAbandoned tools are
// abandoned, nothing is started.
func (d *Dispatcher) callTool(ctx context.Context, binding tool.Binding, invocation tool.Invocation, progress tool.ProgressReporter) (tool.Result, error) {
	if ctx.Err() != nil {
		return tool.Result{}, errprefix.Part("the call was not started: %w", context.Cause(ctx))
	}
	if n := d.abandoned.Load(); n >= d.maxAbandoned {
		return tool.Result{}, errprefix.Part("the call was not started: %d calls abandoned at the end of their context still run, the most Config.MaxAbandoned allows", n)
	}
	if d.callTimeout <= 0 && ctx.Done() == nil {
		return callSafely(ctx, binding, invocation, progress)
	}
	cancel := context.CancelFunc(func() {})
	if d.callTimeout > 0 {
		ctx, cancel = context.WithTimeoutCause(ctx, d.callTimeout,
			errprefix.Part("the tool did not return within the call timeout of %s: %w", d.callTimeout, context.DeadlineExceeded))
	}
	var late *lateReporter
	if progress != nil {
		late = &lateReporter{next: progress}
		progress = late
	}
	type returned struct {
		result tool.Result
		err    error
	}
	done := make(chan returned, 1)
	var abandoned atomic.Bool
	go func() {
		defer cancel()
		result, err := callSafely(ctx, binding, invocation, progress)
		done <- returned{result, err}
		if abandoned.Swap(true) {
			d.abandoned.Add(-1)
		}
	}()
	select {
	case r := <-done:
		return r.result, r.err
	case <-ctx.Done():
	}
	// A result the tool completed as the deadline came is still its result.
	select {
	case r := <-done:
		return r.result, r.err
	default:
	}
	if late != nil {
		late.closed.Store(true)
	}
	d.abandoned.Add(1)
	if abandoned.Swap(true) {
		// The tool returned in between: it is no longer abandoned.
		d.abandoned.Add(-1)
	}
	return tool.Result{}, errprefix.Part("the outcome is unknown: %w", context.Cause(ctx))
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
		call.IdempotencyKey = o.IdempotencyKey
		id, err := d.newID(call)
		if err != nil {
			return unknown(o, errprefix.Errorf("%w: choosing a checkpoint ID: %w", ErrInvalidCheckpoint, err))
		}
		cp, err := d.seal(call, o.IdempotencyKey, *result.InputRequest, id, d.clock())
		if err != nil {
			return unknown(o, err)
		}
		o.Kind = KindSuspended
		o.Checkpoint = &cp
		return o
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

// unknown makes o an unknown outcome caused by err.
func unknown(o Outcome, err error) Outcome {
	o.Kind, o.IsError, o.Err = KindUnknown, true, err
	o.Output = tool.NewTextOutput(fmt.Sprintf(UnknownOutcomeText, quoteName(o.Tool)))
	o.Retryable = o.Effect.Replayable()
	return o
}

// quoteName quotes a tool name the model wrote, shortened: it is echoed to
// the model and to logs, and a name has no length bound.
func quoteName(name string) string {
	return fmt.Sprintf("%q", truncate(name, 128))
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// seal makes the checkpoint of a suspended call, sealed with the first key:
// id names it, issued is when it was made, and it expires the TTL later.
func (d *Dispatcher) seal(call Call, key tool.IdempotencyKey, ir tool.InputRequest, id string, issued time.Time) (Checkpoint, error) {
	encoded, err := ir.MarshalJSON()
	if err != nil {
		return Checkpoint{}, errprefix.Errorf("%w: %w", ErrInvalidCheckpoint, err)
	}
	if err := checkPrincipal(call.Principal); err != nil {
		return Checkpoint{}, errprefix.Errorf("%w: Call.%v", ErrInvalidConfig, err)
	}
	if err := checkStamp(encoded, call.Request.Name, key); err != nil {
		return Checkpoint{}, err
	}
	// Whole seconds: the wire form has a fixed length, and no expiry
	// needs more precision.
	issued = issued.UTC().Truncate(time.Second)
	cp := Checkpoint{
		id:           id,
		issuedAt:     issued,
		expiresAt:    issued.Add(d.ttl),
		principal:    call.Principal,
		callID:       call.ID,
		request:      call.Request,
		key:          key,
		inputRequest: ir,
	}
	if !validID(id) {
		return Checkpoint{}, errprefix.Errorf("%w: ID %q is not 32 lowercase hex digits", ErrInvalidCheckpoint, truncate(id, 80))
	}
	if err := checkTimes(cp.issuedAt, cp.expiresAt); err != nil {
		return Checkpoint{}, errprefix.Errorf("%w: %v", ErrInvalidCheckpoint, err)
	}
	k := d.keys[0]
	cp.keyID = k.ID
	cp.mac = mac(k.Secret, k.ID, &cp, encoded)
	return cp, nil
}

// checkStamp refuses to seal an input request that Binding.Call stamped
// for another call than the one settled: another tool, or another
// idempotency key (a runtime that settles with a key other than the one
// the call ran with, as a workflow that derived its keys from a run ID
// did after a reset). Resume would refuse such a checkpoint once the
// person had answered; refusing it now makes the call's outcome unknown
// instead, before anyone is asked. An unstamped request has nothing to
// compare.
func checkStamp(encoded []byte, name string, key tool.IdempotencyKey) error {
	var w struct {
		Call *struct {
			Tool           string `json:"tool"`
			IdempotencyKey string `json:"idempotency_key"`
		} `json:"call"`
	}
	if err := jsonv2.Unmarshal(encoded, &w); err != nil {
		return errprefix.Errorf("%w: the input request does not decode: %v", ErrInvalidCheckpoint, err)
	}
	switch {
	case w.Call == nil:
		return nil
	case w.Call.Tool != name:
		return errprefix.Errorf("%w: the input request was stamped for tool %s, not %s", ErrInvalidCheckpoint, quoteName(w.Call.Tool), quoteName(name))
	case w.Call.IdempotencyKey != string(key):
		return errprefix.Errorf("%w: the input request was stamped for idempotency key %q, not the call's %q: its answer could never resume the call",
			ErrInvalidCheckpoint, truncate(w.Call.IdempotencyKey, 128), truncate(string(key), 128))
	}
	return nil
}
