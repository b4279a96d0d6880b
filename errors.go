package tool

import (
	"reflect"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/errprefix"
)

// [MaxInputBytes] is the largest JSON text this package accepts anywhere: the
// argument text of a [Request], the answer to an [InputRequest], a prompt, a
// continuation state and a schema document. Larger input is refused before it
// is parsed. A document that holds several of these, such as the wire form
// of an InputRequest, may be correspondingly larger.
const MaxInputBytes = engine.MaxInputBytes

// Sentinel errors. Every error this package returns wraps exactly one of them
// (or, where a doc comment says so, a cause's own sentinel as well), so
// callers test with errors.Is. Messages of wrapped errors add what was wrong
// with which value after the sentinel's text.
//
// Three kinds of value are deliberately not wrapped: a [*Failure] (a definite
// outcome), an [*AuthorizationError], and the error of a tool or of a done
// context, which pass through [Binding.Call] as they are.
var (
	// ErrInvalidTool reports a tool that cannot be bound or built: a nil
	// tool or middleware, an invalid definition, an unsupported Go type.
	ErrInvalidTool = errprefix.New("invalid tool")
	// ErrInvalidInvocation reports a proposal or invocation that was not
	// admitted. An *InputRejection matches it too.
	ErrInvalidInvocation = errprefix.New("invalid invocation")
	// ErrDuplicateTool reports a tool name registered twice.
	ErrDuplicateTool = errprefix.New("duplicate tool")
	// ErrInvalidRegistry reports a method called on a nil *Registry.
	ErrInvalidRegistry = errprefix.New("invalid registry")
	// ErrInvalidCallError reports a CallError built without a cause.
	ErrInvalidCallError = errprefix.New("invalid call error")
	// ErrInvalidDefinition reports a Definition that breaks its rules.
	ErrInvalidDefinition = errprefix.New("invalid definition")
	// ErrInvalidFailure reports a Failure that breaks its rules.
	ErrInvalidFailure = errprefix.New("invalid failure")
	// ErrInvalidInputRejection reports an InputRejection without a usable
	// public message.
	ErrInvalidInputRejection = errprefix.New("invalid input rejection")
	// ErrInvalidInputRequest reports an InputRequest, or an answer to one,
	// that breaks its rules.
	ErrInvalidInputRequest = errprefix.New("invalid input request")
	// ErrInvalidOutput reports an Output or Block that breaks its rules.
	ErrInvalidOutput = errprefix.New("invalid output")
	// ErrInvalidProgress reports a Progress that breaks its rules.
	ErrInvalidProgress = errprefix.New("invalid progress")
	// ErrInvalidRequest reports a Request that breaks its rules.
	ErrInvalidRequest = errprefix.New("invalid request")
	// ErrInvalidResult reports a Result that breaks its contract.
	ErrInvalidResult = errprefix.New("invalid result")
	// ErrInvalidSchema reports a JSON Schema that cannot be used.
	ErrInvalidSchema = errprefix.New("invalid schema")
)

// errorf is fmt.Errorf for this package's errors: the format starts with
// the sentinel the error wraps, every error operand is shown without its own
// "tool: ", and the message starts with "tool: " once.
var errorf = errprefix.Errorf

// isTypedNil reports whether v is an interface holding a nil pointer, map,
// slice, func or channel. A nil interface is not a typed nil.
func isTypedNil(v any) bool {
	if v == nil {
		return false
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// errorPart formats a piece of a message that an errorf error quotes, such
// as the position of a problem; it carries no "tool: " of its own.
var errorPart = errprefix.Part

// The error types of this package show their body to the errors of this
// project that quote them through errprefix's registry, not by a method:
// their exported API follows the reference, which gives them none.
func init() { errprefix.RegisterBodies(bodyOf) }

// bodyOf returns the body of err, an error of one of this package's types:
// its text without the "tool: " prefix, as another error of this project
// quotes it.
func bodyOf(err error) (string, bool) {
	switch e := err.(type) {
	case *Failure:
		return e.errorBody(), true
	case *CallError:
		return e.errorBody(), true
	case *InputRejection:
		return e.errorBody(), true
	case *InputValidationError:
		return e.errorBody(), true
	case *InputValidationPanicError:
		return e.errorBody(), true
	case *PanicError:
		return e.errorBody(), true
	case *AuthorizationError:
		return e.errorBody(), true
	}
	return "", false
}
