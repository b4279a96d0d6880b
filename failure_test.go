package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestNewFailureValidation(t *testing.T) {
	cause := errors.New("disk full")
	var typedNil *policySecretError
	tests := []struct {
		name    string
		config  tool.FailureConfig
		wantErr string // "" when the config is valid
		// prefix means wantErr is only the start of the message, whose
		// rest comes from the JSON parser.
		prefix bool
	}{
		{
			name:   "failed with a cause",
			config: tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: cause, Output: tool.NewTextOutput("could not save")},
		},
		{
			name:   "failed with a cause and no output",
			config: tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: cause},
		},
		{
			name:   "rejected without a cause: a policy decision need not be an error",
			config: tool.FailureConfig{Kind: tool.FailureKindRejected, Output: tool.NewTextOutput("not permitted")},
		},
		{
			name:   "rejected with a cause",
			config: tool.FailureConfig{Kind: tool.FailureKindRejected, Cause: cause},
		},
		{
			name:    "failed needs a cause",
			config:  tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput("could not save")},
			wantErr: "tool: invalid failure: a failed outcome needs a cause",
		},
		{
			name:    "unknown kind",
			config:  tool.FailureConfig{Kind: "aborted", Cause: cause},
			wantErr: `tool: invalid failure: unknown kind "aborted"`,
		},
		{
			name:    "the zero kind is unknown",
			config:  tool.FailureConfig{Cause: cause},
			wantErr: `tool: invalid failure: unknown kind ""`,
		},
		{
			name:    "a typed-nil cause of a failed outcome",
			config:  tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: typedNil},
			wantErr: "tool: invalid failure: cause is a typed nil",
		},
		{
			name:    "a typed-nil cause of a rejection",
			config:  tool.FailureConfig{Kind: tool.FailureKindRejected, Cause: typedNil},
			wantErr: "tool: invalid failure: cause is a typed nil",
		},
		{
			name:    "an empty text block",
			config:  tool.FailureConfig{Kind: tool.FailureKindRejected, Output: tool.Output{Content: []tool.Block{tool.NewTextBlock("")}}},
			wantErr: "tool: invalid failure: content[0]: invalid output: text block with empty text",
		},
		{
			name:    "details that are not JSON",
			config:  tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: cause, Output: tool.Output{Details: json.RawMessage(`{"a":`)}},
			wantErr: "tool: invalid failure: invalid output: details are not one I-JSON document: ",
			prefix:  true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failure, err := tool.NewFailure(tt.config)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, failure.Validate())
				require.Equal(t, tt.config.Kind, failure.Kind())
				require.Equal(t, tt.config.Cause, failure.Cause())
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidFailure)
			require.Nil(t, failure)
			if tt.prefix {
				require.Truef(t, strings.HasPrefix(err.Error(), tt.wantErr), "message %q", err)
				return
			}
			require.EqualError(t, err, tt.wantErr)
		})
	}
}

func TestFailureOutputIsSnapshot(t *testing.T) {
	config := tool.FailureConfig{
		Kind:  tool.FailureKindFailed,
		Cause: errors.New("boom"),
		Output: tool.Output{
			Content: []tool.Block{tool.NewTextBlock("partial write"), tool.NewMediaBlock("image/png", []byte{1, 2, 3})},
			Details: json.RawMessage(`{"written":3}`),
		},
	}
	failure, err := tool.NewFailure(config)
	require.NoError(t, err)
	want := config.Output.Clone()

	// In: what the caller still holds is not the Failure's.
	config.Output.Content[0].Text = "everything is fine"
	config.Output.Content[1].Data[0] = 9
	config.Output.Details[1] = 'X'
	require.Equal(t, want, failure.Output())

	// Out: what the Failure hands out is the receiver's own.
	out := failure.Output()
	out.Content[0].Text = "changed"
	out.Content[1].Data[0] = 9
	out.Details[1] = 'X'
	out.Content = append(out.Content, tool.NewTextBlock("more"))
	require.Equal(t, want, failure.Output())
}

func TestFailureHidesItsCause(t *testing.T) {
	secret := &policySecretError{detail: "row 42 is locked by pid 7"}
	failure, err := tool.NewFailure(tool.FailureConfig{
		Kind:   tool.FailureKindFailed,
		Cause:  secret,
		Output: tool.NewTextOutput("the record is busy"),
	})
	require.NoError(t, err)
	wrapped := fmt.Errorf("call 7: %w", failure)

	for _, err := range []error{failure, wrapped} {
		require.NotErrorIs(t, err, secret)
		var target *policySecretError
		require.False(t, errors.As(err, &target), "the cause's type is behind the outcome boundary")
		require.NotContains(t, err.Error(), secret.detail)
	}
	require.Same(t, secret, failure.Cause())
	require.Equal(t, "tool: failed: the record is busy", failure.Error())
	_, single := any(failure).(interface{ Unwrap() error })
	_, multiple := any(failure).(interface{ Unwrap() []error })
	require.False(t, single || multiple, "Failure has no Unwrap")
}

func TestFailureError(t *testing.T) {
	cause := errors.New("cause text that must not show")
	details, err := tool.NewJSONOutput(json.RawMessage(`{"code":7}`))
	require.NoError(t, err)
	tests := []struct {
		name   string
		config tool.FailureConfig
		want   string
	}{
		{"kind and text", tool.FailureConfig{Kind: tool.FailureKindRejected, Cause: cause, Output: tool.NewTextOutput("not permitted")}, "tool: rejected: not permitted"},
		{"kind only when there is no output", tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: cause}, "tool: failed"},
		{"details stand in for text", tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: cause, Output: details}, `tool: failed: {"code":7}`},
		{"media has no text", tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: cause, Output: tool.Output{Content: []tool.Block{tool.NewMediaURIBlock("image/png", "https://example.com/a.png")}}}, "tool: failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failure, err := tool.NewFailure(tt.config)
			require.NoError(t, err)
			require.Equal(t, tt.want, failure.Error())
			require.NotContains(t, failure.Error(), cause.Error())
		})
	}
}

func TestClassifyFailure(t *testing.T) {
	failure, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected, Output: tool.NewTextOutput("no")})
	require.NoError(t, err)
	other, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: errors.New("x")})
	require.NoError(t, err)
	inCallError, err := tool.NewCallError(tool.CallErrorConfig{Cause: failure})
	require.NoError(t, err)
	plainCallError, err := tool.NewCallError(tool.CallErrorConfig{Cause: errors.New("plain")})
	require.NoError(t, err)
	tests := []struct {
		name  string
		err   error
		found bool
		why   string
	}{
		{"direct", failure, true, "the Failure itself"},
		{"wrapped once", fmt.Errorf("call: %w", failure), true, "single-error wrapping is transparent"},
		{"wrapped twice", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", failure)), true, "any depth of single wrapping"},
		{"inside a CallError", inCallError, true, "CallError is transparent"},
		{"inside a wrapped CallError", fmt.Errorf("call: %w", inCallError), true, "CallError is transparent at any depth"},
		{"a CallError of a plain error", plainCallError, false, "CallError declares no outcome"},
		{"joined alone", errors.Join(failure), false, "a join is ambiguous even with one Failure"},
		{"joined with another error", errors.Join(failure, errors.New("other")), false, "a join is ambiguous"},
		{"joined with another Failure", errors.Join(failure, other), false, "two outcomes: ambiguous"},
		{"wrapped join", fmt.Errorf("call: %w", errors.Join(failure)), false, "the join is still ambiguous when wrapped"},
		{"two %w", fmt.Errorf("%w and %w", failure, errors.New("other")), false, "fmt.Errorf with two %w is a join"},
		{"%v formatting", fmt.Errorf("call: %v", failure), false, "%v does not wrap"},
		{"nil", nil, false, "no error, no outcome"},
		{"plain error", errors.New("plain"), false, "an ordinary error says nothing definite"},
		{"zero Failure", &tool.Failure{}, false, "an invalid Failure is not an outcome"},
		{"wrapped zero Failure", fmt.Errorf("call: %w", &tool.Failure{}), false, "an invalid Failure is not an outcome"},
		{"typed-nil Failure", (*tool.Failure)(nil), false, "a nil Failure is not an outcome"},
		{"authorization error", &tool.AuthorizationError{}, false, "an undecided authorization is not an outcome"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := tool.ClassifyFailure(tt.err)
			require.Equal(t, tt.found, found, tt.why)
			if !tt.found {
				require.Nil(t, got, tt.why)
				return
			}
			require.Same(t, failure, got, tt.why)
		})
	}
}

func TestNewCallErrorValidation(t *testing.T) {
	var typedNil *policySecretError
	tests := []struct {
		name    string
		config  tool.CallErrorConfig
		wantErr string
	}{
		{"a cause", tool.CallErrorConfig{Cause: errors.New("timeout")}, ""},
		{"a cause and evidence", tool.CallErrorConfig{Cause: errors.New("timeout"), Evidence: tool.NewTextOutput("2 of 3 rows written")}, ""},
		{"no cause", tool.CallErrorConfig{Evidence: tool.NewTextOutput("2 of 3 rows written")}, "tool: invalid call error: a cause is required"},
		{"a typed-nil cause", tool.CallErrorConfig{Cause: typedNil}, "tool: invalid call error: cause is a typed nil"},
		{"invalid evidence", tool.CallErrorConfig{Cause: errors.New("timeout"), Evidence: tool.Output{Content: []tool.Block{{Kind: "video"}}}}, `tool: invalid call error: evidence: content[0]: invalid output: unknown block kind "video"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			callErr, err := tool.NewCallError(tt.config)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.NoError(t, callErr.Validate())
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidCallError)
			require.EqualError(t, err, tt.wantErr)
			require.Nil(t, callErr)
		})
	}
}

func TestCallError(t *testing.T) {
	cause := &policySecretError{detail: "connection reset"}
	config := tool.CallErrorConfig{
		Cause: cause,
		Evidence: tool.Output{
			Content: []tool.Block{tool.NewTextBlock("2 of 3 rows written"), tool.NewMediaBlock("text/csv", []byte("a,b"))},
			Details: json.RawMessage(`{"written":2}`),
		},
	}
	callErr, err := tool.NewCallError(config)
	require.NoError(t, err)
	want := config.Evidence.Clone()

	t.Run("evidence is copied in", func(t *testing.T) {
		config.Evidence.Content[0].Text = "nothing written"
		config.Evidence.Content[1].Data[0] = 'z'
		config.Evidence.Details[2] = 'W'
		require.Equal(t, want, callErr.Evidence())
	})
	t.Run("evidence is copied out", func(t *testing.T) {
		out := callErr.Evidence()
		out.Content[0].Text = "nothing written"
		out.Content[1].Data[0] = 'z'
		out.Details[2] = 'W'
		require.Equal(t, want, callErr.Evidence())
	})
	t.Run("transparent to errors.Is and errors.As", func(t *testing.T) {
		wrapped := fmt.Errorf("call: %w", callErr)
		require.ErrorIs(t, wrapped, cause)
		var target *policySecretError
		require.ErrorAs(t, wrapped, &target)
		require.Same(t, cause, target)
		require.Same(t, cause, callErr.Unwrap())
	})
	t.Run("its message is the cause's", func(t *testing.T) {
		require.Equal(t, cause.Error(), callErr.Error())
	})
	t.Run("it declares no outcome", func(t *testing.T) {
		_, found := tool.ClassifyFailure(callErr)
		require.False(t, found)
	})
}

// TestErrorTypesNilReceiver calls every method of every error type on a
// typed nil: none may panic, and each reports emptiness or invalidity.
func TestErrorTypesNilReceiver(t *testing.T) {
	t.Run("Failure", func(t *testing.T) {
		var f *tool.Failure
		require.Equal(t, tool.FailureKind(""), f.Kind())
		require.Equal(t, tool.Output{}, f.Output())
		require.NoError(t, f.Cause())
		require.Equal(t, "tool: failure", f.Error())
		require.ErrorIs(t, f.Validate(), tool.ErrInvalidFailure)
	})
	t.Run("CallError", func(t *testing.T) {
		var e *tool.CallError
		require.Equal(t, tool.Output{}, e.Evidence())
		require.NoError(t, e.Unwrap())
		require.Equal(t, tool.ErrInvalidCallError.Error(), e.Error())
		require.ErrorIs(t, e.Validate(), tool.ErrInvalidCallError)
	})
	t.Run("AuthorizationError", func(t *testing.T) {
		var e *tool.AuthorizationError
		require.Equal(t, "tool: authorization failed", e.Error())
		require.NoError(t, e.Cause())
	})
	t.Run("InputRejection", func(t *testing.T) {
		var r *tool.InputRejection
		require.Empty(t, r.Message())
		require.NoError(t, r.Cause())
		require.Equal(t, tool.ErrInvalidInvocation.Error(), r.Error())
		require.True(t, r.Is(tool.ErrInvalidInvocation))
		require.False(t, r.Is(tool.ErrInvalidFailure))
		require.ErrorIs(t, r.Validate(), tool.ErrInvalidInputRejection)
	})
	t.Run("InputValidationError", func(t *testing.T) {
		var e *tool.InputValidationError
		require.NoError(t, e.Cause())
		require.Equal(t, "tool: invalid invocation: the input validator failed", e.Error())
		require.True(t, e.Is(tool.ErrInvalidInvocation))
		require.False(t, e.Is(tool.ErrInvalidFailure))
	})
	t.Run("InputValidationPanicError", func(t *testing.T) {
		var e *tool.InputValidationPanicError
		require.Equal(t, "tool: input validator panicked", e.Error())
		require.NoError(t, e.Unwrap())
	})
	t.Run("PanicError", func(t *testing.T) {
		var e *tool.PanicError
		require.Equal(t, "tool: panic", e.Error())
		require.NoError(t, e.Unwrap())
	})
}

// TestSafeEffectErrors follows a tool's error through Binding.Call: only
// an EffectSafe tool's ordinary error, returned while ctx is live, becomes
// a definite Failure.
func TestSafeEffectErrors(t *testing.T) {
	plain := errors.New("upstream returned 502")
	declared, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Cause: plain, Output: tool.NewTextOutput("no such city")})
	require.NoError(t, err)
	wrappedDeclared := fmt.Errorf("lookup: %w", declared)
	withEvidence, err := tool.NewCallError(tool.CallErrorConfig{Cause: plain, Evidence: tool.NewTextOutput("one page read")})
	require.NoError(t, err)

	// becomesFailure checks the generic failed outcome holding cause.
	becomesFailure := func(cause error) func(*testing.T, error) {
		return func(t *testing.T, err error) {
			failure, found := tool.ClassifyFailure(err)
			require.True(t, found)
			require.Equal(t, tool.FailureKindFailed, failure.Kind())
			text, ok := failure.Output().Text()
			require.True(t, ok)
			require.Equal(t, `the tool "probe" failed`, text)
			require.Same(t, cause, failure.Cause())
			require.NotContains(t, err.Error(), "502")
		}
	}
	// untouched checks that err is exactly the tool's error.
	untouched := func(want error) func(*testing.T, error) {
		return func(t *testing.T, err error) {
			require.True(t, err == want, "got %v, want the tool's own error %v", err, want)
		}
	}
	tests := []struct {
		name       string
		effect     tool.Effect
		returned   error
		cancelling bool // the tool cancels the call's ctx before returning
		check      func(*testing.T, error)
	}{
		{"safe: a plain error becomes a Failure", tool.EffectSafe, plain, false, becomesFailure(plain)},
		{"safe: a CallError declares no outcome, so it becomes a Failure", tool.EffectSafe, withEvidence, false, becomesFailure(withEvidence)},
		{"safe: its own context.Canceled while ctx is live becomes a Failure", tool.EffectSafe, context.Canceled, false, becomesFailure(context.Canceled)},
		{"safe: an invalid Failure is not an outcome, so it becomes one", tool.EffectSafe, &tool.Failure{}, false, func(t *testing.T, err error) {
			failure, found := tool.ClassifyFailure(err)
			require.True(t, found)
			require.Equal(t, tool.FailureKindFailed, failure.Kind())
		}},
		{"safe: a Failure passes through as it is", tool.EffectSafe, declared, false, untouched(declared)},
		{"safe: a wrapped Failure passes through as it is", tool.EffectSafe, wrappedDeclared, false, untouched(wrappedDeclared)},
		{"safe: an error after ctx is cancelled passes through", tool.EffectSafe, plain, true, untouched(plain)},
		{"idempotent: a plain error passes through", tool.EffectIdempotent, plain, false, untouched(plain)},
		{"unspecified: a plain error passes through", "", plain, false, untouched(plain)},
		{"unspecified: a CallError passes through", "", withEvidence, false, untouched(withEvidence)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			probe := newPolicyProbe(tt.effect, func(context.Context, tool.Invocation) (tool.Result, error) {
				if tt.cancelling {
					cancel()
				}
				return tool.Result{}, tt.returned
			})
			binding, err := tool.Bind(probe)
			require.NoError(t, err)
			_, err = binding.Call(ctx, mustPrepare(t, binding, `{}`))
			tt.check(t, err)
			if tt.cancelling {
				_, found := tool.ClassifyFailure(err)
				require.False(t, found)
			}
		})
	}
}

// TestSafeEffectFailureSeenByMiddleware checks that the conversion happens
// at the tool boundary, so every middleware sees the Failure.
func TestSafeEffectFailureSeenByMiddleware(t *testing.T) {
	var seen error
	observe := func(next tool.Caller) tool.Caller {
		return tool.CallerFunc(func(ctx context.Context, invocation tool.Invocation) (tool.Result, error) {
			result, err := next.Call(ctx, invocation)
			seen = err
			return result, err
		})
	}
	probe := newPolicyProbe(tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{}, errors.New("timeout")
	})
	binding, err := tool.Bind(probe, observe)
	require.NoError(t, err)
	_, err = binding.Call(context.Background(), mustPrepare(t, binding, `{}`))
	_, found := tool.ClassifyFailure(seen)
	require.True(t, found)
	require.True(t, seen == err)
}
