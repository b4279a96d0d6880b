package tool

import (
	"context"
)

// Caller runs one admitted [Invocation].
//
// A Caller must honour ctx, must not retain the [Invocation] or anything it
// returned after Call returns, and reports either a [Result] or an error,
// never both. A Result it completed stands even if ctx is cancelled
// afterwards. An ordinary error says nothing definite about what happened:
// only a [*Failure] declares an outcome (see "Errors and outcomes" in the
// package documentation).
type Caller interface {
	Call(ctx context.Context, invocation Invocation) (Result, error)
}

// CallerFunc adapts a function to [Caller].
type CallerFunc func(context.Context, Invocation) (Result, error)

// Call calls f(ctx, invocation).
func (f CallerFunc) Call(ctx context.Context, invocation Invocation) (Result, error) {
	return f(ctx, invocation)
}

// Tool is code a model may call: a [Caller] with the [Definition] that admits
// its invocations.
//
// [Definition] must return a valid, detached snapshot: [Bind] reads it
// exactly once and freezes it, so later changes, to the tool or to the
// returned value, change nothing about calls through the [Binding]. Call
// receives only invocations admitted by that frozen contract. A Tool's
// errors carry no retry, pause or abort policy; those belong to the
// runtime.
//
// Call may run concurrently: a [Binding] does not serialize calls, and a
// runtime may call one Binding, even with one [Invocation], from several
// goroutines at once. A Tool that must not run twice at once guards
// itself; its [Effect] says nothing about concurrency.
type Tool interface {
	Caller
	Definition() Definition
}

// InputValidatingTool is a [Tool] with admission rules JSON [Schema] cannot
// express, such as a strict typed decode or a domain check. [Bind] calls
// InputValidator once and the [Contract] runs the returned function after the
// schema, in Prepare, before any policy or tool code.
//
// The returned function must be deterministic, bounded, free of side
// effects and safe for concurrent use. It must not retain or modify its
// argument, nor capture the executable tool or any backend. It returns nil
// to admit, an [*InputRejection] (possibly wrapped with %w) for input a model
// can correct, and anything else, or a panic, only for a defect of its own,
// which Prepare reports as an [*InputValidationError]. A nil function means
// the schema is the whole admission contract.
type InputValidatingTool interface {
	InputValidator() func([]byte) error
}

// Result is the value of a call that did not fail: either a completed
// [Output], or an [InputRequest] that suspends the call until a person or
// another system answers it. A Result with an InputRequest has an empty
// Output. The zero Result completes with an empty Output.
//
// Suspension is a result, not an error, and call identity never travels in
// an error or a context: the runtime owns persisting the request and
// resuming the call (see "Suspending a call" in the package documentation).
type Result struct {
	Output       Output
	InputRequest *InputRequest
}

// CallMiddleware wraps the [Caller] of a [Binding]: it may refuse an
// invocation or forward it, synchronously and at most once, to next. It
// cannot change the invocation: next accepts only the very invocation that
// entered the chain, once, while [Binding.Call] runs, and refuses anything
// else with [ErrInvalidInvocation], a forward through a next kept after
// the call returned included.
//
// [Bind] calls the factory anew for every call, so a middleware must be safe
// for concurrent use and leave shared resources to whoever constructed it.
// Middlewares given to Bind run in order, the first outermost:
//
//	Bind(t, A, B)   →   A → B → checks → t.Call
//
// A middleware that adds effects of its own is a new tool, not a
// middleware: the replay promise of the wrapped tool does not cover them.
type CallMiddleware func(next Caller) Caller
