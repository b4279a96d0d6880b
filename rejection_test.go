package tool_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestNewInputRejection(t *testing.T) {
	cause := errors.New("private detail")
	var typedNil *tool.InputValidationError
	tests := []struct {
		name    string
		config  tool.InputRejectionConfig
		wantErr bool
	}{
		{"message only", tool.InputRejectionConfig{Message: "value at /a must be positive"}, false},
		{"message and cause", tool.InputRejectionConfig{Message: "value at /a must be positive", Cause: cause}, false},
		{"empty message", tool.InputRejectionConfig{Cause: cause}, true},
		{"invalid UTF-8", tool.InputRejectionConfig{Message: "bad \xff"}, true},
		{"typed nil cause", tool.InputRejectionConfig{Message: "x", Cause: typedNil}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tool.NewInputRejection(tt.config)
			if tt.wantErr {
				require.ErrorIs(t, err, tool.ErrInvalidInputRejection)
				require.Nil(t, r)
				return
			}
			require.NoError(t, err)
			require.NoError(t, r.Validate())
			require.Equal(t, tt.config.Message, r.Message())
			require.Equal(t, tt.config.Cause, r.Cause())
			require.Equal(t, "tool: invalid invocation: "+tt.config.Message, r.Error(), "the cause is never in the message")
			require.ErrorIs(t, r, tool.ErrInvalidInvocation)
			require.NotErrorIs(t, r, cause, "the cause is private")
		})
	}
}

func TestInputRejectionNilAndZero(t *testing.T) {
	var r *tool.InputRejection
	require.NotPanics(t, func() {
		require.Equal(t, "", r.Message())
		require.Nil(t, r.Cause())
		require.Equal(t, "tool: invalid invocation", r.Error())
		require.ErrorIs(t, r.Validate(), tool.ErrInvalidInputRejection)
	})
	zero := &tool.InputRejection{}
	require.ErrorIs(t, zero.Validate(), tool.ErrInvalidInputRejection)
	require.Equal(t, "tool: invalid invocation", zero.Error())
}

type causeHolder struct{ err error }

func (c causeHolder) Error() string { return "holder" }

func TestClassifyInputRejection(t *testing.T) {
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "value at /n must be an integer"})
	require.NoError(t, err)
	other := errors.New("other")
	callErr, err := tool.NewCallError(tool.CallErrorConfig{Cause: r})
	require.NoError(t, err)
	tests := []struct {
		name  string
		err   error
		found bool
	}{
		{"nil", nil, false},
		{"the rejection", r, true},
		{"wrapped once", fmt.Errorf("checking: %w", r), true},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", r)), true},
		{"through a CallError", callErr, true},
		{"joined with another error", errors.Join(r, other), false},
		{"joined alone", errors.Join(r), false},
		{"two %w", fmt.Errorf("%w and %w", r, other), false},
		{"formatted without %w", fmt.Errorf("lost: %v", r), false},
		{"held without Unwrap", causeHolder{r}, false},
		{"invalid rejection", &tool.InputRejection{}, false},
		{"typed nil", (*tool.InputRejection)(nil), false},
		{"an unrelated error", other, false},
		{"a validator defect", fmt.Errorf("x: %w", &tool.InputValidationError{}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tool.ClassifyInputRejection(tt.err)
			require.Equal(t, tt.found, ok)
			if tt.found {
				require.Same(t, r, got)
			} else {
				require.Nil(t, got)
			}
		})
	}

	// A rejection's own cause is never searched.
	inner, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "inner"})
	require.NoError(t, err)
	outer, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "outer", Cause: inner})
	require.NoError(t, err)
	got, ok := tool.ClassifyInputRejection(outer)
	require.True(t, ok)
	require.Equal(t, "outer", got.Message())
}

func TestInputValidationError(t *testing.T) {
	var nilErr *tool.InputValidationError
	require.NotPanics(t, func() {
		require.Nil(t, nilErr.Cause())
		require.Equal(t, "tool: invalid invocation: the input validator failed", nilErr.Error())
	})
	zero := &tool.InputValidationError{}
	require.ErrorIs(t, zero, tool.ErrInvalidInvocation)
	require.Nil(t, zero.Cause())
	_, ok := tool.ClassifyInputRejection(zero)
	require.False(t, ok)
}

func TestInputValidationPanicError(t *testing.T) {
	errValue := errors.New("boom")
	tests := []struct {
		name   string
		value  any
		text   string
		unwrap error
	}{
		{"string", "no N", "tool: input validator panicked: no N", nil},
		{"error", errValue, "tool: input validator panicked: boom", errValue},
		{"number", 42, "tool: input validator panicked: 42", nil},
		{"nil", nil, "tool: input validator panicked: <nil>", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &tool.InputValidationPanicError{Value: tt.value}
			require.Equal(t, tt.text, e.Error())
			require.Equal(t, tt.unwrap, e.Unwrap())
			if tt.unwrap != nil {
				require.ErrorIs(t, e, tt.unwrap)
			}
		})
	}
	var nilErr *tool.InputValidationPanicError
	require.NotPanics(t, func() {
		require.Equal(t, "tool: input validator panicked", nilErr.Error())
		require.Nil(t, nilErr.Unwrap())
	})
}

// A validator given to Bind by hand follows the same taxonomy as a typed
// one: rejections pass, other errors and panics are defects.
type handValidated struct {
	handTool
	validator func([]byte) error
}

func (h handValidated) InputValidator() func([]byte) error { return h.validator }

func TestHandWrittenValidator(t *testing.T) {
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "value at /x is not allowed"})
	require.NoError(t, err)
	plain := errors.New("cache unavailable")
	tests := []struct {
		name      string
		validator func([]byte) error
		rejection bool
		cause     func(*testing.T, error)
	}{
		{"rejection", func([]byte) error { return r }, true, nil},
		{"wrapped rejection", func([]byte) error { return fmt.Errorf("rule 3: %w", r) }, true, nil},
		{"plain error", func([]byte) error { return plain }, false, func(t *testing.T, cause error) {
			require.Equal(t, plain, cause)
		}},
		{"joined rejection", func([]byte) error { return errors.Join(r, plain) }, false, func(t *testing.T, cause error) {
			require.ErrorIs(t, cause, plain)
		}},
		{"panic", func([]byte) error { panic("validator bug") }, false, func(t *testing.T, cause error) {
			var p *tool.InputValidationPanicError
			require.ErrorAs(t, cause, &p)
			require.Equal(t, "validator bug", p.Value)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := tool.Bind(handValidated{
				handTool:  handTool{def: tool.Definition{Name: "hand", InputSchema: []byte(`{"type":"object"}`)}},
				validator: tt.validator,
			})
			require.NoError(t, err)
			_, err = prepare(b, `{"x":1}`)
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			_, isRejection := tool.ClassifyInputRejection(err)
			require.Equal(t, tt.rejection, isRejection)
			var defect *tool.InputValidationError
			require.Equal(t, !tt.rejection, errors.As(err, &defect))
			if tt.cause != nil {
				tt.cause(t, defect.Cause())
				require.NotContains(t, err.Error(), "cache unavailable")
				require.NotContains(t, err.Error(), "validator bug")
			}
		})
	}
}

// currency is a member type whose own decoder rejects values the model can
// correct.
type currency string

func (c *currency) UnmarshalJSON(b []byte) error {
	if string(b) != `"EUR"` {
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "only EUR is supported", Cause: errors.New("private: currency table")})
		if err != nil {
			return err
		}
		return r
	}
	*c = "EUR"
	return nil
}

type refundArgs struct {
	Order  string `json:"order"`
	Amount struct {
		Value    int      `json:"value"`
		Currency currency `json:"currency" jsonschema:"type=string"`
	} `json:"amount"`
}

func TestCustomDecoderRejectionNamesItsMember(t *testing.T) {
	f, err := tool.NewFunc(tool.FuncConfig{Name: "refund", Description: "Refunds an order.", Effect: tool.EffectSafe}, func(ctx context.Context, in refundArgs) (string, error) {
		return "ok", nil
	})
	require.NoError(t, err)
	b, err := tool.Bind(f)
	require.NoError(t, err)
	_, err = b.Contract().Prepare(tool.Request{Name: "refund", Arguments: `{"order":"A-1","amount":{"value":1,"currency":"USD"}}`}, tool.Admission{})
	r, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, "value at /amount/currency: only EUR is supported", r.Message())
	require.NotContains(t, r.Message(), "private")
}
