package tool

import (
	"bytes"
	"reflect"

	"github.com/agentcontract/tool/internal/engine"
)

// admission is what a [Contract] runs to admit arguments when the schema
// is not the whole contract, in two steps around the schema's verdict,
// which the Contract words: check has the schema judge the arguments (and
// returns the value it decoded in the same read, if it did), and finish,
// once the schema admitted them, runs the tool's own rules and returns
// the value to hand to the first Call, or nil when it keeps none.
type admission interface {
	check(input Schema, arguments []byte) (read *decoded, r *engine.Rejection, fault error)
	finish(read *decoded, arguments []byte) (*decoded, error)
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

func (plainAdmission) check(input Schema, arguments []byte) (*decoded, *engine.Rejection, error) {
	r, fault := input.verdict(arguments)
	return nil, r, fault
}

func (validator plainAdmission) finish(_ *decoded, arguments []byte) (*decoded, error) {
	return runValidator(func(arguments []byte) (*decoded, error) {
		return nil, validator(bytes.Clone(arguments))
	}, arguments)
}

// typedAdmission is the admission of a [Signature]'s input: the schema's
// check and the strict decode into In, in one read of the arguments where
// the engine's decoder covers In and the read shows them valid (check
// returns what it read), and with the codec after the check otherwise;
// then In's Validate. It keeps the value. Neither way writes to the
// arguments.
type typedAdmission[In any] struct {
	decoder *engine.Decoder // nil when In is one the engine does not decode
}

// newTypedAdmission returns the admission of In.
func newTypedAdmission[In any]() admission {
	return typedAdmission[In]{decoder: engine.NewDecoder(reflect.TypeFor[In]())}
}

func (t typedAdmission[In]) check(input Schema, arguments []byte) (*decoded, *engine.Rejection, error) {
	if t.decoder == nil {
		r, fault := input.verdict(arguments)
		return nil, r, fault
	}
	box := new(decodedBox[In])
	onePass, r, fault := input.verdictDecode(arguments, t.decoder, &box.in)
	if !onePass {
		return nil, r, fault
	}
	box.value = &box.in
	return &box.decoded, r, fault
}

func (t typedAdmission[In]) finish(read *decoded, arguments []byte) (*decoded, error) {
	if read != nil {
		in := read.value.(*In)
		if _, err := runValidator(func([]byte) (*decoded, error) { return nil, validateDecoded(in) }, arguments); err != nil {
			return nil, err
		}
		return read, nil
	}
	box := new(decodedBox[In])
	if _, err := runValidator(func(arguments []byte) (*decoded, error) { return nil, decodeInto(arguments, &box.in) }, arguments); err != nil {
		return nil, err
	}
	box.value = &box.in
	return &box.decoded, nil
}
