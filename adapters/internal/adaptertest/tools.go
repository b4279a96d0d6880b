package adaptertest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/agentcontract/tool"
)

// Func is a tool written by hand: a definition and the function its Call
// runs. A Func with a nil Fn has only a definition, for tests of what is
// done with definitions and of Prepare: its Call returns the zero Result
// and no error. A Func is a value, safe for concurrent use when Fn is.
type Func struct {
	Def tool.Definition
	Fn  func(context.Context, tool.Invocation) (tool.Result, error)
}

// Definition returns f.Def.
func (f Func) Definition() tool.Definition { return f.Def }

// Call runs f.Fn, or returns the zero Result when f.Fn is nil.
func (f Func) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	if f.Fn == nil {
		return tool.Result{}, nil
	}
	return f.Fn(ctx, inv)
}

// Def is the definition of a tool named name whose input schema is
// schema, with no description and no effect.
func Def(name, schema string) tool.Definition {
	return tool.Definition{Name: name, InputSchema: json.RawMessage(schema)}
}

// Object is a Func named name that takes any JSON object
// (`{"type":"object"}`), described by description (none when empty),
// with effect, that runs fn.
func Object(name, description string, effect tool.Effect, fn func(context.Context, tool.Invocation) (tool.Result, error)) Func {
	return Func{
		Def: tool.Definition{Name: name, Description: description, InputSchema: json.RawMessage(`{"type":"object"}`), Effect: effect},
		Fn:  fn,
	}
}

// Ask is the result of a call that waits for a person: an InputRequest
// with prompt (a JSON document), an answer that schema admits, and state
// as its continuation state (none when empty). An invalid schema, prompt
// or state is the error NewInputRequest or ParseSchema returns.
func Ask(prompt, schema, state string) (tool.Result, error) {
	s, err := tool.ParseSchema([]byte(schema))
	if err != nil {
		return tool.Result{}, err
	}
	config := tool.InputRequestConfig{Prompt: json.RawMessage(prompt), ResponseSchema: s}
	if state != "" {
		config.ContinuationState = json.RawMessage(state)
	}
	ir, err := tool.NewInputRequest(config)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{InputRequest: &ir}, nil
}

// Failure is a *tool.Failure of kind whose public output is text and
// whose private cause is cause, as an error; when the Failure cannot be
// made, the error says why.
func Failure(kind tool.FailureKind, text string, cause error) error {
	f, err := tool.NewFailure(tool.FailureConfig{Kind: kind, Output: tool.NewTextOutput(text), Cause: cause})
	if err != nil {
		return err
	}
	return f
}

// draft07Case is a draft-07 input schema that a strict-mode adapter
// either sends strict (Strict), or keeps non-strict with one lint at
// Pointer for Rule, and arguments that Prepare admits under it.
type draft07Case struct {
	Name, Schema, Args string
	Strict             bool
	Pointer, Rule      string
}

// draft07 are the draft-07 schemas every strict-mode adapter is tested
// with: one whose meaning is the same in 2020-12 (sent strict, its
// definitions as $defs, a $ref to #/$defs/pt), and one using a keyword
// whose meaning differs (items as an array: not lowered).
func draft07() []draft07Case {
	const dialect = `"$schema":"http://json-schema.org/draft-07/schema#",`
	return []draft07Case{
		{Name: "same_meaning", Schema: `{` + dialect + `"type":"object","properties":{"p":{"$ref":"#/definitions/pt"}},"required":["p"],"additionalProperties":false,
			"definitions":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}}`, Args: `{"p":{"x":1}}`, Strict: true},
		{Name: "tuple", Schema: `{` + dialect + `"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"}]}},"required":["t"]}`, Args: `{"t":["a",2]}`,
			Pointer: "/properties/t/items", Rule: "items as an array is a tuple in draft-07 (prefixItems in 2020-12): the draft-07 schema is not lowered"},
	}
}

// Approval is a tool that waits for a person: named Name, it refunds an
// order ({"order": string}, required) and is [tool.EffectIdempotent]. On a
// new call it asks Prompt (a JSON document) for an answer that Form admits,
// with the first of States as its continuation state (none when States is
// empty); resumed with one of States that has a next one, it asks again
// with the next; resumed otherwise, it completes with the text Done
// returns for the continuation, or, when Done is nil, "answer <response>
// state <state>". Calls, when not nil, counts its calls. An Approval is a
// value, safe for concurrent use.
type Approval struct {
	Name, Prompt, Form string
	States             []string
	Done               func(tool.Continuation) string
	Calls              *atomic.Int32
}

// Definition returns the definition of the refund named a.Name.
func (a Approval) Definition() tool.Definition {
	return tool.Definition{
		Name:        a.Name,
		Description: "refund an order after approval",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"order":{"type":"string"}},"required":["order"]}`),
		Effect:      tool.EffectIdempotent,
	}
}

// Call asks, asks again or completes, as the type's doc says.
func (a Approval) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	if a.Calls != nil {
		a.Calls.Add(1)
	}
	c, resumed := inv.Continuation()
	next := 0
	if resumed {
		next = slices.Index(a.States, string(c.State())) + 1
		if next == 0 || next >= len(a.States) {
			if a.Done != nil {
				return tool.Result{Output: tool.NewTextOutput(a.Done(c))}, nil
			}
			return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("answer %s state %s", c.Response(), c.State()))}, nil
		}
	}
	state := ""
	if next < len(a.States) {
		state = a.States[next]
	}
	return Ask(a.Prompt, a.Form, state)
}
