package errprefix_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/errprefix"
)

func TestQuote(t *testing.T) {
	inner := errors.New("tool: invalid request: empty tool name")
	outer := errors.New("tool: invalid checkpoint")
	err := fmt.Errorf("%w: %w", outer, errprefix.Quote(inner))
	require.EqualError(t, err, "tool: invalid checkpoint: invalid request: empty tool name")
	require.ErrorIs(t, err, inner)
	require.ErrorIs(t, err, outer)
	require.EqualError(t, errprefix.Quote(errors.New("no prefix")), "no prefix")
	require.NoError(t, errprefix.Quote(nil))
}
