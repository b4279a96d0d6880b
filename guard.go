package tool

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Authorization is what a policy sees of a call: the frozen definition and
// the admitted arguments. It cannot run the call or skip its validation.
// Both accessors return detached copies, so a policy may keep or annotate
// them without changing the call. The zero Authorization is empty.
type Authorization struct {
	invocation Invocation
}

// Definition returns a copy of the definition that admitted the call.
func (a Authorization) Definition() Definition { return a.invocation.Definition() }

// Arguments returns a copy of the admitted arguments.
func (a Authorization) Arguments() []byte { return a.invocation.Arguments() }

// Authorizer decides whether a call may run. A nil error is a decision:
// true permits, false refuses. Any error means no decision could be made,
// and the boolean is ignored. Identity, consent, tenancy and policy storage
// are the application's: pass them in ctx or in the Authorizer itself.
// An Authorizer must be safe for concurrent use.
type Authorizer interface {
	Authorize(ctx context.Context, authorization Authorization) (bool, error)
}

// AuthorizerFunc adapts a function to [Authorizer].
type AuthorizerFunc func(context.Context, Authorization) (bool, error)

// Authorize calls f(ctx, authorization).
func (f AuthorizerFunc) Authorize(ctx context.Context, authorization Authorization) (bool, error) {
	return f(ctx, authorization)
}

// GuardConfig configures a [Guard].
type GuardConfig struct {
	// Authorizer decides every call. Required.
	Authorizer Authorizer
}

// Guard is a [CallMiddleware] that asks an [Authorizer] before every call.
// Because it sits on [Binding.Call], the same policy applies to direct calls,
// registries and whole runtimes. The zero Guard is invalid: its Call
// refuses every invocation. A Guard is immutable and safe for concurrent
// use when its Authorizer is.
type Guard struct {
	authorizer Authorizer
}

// NewGuard returns a [Guard]. A nil or typed-nil [Authorizer] is an error
// wrapping [ErrInvalidTool]: a guard that permits everything must not come
// about by omission.
func NewGuard(config GuardConfig) (Guard, error) {
	if config.Authorizer == nil || isTypedNil(config.Authorizer) {
		return Guard{}, errorf("%w: a Guard needs an Authorizer", ErrInvalidTool)
	}
	return Guard{authorizer: config.Authorizer}, nil
}

// Call is the [Guard]'s [CallMiddleware]: pass g.Call to [Bind].
//
// For every call it first returns ctx.Err() if ctx is done, then asks the
// [Authorizer]. A refusal is a [*Failure] of kind [FailureKindRejected] with a
// generic public message naming the tool. An Authorizer error is an
// [*AuthorizationError]; when ctx is done by then, ctx.Err() is joined to it
// so that errors.Is sees the cancellation, and only that. The tool never
// runs after a refusal or an error. When ctx ends while the Authorizer
// decides and it then permits, the tool does not run either: the call
// reaches the tool boundary, which returns ctx.Err() (see [Binding.Call]).
// A panic in the Authorizer is not recovered here; put [Recover] outside
// the [Guard] for that.
func (g Guard) Call(next Caller) Caller {
	return CallerFunc(func(ctx context.Context, invocation Invocation) (Result, error) {
		name := ""
		if invocation.core != nil {
			name = invocation.core.frozen.def.Name
		}
		if g.authorizer == nil {
			return Result{}, &AuthorizationError{tool: name, cause: errZeroGuard}
		}
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		allowed, err := g.authorizer.Authorize(ctx, Authorization{invocation: detach(invocation)})
		if err != nil {
			authErr := &AuthorizationError{tool: name, cause: err}
			if ctxErr := ctx.Err(); ctxErr != nil {
				return Result{}, errors.Join(authErr, ctxErr)
			}
			return Result{}, authErr
		}
		if !allowed {
			return Result{}, &Failure{
				kind:   FailureKindRejected,
				output: NewTextOutput(fmt.Sprintf("the call to %q is not permitted", name)),
			}
		}
		return next.Call(ctx, invocation)
	})
}

// errZeroGuard is the Cause of every [AuthorizationError] of the zero [Guard].
var errZeroGuard = errorf("%w: the zero Guard has no Authorizer", ErrInvalidTool)

// detach copies the invocation's arguments, so that a policy holding its
// [Authorization] shares no memory with the call.
func detach(invocation Invocation) Invocation {
	invocation.arguments = bytes.Clone(invocation.arguments)
	return invocation
}

// AuthorizationError means a policy could not decide whether a call may
// run; the tool did not run. It is not the tool's outcome: [ClassifyFailure]
// does not find one in it.
//
// Error names the tool but not the cause, and the cause does not take part
// in errors.Is or errors.As: read it deliberately with Cause. Only the
// cancellation of the call's own ctx stays visible, because [Guard] joins
// ctx.Err() beside it. All methods are safe on a nil receiver. See "Errors
// and outcomes" in the package documentation.
type AuthorizationError struct {
	tool  string
	cause error
}

// Error reports that authorization of the tool failed: "tool: " followed
// by its body.
func (e *AuthorizationError) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project shows e when it quotes it: `authorization of
// "refund" failed`, or "authorization failed" for a nil AuthorizationError.
// It names the tool, never the cause.
func (e *AuthorizationError) errorBody() string {
	if e == nil {
		return "authorization failed"
	}
	return fmt.Sprintf("authorization of %q failed", e.tool)
}

// Cause returns the [Authorizer]'s error.
func (e *AuthorizationError) Cause() error {
	if e == nil {
		return nil
	}
	return e.cause
}
