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
