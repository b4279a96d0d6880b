package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Question is what an ask-then-act tool asks a person before it acts; see
// [NewAskFunc].
type Question struct {
	// Prompt is what to show whoever answers, encoded with encoding/json:
	// a string, or a struct or map with the details of the request.
	// Required: a nil Prompt (JSON null) is an error.
	Prompt any
}

// AskFunc is a [Tool] that asks a person before it acts, made of two typed
// functions: ask, which sees the call's arguments and returns the
// [Question], and act, which runs when the call resumes with the answer,
// decoded into the Go type Answer.
//
// ask must have no effects: it only words the question. It runs when the
// call is first made and again whenever the answer must be asked for
// anew, and a call suspended there may never resume. Whatever changes
// something belongs in act, which runs once the answer is in.
//
// The schema of an acceptable answer is derived from Answer with
// [SchemaFor]'s rules, except that it states what SchemaFor leaves to the
// decode: the range of every sized number type (an int32 member has its
// minimum and maximum, a float32 the largest float32) and the form of
// base64 bytes (standard, padded, of an array's exact length), so that it
// admits only what Answer can hold. A runtime
// checks every answer against it before the call resumes (see
// [InputRequest.Continuation]), and so before a runtime such as a
// dispatcher spends the checkpoint. The answer's numbers are read by
// value, as the schema reads them: an integer written with a fraction or
// an exponent (1.0, 1e3) is that integer, and -0 is 0, for every member
// (a json.RawMessage member sees the number written plainly).
//
// Resumed, the call decodes the answer strictly into Answer, then runs its
// Validate method when it has one. What the answer type refuses is the
// person's to correct, not the model's, so the call asks again rather
// than fail:
//   - an [*InputRejection] from Validate (or from a custom decoder of
//     Answer's), or a refusal by the strict decode that the schema did not
//     foresee (a string a text method refuses, a leap second, a map key
//     out of its integer type's range), makes the call return a new
//     [InputRequest]: the
//     question ask returns again, with the rejection's message in front of
//     it (see [AskFunc.Call]). act does not run, and the model is told
//     nothing;
//   - any other error from Validate or a custom decoder, and a panic in
//     either, is a defect of the tool, not a fault of the answer: the call
//     ends in a [*Failure] of kind [FailureKindFailed] whose public output
//     only names the tool and whose private Cause holds the error (an
//     [*InputValidationPanicError] for a panic). act does not run.
//
// act does not see the call's [IdempotencyKey], so it cannot deduplicate a
// replay: [NewAskFunc] refuses [EffectIdempotent]. Leave Effect empty, or
// set [EffectSafe] when act changes nothing.
//
// Admission is a [Func]'s: In is decoded strictly, custom decoders and
// Validate methods included, in [Contract.Prepare], before any middleware
// such as a [Guard] sees the call, and the first Call reuses the decoded
// value. A resumed call is admitted the same way, and Prepare accepts its
// [Continuation] only for the call that asked: the same tool, contract,
// argument bytes and idempotency key. The state of the request therefore
// needs no check of its own: it cannot reach act with other arguments.
//
// The zero AskFunc is invalid: [Bind] refuses its definition. An AskFunc is
// immutable and safe for concurrent use when its functions are.
type AskFunc[In, Answer, Out any] struct {
	fn     Func[In, Out]
	answer Schema
	ask    func(context.Context, In) (Question, error)
	act    func(context.Context, In, Answer) (Out, error)
}

// NewAskFunc returns an [AskFunc]: its first call runs ask and suspends with
// the Question as an [InputRequest] whose response schema is Answer's; the
// call resumed with an answer runs act. In and Out follow [NewSignature]'s
// rules; Answer may be any type [SchemaFor] supports (a bool for
// approve or decline, a struct for a form). A nil function, an
// unsupported type, a config whose Effect is [EffectIdempotent] (act
// cannot see the idempotency key it would deduplicate by) and a
// definition that [Definition.Validate] would refuse are errors wrapping
// [ErrInvalidTool].
//
// act runs only for an answer. A person who declines the call (an
// approval desk's Decline, MCP's "decline") does not answer it: act never
// runs, and the runtime settles the call as declined, which the model
// reads as such. So act's branch for a false bool is the person's "no"
// given as an answer, not a decline.
func NewAskFunc[In, Answer, Out any](config FuncConfig, ask func(context.Context, In) (Question, error), act func(context.Context, In, Answer) (Out, error)) (AskFunc[In, Answer, Out], error) {
	if ask == nil || act == nil {
		return AskFunc[In, Answer, Out]{}, errorf("%w: tool %q has a nil ask or act function", ErrInvalidTool, config.Name)
	}
	if config.Effect == EffectIdempotent {
		return AskFunc[In, Answer, Out]{}, errorf("%w: tool %q: an AskFunc cannot promise Effect %q: act never sees the call's idempotency key, so it cannot deduplicate a replay; leave Effect empty, or use %q when act changes nothing", ErrInvalidTool, config.Name, EffectIdempotent, EffectSafe)
	}
	f, err := NewFunc(config, func(context.Context, In) (Out, error) {
		var zero Out
		return zero, nil // never called: AskFunc.Call calls ask or act
	})
	if err != nil {
		return AskFunc[In, Answer, Out]{}, err
	}
	doc, err := deriveSchema(reflect.TypeFor[Answer](), derivation{exact: true})
	if err != nil {
		return AskFunc[In, Answer, Out]{}, errorf("%w: tool %q: answer type %v: %w", ErrInvalidTool, config.Name, reflect.TypeFor[Answer](), err)
	}
	answer, err := ParseSchema(doc)
	if err != nil {
		return AskFunc[In, Answer, Out]{}, errorf("%w: tool %q: answer type %v: %w", ErrInvalidTool, config.Name, reflect.TypeFor[Answer](), err)
	}
	return AskFunc[In, Answer, Out]{fn: f, answer: answer, ask: ask, act: act}, nil
}

// Call decodes the invocation's arguments as a [Func] does. A new call runs
// ask and returns its Question as a [Result.InputRequest]. A resumed call
// decodes the answer into Answer (strictly, then its Validate method when
// it has one), runs act and encodes its result as a Func does.
//
// When Answer refuses the answer with an [*InputRejection] (or its strict
// decode refuses it), Call runs ask again and returns a new InputRequest,
// with the same response schema, whose prompt puts the reason first: a
// string prompt becomes the string "The answer was not accepted: <reason>"
// followed by a blank line and the question; any other prompt becomes the
// object {"not_accepted": "<reason>", "prompt": <the question>}. The
// reason is the rejection's public message, cut to 1024 bytes. When
// Answer's Validate or a decoder of its own fails otherwise or panics,
// Call returns a [*Failure] (see [AskFunc]).
//
// Errors of ask and act are returned as they are; a Question whose prompt
// does not encode as one JSON document is an error wrapping
// [ErrInvalidInputRequest].
func (f AskFunc[In, Answer, Out]) Call(ctx context.Context, invocation Invocation) (Result, error) {
	if f.ask == nil {
		return Result{}, errorf("%w: the zero AskFunc runs nothing", ErrInvalidTool)
	}
	in, ok := takeDecoded[In](invocation.decoded)
	if !ok {
		var err error
		if in, err = f.fn.signature.Decode(invocation); err != nil {
			return Result{}, err
		}
	}
	c, resumed := invocation.Continuation()
	if !resumed {
		return f.question(ctx, in, "")
	}
	answer, refusal, err := f.readAnswer(c.response)
	if err != nil {
		return Result{}, err
	}
	if refusal != "" {
		return f.question(ctx, in, refusal)
	}
	out, err := f.act(ctx, in, answer)
	if err != nil {
		return Result{}, err
	}
	output, err := f.fn.signature.encode(out)
	if err != nil {
		return Result{}, &brokenResultError{err: errorf("%w: tool %q: %w", ErrInvalidResult, f.fn.definition.Name, err)}
	}
	return Result{Output: output}, nil
}

// question runs ask and returns its Question as an InputRequest; with a
// reason, the prompt says first why the last answer was not accepted.
func (f AskFunc[In, Answer, Out]) question(ctx context.Context, in In, reason string) (Result, error) {
	q, err := f.ask(ctx, in)
	if err != nil {
		return Result{}, err
	}
	prompt, err := json.Marshal(q.Prompt)
	if err != nil || string(prompt) == "null" {
		return Result{}, errorf("%w: tool %q: the question's prompt is not a JSON document (%v)", ErrInvalidInputRequest, f.fn.definition.Name, err)
	}
	if reason != "" {
		if prompt, err = askedAgain(prompt, reason); err != nil {
			return Result{}, errorf("%w: tool %q: %w", ErrInvalidInputRequest, f.fn.definition.Name, err)
		}
	}
	request, err := NewInputRequest(InputRequestConfig{Prompt: prompt, ResponseSchema: f.answer})
	if err != nil {
		return Result{}, err
	}
	return Result{InputRequest: &request}, nil
}

// maxReasonBytes bounds the reason an answer was not accepted, as a
// prompt repeats it.
const maxReasonBytes = 1024

// askedAgain is the prompt of a question asked again because its answer
// was not accepted for reason; see [AskFunc.Call].
func askedAgain(prompt []byte, reason string) ([]byte, error) {
	if len(reason) > maxReasonBytes {
		cut := maxReasonBytes
		for cut > 0 && !utf8.RuneStart(reason[cut]) {
			cut--
		}
		reason = reason[:cut] + "..."
	}
	var question string
	if json.Unmarshal(prompt, &question) == nil {
		return json.Marshal("The answer was not accepted: " + reason + "\n\n" + question)
	}
	return json.Marshal(struct {
		NotAccepted string          `json:"not_accepted"`
		Prompt      json.RawMessage `json:"prompt"`
	}{reason, prompt})
}

// readAnswer decodes a resumed call's answer into Answer: its numbers
// written plainly (see plainIntegers), then strictly, then its Validate
// method. A refusal comes back as the public reason to ask again with; a
// defect of Answer's own methods as a *Failure.
func (f AskFunc[In, Answer, Out]) readAnswer(response []byte) (answer Answer, refusal string, err error) {
	if topLevelNull(response) {
		return answer, "", nil // what a pointer Answer's schema admits: a nil answer
	}
	err = decodeInto(plainIntegers(response), &answer)
	if err == nil {
		return answer, "", nil
	}
	if rejection, ok := ClassifyInputRejection(err); ok {
		return answer, answerReason(rejection.Message()), nil
	}
	cause := err
	if defect, ok := classify[*InputValidationError](err); ok {
		cause = defect.Cause()
	}
	name := f.fn.definition.Name
	return answer, "", safeFailure(name, errorf("%w: tool %q: answer type %v: its Validate method or a decoder of its own failed, a defect of the tool and not a refusal of the answer: %w", ErrInvalidTool, name, reflect.TypeFor[Answer](), cause))
}

// answerReason words a refusal of the strict decode, written of
// arguments, as one of an answer; Validate's own messages are kept.
func answerReason(message string) string {
	if rest, ok := strings.CutPrefix(message, "arguments "); ok {
		return "the answer " + rest
	}
	return message
}

// plainIntegers returns text with every number whose value is an integer
// of at most 20 digits written as one: without a fraction, an exponent or
// the sign of -0. JSON Schema judges a number by its value, and the codec
// decodes an integer type only from the plain form, so this makes the
// decode accept every integer the schema admits. It returns text itself
// when nothing needs rewriting, and as it is if it is not JSON.
func plainIntegers(text []byte) []byte {
	dec := jsontext.NewDecoder(bytes.NewReader(text))
	var out []byte
	last := 0
	for {
		if dec.PeekKind() != '0' {
			if _, err := dec.ReadToken(); err != nil {
				break // the end, or not JSON: the decode will say
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return text
		}
		plain, ok := plainInteger(string(v))
		if !ok {
			continue
		}
		end := int(dec.InputOffset())
		out = append(out, text[last:end-len(v)]...)
		out = append(out, plain...)
		last = end
	}
	if out == nil {
		return text
	}
	return append(out, text[last:]...)
}

// plainInteger returns the JSON number n written as a plain integer, when
// its value is an integer of at most 20 digits (every integer a Go integer
// type holds) and it is not written so already.
func plainInteger(n string) (string, bool) {
	negative := strings.HasPrefix(n, "-")
	n = strings.TrimPrefix(n, "-")
	mantissa, exponent, hasExponent := strings.Cut(strings.ReplaceAll(n, "E", "e"), "e")
	whole, fraction, hasFraction := strings.Cut(mantissa, ".")
	if !hasExponent && !hasFraction && !(negative && whole == "0") {
		return "", false // plain already
	}
	digits := strings.TrimLeft(whole+fraction, "0")
	if digits == "" {
		return "0", true // zero, however written
	}
	significant := strings.TrimRight(digits, "0")
	// The value is significant × 10^power.
	power := len(digits) - len(significant) - len(fraction)
	if hasExponent {
		e, err := strconv.Atoi(exponent)
		if err != nil || e > 1<<20 || e < -(1<<20) {
			return "", false // far beyond an integer type, or no integer at all
		}
		power += e
	}
	if power < 0 || len(significant)+power > 20 {
		return "", false
	}
	if negative {
		return "-" + significant + strings.Repeat("0", power), true
	}
	return significant + strings.Repeat("0", power), true
}

// Definition returns a copy of the definition.
func (f AskFunc[In, Answer, Out]) Definition() Definition { return f.fn.Definition() }

// InputValidator returns the input validator of In, as [Func.InputValidator].
func (f AskFunc[In, Answer, Out]) InputValidator() func([]byte) error {
	return f.fn.InputValidator()
}

// AnswerSchema returns the schema every answer must satisfy, derived from
// Answer; the zero Schema for the zero AskFunc.
func (f AskFunc[In, Answer, Out]) AnswerSchema() Schema { return f.answer }

// admission hands [Bind] the typed admission of In, as a [Func] does.
func (f AskFunc[In, Answer, Out]) admission() admission {
	return newTypedAdmission[In]()
}

// self returns f, so that [Bind] can tell an AskFunc from a type that embeds one.
func (f AskFunc[In, Answer, Out]) self() any { return f }

// compiledSchemas hands [Bind] the schemas NewAskFunc already compiled.
func (f AskFunc[In, Answer, Out]) compiledSchemas() []Schema { return f.fn.compiledSchemas() }
