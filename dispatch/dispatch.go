package dispatch

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Config is what the runtime decides for every call a Dispatcher runs.
type Config struct {
	// Registry holds the tools. Required. It may change while the
	// Dispatcher runs: every call resolves its tool anew.
	Registry *tool.Registry
	// SealKeys seal and open checkpoints: the first key seals, every key
	// opens, so that a key can be rotated out by putting a new one first
	// and dropping the old one once its checkpoints are resumed. At least
	// one is required; IDs must differ. New copies them.
	SealKeys []SealKey
	// NewKey chooses the idempotency key of a call that does not carry one.
	// nil gives a random 128-bit key written in hex. It is never given
	// anything the model wrote, and must be safe for concurrent use.
	NewKey func() (tool.IdempotencyKey, error)
	// MaxConcurrency bounds how many calls of one RunAll run at once;
	// 0 and 1 run them in order, one at a time.
	MaxConcurrency int
	// Logger, when not nil, gets one record per call: the tool, the call
	// ID, the idempotency key, the kind, the duration and the private
	// error. Completed and suspended calls log at Info, failed, rejected
	// and unknown-tool calls at Warn, unknown outcomes at Error.
	Logger *slog.Logger
}

// Dispatcher runs proposed calls against a registry; see the package
// documentation. It is made by New, is immutable, and is safe for
// concurrent use. The zero Dispatcher is invalid: its methods return
// outcomes of KindUnknown or errors wrapping ErrInvalidConfig.
type Dispatcher struct {
	registry       *tool.Registry
	keys           []SealKey
	newKey         func() (tool.IdempotencyKey, error)
	maxConcurrency int
	logger         *slog.Logger
}

// New checks config and returns a Dispatcher. Errors wrap ErrInvalidConfig:
// a nil Registry, no seal key, a key whose ID is not 1 to 64 printable
// ASCII characters or appears twice, or whose Secret is shorter than 32
// bytes, and a negative MaxConcurrency.
func New(config Config) (*Dispatcher, error) {
	if config.Registry == nil {
		return nil, fmt.Errorf("%w: the registry is nil", ErrInvalidConfig)
	}
	if len(config.SealKeys) == 0 {
		return nil, fmt.Errorf("%w: no seal key: checkpoints of suspended calls must be sealed", ErrInvalidConfig)
	}
	keys := make([]SealKey, len(config.SealKeys))
	for i, k := range config.SealKeys {
		if err := checkKeyID(k.ID); err != nil {
			return nil, fmt.Errorf("%w: seal key %d: %v", ErrInvalidConfig, i, err)
		}
		if len(k.Secret) < minSecret {
			return nil, fmt.Errorf("%w: seal key %q: the secret is %d bytes, want at least %d", ErrInvalidConfig, k.ID, len(k.Secret), minSecret)
		}
		if slices.ContainsFunc(keys[:i], func(o SealKey) bool { return o.ID == k.ID }) {
			return nil, fmt.Errorf("%w: seal key ID %q appears twice", ErrInvalidConfig, k.ID)
		}
		keys[i] = SealKey{ID: k.ID, Secret: slices.Clone(k.Secret)}
	}
	if config.MaxConcurrency < 0 {
		return nil, fmt.Errorf("%w: MaxConcurrency is %d, want 0 or more", ErrInvalidConfig, config.MaxConcurrency)
	}
	newKey := config.NewKey
	if newKey == nil {
		newKey = randomKey
	}
	return &Dispatcher{
		registry:       config.Registry,
		keys:           keys,
		newKey:         newKey,
		maxConcurrency: max(config.MaxConcurrency, 1),
		logger:         config.Logger,
	}, nil
}

// randomKey returns 128 random bits in hex.
func randomKey() (tool.IdempotencyKey, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return tool.IdempotencyKey(hex.EncodeToString(b[:])), nil
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
	// Progress, when not nil, receives the progress the tool reports.
	Progress tool.ProgressReporter
}

// Run runs one call: it resolves the tool, chooses the idempotency key,
// prepares the call, runs it, and classifies what happened. It never
// panics and never returns an error: every way a call can end is an
// Outcome, with the private error in Outcome.Err. ctx is the call's
// context; when it ends, the tool is expected to stop, and an outcome that
// is not known by then is unknown.
func (d *Dispatcher) Run(ctx context.Context, call Call) Outcome {
	start := time.Now()
	o := d.run(ctx, call)
	o.Duration = time.Since(start)
	d.log(ctx, o)
	return o
}

func (d *Dispatcher) run(ctx context.Context, call Call) (o Outcome) {
	o = Outcome{CallID: call.ID, Tool: call.Request.Name}
	if d == nil || d.registry == nil {
		return unknown(o, fmt.Errorf("%w: the zero Dispatcher runs nothing", ErrInvalidConfig))
	}
	binding, ok := d.registry.Resolve(call.Request.Name)
	if !ok {
		return d.unknownTool(o)
	}
	contract := binding.Contract()
	o.Effect = contract.Effect()
	key := call.IdempotencyKey
	if key == "" {
		var err error
		if key, err = d.newKey(); err != nil {
			return unknown(o, fmt.Errorf("choosing an idempotency key: %w", err))
		}
	}
	invocation, err := contract.Prepare(call.Request, tool.Admission{IdempotencyKey: key})
	o.IdempotencyKey = key
	if err != nil {
		return d.settle(o, call, tool.Result{}, err)
	}
	result, err := callSafely(ctx, binding, invocation, call.Progress)
	return d.settle(o, call, result, err)
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
// Binding.Call returned.
func (d *Dispatcher) Settle(call Call, key tool.IdempotencyKey, effect tool.Effect, result tool.Result, err error) Outcome {
	o := Outcome{CallID: call.ID, Tool: call.Request.Name, Effect: effect, IdempotencyKey: key}
	if d == nil || d.registry == nil {
		return unknown(o, fmt.Errorf("%w: the zero Dispatcher settles nothing", ErrInvalidConfig))
	}
	return d.settle(o, call, result, err)
}

func (d *Dispatcher) settle(o Outcome, call Call, result tool.Result, err error) Outcome {
	if err == nil {
		if result.InputRequest == nil {
			o.Kind = KindCompleted
			o.Output = result.Output
			return o
		}
		cp, err := d.seal(call, o.IdempotencyKey, *result.InputRequest)
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

// quoteName quotes a tool name the model wrote, shortened: it is echoed to
// the model and to logs, and a name has no length bound.
func quoteName(name string) string {
	return fmt.Sprintf("%q", truncate(name, 128))
}

// seal makes the checkpoint of a suspended call, sealed with the first key.
func (d *Dispatcher) seal(call Call, key tool.IdempotencyKey, ir tool.InputRequest) (Checkpoint, error) {
	encoded, err := ir.MarshalJSON()
	if err != nil {
		return Checkpoint{}, fmt.Errorf("%w: %w", ErrInvalidCheckpoint, errprefix.Quote(err))
	}
	k := d.keys[0]
	return Checkpoint{
		callID:       call.ID,
		request:      call.Request,
		key:          key,
		inputRequest: ir,
		keyID:        k.ID,
		mac:          mac(k.Secret, k.ID, call.ID, call.Request, key, encoded),
	}, nil
}

// Open verifies the seal of cp with this Dispatcher's keys. It is what
// Resume checks first; a runtime may call it on its own before it shows a
// checkpoint's prompt to a person. Errors wrap ErrInvalidCheckpoint.
func (d *Dispatcher) Open(cp Checkpoint) error {
	if d == nil || d.registry == nil {
		return fmt.Errorf("%w: the zero Dispatcher opens nothing", ErrInvalidConfig)
	}
	if cp.keyID == "" {
		return fmt.Errorf("%w: the zero Checkpoint", ErrInvalidCheckpoint)
	}
	i := slices.IndexFunc(d.keys, func(k SealKey) bool { return k.ID == cp.keyID })
	if i < 0 {
		return fmt.Errorf("%w: sealed with key %q, which this dispatcher does not hold", ErrInvalidCheckpoint, cp.keyID)
	}
	encoded, err := cp.inputRequest.MarshalJSON()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidCheckpoint, errprefix.Quote(err))
	}
	want := mac(d.keys[i].Secret, cp.keyID, cp.callID, cp.request, cp.key, encoded)
	if !hmac.Equal(want, cp.mac) {
		return fmt.Errorf("%w: the seal does not match its content: the checkpoint was altered or not issued with key %q", ErrInvalidCheckpoint, cp.keyID)
	}
	return nil
}

// Resume continues a suspended call with answer, the JSON answer to its
// input request, in this process or another. Before anything runs it
// refuses, with an error and no Outcome:
//
//   - a checkpoint whose seal does not verify (see Open): ErrInvalidCheckpoint;
//   - an answer that breaks the input request's response schema:
//     ErrInvalidAnswer, with the reason;
//   - a checkpoint whose tool is no longer in the registry, or whose call
//     Prepare no longer admits (the tool's definition changed, say):
//     ErrInvalidCheckpoint.
//
// Otherwise it runs the call with the same idempotency key and returns its
// Outcome, which may be suspended again. Resume does not remember what it
// resumed: resuming a genuine checkpoint twice runs the call twice, with
// the same key. ctx and progress are as for Run.
func (d *Dispatcher) Resume(ctx context.Context, cp Checkpoint, answer json.RawMessage, progress tool.ProgressReporter) (Outcome, error) {
	start := time.Now()
	if err := d.Open(cp); err != nil {
		return Outcome{}, err
	}
	call := Call{ID: cp.callID, Request: cp.request, IdempotencyKey: cp.key, Progress: progress}
	continuation, err := cp.continuation(answer)
	if err != nil {
		return Outcome{}, err
	}
	binding, ok := d.registry.Resolve(cp.request.Name)
	if !ok {
		return Outcome{}, fmt.Errorf("%w: no tool named %s in the registry", ErrInvalidCheckpoint, quoteName(cp.request.Name))
	}
	contract := binding.Contract()
	invocation, err := contract.Prepare(cp.request, tool.Admission{IdempotencyKey: cp.key, Continuation: &continuation})
	if err != nil {
		return Outcome{}, fmt.Errorf("%w: the call is no longer admitted: %w", ErrInvalidCheckpoint, errprefix.Quote(err))
	}
	o := Outcome{CallID: cp.callID, Tool: cp.request.Name, Effect: contract.Effect(), IdempotencyKey: cp.key}
	result, err := callSafely(ctx, binding, invocation, progress)
	o = d.settle(o, call, result, err)
	o.Duration = time.Since(start)
	d.log(ctx, o)
	return o, nil
}

// RunAll runs the calls of one model turn, at most Config.MaxConcurrency at
// a time, and returns their outcomes in the order of calls. Each call is
// run as by Run: a panic or error in one is that call's Outcome and
// touches no other. calls is not retained.
func (d *Dispatcher) RunAll(ctx context.Context, calls []Call) []Outcome {
	outcomes := make([]Outcome, len(calls))
	limit := 1
	if d != nil {
		limit = d.maxConcurrency
	}
	if limit <= 1 || len(calls) <= 1 {
		for i, c := range calls {
			outcomes[i] = d.Run(ctx, c)
		}
		return outcomes
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, c := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			outcomes[i] = d.Run(ctx, c)
		})
	}
	wg.Wait()
	return outcomes
}

// log writes the record of one call.
func (d *Dispatcher) log(ctx context.Context, o Outcome) {
	if d == nil || d.logger == nil {
		return
	}
	level := slog.LevelInfo
	switch o.Kind {
	case KindFailed, KindRejected, KindUnknownTool:
		level = slog.LevelWarn
	case KindUnknown:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("tool", truncate(o.Tool, 128)),
		slog.String("call_id", o.CallID),
		slog.String("idempotency_key", string(o.IdempotencyKey)),
		slog.String("kind", string(o.Kind)),
		slog.Duration("duration", o.Duration),
	}
	if o.Err != nil {
		attrs = append(attrs, slog.String("error", o.Err.Error()))
		var failure *tool.Failure
		if errors.As(o.Err, &failure) && failure.Cause() != nil {
			attrs = append(attrs, slog.String("cause", failure.Cause().Error()))
		}
		var rejection *tool.InputRejection
		if errors.As(o.Err, &rejection) && rejection.Cause() != nil {
			attrs = append(attrs, slog.String("cause", rejection.Cause().Error()))
		}
	}
	d.logger.LogAttrs(ctx, level, "tool call", attrs...)
}
