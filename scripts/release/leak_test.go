package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAPINamesNoInternal: the fixture testdata/leaky is a published
// package whose exported API names types of its internal package kit in
// every place the check reads (an alias, a field, an embedded type, an
// interface method, a variable's type, a function's and a method's
// signature, under the import's own name or another); each is found, and
// nothing else: not an unexported field, function or type, not a
// function's body, and not a package of the standard library whose name
// another file gives to an internal package.
func TestAPINamesNoInternal(t *testing.T) {
	names, err := internalNames("testdata/leaky", rootModule)
	require.NoError(t, err)
	kit := rootModule + "/internal/kit"
	require.Equal(t, []internalName{
		{"var Default", "kit.Options", kit},
		{"func Check", "kit.Options", kit},
		{"func Fetch", "k.Options", kit},
		{"type Checker", "kit.Base", kit},
		{"type Config", "kit.Options", kit},
		{"func (Config) Level", "kit.Level", kit},
		{"type Lint", "kit.Lint", kit},
		{"type Runner", "kit.Options", kit},
	}, names)

	r, err := loadRepo("testdata/leaky")
	require.NoError(t, err)
	errs := r.checkAPINamesNoInternal()
	require.Len(t, errs, len(names))
	require.EqualError(t, errs[6], "github.com/agentcontract/tool: the exported type Lint names kit.Lint, "+
		"of the internal package github.com/agentcontract/tool/internal/kit, which a user cannot import: "+
		"export a type of the package's own, or keep the declaration unexported")
	require.ErrorContains(t, errors.Join(r.staticChecks()...), "the exported type Lint names kit.Lint", "the release check runs it")
}
