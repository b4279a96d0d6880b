package tool

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Recover is an opt-in [CallMiddleware] that turns a panic further down the
// chain, or in the tool, into a [*Failure] of kind [FailureKindFailed]. The
// [Failure]'s public [Output] is a generic line naming the tool, never the
// panic value or a stack; its Cause is a [*PanicError] holding both. Give it
// to [Bind] first, so that it is outermost and covers every other
// middleware: a panic in a middleware outside it, such as a [Guard]'s
// [Authorizer] when the Guard comes first, is not recovered.
//
// Every panic is recovered, http.ErrAbortHandler and panic(nil) included,
// and so is a panic in the [CallMiddleware] functions inside it: [Binding.Call]
// calls each middleware function only when the call reaches it. A panic in
// a goroutine the tool starts is out of reach: Go cannot recover it from
// another goroutine. Without Recover a panic propagates out of Binding.Call
// unchanged.
func Recover(next Caller) Caller {
	return CallerFunc(func(ctx context.Context, invocation Invocation) (result Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				name := invocation.Definition().Name
				result = Result{}
				err = &Failure{
					kind:   FailureKindFailed,
					output: NewTextOutput(fmt.Sprintf("the tool %q failed", name)),
					cause:  &PanicError{Value: v, Stack: debug.Stack()},
				}
			}
		}()
		return next.Call(ctx, invocation)
	})
}

// PanicError is the Cause of a [Failure] made by [Recover]: the recovered value
// and the stack of the goroutine that panicked. It is private diagnostic
// data: neither its message nor its stack is ever part of the Failure's
// public [Output]. Unwrap exposes Value when it is an error, so errors.Is and
// errors.As work on [Failure.Cause]. Its methods are safe on a nil receiver.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the formatted stack trace at the time of recovery.
	Stack []byte
}

// Error describes the panic value, without the stack: "tool: " followed
// by its body.
func (e *PanicError) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project shows e when it quotes it: "panic: " and the
// value, formatted with %v (a value that is an error of this project
// without its own prefix); a nil PanicError is "panic".
func (e *PanicError) errorBody() string {
	if e == nil {
		return "panic"
	}
	return errprefix.Part("panic: %v", e.Value).Error()
}

// Unwrap returns Value when it is an error.
func (e *PanicError) Unwrap() error {
	if e == nil {
		return nil
	}
	err, _ := e.Value.(error)
	return err
}
