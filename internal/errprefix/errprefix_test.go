package errprefix_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/errprefix"
)

func TestOnePrefix(t *testing.T) {
	errRequest := errprefix.New("invalid request")
	errCheckpoint := errprefix.New("invalid checkpoint")
	require.EqualError(t, errRequest, "tool: invalid request")

	inner := errprefix.Errorf("%w: empty tool name", errRequest)
	require.EqualError(t, inner, "tool: invalid request: empty tool name")

	outer := errprefix.Errorf("%w: request: %w", errCheckpoint, inner)
	require.EqualError(t, outer, "tool: invalid checkpoint: request: invalid request: empty tool name")
	require.ErrorIs(t, outer, errCheckpoint)
	require.ErrorIs(t, outer, errRequest)
	require.ErrorIs(t, outer, inner)

	// Three levels, and a sentinel quoted on its own.
	errStore := errprefix.New("store failed")
	top := errprefix.Errorf("%w: saving: %w (%w)", errStore, outer, errRequest)
	require.EqualError(t, top, "tool: store failed: saving: invalid checkpoint: request: invalid request: empty tool name (invalid request)")

	// Errors of other origins are shown as they are, and still found.
	eof := fmt.Errorf("reading: %w", errors.ErrUnsupported)
	err := errprefix.Errorf("%w: %w", errStore, eof)
	require.EqualError(t, err, "tool: store failed: reading: unsupported operation")
	require.ErrorIs(t, err, errors.ErrUnsupported)
}

func TestBody(t *testing.T) {
	require.Equal(t, "", errprefix.Body(nil))
	require.Equal(t, "x", errprefix.Body(errprefix.New("x")))
	require.Equal(t, "x: 1", errprefix.Body(errprefix.Errorf("%w: %d", errprefix.New("x"), 1)))
	require.Equal(t, "plain", errprefix.Body(errors.New("plain")))
}

func TestPart(t *testing.T) {
	errOutput := errprefix.New("invalid output")
	errFailure := errprefix.New("invalid failure")
	block := errprefix.Errorf("%w: text block with empty text", errOutput)
	at := errprefix.Part("content[%d]: %w", 0, block)
	require.EqualError(t, at, "content[0]: invalid output: text block with empty text")
	err := errprefix.Errorf("%w: %w", errFailure, at)
	require.EqualError(t, err, "tool: invalid failure: content[0]: invalid output: text block with empty text")
	require.ErrorIs(t, err, errOutput)
	require.ErrorIs(t, err, errFailure)
}

// bodied is an error type of another package, as the project writes one.
type bodied struct{ what string }

func (b *bodied) Error() string { return errprefix.Message(b) }
func (b *bodied) ErrorBody() string {
	if b == nil {
		return "nothing"
	}
	return "failed: " + b.what
}

func TestBodied(t *testing.T) {
	errResult := errprefix.New("invalid result")
	b := &bodied{"order closed"}
	require.EqualError(t, b, "tool: failed: order closed")
	require.Equal(t, "failed: order closed", errprefix.Body(b))
	err := errprefix.Errorf("%w: tool %q: %w", errResult, "refund", b)
	require.EqualError(t, err, `tool: invalid result: tool "refund": failed: order closed`)
	require.ErrorIs(t, err, errResult)
	var found *bodied
	require.ErrorAs(t, err, &found)
	require.Same(t, b, found)
	// Quoted by %v, or by a Part, it is shown by its body too.
	require.EqualError(t, errprefix.Errorf("%w: %v", errResult, b), "tool: invalid result: failed: order closed")
	require.EqualError(t, errprefix.Part("at %d: %w", 3, b), "at 3: failed: order closed")
	var none *bodied
	require.Equal(t, "nothing", errprefix.Body(none))
	require.EqualError(t, none, "tool: nothing")
}

func TestDetail(t *testing.T) {
	errAnswer := errprefix.New("invalid answer")
	errRequest := errprefix.New("invalid input request")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"after its sentinel", errprefix.Errorf("%w: the answer is late", errAnswer), "the answer is late"},
		{"with operands", errprefix.Errorf("%w: %d of %q", errAnswer, 3, "x"), `3 of "x"`},
		{"an error quoted after it", errprefix.Errorf("%w: %w", errAnswer, errprefix.Errorf("%w: no schema", errRequest)), "invalid input request: no schema"},
		{"another sentinel first", errprefix.Errorf("%w: no schema", errRequest), "invalid input request: no schema"},
		{"the sentinel itself", errAnswer, "invalid answer"},
		{"not after a sentinel", errprefix.Errorf("answer %w", errAnswer), "answer invalid answer"},
		{"a piece", errprefix.Part("%w: x", errAnswer), "invalid answer: x"},
		{"wrapped once more", fmt.Errorf("w: %w", errprefix.Errorf("%w: x", errAnswer)), "w: tool: invalid answer: x"},
		{"another origin", errors.New("plain"), "plain"},
		{"nil", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, errprefix.Detail(tt.err, errAnswer))
		})
	}
}

// An error of Errorf unwraps as fmt.Errorf's error of the same format:
// one %w gives a chain, several a tree.
func TestErrorfUnwraps(t *testing.T) {
	errA := errprefix.New("a")
	errB := errprefix.New("b")
	cause := errors.New("cause")
	tests := []struct {
		name   string
		format string
		args   []any
		text   string
	}{
		{"sentinel only", "%w: x %d", []any{errA, 1}, "tool: a: x 1"},
		{"sentinel and one more", "%w: x: %w", []any{errA, cause}, "tool: a: x: cause"},
		{"sentinel and two more", "%w: %w (%w)", []any{errA, errB, cause}, "tool: a: b (cause)"},
		{"sentinel later", "x: %w", []any{errA}, "tool: x: a"},
		{"explicit indexes", "%w: %[1]v", []any{errA}, "tool: a: a"},
		{"a nil head", "%w: x", []any{nil}, "tool: %!w(<nil>): x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := errprefix.Errorf(tt.format, tt.args...)
			require.EqualError(t, err, tt.text)
			want := fmt.Errorf(tt.format, tt.args...)
			for _, a := range tt.args {
				if e, ok := a.(error); ok && e != nil {
					require.Equal(t, errors.Is(want, e), errors.Is(err, e))
					require.Equal(t, onChain(want, e), onChain(err, e), "%v is reached by single unwrapping", e)
				}
			}
		})
	}
}

// onChain reports whether target is reached from err by Unwrap() error
// alone, as tool.ClassifyFailure walks.
func onChain(err, target error) bool {
	for err != nil {
		if err == target {
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}
