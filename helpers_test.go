package tool_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// This file holds the helpers that tests of several files share. A helper
// used by one file only stays in that file.

// mustBind binds executable through middlewares and fails the test on an
// error.
func mustBind(t testing.TB, executable tool.Tool, middlewares ...tool.CallMiddleware) tool.Binding {
	t.Helper()
	b, err := tool.Bind(executable, middlewares...)
	require.NoError(t, err)
	return b
}

// bindFunc makes a Func of fn, binds it and returns the binding.
func bindFunc[In, Out any](t testing.TB, name string, fn func(context.Context, In) (Out, error)) tool.Binding {
	t.Helper()
	f, err := tool.NewFunc(tool.FuncConfig{Name: name, Description: "a test tool"}, fn)
	require.NoError(t, err)
	return mustBind(t, f)
}

// prepare proposes arguments to b's contract under its own name, with the
// zero Admission.
func prepare(b tool.Binding, arguments string) (tool.Invocation, error) {
	return b.Contract().Prepare(tool.Request{Name: b.Contract().Name(), Arguments: arguments}, tool.Admission{})
}

// prepareErr is prepare for a test that looks only at the error.
func prepareErr(b tool.Binding, arguments string) error {
	_, err := prepare(b, arguments)
	return err
}

// mustPrepare is prepare for arguments the contract must admit.
func mustPrepare(t testing.TB, b tool.Binding, arguments string) tool.Invocation {
	t.Helper()
	inv, err := prepare(b, arguments)
	require.NoError(t, err)
	return inv
}

// echoTool is a hand-written Tool with a fixed definition that returns its
// arguments as details.
type echoTool struct {
	definition tool.Definition
}

func (e echoTool) Definition() tool.Definition { return e.definition.Clone() }

func (e echoTool) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	out, err := tool.NewJSONOutput(inv.Arguments())
	return tool.Result{Output: out}, err
}
