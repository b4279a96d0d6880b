package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

type chanArgs struct {
	C chan int `json:"c"`
}

// An error that wraps two of the package's errors carries one "tool: "
// prefix, and errors.Is finds both.
func TestMessagesCarryOnePrefix(t *testing.T) {
	noop := func(context.Context, struct{}) (string, error) { return "", nil }
	tests := []struct {
		name    string
		err     func() error
		want    string
		wrapped []error
	}{
		{
			"Bind, a definition whose input schema is not an object",
			func() error {
				def := coreDefinition("lookup")
				def.InputSchema = json.RawMessage(`{"type":"string"}`)
				_, err := tool.Bind(newCoreTool(def))
				return err
			},
			`tool: invalid tool: invalid definition: input schema of tool "lookup" must be a JSON object with "type":"object"`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidDefinition},
		},
		{
			"Bind, a definition whose input schema does not compile",
			func() error {
				def := coreDefinition("lookup")
				def.InputSchema = json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}}`)
				_, err := tool.Bind(newCoreTool(def))
				return err
			},
			`tool: invalid tool: invalid definition: input schema of tool "lookup": invalid schema: reference to "https://example.com/a.json" outside the document is not allowed`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidDefinition, tool.ErrInvalidSchema},
		},
		{
			"Prepare, a request without a name",
			func() error {
				_, err := mustBind(t, newCoreTool(coreDefinition("lookup"))).Contract().Prepare(tool.Request{}, tool.Admission{})
				return err
			},
			`tool: invalid invocation: invalid request: empty tool name`,
			[]error{tool.ErrInvalidInvocation, tool.ErrInvalidRequest},
		},
		{
			"NewSignature, an unsupported type",
			func() error { _, err := tool.NewSignature[chanArgs, string](); return err },
			`tool: invalid tool: input type tool_test.chanArgs: invalid schema: tool_test.chanArgs.C has unsupported type chan int`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidSchema},
		},
		{
			"NewFunc, an unsupported type",
			func() error {
				_, err := tool.NewFunc(tool.FuncConfig{Name: "pipe"}, func(context.Context, chanArgs) (string, error) { return "", nil })
				return err
			},
			`tool: invalid tool: tool "pipe": input type tool_test.chanArgs: invalid schema: tool_test.chanArgs.C has unsupported type chan int`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidSchema},
		},
		{
			"NewFunc, a bad name",
			func() error { _, err := tool.NewFunc(tool.FuncConfig{Name: "a b"}, noop); return err },
			`tool: invalid tool: invalid definition: name "a b" may hold only A-Z, a-z, 0-9, '_' and '-'`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidDefinition},
		},
		{
			"NewFunc, a description that is not UTF-8",
			func() error {
				_, err := tool.NewFunc(tool.FuncConfig{Name: "a", Description: "caf\xe9"}, noop)
				return err
			},
			`tool: invalid tool: invalid definition: description of tool "a" is not valid UTF-8`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidDefinition},
		},
		{
			"NewFunc, a description longer than the limit",
			func() error {
				_, err := tool.NewFunc(tool.FuncConfig{Name: "a", Description: strings.Repeat("x", tool.MaxInputBytes+1)}, noop)
				return err
			},
			`tool: invalid tool: invalid definition: description of tool "a" is 1048577 bytes, more than the limit of 1048576`,
			[]error{tool.ErrInvalidTool, tool.ErrInvalidDefinition},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.EqualError(t, err, tc.want)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, "tool: ") && !strings.Contains(msg, ": tool: "), "one prefix: %q", msg)
			for _, sentinel := range tc.wrapped {
				require.ErrorIs(t, err, sentinel)
			}
			require.False(t, errors.Is(err, tool.ErrInvalidResult), "only what it wraps")
		})
	}
}
