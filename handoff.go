package tool

import (
	"bytes"
	"reflect"
	"sync/atomic"
)

// This file holds the hand-off of a [Func]'s typed input from Prepare to Call.
// The input validator of a Func decodes the admitted arguments into In at
// Prepare; instead of throwing that value away and decoding the same bytes
// again at Call, Prepare keeps it in the [Invocation] and the first Call of
// that Invocation takes it. Every later Call of the same Invocation (a copy
// of it included) decodes afresh, so no two calls ever share a value that
// the function may modify.

// admission is what a [Contract] runs after the schema: the tool's input
// validator, returning the decoded value to hand to the first Call, or nil
// when it keeps none.
type admission func(arguments []byte) (*decoded, error)

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

// plainAdmission adapts a tool's own input validator: it gets its own copy
// of the arguments, so that whatever it does, the admitted bytes stay the
// ones the schema checked, and it hands nothing to Call.
func plainAdmission(validator func([]byte) error) admission {
	return func(arguments []byte) (*decoded, error) {
		return nil, validator(bytes.Clone(arguments))
	}
}

// typedAdmission is the admission of a [Signature]'s input: decodeInput,
// keeping the value. The decode only reads the arguments.
func typedAdmission[In any](arguments []byte) (*decoded, error) {
	box := new(decodedBox[In])
	if err := decodeInto(arguments, &box.in); err != nil {
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
