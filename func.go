package tool

import (
	"context"

	"github.com/agentcontract/tool/internal/errprefix"
)

// FuncConfig names and describes a [Func]; see [NewFunc]. The zero
// FuncConfig is invalid: a tool needs a name.
type FuncConfig struct {
	// Name is the tool's name; see [Definition].Name.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Effect is the tool's replay promise.
	Effect Effect
}

// Func is a [Tool] made of an ordinary typed function of its arguments: the
// [Signature] of In and Out does the decoding, checking and encoding. A tool
// that needs the call itself, such as its [IdempotencyKey] or a
// [Continuation], implements Tool around a Signature instead.
//
// The zero Func is invalid: [Bind] refuses its definition. A Func is
// immutable; its Call runs concurrently whenever its [Binding] is called
// concurrently, so it is safe for concurrent use when its function is.
type Func[In, Out any] struct {
	signature  Signature[In, Out]
	definition Definition
	fn         func(context.Context, In) (Out, error)
}

// NewFunc returns a [Func] that calls fn. A nil fn, an unsupported In or
// Out (see [NewSignature]), and a name, description or effect that
// [Definition.Validate] would refuse are errors wrapping [ErrInvalidTool]
// (and [ErrInvalidDefinition] for the definition's fields).
func NewFunc[In, Out any](config FuncConfig, fn func(context.Context, In) (Out, error)) (Func[In, Out], error) {
	if fn == nil {
		return Func[In, Out]{}, errorf("%w: tool %q has a nil function", ErrInvalidTool, config.Name)
	}
	sig, err := newSignature[In, Out]()
	if err != nil {
		return Func[In, Out]{}, errorf("%w: tool %q: %w", ErrInvalidTool, config.Name, err)
	}
	def := Definition{
		Name:         config.Name,
		Description:  config.Description,
		InputSchema:  sig.input.s.canonical,
		OutputSchema: sig.output.JSON(),
		Effect:       config.Effect,
	}
	if err := def.validateHead(); err != nil {
		return Func[In, Out]{}, errorf("%w: %w", ErrInvalidTool, err)
	}
	return Func[In, Out]{signature: sig, definition: def, fn: fn}, nil
}

// Call decodes the invocation's arguments, calls the function and encodes
// its result. The arguments are decoded once per call: the first Call of an
// invocation takes the value that [Contract.Prepare] decoded (in the read
// that checked the arguments against the schema, for an In of plain
// structs, slices, maps, pointers, strings, numbers and booleans), and
// every later Call of it, or of a copy of it, decodes afresh, so the
// function owns its input and may modify it; no two calls share one. The function's error is returned as it is. A result that
// cannot be encoded as JSON (a NaN, say) is an error wrapping
// [ErrInvalidResult] and [ErrInvalidOutput]: the function's result broke
// the output contract, so [Binding.Call] returns that error as it is,
// whatever the tool's [Effect], instead of turning it into a [Failure]. Any
// other encoded result is returned unchecked, because the [Binding] checks
// every result against the contract (see [Contract.ValidateResult]).
func (f Func[In, Out]) Call(ctx context.Context, invocation Invocation) (Result, error) {
	if f.fn == nil {
		return Result{}, errorf("%w: the zero Func runs nothing", ErrInvalidTool)
	}
	in, ok := takeDecoded[In](invocation.decoded)
	if !ok {
		var err error
		if in, err = f.signature.Decode(invocation); err != nil {
			return Result{}, err
		}
	}
	out, err := f.fn(ctx, in)
	if err != nil {
		return Result{}, err
	}
	output, err := f.signature.encode(out)
	if err != nil {
		return Result{}, &brokenResultError{err: errorf("%w: tool %q: %w", ErrInvalidResult, f.definition.Name, err)}
	}
	return Result{Output: output}, nil
}

// brokenResultError is the error of a [Func] whose function returned a value
// that cannot be encoded. The function did not fail: its result broke the
// output contract, so [Binding.Call] passes it on as it passes on any other
// broken result, and the safe rule, which converts a tool's own errors into
// Failures, leaves it alone.
type brokenResultError struct {
	err error // wraps ErrInvalidResult
}

func (e *brokenResultError) Error() string     { return e.err.Error() }
func (e *brokenResultError) ErrorBody() string { return errprefix.Body(e.err) }
func (e *brokenResultError) Unwrap() error     { return e.err }

// Definition returns a copy of the definition.
func (f Func[In, Out]) Definition() Definition { return f.definition.Clone() }

// InputValidator returns the [Signature]'s input validator.
func (f Func[In, Out]) InputValidator() func([]byte) error { return f.signature.InputValidator() }

// admission hands [Bind] the [Signature]'s admission in the form that
// decodes the arguments in the read that checks them and keeps the value
// for the first Call, so that a call reads its arguments once.
func (f Func[In, Out]) admission() admission { return newTypedAdmission[In]() }

// self returns f, so that [Bind] can tell a [Func] from a type that embeds one.
func (f Func[In, Out]) self() any { return f }

// compiledSchemas hands [Bind] the schemas [NewFunc] already compiled, so that
// binding a [Func] does not compile them a second time.
func (f Func[In, Out]) compiledSchemas() []Schema {
	return []Schema{f.signature.input, f.signature.output}
}
