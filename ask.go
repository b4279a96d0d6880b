package tool

import (
	"context"
	"encoding/json"
	"reflect"
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
// decoded into the Go type Answer. The schema of an acceptable answer is
// derived from Answer with [SchemaFor]'s rules, so a runtime checks every
// answer against it before anything runs (see [InputRequest.Continuation]).
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
// unsupported type and a definition that [Definition.Validate] would refuse
// are errors wrapping [ErrInvalidTool].
func NewAskFunc[In, Answer, Out any](config FuncConfig, ask func(context.Context, In) (Question, error), act func(context.Context, In, Answer) (Out, error)) (AskFunc[In, Answer, Out], error) {
	if ask == nil || act == nil {
		return AskFunc[In, Answer, Out]{}, errorf("%w: tool %q has a nil ask or act function", ErrInvalidTool, config.Name)
	}
	f, err := NewFunc(config, func(context.Context, In) (Out, error) {
		var zero Out
		return zero, nil // never called: AskFunc.Call calls ask or act
	})
	if err != nil {
		return AskFunc[In, Answer, Out]{}, err
	}
	doc, err := reflectSchema(reflect.TypeFor[Answer](), false)
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
// ask and returns its Question as a [Result.InputRequest]; a resumed call
// decodes the answer into Answer (strictly, then its Validate method when
// it has one), runs act and encodes its result as a Func does. Errors of
// ask and act are returned as they are; a Question whose prompt does not
// encode as one JSON document is an error wrapping [ErrInvalidInputRequest];
// an answer that does not decode into Answer is an [*InputRejection] (the
// schema admitted it, but Answer's own rules did not).
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
		q, err := f.ask(ctx, in)
		if err != nil {
			return Result{}, err
		}
		prompt, err := json.Marshal(q.Prompt)
		if err != nil || string(prompt) == "null" {
			return Result{}, errorf("%w: tool %q: the question's prompt is not a JSON document (%v)", ErrInvalidInputRequest, f.fn.definition.Name, err)
		}
		request, err := NewInputRequest(InputRequestConfig{Prompt: prompt, ResponseSchema: f.answer})
		if err != nil {
			return Result{}, err
		}
		return Result{InputRequest: &request}, nil
	}
	var answer Answer
	if err := decodeAnswer(c.response, &answer); err != nil {
		return Result{}, err
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

// decodeAnswer decodes an answer strictly into *answer, then runs its
// Validate method. Every error is an *InputRejection whose message speaks
// of the answer.
func decodeAnswer[Answer any](response []byte, answer *Answer) error {
	if topLevelNull(response) {
		return nil // what a pointer Answer's schema admits: a nil answer
	}
	err := decodeInto(response, answer)
	if err == nil {
		return nil
	}
	if rejection, ok := ClassifyInputRejection(err); ok {
		return &InputRejection{message: "the answer is not accepted: " + rejection.Message(), cause: err}
	}
	return &InputRejection{message: "the answer is not accepted", cause: err}
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
	return typedAdmission[In]
}

// self returns f, so that [Bind] can tell an AskFunc from a type that embeds one.
func (f AskFunc[In, Answer, Out]) self() any { return f }

// compiledSchemas hands [Bind] the schemas NewAskFunc already compiled.
func (f AskFunc[In, Answer, Out]) compiledSchemas() []Schema { return f.fn.compiledSchemas() }
