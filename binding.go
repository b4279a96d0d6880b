package tool

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync/atomic"
)

// Binding pairs a frozen Contract with the Tool that executes it and the
// middlewares that wrap every call.
//
// The zero Binding is invalid: its Call refuses everything and Registry
// refuses to register it. A Binding is immutable; calls may run concurrently
// as far as the Tool and middlewares allow it.
type Binding struct {
	contract    Contract
	tool        Tool
	middlewares []CallMiddleware
}

// Bind validates and freezes executable's definition and returns the
// Binding that runs it through middlewares, the first outermost.
//
// Bind calls executable.Definition exactly once and compiles its schemas;
// when executable is an InputValidatingTool it calls InputValidator once and
// keeps the returned function. Nothing the tool does later changes the
// contract. A nil or typed-nil tool or middleware, an invalid definition,
// or an InputValidator that panics is an error wrapping ErrInvalidTool
// (with ErrInvalidDefinition or ErrInvalidSchema beside it where they
// apply, and an *InputValidationPanicError holding the value of a panic).
// The middlewares slice is copied.
func Bind(executable Tool, middlewares ...CallMiddleware) (Binding, error) {
	if executable == nil || isTypedNil(executable) {
		return Binding{}, fmt.Errorf("%w: nil tool", ErrInvalidTool)
	}
	for i, m := range middlewares {
		if m == nil {
			return Binding{}, fmt.Errorf("%w: middleware %d is nil", ErrInvalidTool, i)
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
	wire, err := frozen.def.marshal()
	if err != nil {
		return Binding{}, errorf("%w: %w: %v", ErrInvalidTool, ErrInvalidDefinition, err)
	}
	contract := Contract{core: &contractCore{frozen: frozen, digest: sha256.Sum256(wire)}}
	if v, ok := executable.(InputValidatingTool); ok {
		contract.validator, err = captureValidator(v)
		if err != nil {
			return Binding{}, errorf("%w: tool %q: %w", ErrInvalidTool, frozen.def.Name, err)
		}
	}
	return Binding{
		contract:    contract,
		tool:        executable,
		middlewares: append([]CallMiddleware(nil), middlewares...),
	}, nil
}

// captureValidator calls InputValidator, containing a panic. The panic is
// reported to whoever binds the tool, with its value reachable: unlike a
// validator failing in Prepare, nothing here is about a model's input, so
// it is not an *InputValidationError and does not match
// ErrInvalidInvocation.
func captureValidator(v InputValidatingTool) (validator func([]byte) error, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &InputValidationPanicError{Value: p}
		}
	}()
	return v.InputValidator(), nil
}

// Contract returns the Binding's frozen Contract.
func (b Binding) Contract() Contract { return b.contract }

// Call runs invocation through the middlewares to the tool.
//
// It refuses, with an error wrapping ErrInvalidInvocation and without
// running anything, the zero Invocation and one prepared by any other
// Binding's Contract, even one with the same name and schema. When ctx is
// already done it returns ctx.Err() and runs nothing.
//
// At the tool boundary, innermost, so that every middleware sees the
// checked outcome:
//   - the result is checked with Contract.ValidateResult; a result that
//     breaks the contract is an error wrapping ErrInvalidResult and is
//     never returned;
//   - a returned InputRequest is stamped with the call it belongs to (see
//     "Suspending a call" in the package documentation);
//   - when the tool's Effect is EffectSafe, an error that is not a Failure,
//     returned while ctx is not done, becomes a Failure of kind
//     FailureKindFailed with a generic public message naming the tool and
//     the error as its Cause. Errors of other tools pass through untouched.
//
// A result the tool completed is returned even when ctx is cancelled
// afterwards. The returned Output is a copy the caller owns.
func (b Binding) Call(ctx context.Context, invocation Invocation) (Result, error) {
	core := b.contract.core
	if core == nil || b.tool == nil {
		return Result{}, fmt.Errorf("%w: the zero Binding runs nothing", ErrInvalidInvocation)
	}
	if invocation.core == nil {
		return Result{}, fmt.Errorf("%w: the zero Invocation was not admitted by any contract", ErrInvalidInvocation)
	}
	if invocation.core != core {
		return Result{}, fmt.Errorf("%w: the invocation was admitted by another contract than the one of tool %q", ErrInvalidInvocation, core.frozen.def.Name)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	return b.from(0, ctx, invocation)
}

// from runs the chain from middleware i inwards. Each middleware's factory
// is called only when the call reaches it, so a Recover placed outermost
// also covers the factories of the middlewares inside it.
func (b Binding) from(i int, ctx context.Context, invocation Invocation) (Result, error) {
	if i == len(b.middlewares) {
		return boundary{binding: b}.Call(ctx, invocation)
	}
	wrapped := b.middlewares[i](&forwardOnce{binding: b, index: i + 1, id: invocation.id})
	if wrapped == nil || isTypedNil(wrapped) {
		return Result{}, fmt.Errorf("%w: middleware %d of tool %q returned a nil Caller", ErrInvalidTool, i, b.contract.Name())
	}
	return wrapped.Call(ctx, invocation)
}

// forwardOnce is the next a middleware receives: it forwards the invocation
// that entered the chain, once, to the rest of the chain.
type forwardOnce struct {
	binding Binding
	index   int
	id      uint64
	used    atomic.Bool
}

func (f *forwardOnce) Call(ctx context.Context, invocation Invocation) (Result, error) {
	core := f.binding.contract.core
	if invocation.core != core || invocation.id != f.id {
		return Result{}, fmt.Errorf("%w: a middleware of tool %q forwarded a different invocation than it received", ErrInvalidInvocation, core.frozen.def.Name)
	}
	if f.used.Swap(true) {
		return Result{}, fmt.Errorf("%w: a middleware of tool %q forwarded the invocation a second time", ErrInvalidInvocation, core.frozen.def.Name)
	}
	return f.binding.from(f.index, ctx, invocation)
}

// boundary is the innermost Caller: it runs the tool and applies the
// checks every middleware relies on.
type boundary struct {
	binding Binding
}

func (t boundary) Call(ctx context.Context, invocation Invocation) (Result, error) {
	def := &t.binding.contract.core.frozen.def
	result, err := t.binding.tool.Call(ctx, invocation)
	if err != nil {
		if def.Effect == EffectSafe && ctx.Err() == nil {
			if _, isFailure := ClassifyFailure(err); !isFailure {
				return Result{}, safeFailure(def.Name, err)
			}
		}
		return Result{}, err
	}
	if err := t.binding.contract.ValidateResult(result); err != nil {
		return Result{}, err
	}
	if result.InputRequest != nil {
		stamped := result.InputRequest.clone()
		stamped.stamp = callStamp{
			set:       true,
			tool:      def.Name,
			contract:  t.binding.contract.core.digest,
			arguments: sha256.Sum256(invocation.arguments),
			key:       invocation.key,
		}
		return Result{InputRequest: &stamped}, nil
	}
	return Result{Output: result.Output.Clone()}, nil
}
