package tool

import (
	"context"
	"fmt"
	"runtime/debug"
)

// Recover is an opt-in CallMiddleware that turns a panic further down the
// chain, or in the tool, into a *Failure of kind FailureKindFailed. The
// Failure's public Output is a generic line naming the tool, never the
// panic value or a stack; its Cause is a *PanicError holding both. Give it
// to Bind first, so that it is outermost and covers every other
// middleware. A panic with http.ErrAbortHandler semantics is not special:
// every panic is recovered.
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

// PanicError is the Cause of a Failure made by Recover: the recovered value
// and the stack of the goroutine that panicked.
type PanicError struct {
	// Value is the value passed to panic.
	Value any
	// Stack is the formatted stack trace at the time of recovery.
	Stack []byte
}

// Error describes the panic value, without the stack.
func (e *PanicError) Error() string {
	if e == nil {
		return "tool: panic"
	}
	return fmt.Sprintf("tool: panic: %v", e.Value)
}

// Unwrap returns Value when it is an error.
func (e *PanicError) Unwrap() error {
	if e == nil {
		return nil
	}
	err, _ := e.Value.(error)
	return err
}
