package tool

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/engine"
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
// a number beyond the range of an integer type of 32 or 64 bits or of
// float32 (the schema leaves those bounds out; see SchemaFor), an integer
// written with a fraction or an exponent (1.0, 1e1), -0 for an
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
		return Signature[In, Out]{}, errorf("%w: %w", ErrInvalidTool, err)
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
		return Signature[In, Out]{}, errorPart("input type %v: %w", in, err)
	}
	s := Signature[In, Out]{}
	if s.input, err = ParseSchema(doc); err != nil {
		return Signature[In, Out]{}, errorPart("input type %v: %w", in, err)
	}
	if !s.input.s.object {
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
			return Signature[In, Out]{}, errorPart("output type %v: %w", out, err)
		}
		if s.output, err = ParseSchema(doc); err != nil {
			return Signature[In, Out]{}, errorPart("output type %v: %w", out, err)
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
// Go type. A rejection (an error in which ClassifyInputRejection finds an
// *InputRejection) from Validate, or from a custom decoder of In itself, is
// returned as it is. One from the custom decoder of a member of In is
// wrapped, to say which member: the error is a new *InputRejection whose
// message is "value at " and the member's JSON pointer, ": " and the
// decoder's message ("value at /code: codes start with c-"), and whose
// Cause is the decoder's error as the decoder returned it. errors.As (or
// ClassifyInputRejection) finds the new rejection; errors.As on its Cause
// finds the decoder's own. Any other error, or a panic in Validate or in a
// custom decoder, is an *InputValidationError. All errors match
// ErrInvalidInvocation.
func (s Signature[In, Out]) Decode(invocation Invocation) (In, error) {
	if invocation.core == nil {
		var zero In
		return zero, errorf("%w: the zero Invocation has no arguments", ErrInvalidInvocation)
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
func decodeInput[In any](arguments []byte) (In, error) {
	var in In
	if err := decodeInto(arguments, &in); err != nil {
		var zero In
		return zero, err
	}
	return in, nil
}

// decodeInto is decodeInput into a value the caller provides, such as the
// box that carries a Func's input from Prepare to its first Call. On error
// *in is left in any state.
func decodeInto[In any](arguments []byte, in *In) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &InputValidationError{cause: &InputValidationPanicError{Value: p}}
		}
	}()
	if err := jsonv2.Unmarshal(arguments, in, jsonv2.RejectUnknownMembers(true)); err != nil {
		return decodeError(err, arguments)
	}
	if topLevelNull(arguments) {
		// The codec leaves In as it is for null; admission wants an object.
		return rejectf("arguments must be a JSON object, got null")
	}
	return validateDecoded(in)
}

// validateDecoded runs the Validate method of *in, decoded, when In has
// one, and sorts its error as decodeInto does.
func validateDecoded[In any](in *In) error {
	// &In has the methods of both receivers when In is a struct; a pointer
	// In has them itself. Asking &In first boxes nothing, and a struct is
	// never boxed.
	var v any = in
	if _, ok := v.(inputValidator); !ok && reflect.TypeFor[In]().Kind() == reflect.Pointer {
		v = *in
	}
	if validator, ok := v.(inputValidator); ok {
		if err := validator.Validate(); err != nil {
			if _, ok := ClassifyInputRejection(err); ok {
				return err
			}
			return &InputValidationError{cause: err}
		}
	}
	return nil
}

// decodeError sorts an error of the strict decode: a problem with the
// input becomes an *InputRejection whose message speaks JSON only, a
// custom decoder's rejection is returned with the location of the member
// it decoded, and a custom decoder's
// other errors are defects (*InputValidationError).
func decodeError(err error, arguments []byte) error {
	var semantic *jsonv2.SemanticError
	var syntactic *jsontext.SyntacticError
	switch {
	case errors.As(err, &semantic):
		if semantic.Err != nil {
			if rejection, ok := ClassifyInputRejection(semantic.Err); ok {
				if semantic.JSONPointer == "" {
					return semantic.Err
				}
				// A member's own decoder rejected its value: say which member.
				return &InputRejection{message: fmt.Sprintf("value at %s: %s", strictjson.Where(string(semantic.JSONPointer)), rejection.Message()), cause: semantic.Err}
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
		return &InputRejection{message: "arguments cannot be decoded: " + decodeProblem(semantic, arguments), cause: err}
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
// what the value should have been, never a Go type name. The value got is
// shown when it is short, or cut to a bounded prefix.
func decodeProblem(e *jsonv2.SemanticError, arguments []byte) string {
	where := strictjson.Where(string(e.JSONPointer))
	if errors.Is(e.Err, jsonv2.ErrUnknownName) {
		return fmt.Sprintf("unknown member at %s", where)
	}
	got := kindName(e.JSONKind)
	if e.JSONKind == 0 {
		got = ""
	}
	value := e.JSONValue
	if len(value) == 0 && e.JSONKind == '"' {
		value = valueAt(arguments, e.ByteOffset)
	}
	if len(value) > 0 {
		got = shownValue(value)
	}
	t := e.GoType
	if t == nil {
		return problem(where, "a value of another type", got)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == timeType:
		msg := problem(where, "an RFC 3339 date-time string", got)
		if s, ok := stringValue(value); ok && engine.LacksOffset(s) {
			msg += ": " + engine.ErrMissingOffset.Error()
		}
		return msg
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return integerProblem(where, t, e.JSONValue, got)
	case t.Kind() == reflect.Float32 && e.JSONKind == '0':
		return fmt.Sprintf("value at %s is out of range: it must be a number from -3.4028235e+38 to 3.4028235e+38, got %s", where, got)
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return problem(where, "a number", got)
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem() == byteType:
		want := "a string of standard base64 with padding"
		if t.Kind() == reflect.Array {
			want = fmt.Sprintf("a string of standard base64 with padding that decodes to %d bytes", t.Len())
		}
		return problem(where, want, got)
	case t.Kind() == reflect.String:
		return problem(where, "a string", got)
	case t.Kind() == reflect.Bool:
		return problem(where, "true or false", got)
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return problem(where, "an object", got)
	case t.Kind() == reflect.Slice:
		return problem(where, "an array", got)
	case t.Kind() == reflect.Array:
		return problem(where, fmt.Sprintf("an array of %d items", t.Len()), got)
	}
	return problem(where, "a value of another type", got)
}

func problem(where, want, got string) string {
	if got == "" {
		return fmt.Sprintf("value at %s must be %s", where, want)
	}
	return fmt.Sprintf("value at %s must be %s, got %s", where, want, got)
}

// integerProblem describes a number the decoder did not take for an
// integer type: out of the type's range (the schema does not state the
// range of wide types; see SchemaFor), or written with a fraction or an
// exponent.
func integerProblem(where string, t reflect.Type, number jsontext.Value, got string) string {
	lo, hi := "0", strconv.FormatUint(uint64(math.MaxUint64)>>(64-t.Bits()), 10)
	if t.Kind() <= reflect.Int64 {
		lo, hi = strconv.FormatInt(int64(-1)<<(t.Bits()-1), 10), strconv.FormatInt(int64(1)<<(t.Bits()-1)-1, 10)
	}
	want := fmt.Sprintf("an integer from %s to %s", lo, hi)
	if len(number) == 0 || len(number) > maxWorkedNumber {
		return problem(where, want, got)
	}
	r, ok := new(big.Rat).SetString(string(number))
	if !ok || !r.IsInt() {
		return problem(where, want, got)
	}
	low, _ := new(big.Int).SetString(lo, 10)
	high, _ := new(big.Int).SetString(hi, 10)
	if n := r.Num(); n.Cmp(low) < 0 || n.Cmp(high) > 0 {
		return fmt.Sprintf("value at %s is out of range: it must be %s, got %s", where, want, got)
	}
	if strings.ContainsAny(string(number), ".eE") {
		return problem(where, want+", written without a fraction or exponent", got)
	}
	return problem(where, want, got)
}

// maxShownNumber bounds the length of a number quoted in a message: a
// longer one is cut.
const maxShownNumber = 40

// maxWorkedNumber bounds the length of a number whose value a message works
// out, which keeps the work small: the parser already refuses a number
// beyond the range of a 64-bit float, and this is far longer than any
// integer a type holds.
const maxWorkedNumber = 400

// maxShownRunes bounds the characters of a string quoted in a message.
const maxShownRunes = 32

// shownValue renders a JSON number or string for a message: as written
// when short; a longer one is cut, and says so.
func shownValue(v jsontext.Value) string {
	if s, ok := stringValue(v); ok {
		if utf8.RuneCountInString(s) > maxShownRunes {
			r := []rune(s)[:maxShownRunes]
			s = string(r) + "..."
		}
		quoted, err := jsontext.AppendQuote(nil, s)
		if err != nil {
			return "a string"
		}
		return string(quoted)
	}
	if len(v) > maxShownNumber {
		return string(v[:maxShownNumber]) + "... (a number of " + strconv.Itoa(len(v)) + " characters)"
	}
	return string(v)
}

// stringValue decodes a JSON string value.
func stringValue(v jsontext.Value) (string, bool) {
	if len(v) == 0 || v.Kind() != '"' {
		return "", false
	}
	var s string
	if err := jsonv2.Unmarshal(v, &s); err != nil {
		return "", false
	}
	return s, true
}

// valueAt reads the JSON value that starts at offset in text, or nothing.
func valueAt(text []byte, offset int64) jsontext.Value {
	if offset < 0 || offset >= int64(len(text)) {
		return nil
	}
	v, err := jsontext.NewDecoder(bytes.NewReader(text[offset:])).ReadValue()
	if err != nil {
		return nil
	}
	return v
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
			return Output{}, errorf("%w: encoding the result as JSON: %v", ErrInvalidOutput, err)
		}
		return Output{Details: details}, nil
	}
	return Output{}, errorf("%w: the zero Signature encodes nothing", ErrInvalidTool)
}
