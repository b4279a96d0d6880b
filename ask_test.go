package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// orderID is an order number with a custom decode check: it must start
// with "ord_". The check is the kind a tool author adds to the argument
// type and expects to run when the call is admitted.
type orderID string

func (o *orderID) UnmarshalText(b []byte) error {
	if !strings.HasPrefix(string(b), "ord_") {
		return errors.New("not an order number")
	}
	*o = orderID(b)
	return nil
}

type askRefundArgs struct {
	Order orderID `json:"order"`
	Cents int     `json:"cents" jsonschema:"minimum=1"`
}

type askRefundAnswer struct {
	Approve bool   `json:"approve"`
	Note    string `json:"note,omitempty"`
}

func (a askRefundAnswer) Validate() error {
	if !a.Approve && a.Note == "" {
		return publicRejection("a refusal needs a note")
	}
	return nil
}

// publicRejection is an InputRejection with message, for answer types'
// Validate methods.
func publicRejection(message string) error {
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: message})
	if err != nil {
		return err
	}
	return r
}

// newAskRefund is the ask-then-act refund written with NewAskFunc.
func newAskRefund(t *testing.T, refunded *atomic.Int32) tool.AskFunc[askRefundArgs, askRefundAnswer, string] {
	t.Helper()
	f, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in askRefundArgs) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d cents on %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in askRefundArgs, a askRefundAnswer) (string, error) {
			if !a.Approve {
				return "not refunded: " + a.Note, nil
			}
			refunded.Add(1)
			return fmt.Sprintf("refunded %d cents on %s", in.Cents, in.Order), nil
		})
	require.NoError(t, err)
	return f
}

// handRefund is the same tool written around NewSignature, as it had to be
// before NewAskFunc, with the mistake that is easy to make: it does not
// implement InputValidator, so the custom check of orderID runs in Call,
// after the guard, instead of at admission.
type handRefund struct {
	sig      tool.Signature[askRefundArgs, string]
	answer   tool.Schema
	refunded *atomic.Int32
}

func newHandRefund(t *testing.T, refunded *atomic.Int32) handRefund {
	t.Helper()
	sig, err := tool.NewSignature[askRefundArgs, string]()
	require.NoError(t, err)
	answer, err := tool.SchemaFor[askRefundAnswer]()
	require.NoError(t, err)
	return handRefund{sig: sig, answer: answer, refunded: refunded}
}

func (h handRefund) Definition() tool.Definition {
	return tool.Definition{Name: "refund", Description: "refund an order", InputSchema: h.sig.InputSchema()}
}

func (h handRefund) Call(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
	in, err := h.sig.Decode(invocation)
	if err != nil {
		return tool.Result{}, err
	}
	c, resumed := invocation.Continuation()
	if !resumed {
		prompt, err := json.Marshal(fmt.Sprintf("Refund %d cents on %s?", in.Cents, in.Order))
		if err != nil {
			return tool.Result{}, err
		}
		request, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: prompt, ResponseSchema: h.answer})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &request}, nil
	}
	var a askRefundAnswer
	if err := json.Unmarshal(c.Response(), &a); err != nil {
		return tool.Result{}, err
	}
	if err := a.Validate(); err != nil {
		return tool.Result{}, err
	}
	if !a.Approve {
		return tool.Result{Output: tool.NewTextOutput("not refunded: " + a.Note)}, nil
	}
	h.refunded.Add(1)
	output, err := h.sig.Encode(fmt.Sprintf("refunded %d cents on %s", in.Cents, in.Order))
	return tool.Result{Output: output}, err
}

// bindGuarded binds executable behind a Guard that counts the calls it
// sees.
func bindGuarded(t *testing.T, executable tool.Tool, guarded *atomic.Int32) tool.Binding {
	t.Helper()
	guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
		guarded.Add(1)
		return true, nil
	})})
	require.NoError(t, err)
	b, err := tool.Bind(executable, guard.Call)
	require.NoError(t, err)
	return b
}

func TestAskFuncAsksThenActs(t *testing.T) {
	ctx := t.Context()
	var refunded, guarded atomic.Int32
	b := bindGuarded(t, newAskRefund(t, &refunded), &guarded)
	call := tool.Request{Name: "refund", Arguments: `{"order":"ord_7","cents":1250}`}
	const key tool.IdempotencyKey = "refund-ord_7"

	inv, err := b.Contract().Prepare(call, tool.Admission{IdempotencyKey: key})
	require.NoError(t, err)
	result, err := b.Call(ctx, inv)
	require.NoError(t, err)
	require.NotNil(t, result.InputRequest)
	require.JSONEq(t, `"Refund 1250 cents on ord_7?"`, string(result.InputRequest.Prompt()))
	require.Zero(t, refunded.Load(), "asking acts on nothing")

	// The response schema is the answer type's.
	_, err = result.InputRequest.Continuation(json.RawMessage(`{"approve":"yes"}`))
	require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
	_, err = result.InputRequest.Continuation(json.RawMessage(`{"approve":true,"extra":1}`))
	require.ErrorIs(t, err, tool.ErrInvalidInputRequest)

	// Resumed with an approval, it acts once.
	c, err := result.InputRequest.Continuation(json.RawMessage(`{"approve":true}`))
	require.NoError(t, err)
	inv, err = b.Contract().Prepare(call, tool.Admission{IdempotencyKey: key, Continuation: &c})
	require.NoError(t, err)
	result, err = b.Call(ctx, inv)
	require.NoError(t, err)
	require.Nil(t, result.InputRequest)
	text, _ := result.Output.Text()
	require.Equal(t, "refunded 1250 cents on ord_7", text)
	require.EqualValues(t, 1, refunded.Load())
	require.EqualValues(t, 2, guarded.Load())

	// The request's continuation belongs to these arguments and this key:
	// it reaches act with nothing else.
	for name, tc := range map[string]struct {
		call tool.Request
		key  tool.IdempotencyKey
	}{
		"other arguments": {tool.Request{Name: "refund", Arguments: `{"order":"ord_7","cents":99999}`}, key},
		"other key":       {call, "refund-other"},
	} {
		_, err := b.Contract().Prepare(tc.call, tool.Admission{IdempotencyKey: tc.key, Continuation: &c})
		require.ErrorIs(t, err, tool.ErrInvalidInvocation, name)
	}
	require.EqualValues(t, 1, refunded.Load())
}

func TestAskFuncAnswerRules(t *testing.T) {
	ctx := t.Context()
	var refunded, guarded atomic.Int32
	b := bindGuarded(t, newAskRefund(t, &refunded), &guarded)
	call := tool.Request{Name: "refund", Arguments: `{"order":"ord_8","cents":5}`}
	inv, err := b.Contract().Prepare(call, tool.Admission{})
	require.NoError(t, err)
	result, err := b.Call(ctx, inv)
	require.NoError(t, err)

	c, err := result.InputRequest.Continuation(json.RawMessage(`{"approve":false,"note":"duplicate"}`))
	require.NoError(t, err)
	inv, err = b.Contract().Prepare(call, tool.Admission{Continuation: &c})
	require.NoError(t, err)
	got, err := b.Call(ctx, inv)
	require.NoError(t, err)
	text, _ := got.Output.Text()
	require.Equal(t, "not refunded: duplicate", text)
	require.Zero(t, refunded.Load())
}

// An answer the schema admits but Answer's Validate rejects is the
// person's to correct: the call asks again, saying why, and tells the
// model nothing; the corrected answer to the new request then acts. Before,
// the call ended in an *InputRejection for the model after the checkpoint
// was spent.
func TestAskFuncAsksAgainWhenValidateRejects(t *testing.T) {
	ctx := t.Context()
	var refunded, guarded atomic.Int32
	b := bindGuarded(t, newAskRefund(t, &refunded), &guarded)
	call := tool.Request{Name: "refund", Arguments: `{"order":"ord_8","cents":5}`}
	const key tool.IdempotencyKey = "refund-ord_8"
	inv, err := b.Contract().Prepare(call, tool.Admission{IdempotencyKey: key})
	require.NoError(t, err)
	first, err := b.Call(ctx, inv)
	require.NoError(t, err)

	again := resumeAsk(t, b, call, key, *first.InputRequest, `{"approve":false}`)
	require.NotNil(t, again.InputRequest, "asked again")
	require.Zero(t, again.Output, "the model is told nothing")
	require.JSONEq(t, `"The answer was not accepted: a refusal needs a note\n\nRefund 5 cents on ord_8?"`, string(again.InputRequest.Prompt()))
	require.Equal(t, first.InputRequest.ResponseSchema().JSON(), again.InputRequest.ResponseSchema().JSON())

	// The new request belongs to the same call, and its answer acts.
	done := resumeAsk(t, b, call, key, *again.InputRequest, `{"approve":true}`)
	text, _ := done.Output.Text()
	require.Equal(t, "refunded 5 cents on ord_8", text)
	require.EqualValues(t, 1, refunded.Load())
}

// resumeAsk answers request with answer, resumes the call and returns what
// it returned; the call must not fail.
func resumeAsk(t *testing.T, b tool.Binding, call tool.Request, key tool.IdempotencyKey, request tool.InputRequest, answer string) tool.Result {
	t.Helper()
	result, err := resumeAskErr(t, b, call, key, request, answer)
	require.NoError(t, err)
	return result
}

// resumeAskErr is resumeAsk for a call that may fail.
func resumeAskErr(t *testing.T, b tool.Binding, call tool.Request, key tool.IdempotencyKey, request tool.InputRequest, answer string) (tool.Result, error) {
	t.Helper()
	c, err := request.Continuation(json.RawMessage(answer))
	require.NoError(t, err, "the schema admits %s", answer)
	inv, err := b.Contract().Prepare(call, tool.Admission{IdempotencyKey: key, Continuation: &c})
	require.NoError(t, err)
	return b.Call(t.Context(), inv)
}

// The admission guarantee: a custom decode check of the arguments runs in
// Prepare, before the guard, for a tool made with NewAskFunc; the same
// tool written around NewSignature without InputValidator lets the call
// through admission and the guard, and refuses it only in Call.
func TestAskFuncAdmitsLikeNewFunc(t *testing.T) {
	ctx := t.Context()
	bad := tool.Request{Name: "refund", Arguments: `{"order":"inv_7","cents":10}`}

	t.Run("NewAskFunc", func(t *testing.T) {
		var refunded, guarded atomic.Int32
		b := bindGuarded(t, newAskRefund(t, &refunded), &guarded)
		_, err := b.Contract().Prepare(bad, tool.Admission{})
		rejection, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%v", err)
		require.Contains(t, rejection.Message(), "/order")
		require.Zero(t, guarded.Load(), "the guard never saw the call")
	})
	t.Run("NewSignature without InputValidator", func(t *testing.T) {
		var refunded, guarded atomic.Int32
		b := bindGuarded(t, newHandRefund(t, &refunded), &guarded)
		inv, err := b.Contract().Prepare(bad, tool.Admission{})
		require.NoError(t, err, "admitted: the check did not run at admission")
		_, err = b.Call(ctx, inv)
		_, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%v", err)
		require.EqualValues(t, 1, guarded.Load(), "the guard saw a call admission should have refused")
	})
}

func TestNewAskFuncRefuses(t *testing.T) {
	ask := func(context.Context, askRefundArgs) (tool.Question, error) { return tool.Question{Prompt: "?"}, nil }
	act := func(context.Context, askRefundArgs, bool) (string, error) { return "", nil }
	config := tool.FuncConfig{Name: "refund"}

	// act never sees the idempotency key, so it cannot keep a promise to
	// deduplicate by it.
	_, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Effect: tool.EffectIdempotent}, ask, act)
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	require.EqualError(t, err, `tool: invalid tool: tool "refund": an AskFunc cannot promise Effect "idempotent": act never sees the call's idempotency key, so it cannot deduplicate a replay; leave Effect empty, or use "safe" when act changes nothing`)
	for _, effect := range []tool.Effect{"", tool.EffectSafe} {
		_, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Effect: effect}, ask, act)
		require.NoError(t, err, "effect %q", effect)
	}

	_, err = tool.NewAskFunc[askRefundArgs, bool, string](config, nil, act)
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	_, err = tool.NewAskFunc[askRefundArgs, bool, string](config, ask, nil)
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	_, err = tool.NewAskFunc(tool.FuncConfig{Name: "bad name!"}, ask, act)
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	_, err = tool.NewAskFunc(config, ask, func(context.Context, askRefundArgs, chan int) (string, error) { return "", nil })
	require.ErrorIs(t, err, tool.ErrInvalidTool)

	// A question without a prompt suspends nothing.
	f, err := tool.NewAskFunc(config, func(context.Context, askRefundArgs) (tool.Question, error) { return tool.Question{}, nil }, act)
	require.NoError(t, err)
	require.JSONEq(t, `{"type":"boolean"}`, string(f.AnswerSchema().JSON()))
	b, err := tool.Bind(f)
	require.NoError(t, err)
	inv, err := b.Contract().Prepare(tool.Request{Name: "refund", Arguments: `{"order":"ord_1","cents":1}`}, tool.Admission{})
	require.NoError(t, err)
	_, err = b.Call(t.Context(), inv)
	require.ErrorIs(t, err, tool.ErrInvalidInputRequest)

	// The zero AskFunc runs nothing.
	var zero tool.AskFunc[askRefundArgs, bool, string]
	_, err = zero.Call(t.Context(), inv)
	require.ErrorIs(t, err, tool.ErrInvalidTool)
}

// An answer member whose text method refuses what the schema admits.
type askCode string

func (c *askCode) UnmarshalText(b []byte) error {
	if !strings.HasPrefix(string(b), "c-") {
		return errors.New("not a code")
	}
	*c = askCode(b)
	return nil
}

type askCoded struct {
	Code askCode `json:"code"`
}

// askVerbose rejects every refusal with a message far longer than a
// prompt repeats.
type askVerbose struct {
	Approve bool `json:"approve"`
}

func (a askVerbose) Validate() error {
	if !a.Approve {
		return publicRejection(strings.Repeat("é", 600))
	}
	return nil
}

type askPlainError struct {
	Approve bool `json:"approve"`
}

func (askPlainError) Validate() error { return errors.New("the ledger is down") }

type askPanics struct {
	Approve bool `json:"approve"`
}

func (askPanics) Validate() error { panic("validate broke") }

type askWrapped struct {
	Approve bool `json:"approve"`
}

func (askWrapped) Validate() error {
	return fmt.Errorf("checking the answer: %w", publicRejection("approve it or say why"))
}

// askOnce binds an AskFunc over Answer whose question is prompt, prepares
// its call and returns the binding, the call and the request it suspends
// with; acted counts the runs of act.
func askOnce[Answer any](t *testing.T, prompt any, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
	t.Helper()
	f, err := tool.NewAskFunc(tool.FuncConfig{Name: "confirm"},
		func(context.Context, askRefundArgs) (tool.Question, error) { return tool.Question{Prompt: prompt}, nil },
		func(_ context.Context, _ askRefundArgs, a Answer) (string, error) {
			acted.Add(1)
			return fmt.Sprint(a), nil
		})
	require.NoError(t, err)
	b, err := tool.Bind(f)
	require.NoError(t, err)
	call := tool.Request{Name: "confirm", Arguments: `{"order":"ord_1","cents":1}`}
	inv, err := b.Contract().Prepare(call, tool.Admission{})
	require.NoError(t, err)
	result, err := b.Call(t.Context(), inv)
	require.NoError(t, err)
	require.NotNil(t, result.InputRequest)
	return b, call, *result.InputRequest
}

// Every refusal of an answer by its type asks again, whatever refused it
// and whatever the prompt's form; the reason is public text from the
// rejection, never from a private cause.
func TestAskFuncAsksAgain(t *testing.T) {
	tests := []struct {
		name   string
		ask    func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest)
		answer string
		prompt string
	}{
		{
			name: "a rejection wrapped once", answer: `{"approve":false}`,
			ask: func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
				return askOnce[askWrapped](t, "Confirm?", acted)
			},
			prompt: `"The answer was not accepted: approve it or say why\n\nConfirm?"`,
		},
		{
			name: "a prompt that is not a string", answer: `{"approve":false}`,
			ask: func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
				return askOnce[askWrapped](t, map[string]any{"order": "ord_1", "cents": 1}, acted)
			},
			prompt: `{"not_accepted":"approve it or say why","prompt":{"cents":1,"order":"ord_1"}}`,
		},
		{
			// The schema says a string; the member's text method refuses
			// it. Its error is private: the reason names the member only.
			name: "a refusal of the strict decode", answer: `{"code":"x-1"}`,
			ask: func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
				return askOnce[askCoded](t, "Which code?", acted)
			},
			prompt: `"The answer was not accepted: the answer cannot be decoded: value at /code must be a string in the form this member accepts\n\nWhich code?"`,
		},
		{
			// The reason is cut to 1024 bytes, on a character boundary.
			name: "a long reason", answer: `{"approve":false}`,
			ask: func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
				return askOnce[askVerbose](t, "Confirm?", acted)
			},
			prompt: `"The answer was not accepted: ` + strings.Repeat("é", 512) + `...\n\nConfirm?"`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var acted atomic.Int32
			b, call, request := tc.ask(t, &acted)
			again := resumeAsk(t, b, call, "", request, tc.answer)
			require.NotNil(t, again.InputRequest)
			require.JSONEq(t, tc.prompt, string(again.InputRequest.Prompt()))
			require.Zero(t, acted.Load())
		})
	}
}

// A Validate that fails otherwise than with a rejection, or panics, is a
// defect of the tool: a Failure whose public output names the tool only,
// with the error kept as its private Cause; never an InputRejection and
// never a question. act does not run.
func TestAskFuncAnswerDefects(t *testing.T) {
	tests := []struct {
		name  string
		ask   func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest)
		cause func(t *testing.T, cause error)
	}{
		{
			name: "a plain error",
			ask: func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
				return askOnce[askPlainError](t, "Confirm?", acted)
			},
			cause: func(t *testing.T, cause error) {
				require.ErrorContains(t, cause, "the ledger is down")
				require.ErrorIs(t, cause, tool.ErrInvalidTool)
			},
		},
		{
			name: "a panic",
			ask: func(t *testing.T, acted *atomic.Int32) (tool.Binding, tool.Request, tool.InputRequest) {
				return askOnce[askPanics](t, "Confirm?", acted)
			},
			cause: func(t *testing.T, cause error) {
				var p *tool.InputValidationPanicError
				require.ErrorAs(t, cause, &p)
				require.Equal(t, "validate broke", p.Value)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var acted atomic.Int32
			b, call, request := tc.ask(t, &acted)
			_, err := resumeAskErr(t, b, call, "", request, `{"approve":true}`)
			_, rejected := tool.ClassifyInputRejection(err)
			require.False(t, rejected, "a defect is no public rejection: %v", err)
			failure, ok := tool.ClassifyFailure(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, tool.FailureKindFailed, failure.Kind())
			text, _ := failure.Output().Text()
			require.Equal(t, `the tool "confirm" failed`, text)
			tc.cause(t, failure.Cause())
			require.Zero(t, acted.Load())
		})
	}
}

// askNumbers has a member of every sized number type, each optional so
// that an answer can send one.
type askNumbers struct {
	I   int     `json:"i,omitempty"`
	I8  int8    `json:"i8,omitempty"`
	I16 int16   `json:"i16,omitempty"`
	I32 int32   `json:"i32,omitempty"`
	I64 int64   `json:"i64,omitempty"`
	U   uint    `json:"u,omitempty"`
	U8  uint8   `json:"u8,omitempty"`
	U16 uint16  `json:"u16,omitempty"`
	U32 uint32  `json:"u32,omitempty"`
	U64 uint64  `json:"u64,omitempty"`
	F32 float32 `json:"f32,omitempty"`
	F64 float64 `json:"f64,omitempty"`
}

// The answer schema states what Answer can hold: the range of every sized
// number type, where SchemaFor states only those of 8 and 16 bits (an
// input is decoded at admission, before anything runs; an answer only
// after the checkpoint is claimed).
func TestAskFuncAnswerSchemaStatesEveryRange(t *testing.T) {
	var acted atomic.Int32
	_, _, request := askOnce[askNumbers](t, "How many?", &acted)
	require.JSONEq(t, `{
		"type": "object",
		"additionalProperties": false,
		"properties": {
			"i":   {"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807},
			"i8":  {"type": "integer", "minimum": -128, "maximum": 127},
			"i16": {"type": "integer", "minimum": -32768, "maximum": 32767},
			"i32": {"type": "integer", "minimum": -2147483648, "maximum": 2147483647},
			"i64": {"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807},
			"u":   {"type": "integer", "minimum": 0, "maximum": 18446744073709551615},
			"u8":  {"type": "integer", "minimum": 0, "maximum": 255},
			"u16": {"type": "integer", "minimum": 0, "maximum": 65535},
			"u32": {"type": "integer", "minimum": 0, "maximum": 4294967295},
			"u64": {"type": "integer", "minimum": 0, "maximum": 18446744073709551615},
			"f32": {"type": "number", "minimum": -3.4028235e+38, "maximum": 3.4028235e+38},
			"f64": {"type": "number"}
		}
	}`, string(request.ResponseSchema().JSON()))

	// SchemaFor's own rule is unchanged.
	s, err := tool.SchemaFor[askNumbers]()
	require.NoError(t, err)
	require.NotContains(t, string(s.JSON()), "2147483647")
}

// What the schema refuses is refused before the call resumes, where the
// person can correct it (Continuation, which a runtime runs before it
// claims the checkpoint); an integer written 1.0, 1e1 or -0 is the integer.
func TestAskFuncAnswerNumbers(t *testing.T) {
	var acted atomic.Int32
	var got askNumbers
	f, err := tool.NewAskFunc(tool.FuncConfig{Name: "count"},
		func(context.Context, askRefundArgs) (tool.Question, error) {
			return tool.Question{Prompt: "How many?"}, nil
		},
		func(_ context.Context, _ askRefundArgs, a askNumbers) (string, error) {
			acted.Add(1)
			got = a
			return "", nil
		})
	require.NoError(t, err)
	b, err := tool.Bind(f)
	require.NoError(t, err)
	call := tool.Request{Name: "count", Arguments: `{"order":"ord_1","cents":1}`}
	inv, err := b.Contract().Prepare(call, tool.Admission{})
	require.NoError(t, err)
	first, err := b.Call(t.Context(), inv)
	require.NoError(t, err)
	request := *first.InputRequest

	for _, refused := range []string{`{"i32":3e9}`, `{"i32":2147483648}`, `{"u":-1}`, `{"u64":18446744073709551616}`, `{"i":1e19}`, `{"f32":3.5e38}`, `{"i":1.5}`} {
		_, err := request.Continuation(json.RawMessage(refused))
		require.ErrorIs(t, err, tool.ErrInvalidInputRequest, refused)
	}
	tests := []struct {
		answer string
		want   askNumbers
	}{
		{`{"i":1.0}`, askNumbers{I: 1}},
		{`{"i":1e1}`, askNumbers{I: 10}},
		{`{"i8":-1.28E2}`, askNumbers{I8: -128}},
		{`{"i32":2147483647.000}`, askNumbers{I32: 2147483647}},
		{`{"i64":-9.223372036854775808e18}`, askNumbers{I64: -9223372036854775808}},
		{`{"u":-0}`, askNumbers{}},
		{`{"u":-0.0e5}`, askNumbers{}},
		{`{"u64":1.8446744073709551615e19}`, askNumbers{U64: 18446744073709551615}},
		{`{"u8":2550e-1}`, askNumbers{U8: 255}},
		{`{"f32":3.4028235e38}`, askNumbers{F32: 3.4028235e38}},
		{`{"f64":2.5}`, askNumbers{F64: 2.5}},
		{`{"f64":1e300}`, askNumbers{F64: 1e300}},
	}
	for _, tc := range tests {
		got = askNumbers{}
		result := resumeAsk(t, b, call, "", request, tc.answer)
		require.Nil(t, result.InputRequest, tc.answer)
		require.Equal(t, tc.want, got, tc.answer)
	}
	require.EqualValues(t, len(tests), acted.Load())
}

// The differential test of the answer schema against the decode: for
// every sized number type and numbers around its bounds, written in every
// form JSON allows, the schema admits exactly the numbers the type holds,
// and every number it admits decodes to its value.
func TestAskFuncAnswerSchemaAgreesWithDecode(t *testing.T) {
	var got askNumbers
	f, err := tool.NewAskFunc(tool.FuncConfig{Name: "count"},
		func(context.Context, askRefundArgs) (tool.Question, error) {
			return tool.Question{Prompt: "How many?"}, nil
		},
		func(_ context.Context, _ askRefundArgs, a askNumbers) (string, error) {
			got = a
			return "", nil
		})
	require.NoError(t, err)
	b, err := tool.Bind(f)
	require.NoError(t, err)
	call := tool.Request{Name: "count", Arguments: `{"order":"ord_1","cents":1}`}
	inv, err := b.Contract().Prepare(call, tool.Admission{})
	require.NoError(t, err)
	first, err := b.Call(t.Context(), inv)
	require.NoError(t, err)
	request := *first.InputRequest

	type member struct {
		name, field string
		lo, hi      *big.Rat // the values the type holds
		integer     bool
	}
	ints := func(bits int) (*big.Rat, *big.Rat) {
		lo := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)))
		hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits-1)), big.NewInt(1))
		return new(big.Rat).SetInt(lo), new(big.Rat).SetInt(hi)
	}
	uints := func(bits int) (*big.Rat, *big.Rat) {
		hi := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(bits)), big.NewInt(1))
		return new(big.Rat), new(big.Rat).SetInt(hi)
	}
	rat := func(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }
	var members []member
	for _, m := range []struct {
		name, field string
		bits        int
		unsigned    bool
	}{{"i", "I", 64, false}, {"i8", "I8", 8, false}, {"i16", "I16", 16, false}, {"i32", "I32", 32, false}, {"i64", "I64", 64, false},
		{"u", "U", 64, true}, {"u8", "U8", 8, true}, {"u16", "U16", 16, true}, {"u32", "U32", 32, true}, {"u64", "U64", 64, true}} {
		lo, hi := ints(m.bits)
		if m.unsigned {
			lo, hi = uints(m.bits)
		}
		members = append(members, member{m.name, m.field, lo, hi, true})
	}
	members = append(members,
		member{"f32", "F32", rat("-3.4028235e38"), rat("3.4028235e38"), false},
		member{"f64", "F64", rat("-1.7976931348623157e308"), rat("1.7976931348623157e308"), false})

	// spellings writes r (an integer or a short decimal) in the forms JSON
	// allows: plain, with a fraction of zeros, with an exponent.
	spellings := func(r *big.Rat) []string {
		if !r.IsInt() {
			s := r.FloatString(3)
			return []string{s, s + "0", s + "e0"}
		}
		n := r.Num().String()
		out := []string{n, n + ".0", n + "e0", n + ".000E+0"}
		digits, sign := strings.TrimPrefix(n, "-"), strings.TrimSuffix(n, strings.TrimPrefix(n, "-"))
		if digits != "0" {
			out = append(out, n+"0e-1")
		}
		if len(digits) > 1 {
			out = append(out, sign+digits[:1]+"."+digits[1:]+"e"+strconv.Itoa(len(digits)-1))
		}
		if n == "0" {
			out = append(out, "-0", "-0.0", "-0e3")
		}
		// A number token is at most 100 characters (see Prepare).
		return slices.DeleteFunc(out, func(s string) bool { return len(s) > 100 })
	}
	checked := 0
	for _, m := range members {
		var values []*big.Rat
		for _, edge := range []*big.Rat{m.lo, m.hi, new(big.Rat), big.NewRat(1, 1), big.NewRat(-1, 1), big.NewRat(1, 2), big.NewRat(-5, 2)} {
			for _, delta := range []int64{-1, 0, 1} {
				values = append(values, new(big.Rat).Add(edge, big.NewRat(delta, 1)))
			}
		}
		values = append(values, rat("3e9"), rat("-3e9"), rat("1e19"), rat("1e20"))
		for _, v := range values {
			holds := v.Cmp(m.lo) >= 0 && v.Cmp(m.hi) <= 0 && (v.IsInt() || !m.integer)
			for _, number := range spellings(v) {
				answer := `{"` + m.name + `":` + number + `}`
				c, err := request.Continuation(json.RawMessage(answer))
				if !holds {
					require.ErrorIs(t, err, tool.ErrInvalidInputRequest, "the schema refuses %s", answer)
					continue
				}
				require.NoError(t, err, "the schema admits %s", answer)
				inv, err := b.Contract().Prepare(call, tool.Admission{Continuation: &c})
				require.NoError(t, err)
				got = askNumbers{}
				result, err := b.Call(t.Context(), inv)
				require.NoError(t, err, answer)
				require.Nil(t, result.InputRequest, "%s decodes", answer)
				field := reflect.ValueOf(got).FieldByName(m.field)
				switch {
				case field.CanInt():
					require.Equal(t, v.Num().String(), strconv.FormatInt(field.Int(), 10), answer)
				case field.CanUint():
					require.Equal(t, v.Num().String(), strconv.FormatUint(field.Uint(), 10), answer)
				default:
					want, _ := v.Float64()
					if m.field == "F32" {
						want = float64(float32(want))
					}
					require.Equal(t, want, field.Float(), answer)
				}
				checked++
			}
		}
	}
	require.Greater(t, checked, 300)
}

// askMix is an answer type of many shapes, for the fuzz target.
type askMix struct {
	N askNumbers        `json:"n"`
	P *int16            `json:"p"`
	L []int8            `json:"l,omitempty"`
	M map[string]uint32 `json:"m,omitempty"`
	A [2]uint8          `json:"a,omitzero"`
	Y []byte            `json:"y,omitempty"`
	B bool              `json:"b,omitempty"`
	S string            `json:"s,omitempty"`
	O *askNumbers       `json:"o,omitempty"`
}

// FuzzAskFuncAnswer checks the answer schema against the decode: every
// answer the schema admits (Continuation, before the call resumes) runs
// act, neither asked again nor failed.
func FuzzAskFuncAnswer(f *testing.F) {
	for _, seed := range []string{
		`{"n":{},"p":null}`,
		`{"n":{"i":1.0,"i8":-128,"i16":3.2767e4,"i32":-2147483648,"i64":9223372036854775807,"u":-0,"u8":2.55e2,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"f32":-3.4028235e38,"f64":1e-300},"p":-32768}`,
		`{"n":{"i32":3e9},"p":1}`,
		`{"n":{"u":-1},"p":1}`,
		`{"n":{"f32":3.4028236e38},"p":1}`,
		`{"n":{},"p":1.5}`,
		`{"n":{},"p":-0.0,"l":[127,-1.28e2,0e-5],"m":{"x":4.294967295e9},"a":[255,0.0],"b":true,"s":"é"}`,
		`{"n":{},"p":null,"a":"AAA="}`,
		`{"n":{},"p":null,"a":""}`,
		`{"n":{},"p":null,"a":"AA=="}`,
		`{"n":{},"p":null,"y":"AB=="}`,
		`{"n":{},"p":null,"y":"AA"}`,
		`{"n":{},"p":null,"y":"A\nA=="}`,
		`{"n":{},"p":null,"o":{"u8":1E0}}`,
		`{"n":{"i":100000000000000000000e-2},"p":null}`,
		`{"n":{"i":-0.00000000000000000001e20},"p":null}`,
	} {
		f.Add(seed)
	}
	var acted atomic.Int64
	fn, err := tool.NewAskFunc(tool.FuncConfig{Name: "mix"},
		func(context.Context, askRefundArgs) (tool.Question, error) { return tool.Question{Prompt: "?"}, nil },
		func(context.Context, askRefundArgs, askMix) (string, error) {
			acted.Add(1)
			return "done", nil
		})
	require.NoError(f, err)
	b, err := tool.Bind(fn)
	require.NoError(f, err)
	call := tool.Request{Name: "mix", Arguments: `{"order":"ord_1","cents":1}`}
	inv, err := b.Contract().Prepare(call, tool.Admission{})
	require.NoError(f, err)
	first, err := b.Call(context.Background(), inv)
	require.NoError(f, err)
	request := *first.InputRequest

	f.Fuzz(func(t *testing.T, answer string) {
		c, err := request.Continuation(json.RawMessage(answer))
		if err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
			return
		}
		inv, err := b.Contract().Prepare(call, tool.Admission{Continuation: &c})
		require.NoError(t, err)
		before := acted.Load()
		result, err := b.Call(context.Background(), inv)
		require.NoError(t, err, "the schema admitted %s", answer)
		require.Nil(t, result.InputRequest, "the schema admitted %s, the decode did not", answer)
		require.Equal(t, before+1, acted.Load())
	})
}

type askBytes struct {
	Y []byte  `json:"y,omitempty"`
	A [2]byte `json:"a,omitzero"`
	Z [3]byte `json:"z,omitzero"`
}

// Bytes are a base64 string in the form the decode takes: standard,
// padded, and for an array of the length that decodes to its size.
func TestAskFuncAnswerBytes(t *testing.T) {
	var acted atomic.Int32
	b, call, request := askOnce[askBytes](t, "Which bytes?", &acted)
	for _, refused := range []string{`{"y":"AA"}`, `{"y":"-_=="}`, `{"y":"A\nA=="}`, `{"a":""}`, `{"a":"AA=="}`, `{"a":"AAAA"}`, `{"z":"AAA="}`, `{"z":"AAAAAA=="}`} {
		_, err := request.Continuation(json.RawMessage(refused))
		require.ErrorIs(t, err, tool.ErrInvalidInputRequest, refused)
	}
	for _, admitted := range []string{`{"y":""}`, `{"y":"AB=="}`, `{"y":"AAAAAA=="}`, `{"a":"AAB="}`, `{"z":"AQID"}`} {
		result := resumeAsk(t, b, call, "", request, admitted)
		require.Nil(t, result.InputRequest, admitted)
	}
	require.EqualValues(t, 5, acted.Load())
}
