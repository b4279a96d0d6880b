package tool

import (
	"bytes"
	"reflect"
	"sync/atomic"

	"github.com/agentcontract/tool/internal/engine"
)

// This file holds the hand-off of a [Func]'s typed input from Prepare to Call.
// Prepare decodes the admitted arguments of a Func into In in the read
// that checks them against the schema (or, where that read cannot decode
// them, with the codec right after it); instead of throwing that value
// away and decoding the same bytes again at Call, Prepare keeps it in the
// [Invocation] and the first Call of that Invocation takes it. Every later
// Call of the same Invocation (a copy of it included) decodes afresh, so
// no two calls ever share a value that the function may modify.

// admission is what a [Contract] runs to admit arguments when the schema
// is not the whole contract: the check against the schema and the tool's
// input validator. It returns the decoded value to hand to the first Call,
// or nil when it keeps none.
type admission interface {
	admit(c Contract, arguments []byte) (*decoded, error)
}

// decoded is the header of a decodedBox: a pointer to the decoded value
// (a *In, in the box that holds this header), and whether a Call has taken
// it. The value is found by its type: decoding depends on In alone, so a
// value of the Func's own In, decoded from the Invocation's arguments, is
// the one the Func's own decode would produce.
type decoded struct {
	value any
	taken atomic.Bool
}

// decodedBox holds one decoded input with its header, in one allocation.
type decodedBox[In any] struct {
	decoded
	in In
}

// typedTool is implemented by [Func].
type typedTool interface {
	admission() admission
	self() any
}

// funcAdmission returns the admission of executable when it is a [Func]
// itself (or a pointer to one), and nil otherwise. A type that embeds a
// Func has the Func's methods but may replace its InputValidator, so it is
// treated as any other tool.
func funcAdmission(executable Tool) admission {
	typed, ok := executable.(typedTool)
	if !ok {
		return nil
	}
	t := reflect.TypeOf(executable)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != reflect.TypeOf(typed.self()) {
		return nil
	}
	return typed.admission()
}

// plainAdmission is the admission of a tool's own input validator, run
// once the schema admitted the arguments. It gets its own copy of them, so
// that whatever it does, the admitted bytes stay the ones the schema
// checked, and it hands nothing to Call.
type plainAdmission func([]byte) error

func (validator plainAdmission) admit(c Contract, arguments []byte) (*decoded, error) {
	if err := c.checkArguments(arguments); err != nil {
		return nil, err
	}
	return runValidator(func(arguments []byte) (*decoded, error) {
		return nil, validator(bytes.Clone(arguments))
	}, arguments)
}

// typedAdmission is the admission of a [Signature]'s input: the schema's
// check and the strict decode into In, in one read of the arguments where
// the engine's decoder covers In and the read shows them valid, and with
// the codec after the check otherwise; then In's Validate. It keeps the
// value. Neither way writes to the arguments.
type typedAdmission[In any] struct {
	decoder *engine.Decoder // nil when In is one the engine does not decode
}

// newTypedAdmission returns the admission of In.
func newTypedAdmission[In any]() admission {
	return typedAdmission[In]{decoder: engine.NewDecoder(reflect.TypeFor[In]())}
}

func (t typedAdmission[In]) admit(c Contract, arguments []byte) (*decoded, error) {
	box := new(decodedBox[In])
	onePass, r, fault := c.core.frozen.input.verdictDecode(arguments, t.decoder, &box.in)
	if err := c.judgeArguments(arguments, r, fault); err != nil {
		return nil, err
	}
	var err error
	if onePass {
		_, err = runValidator(func([]byte) (*decoded, error) {
			return nil, validateDecoded(&box.in)
		}, arguments)
	} else {
		var zero In
		box.in = zero // what the read wrote before it gave up
		_, err = runValidator(func(arguments []byte) (*decoded, error) {
			return nil, decodeInto(arguments, &box.in)
		}, arguments)
	}
	if err != nil {
		return nil, err
	}
	box.value = &box.in
	return &box.decoded, nil
}

// takeDecoded returns the In decoded at Prepare, to the first caller only;
// false when there is none of that type. The box lets go of the value, so
// that it lives only as long as the call that took it needs it.
func takeDecoded[In any](h *decoded) (In, bool) {
	var zero In
	if h == nil {
		return zero, false
	}
	p, ok := h.value.(*In)
	if !ok || !h.taken.CompareAndSwap(false, true) {
		return zero, false
	}
	in := *p
	*p = zero
	return in, true
}
