package tool

import (
	"context"
	"crypto/sha256"
	"sync"
	"sync/atomic"
)

// Binding pairs a frozen [Contract] with the [Tool] that executes it and the
// middlewares that wrap every call.
//
// The zero Binding is invalid: its Call refuses everything and [Registry]
// refuses to register it. A Binding is immutable and safe for concurrent
// use. It does not serialize calls: concurrent Calls run the tool's Call
// concurrently, so a tool that cannot run twice at once must say so in its
// own documentation and guard itself (a replayable [Effect] says nothing
// about concurrency).
type Binding struct {
	contract    Contract
	tool        Tool
	middlewares []CallMiddleware
}

// Bind validates and freezes executable's definition and returns the
// [Binding] that runs it through middlewares, the first outermost.
//
// Bind calls executable.Definition exactly once and compiles its schemas;
// when executable is an [InputValidatingTool] it calls InputValidator once
// and keeps the returned function (a [Func] needs no call: its validator is
// its own strict decode, which Bind keeps in a form that hands the decoded
// input to the first Call). Nothing the tool does later changes the
// contract. Every error wraps [ErrInvalidTool]: a nil or typed-nil tool or
// middleware; an invalid definition (with [ErrInvalidDefinition] or
// [ErrInvalidSchema] beside it where they apply); and an InputValidator
// that panics, reported as an [*InputValidationError] whose Cause is an
// [*InputValidationPanicError] holding the panic's value (see
// [InputValidationError] for why it does not match [ErrInvalidInvocation]).
// The middlewares slice is copied.
func Bind(executable Tool, middlewares ...CallMiddleware) (Binding, error) {
	if executable == nil || isTypedNil(executable) {
		return Binding{}, errorf("%w: nil tool", ErrInvalidTool)
	}
	for i, m := range middlewares {
		if m == nil {
			return Binding{}, errorf("%w: middleware %d is nil", ErrInvalidTool, i)
		}
	}
	var known []Schema
	if c, ok := executable.(interface{ compiledSchemas() []Schema }); ok {
		known = c.compiledSchemas()
	}
	frozen, err := executable.Definition().compile(known...)
	if err != nil {
		return Binding{}, errorf("%w: %w", ErrInvalidTool, err)
	}
	identity := frozen.def
	identity.Description = ""
	wire, err := identity.marshal()
	if err != nil {
		return Binding{}, errorf("%w: %w: %v", ErrInvalidTool, ErrInvalidDefinition, err)
	}
	// The digest covers what decides admission and what the call means:
	// the name, the schemas and the effect. The description is text shown
	// to the model; editing it is a routine deploy and must not strand
	// the calls that wait for a person's answer.
	contract := Contract{core: &contractCore{frozen: frozen, digest: sha256.Sum256(wire)}}
	if admit := funcAdmission(executable); admit != nil {
		contract.admit = admit
	} else if v, ok := executable.(InputValidatingTool); ok {
		validator, err := captureValidator(v, frozen.def.Name)
		if err != nil {
			return Binding{}, err
		}
		if validator != nil {
			contract.admit = plainAdmission(validator)
		}
	}
	return Binding{
		contract:    contract,
		tool:        executable,
		middlewares: append([]CallMiddleware(nil), middlewares...),
	}, nil
}

// captureValidator calls InputValidator, containing a panic. The panic is
// reported to whoever binds the tool as an [*InputValidationError] that
// matches [ErrInvalidTool], with the value behind its Cause: nothing here is
// about a model's input, so it does not match [ErrInvalidInvocation].
func captureValidator(v InputValidatingTool, name string) (validator func([]byte) error, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &InputValidationError{cause: &InputValidationPanicError{Value: p}, bind: name}
		}
	}()
	return v.InputValidator(), nil
}

// Contract returns the [Binding]'s frozen Contract.
func (b Binding) Contract() Contract { return b.contract }

// Call runs invocation through the middlewares to the tool.
//
// It refuses, with an error wrapping [ErrInvalidInvocation] and without
// running anything, the zero [Invocation] and one prepared by any other
// [Binding]'s [Contract], even one with the same name and schema. When ctx is
// already done it returns ctx.Err() and runs nothing.
//
// Forwarding is synchronous: the next a middleware receives works only
// while this Call is running. A forward that starts after Call returned,
// from a goroutine or from a next kept for later, is refused with
// [ErrInvalidInvocation] and runs nothing, whatever the middleware returned
// (a refusal included). A forward that a middleware started on another
// goroutine and did not wait for is waited for: Call does not return while
// the tool of its call may still be running.
//
// At the tool boundary, innermost, so that every middleware sees the
// checked outcome:
//   - when ctx is done by the time the call reaches the tool, for example
//     because it ended while a [Guard] asked its [Authorizer], Call returns
//     ctx.Err() and the tool does not run;
//   - the result is checked with [Contract.ValidateResult]; a result that
//     breaks the contract is an error wrapping [ErrInvalidResult] and is
//     never returned. A [Func] whose result cannot be encoded has broken
//     the contract the same way, whatever its [Effect];
//   - a returned [InputRequest] is stamped with the call it belongs to (see
//     "Suspending a call" in the package documentation);
//   - when the tool's Effect is [EffectSafe], an error of the tool that is
//     neither a [Failure] nor an [InputRejection], returned while ctx is not
//     done, becomes a Failure of kind [FailureKindFailed] with a generic
//     public message naming the tool and the error as its Cause. A Failure
//     already declares the outcome, and an InputRejection (say, from
//     [Signature.Decode] in a tool's own Call) is the model's to correct, so
//     both pass through, as do the errors of other tools.
//
// A result the tool completed is returned even when ctx is cancelled
// afterwards. The returned [Output] is a copy the caller owns.
func (b Binding) Call(ctx context.Context, invocation Invocation) (Result, error) {
	core := b.contract.core
	if core == nil || b.tool == nil {
		return Result{}, errorf("%w: the zero Binding runs nothing", ErrInvalidInvocation)
	}
	if invocation.core == nil {
		return Result{}, errorf("%w: the zero Invocation was not admitted by any contract", ErrInvalidInvocation)
	}
	if invocation.core != core {
		return Result{}, errorf("%w: the invocation was admitted by another contract than the one of tool %q", ErrInvalidInvocation, core.frozen.def.Name)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if len(b.middlewares) == 0 {
		return boundary{binding: b}.Call(ctx, invocation)
	}
	c := &chain{binding: b, invocation: invocation, nexts: make([]forwardOnce, len(b.middlewares))}
	defer c.close()
	return c.from(0, ctx, invocation)
}

// chain is the state of one call through the middlewares: which forwards
// were used, and whether the call is still running.
type chain struct {
	binding    Binding
	invocation Invocation    // the one that entered the chain
	nexts      []forwardOnce // nexts[i] is the next of middleware i

	mu      sync.Mutex
	closed  bool           // Binding.Call returned: no forward may start
	running sync.WaitGroup // forwards under way
}

// from runs the chain from middleware i inwards. Each middleware's factory
// is called only when the call reaches it, so a [Recover] placed outermost
// also covers the factories of the middlewares inside it.
func (c *chain) from(i int, ctx context.Context, invocation Invocation) (Result, error) {
	if i == len(c.binding.middlewares) {
		return boundary{binding: c.binding}.Call(ctx, invocation)
	}
	next := &c.nexts[i]
	next.chain, next.index = c, i+1
	wrapped := c.binding.middlewares[i](next)
	if wrapped == nil || isTypedNil(wrapped) {
		return Result{}, errorf("%w: middleware %d of tool %q returned a nil Caller", ErrInvalidTool, i, c.binding.contract.Name())
	}
	return wrapped.Call(ctx, invocation)
}

// enter admits a forward while the call runs; the caller must call
// running.Done when the forward returns.
func (c *chain) enter() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.running.Add(1)
	return true
}

// close ends the call: later forwards are refused, and forwards already
// under way (started on another goroutine) are waited for.
func (c *chain) close() {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.running.Wait()
}

// forwardOnce is the next a middleware receives: it forwards the invocation
// that entered the chain, once, to the rest of the chain, while the call
// runs.
type forwardOnce struct {
	chain *chain
	index int
	used  atomic.Bool
}

func (f *forwardOnce) Call(ctx context.Context, invocation Invocation) (Result, error) {
	c := f.chain
	name := c.binding.contract.core.frozen.def.Name
	if !invocation.same(c.invocation) {
		return Result{}, errorf("%w: a middleware of tool %q forwarded a different invocation than it received", ErrInvalidInvocation, name)
	}
	if !c.enter() {
		return Result{}, errorf("%w: a middleware of tool %q forwarded the invocation after the call returned", ErrInvalidInvocation, name)
	}
	defer c.running.Done()
	if f.used.Swap(true) {
		return Result{}, errorf("%w: a middleware of tool %q forwarded the invocation a second time", ErrInvalidInvocation, name)
	}
	return c.from(f.index, ctx, invocation)
}

// boundary is the innermost [Caller]: it runs the tool and applies the
// checks every middleware relies on.
type boundary struct {
	binding Binding
}

func (t boundary) Call(ctx context.Context, invocation Invocation) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	def := &t.binding.contract.core.frozen.def
	result, err := t.binding.tool.Call(ctx, invocation)
	if err != nil {
		if _, broken := err.(*brokenResultError); broken {
			return Result{}, err
		}
		if def.Effect == EffectSafe && ctx.Err() == nil && !hasOutcome(err) {
			return Result{}, safeFailure(def.Name, err)
		}
		return Result{}, err
	}
	if err := t.binding.contract.ValidateResult(result); err != nil {
		return Result{}, err
	}
	if result.InputRequest != nil {
		return Result{InputRequest: t.binding.contract.stamp(*result.InputRequest, invocation)}, nil
	}
	return Result{Output: result.Output.Clone()}, nil
}

// hasOutcome reports whether err already says what the model sees: a
// Failure or an InputRejection, found as the classifiers find them.
func hasOutcome(err error) bool {
	if _, ok := ClassifyFailure(err); ok {
		return true
	}
	_, ok := ClassifyInputRejection(err)
	return ok
}
