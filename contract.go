package tool

import (
	"crypto/sha256"
	"fmt"
	"unicode/utf8"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/contractschema"
	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/strictjson"
)

// init lets package dispatch check a call's arguments against the
// compiled input schema while they stream in, before Prepare judges them
// whole, and stamp a call record with the contract's digest; see
// internal/contractschema.
func init() {
	contractschema.Register(func(contract any) *engine.Schema {
		c, ok := contract.(Contract)
		if !ok || c.core == nil {
			return nil
		}
		return c.core.frozen.input.s.engine
	})
	// The contract's identity, for the call records of package dispatch.
	contractschema.RegisterDigest(func(contract any) ([32]byte, bool) {
		c, ok := contract.(Contract)
		if !ok || c.core == nil {
			return [32]byte{}, false
		}
		return c.core.digest, true
	})
}

// Contract is the trust boundary between a model's proposal and a tool: the
// frozen definition, its compiled input schema and the tool's input
// validator. It turns a [Request] into an [Invocation] (Prepare) and checks
// results (ValidateResult), and holds nothing that can run the tool.
//
// A Contract comes from [Binding.Contract]. The zero Contract is invalid: its
// Prepare and ValidateResult return errors. A Contract is immutable and safe
// for concurrent use, independently of the tool.
type Contract struct {
	core  *contractCore
	admit admission // the schema's check and the input validator; nil when the schema is the whole contract
}

// contractCore is the immutable part of a contract an [Invocation] may share:
// data only.
type contractCore struct {
	frozen frozenDefinition
	digest [sha256.Size]byte // of the canonical definition without its description: the contract's identity
}

// Definition returns a copy of the frozen definition, with the schemas in
// canonical form (compact, member order and number text as given): the
// bytes the schemas were compiled from. The zero [Contract] returns the zero
// Definition.
func (c Contract) Definition() Definition {
	if c.core == nil {
		return Definition{}
	}
	return c.core.frozen.definition()
}

// Name returns the tool's name, or "" for the zero [Contract].
func (c Contract) Name() string {
	if c.core == nil {
		return ""
	}
	return c.core.frozen.def.Name
}

// Effect returns the frozen definition's Effect without copying the rest
// of the definition, or "" for the zero Contract.
func (c Contract) Effect() Effect {
	if c.core == nil {
		return ""
	}
	return c.core.frozen.def.Effect
}

// Prepare admits call into an [Invocation] or says why not. It runs no
// tool and no policy. In order, it refuses:
//
//   - the zero [Contract], an empty tool name (wrapping [ErrInvalidRequest]
//     as well), a name other than the contract's, and an [IdempotencyKey]
//     that is not valid UTF-8, holds a Unicode noncharacter or is longer
//     than [MaxInputBytes] written as a JSON string (a call stamp could not
//     carry it): plain errors, about the envelope the runtime routed;
//   - a continuation that does not belong to this call (see "Suspending a
//     call" in the package documentation): a plain error;
//   - argument text that is longer than MaxInputBytes, is not one RFC 7493
//     JSON object within the bounds of "What Prepare admits" in the package
//     documentation, breaks the input schema, or that the tool's input
//     validator rejects: an [*InputRejection] whose Message can be sent back
//     to the model. The argument text is the model's to correct, its length
//     included, so an over-long text is a rejection and does not match
//     ErrInvalidRequest, although [Request.Validate] refuses it too;
//   - input the validator could not judge because of a defect of its own:
//     an [*InputValidationError].
//
// Argument text that is blank (JSON whitespace only) is admitted as {}.
// Every error wraps [ErrInvalidInvocation]. Neither call nor admission is
// retained: the [Invocation] holds copies, except of the argument text, a
// string and so immutable, whose bytes it reads in place.
func (c Contract) Prepare(call Request, admission Admission) (Invocation, error) {
	if c.core == nil {
		return Invocation{}, errorf("%w: the zero Contract admits nothing", ErrInvalidInvocation)
	}
	name := c.core.frozen.def.Name
	if call.Name == "" {
		return Invocation{}, errorf("%w: %w: empty tool name", ErrInvalidInvocation, ErrInvalidRequest)
	}
	if call.Name != name {
		return Invocation{}, errorf("%w: request names tool %q, this contract is %q", ErrInvalidInvocation, call.Name, name)
	}
	if err := checkIdempotencyKey(admission.IdempotencyKey); err != nil {
		return Invocation{}, err
	}
	if len(call.Arguments) > MaxInputBytes {
		return Invocation{}, rejectf("arguments of %q are %d bytes, more than the limit of %d", name, len(call.Arguments), MaxInputBytes)
	}
	// args is the argument text itself, not a copy: a string's bytes never
	// change, and nothing here or in an Invocation writes to them; code
	// that may write (a tool's own input validator, a policy) gets a copy.
	args := readOnlyBytes(call.Arguments)
	if strictjson.IsBlank(args) {
		args = []byte("{}")
	}
	inv := Invocation{core: c.core, arguments: args, key: admission.IdempotencyKey}
	if admission.Continuation != nil {
		if err := c.admitContinuation(admission, args); err != nil {
			return Invocation{}, err
		}
		cont := *admission.Continuation
		inv.continuation = &cont
	}
	value, err := c.admitArguments(args)
	if err != nil {
		return Invocation{}, err
	}
	inv.decoded = value
	if inv.decoded == nil {
		// The Invocation's identity (see Invocation.same).
		inv.decoded = new(decoded)
	}
	return inv, nil
}

// readOnlyBytes returns the bytes of s without copying them. They must
// never be written to.
func readOnlyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

// admitArguments checks args against the input schema and, when the
// schema is not the whole contract, the tool's own rules, and returns the
// value to hand to the first Call, if any.
func (c Contract) admitArguments(args []byte) (*decoded, error) {
	if c.admit == nil {
		return nil, c.checkArguments(args)
	}
	read, r, fault := c.admit.check(c.core.frozen.input, args)
	if err := c.judgeArguments(args, r, fault); err != nil {
		return nil, err
	}
	return c.admit.finish(read, args)
}

// checkArguments checks that args is a JSON object that satisfies the
// input schema, through the engine's one check.
func (c Contract) checkArguments(args []byte) error {
	r, fault := c.core.frozen.input.verdict(args)
	return c.judgeArguments(args, r, fault)
}

// judgeArguments turns the verdict of the input schema on args into
// Prepare's error, or nil when the schema admitted them.
func (c Contract) judgeArguments(args []byte, r *engine.Rejection, fault error) error {
	name := c.core.frozen.def.Name
	object := startsObject(args)
	switch {
	case r != nil && r.Syntax != nil:
		return rejectf("arguments of %q are not valid JSON %v", name, r.Syntax)
	case !object:
		return rejectf("arguments of %q must be a JSON object", name)
	case r != nil:
		rej := rejection(r)
		rej.message = fmt.Sprintf("arguments of %q %s its input schema %s", name, rej.against("do not match"), rej.message)
		return rej
	case fault != nil:
		return errorf("%w: arguments of %q: %w", ErrInvalidInvocation, name, fault)
	}
	return nil
}

// startsObject reports whether the first byte of data after JSON
// whitespace opens an object.
func startsObject(data []byte) bool {
	for _, c := range data {
		if !strictjson.IsSpace(c) {
			return c == '{'
		}
	}
	return false
}

// ValidateResult checks result against the contract the [Binding] enforces on
// every call, so that a runtime can apply it again when it recovers a
// result from storage. A result is either a completed [Output], valid and,
// when the definition declares an output schema, with Details that satisfy
// it; or a valid [InputRequest] with an empty Output. Never both. Errors wrap
// [ErrInvalidResult].
func (c Contract) ValidateResult(result Result) error {
	if c.core == nil {
		return errorf("%w: the zero Contract accepts no result", ErrInvalidResult)
	}
	name := c.core.frozen.def.Name
	if result.InputRequest != nil {
		if len(result.Output.Content) > 0 || len(result.Output.Details) > 0 {
			return errorf("%w: tool %q returned both an output and an input request", ErrInvalidResult, name)
		}
		if !result.InputRequest.Valid() {
			return errorf("%w: tool %q returned an invalid input request", ErrInvalidResult, name)
		}
		return nil
	}
	out := c.core.frozen.output
	if out.Valid() && len(result.Output.Details) > 0 && result.Output.validateContent() == nil {
		switch r, fault := out.verdict(result.Output.Details); {
		case fault != nil:
			return errorf("%w: details of tool %q: %w", ErrInvalidResult, name, fault)
		case r == nil:
			return nil
		case r.Syntax == nil:
			rej := rejection(r)
			return errorf("%w: details of tool %q %s its output schema: %s", ErrInvalidResult, name, rej.against("do not match"), rej.message)
		}
		// Details that are not one I-JSON document are worded below.
	}
	if _, _, err := result.Output.validate(); err != nil {
		return errorf("%w: tool %q: %w", ErrInvalidResult, name, err)
	}
	if out.Valid() && len(result.Output.Details) == 0 {
		return errorf("%w: tool %q declares an output schema but returned no details", ErrInvalidResult, name)
	}
	return nil
}

// checkIdempotencyKey refuses a key that a call stamp could not carry
// through storage: one that is not valid UTF-8, holds a Unicode
// noncharacter, or is longer than [MaxInputBytes] written as a JSON string.
// Prepare applies it to every call, before anything runs, so that no
// suspended call is left with a checkpoint that cannot be restored.
func checkIdempotencyKey(key IdempotencyKey) error {
	if key == "" {
		return nil
	}
	if !utf8.ValidString(string(key)) {
		return errorf("%w: the idempotency key is not valid UTF-8", ErrInvalidInvocation)
	}
	for _, r := range string(key) {
		if strictjson.IsNoncharacter(r) {
			return errorf("%w: the idempotency key holds the Unicode noncharacter U+%04X", ErrInvalidInvocation, r)
		}
	}
	if len(key) <= (MaxInputBytes-2)/6 {
		return nil // even escaped as \u00XX throughout, it fits
	}
	quoted, err := jsontext.AppendQuote(nil, string(key))
	if err == nil {
		quoted, err = jsontext.AppendFormat(nil, quoted, wireOptions)
	}
	if err != nil {
		return errorf("%w: the idempotency key cannot be written as JSON: %v", ErrInvalidInvocation, err)
	}
	if len(quoted) > MaxInputBytes {
		return errorf("%w: the idempotency key is %d bytes written as JSON, more than the limit of %d", ErrInvalidInvocation, len(quoted), MaxInputBytes)
	}
	if _, err := strictjson.Parse(quoted); err != nil {
		return errorf("%w: the idempotency key is not I-JSON text: %v", ErrInvalidInvocation, err)
	}
	return nil
}

// admitContinuation checks that the continuation was issued for this very
// call: this contract, these argument bytes and this idempotency key.
func (c Contract) admitContinuation(admission Admission, args []byte) error {
	stamp := admission.Continuation.stamp
	name := c.core.frozen.def.Name
	switch {
	case !stamp.set:
		return errorf("%w: the continuation carries no call stamp (its input request was not returned through a Binding)", ErrInvalidInvocation)
	case stamp.tool != name:
		return errorf("%w: the continuation was issued by tool %q, not %q", ErrInvalidInvocation, stamp.tool, name)
	case stamp.contract != c.core.digest:
		return errorf("%w: the continuation was issued by another contract of a tool named %q", ErrInvalidInvocation, name)
	case stamp.arguments != sha256.Sum256(args):
		return errorf("%w: the continuation was issued for other arguments of %q", ErrInvalidInvocation, name)
	case stamp.key != admission.IdempotencyKey:
		return errorf("%w: the continuation was issued for idempotency key %q, not %q", ErrInvalidInvocation, string(stamp.key), string(admission.IdempotencyKey))
	}
	return nil
}
