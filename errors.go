package tool

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// [MaxInputBytes] is the largest JSON text this package accepts anywhere: the
// argument text of a [Request], the answer to an [InputRequest], a prompt, a
// continuation state and a schema document. Larger input is refused before it
// is parsed. A document that holds several of these, such as the wire form
// of an InputRequest, may be correspondingly larger.
const MaxInputBytes = 1 << 20

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
	ErrInvalidTool = errors.New("tool: invalid tool")
	// ErrInvalidInvocation reports a proposal or invocation that was not
	// admitted. An *InputRejection matches it too.
	ErrInvalidInvocation = errors.New("tool: invalid invocation")
	// ErrDuplicateTool reports a tool name registered twice.
	ErrDuplicateTool = errors.New("tool: duplicate tool")
	// ErrInvalidRegistry reports a method called on a nil *Registry.
	ErrInvalidRegistry = errors.New("tool: invalid registry")
	// ErrInvalidCallError reports a CallError built without a cause.
	ErrInvalidCallError = errors.New("tool: invalid call error")
	// ErrInvalidDefinition reports a Definition that breaks its rules.
	ErrInvalidDefinition = errors.New("tool: invalid definition")
	// ErrInvalidFailure reports a Failure that breaks its rules.
	ErrInvalidFailure = errors.New("tool: invalid failure")
	// ErrInvalidInputRejection reports an InputRejection without a usable
	// public message.
	ErrInvalidInputRejection = errors.New("tool: invalid input rejection")
	// ErrInvalidInputRequest reports an InputRequest, or an answer to one,
	// that breaks its rules.
	ErrInvalidInputRequest = errors.New("tool: invalid input request")
	// ErrInvalidOutput reports an Output or Block that breaks its rules.
	ErrInvalidOutput = errors.New("tool: invalid output")
	// ErrInvalidProgress reports a Progress that breaks its rules.
	ErrInvalidProgress = errors.New("tool: invalid progress")
	// ErrInvalidRequest reports a Request that breaks its rules.
	ErrInvalidRequest = errors.New("tool: invalid request")
	// ErrInvalidResult reports a Result that breaks its contract.
	ErrInvalidResult = errors.New("tool: invalid result")
	// ErrInvalidSchema reports a JSON Schema that cannot be used.
	ErrInvalidSchema = errors.New("tool: invalid schema")
)

// sentinels lists every sentinel, for errorf.
var sentinels = []error{
	ErrInvalidTool, ErrInvalidInvocation, ErrDuplicateTool, ErrInvalidRegistry,
	ErrInvalidCallError, ErrInvalidDefinition, ErrInvalidFailure,
	ErrInvalidInputRejection, ErrInvalidInputRequest, ErrInvalidOutput,
	ErrInvalidProgress, ErrInvalidRequest, ErrInvalidResult, ErrInvalidSchema,
}

// prefix starts every message of this package, once.
const prefix = "tool: "

// errorf is fmt.Errorf for a message that wraps more than one error of this
// package. The first operand, a sentinel, keeps its "tool: " prefix; in the
// text of every later error operand the sentinels' texts lose theirs, so
// that the message reads "tool: invalid tool: invalid definition: ..."
// rather than repeating the prefix. errors.Is and errors.As still find
// every operand and everything it wraps.
func errorf(format string, args ...any) error {
	shown := make([]any, len(args))
	for i, a := range args {
		if err, ok := a.(error); ok && i > 0 {
			a = inner{err}
		}
		shown[i] = a
	}
	return fmt.Errorf(format, shown...)
}

// inner shows an error inside another message of this package: its text
// without the prefix of any sentinel it quotes.
type inner struct{ err error }

func (e inner) Error() string {
	msg := e.err.Error()
	if !strings.Contains(msg, prefix) {
		return msg
	}
	for _, s := range sentinels {
		msg = strings.ReplaceAll(msg, s.Error(), strings.TrimPrefix(s.Error(), prefix))
	}
	return msg
}

func (e inner) Unwrap() error { return e.err }

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
