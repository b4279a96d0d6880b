package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
		return errors.New("a refusal needs a note")
	}
	return nil
}

// newAskRefund is the ask-then-act refund written with NewAskFunc.
func newAskRefund(t *testing.T, refunded *atomic.Int32) tool.AskFunc[askRefundArgs, askRefundAnswer, string] {
	t.Helper()
	f, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order", Effect: tool.EffectIdempotent},
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
	return tool.Definition{Name: "refund", Description: "refund an order", InputSchema: h.sig.InputSchema(), Effect: tool.EffectIdempotent}
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

	tests := []struct {
		answer string
		want   string
		reject bool
	}{
		{answer: `{"approve":false,"note":"duplicate"}`, want: "not refunded: duplicate"},
		// The schema admits it; the answer type's Validate does not.
		{answer: `{"approve":false}`, reject: true},
	}
	for _, tc := range tests {
		c, err := result.InputRequest.Continuation(json.RawMessage(tc.answer))
		require.NoError(t, err)
		inv, err := b.Contract().Prepare(call, tool.Admission{Continuation: &c})
		require.NoError(t, err)
		got, err := b.Call(ctx, inv)
		if tc.reject {
			rejection, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok, "%v", err)
			require.Contains(t, rejection.Message(), "the answer is not accepted")
			continue
		}
		require.NoError(t, err)
		text, _ := got.Output.Text()
		require.Equal(t, tc.want, text)
	}
	require.Zero(t, refunded.Load())
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
	config := tool.FuncConfig{Name: "refund", Effect: tool.EffectIdempotent}

	_, err := tool.NewAskFunc[askRefundArgs, bool, string](config, nil, act)
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
