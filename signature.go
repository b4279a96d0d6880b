package tool

import (
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/strictjson"
)

// Signature is the typed codec of a tool: it derives the input schema from
// In and the output contract from Out, decodes admitted arguments into In
// strictly, and encodes an Out into an Output.
//
// Admission of a typed input is a strict decode followed by In's own
// Validate() error method when it has one, so a request type states its
// domain rules once. Validate, and any custom UnmarshalJSON of In or of the
// types it contains, must be deterministic, bounded and free of effects,
// because admission runs them before any tool code. Validate, and a custom
// UnmarshalJSON, return an *InputRejection for input the model can correct;
// any other error is a defect. An UnmarshalText error is the exception:
// text methods see only a string, so their error is taken as a problem
// with that string and refused with a public message that does not
// include it.
//
// Every value of In that the JSON codec writes is admitted by the derived
// schema and decodes back to an equal value. Where the two differ, the
// schema is the looser one, and Prepare still refuses through the decoder:
// an integer written with a fraction or an exponent (1.0, 1e1), -0 for an
// unsigned integer, a string that is not standard padded base64 for bytes,
// a date-time that Go's RFC 3339 parser refuses (a leap second), and
// strings that a type's text methods refuse.
//
// The output codec is chosen once from the declared type Out: a string
// becomes a text Output and declares no output schema; an Output passes
// through untouched, media included, and declares none; anything else is
// encoded as JSON into Details and declares the schema derived from Out.
//
// The zero Signature is invalid: its methods return errors or nil schemas.
// A Signature is immutable and safe for concurrent use.
type Signature[In, Out any] struct {
	input  Schema
	output Schema // zero unless Out is encoded into Details
	codec  outputCodec
	id     *signatureID // tells a Func which decoded inputs are its own
}

type outputCodec uint8

const (
	codecNone outputCodec = iota // the zero Signature
	codecText
	codecOutput
	codecJSON
)

// NewSignature derives and compiles the schemas of In and Out with
// SchemaFor's rules. In must be a struct or a pointer to a struct whose
// schema is a JSON object. Every error wraps ErrInvalidTool; types
// SchemaFor refuses anywhere in In or Out (channels, functions, complex
// numbers, time.Duration, ...) and schemas that do not compile wrap
// ErrInvalidSchema as well.
func NewSignature[In, Out any]() (Signature[In, Out], error) {
	s, err := newSignature[In, Out]()
	if err != nil {
		return Signature[In, Out]{}, fmt.Errorf("%w: %w", ErrInvalidTool, err)
	}
	return s, nil
}

// newSignature is NewSignature with errors that do not yet wrap
// ErrInvalidTool.
func newSignature[In, Out any]() (Signature[In, Out], error) {
	in := reflect.TypeFor[In]()
	st := in
	if st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	if st.Kind() != reflect.Struct {
		return Signature[In, Out]{}, fmt.Errorf("input type %v must be a struct or a pointer to a struct", in)
	}
	doc, err := reflectSchema(in, false)
	if err != nil {
		return Signature[In, Out]{}, fmt.Errorf("input type %v: %w", in, err)
	}
	s := Signature[In, Out]{id: new(signatureID)}
	if s.input, err = ParseSchema(doc); err != nil {
		return Signature[In, Out]{}, fmt.Errorf("input type %v: %w", in, err)
	}
	if tree, _ := strictjson.Parse(doc); !isObjectSchema(tree) {
		// A struct with its own JSON methods is described as any value.
		return Signature[In, Out]{}, fmt.Errorf(`input type %v has its own JSON encoding, so its schema is not "type":"object"; give it a JSONSchemaModel method`, in)
	}
	switch out := reflect.TypeFor[Out](); out {
	case reflect.TypeFor[string]():
		s.codec = codecText
	case reflect.TypeFor[Output]():
		s.codec = codecOutput
	default:
		s.codec = codecJSON
		doc, err := reflectSchema(out, true)
		if err != nil {
			return Signature[In, Out]{}, fmt.Errorf("output type %v: %w", out, err)
		}
		if s.output, err = ParseSchema(doc); err != nil {
			return Signature[In, Out]{}, fmt.Errorf("output type %v: %w", out, err)
		}
	}
	return s, nil
}

func isObjectSchema(tree any) bool {
	obj, ok := tree.(map[string]any)
	return ok && obj["type"] == "object"
}

// InputSchema returns a copy of the derived input schema, in canonical
// form; nil for the zero Signature.
func (s Signature[In, Out]) InputSchema() json.RawMessage { return s.input.JSON() }

// OutputSchema returns a copy of the derived output schema, or nil when Out
// is string or Output (and for the zero Signature).
func (s Signature[In, Out]) OutputSchema() json.RawMessage { return s.output.JSON() }

// Decode decodes the invocation's arguments into In: strictly (unknown
// members, duplicate names, names in the wrong case, a fractional number
// for an integer, a number out of range and trailing data are refused),
// then In's Validate method when it has one.
//
// A refusal of the input, a top-level null included, is an
// *InputRejection whose message names the JSON pointer and the rule and no
// Go type; a rejection from Validate or a custom decoder is returned as it
// is; any other error, or a panic in Validate or in a custom decoder, is an
// *InputValidationError. All errors match ErrInvalidInvocation.
func (s Signature[In, Out]) Decode(invocation Invocation) (In, error) {
	if invocation.core == nil {
		var zero In
		return zero, fmt.Errorf("%w: the zero Invocation has no arguments", ErrInvalidInvocation)
	}
	return decodeInput[In](invocation.arguments)
}

// InputValidator returns the admission check of In: the same strict decode
// and Validate as Decode, whose result it discards. The function captures
// nothing and is safe for concurrent use.
func (Signature[In, Out]) InputValidator() func([]byte) error {
	return validateInput[In]
}

func validateInput[In any](arguments []byte) error {
	_, err := decodeInput[In](arguments)
	return err
}

// inputValidator is implemented by input types with domain rules.
type inputValidator interface {
	Validate() error
}

// decodeInput is the one strict decode of typed input.
func decodeInput[In any](arguments []byte) (in In, err error) {
	defer func() {
		if p := recover(); p != nil {
			var zero In
			in, err = zero, &InputValidationError{cause: &InputValidationPanicError{Value: p}}
		}
	}()
	if err := jsonv2.Unmarshal(arguments, &in, jsonv2.RejectUnknownMembers(true)); err != nil {
		var zero In
		return zero, decodeError(err)
	}
	if topLevelNull(arguments) {
		// The codec leaves In as it is for null; admission wants an object.
		var zero In
		return zero, rejectf("arguments must be a JSON object, got null")
	}
	var v any = in
	if _, ok := v.(inputValidator); !ok {
		v = &in
	}
	if validator, ok := v.(inputValidator); ok {
		if err := validator.Validate(); err != nil {
			var zero In
			if _, ok := ClassifyInputRejection(err); ok {
				return zero, err
			}
			return zero, &InputValidationError{cause: err}
		}
	}
	return in, nil
}

// decodeError sorts an error of the strict decode: a problem with the
// input becomes an *InputRejection whose message speaks JSON only, a
// custom decoder's rejection is returned as it is, and a custom decoder's
// other errors are defects (*InputValidationError).
func decodeError(err error) error {
	var semantic *jsonv2.SemanticError
	var syntactic *jsontext.SyntacticError
	switch {
	case errors.As(err, &semantic):
		if semantic.Err != nil {
			if _, ok := ClassifyInputRejection(semantic.Err); ok {
				return semantic.Err
			}
		}
		switch decoderOf(semantic) {
		case customJSONDecoder:
			return &InputValidationError{cause: err}
		case customTextDecoder:
			// Text methods see only a string, so their error is about its
			// content; it is private, the location is not.
			return &InputRejection{message: fmt.Sprintf("arguments cannot be decoded: value at %s must be a string in the form this member accepts", strictjson.Where(string(semantic.JSONPointer))), cause: err}
		}
		return &InputRejection{message: "arguments cannot be decoded: " + decodeProblem(semantic), cause: err}
	case errors.As(err, &syntactic):
		reason := "syntax error"
		if syntactic.Err != nil {
			reason = syntactic.Err.Error()
		}
		return &InputRejection{message: fmt.Sprintf("arguments are not valid JSON at %s: %s", strictjson.Where(string(syntactic.JSONPointer)), reason), cause: err}
	}
	return &InputValidationError{cause: err}
}

// topLevelNull reports whether a JSON text is the literal null.
func topLevelNull(text []byte) bool {
	for _, c := range text {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		}
		return c == 'n'
	}
	return false
}

type decoder uint8

const (
	codecDecoder      decoder = iota // the codec itself: a mismatch with the input
	customJSONDecoder                // an UnmarshalJSON or UnmarshalJSONFrom method
	customTextDecoder                // an UnmarshalText method
)

var (
	jsonUnmarshalerTypes = []reflect.Type{
		reflect.TypeFor[jsonv2.UnmarshalerFrom](),
		reflect.TypeFor[jsonv2.Unmarshaler](),
		reflect.TypeFor[json.Unmarshaler](),
	}
	textUnmarshalerTypes = []reflect.Type{reflect.TypeFor[encoding.TextUnmarshaler]()}
)

// decoderOf says whose error a semantic error is: the codec's own (a type
// or range mismatch, an unknown member), or one of a custom method.
func decoderOf(e *jsonv2.SemanticError) decoder {
	if e.Err == nil || e.GoType == nil || errors.Is(e.Err, jsonv2.ErrUnknownName) {
		return codecDecoder
	}
	var numErr *strconv.NumError
	if errors.As(e.Err, &numErr) {
		return codecDecoder
	}
	t := e.GoType
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		return codecDecoder // decoded by the codec, not by its methods
	case implementsAny(t, jsonUnmarshalerTypes):
		return customJSONDecoder
	case implementsAny(t, textUnmarshalerTypes):
		return customTextDecoder
	}
	return codecDecoder
}

// decodeProblem describes a semantic decode error in JSON terms: where, and
// what the value should have been, never a Go type name.
func decodeProblem(e *jsonv2.SemanticError) string {
	where := strictjson.Where(string(e.JSONPointer))
	if errors.Is(e.Err, jsonv2.ErrUnknownName) {
		return fmt.Sprintf("unknown member at %s", where)
	}
	number := ""
	if e.JSONKind == '0' && len(e.JSONValue) > 0 && len(e.JSONValue) <= 40 {
		number = string(e.JSONValue) // the model's own number, short
	}
	want := "a value of another type"
	if t := e.GoType; t != nil {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		switch {
		case t == timeType:
			want = "an RFC 3339 date-time string"
		case t.Kind() >= reflect.Int && t.Kind() <= reflect.Int64:
			bits := t.Bits()
			want = fmt.Sprintf("an integer from %d to %d", int64(-1)<<(bits-1), int64(1)<<(bits-1)-1)
		case t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64:
			want = fmt.Sprintf("an integer from 0 to %d", uint64(math.MaxUint64)>>(64-t.Bits()))
		case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
			want = "a number in range"
		case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem() == byteType:
			want = "a string of standard base64 with padding"
			if t.Kind() == reflect.Array {
				want = fmt.Sprintf("a string of standard base64 with padding that decodes to %d bytes", t.Len())
			}
		case t.Kind() == reflect.String:
			want = "a string"
		case t.Kind() == reflect.Bool:
			want = "true or false"
		case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
			want = "an object"
		case t.Kind() == reflect.Slice:
			want = "an array"
		case t.Kind() == reflect.Array:
			want = fmt.Sprintf("an array of %d items", t.Len())
		}
		if number != "" && t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64 && strings.ContainsAny(number, ".eE") {
			want += ", written without a fraction or exponent"
		}
	}
	switch {
	case number != "":
		return fmt.Sprintf("value at %s must be %s, got %s", where, want, number)
	case e.JSONKind != 0:
		return fmt.Sprintf("value at %s must be %s, got %s", where, want, kindName(e.JSONKind))
	}
	return fmt.Sprintf("value at %s must be %s", where, want)
}

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 'f', 't':
		return "a boolean"
	case '"':
		return "a string"
	case '0':
		return "a number"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "an unexpected value"
}

// Encode turns out into an Output with the codec chosen from Out and checks
// it with Output.Validate. A text Output of an empty string is the zero
// Output. A JSON encoding failure or an invalid Output is an error wrapping
// ErrInvalidOutput; the zero Signature returns an error wrapping
// ErrInvalidTool. The Output does not share memory with out.
func (s Signature[In, Out]) Encode(out Out) (Output, error) {
	o, err := s.encode(out)
	if err != nil {
		return Output{}, err
	}
	if err := o.Validate(); err != nil {
		return Output{}, err
	}
	return o, nil
}

// encode is Encode without the final check of the Output.
func (s Signature[In, Out]) encode(out Out) (Output, error) {
	switch s.codec {
	case codecText:
		return NewTextOutput(any(out).(string)), nil
	case codecOutput:
		return any(out).(Output).Clone(), nil
	case codecJSON:
		details, err := jsonv2.Marshal(out, jsonv2.Deterministic(true))
		if err != nil {
			return Output{}, fmt.Errorf("%w: encoding the result as JSON: %v", ErrInvalidOutput, err)
		}
		return Output{Details: details}, nil
	}
	return Output{}, fmt.Errorf("%w: the zero Signature encodes nothing", ErrInvalidTool)
}
