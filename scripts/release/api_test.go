package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the api.txt file of every published package")

// TestAPI pins the exported API of every published package, and of every
// internal package versions.yaml names under shared-internal: the api.txt
// beside each package lists its exported declarations, and the test fails
// when one changes and the file was not rewritten with
// `go test ./scripts/release -run TestAPI -update` (from the repository
// root). Review the diff of api.txt files as the change of the public
// surface it is: within a major version, a shared internal package's API
// may only grow.
func TestAPI(t *testing.T) {
	r, err := loadRepo("../..")
	require.NoError(t, err)
	pkgs, err := r.packages()
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	shared, err := r.sharedPackages()
	require.NoError(t, err)
	require.NotEmpty(t, shared)
	for _, p := range append(pkgs, shared...) {
		t.Run(p.ImportPath, func(t *testing.T) {
			if *update {
				got, err := exportedAPI(p.Dir, p.ImportPath)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(p.Dir, apiFile), []byte(got), 0o644))
				return
			}
			require.NoError(t, checkAPIFile(p))
		})
	}
}

// checkAPIFile compares the api.txt beside p with p's exported API, and
// says which lines went and which came.
func checkAPIFile(p publishedPackage) error {
	got, err := exportedAPI(p.Dir, p.ImportPath)
	if err != nil {
		return err
	}
	path := filepath.Join(p.Dir, apiFile)
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s is missing: run go test ./scripts/release -run TestAPI -update", path)
	}
	if string(want) == got {
		return nil
	}
	gone, came := diffLists(strings.Split(string(want), "\n"), strings.Split(got, "\n"))
	return fmt.Errorf("the exported API of %s changed: review it, then run go test ./scripts/release -run TestAPI -update\n"+
		"removed or changed (breaks a module built against the older API):\n\t%s\nadded:\n\t%s",
		p.ImportPath, strings.Join(gone, "\n\t"), strings.Join(came, "\n\t"))
}

// TestAPIListsInternalAliases: an alias of a type of an internal package
// lists that type's fields and methods, which a user reaches through the
// alias, so that a change of them shows in api.txt. (The release check
// refuses such an alias in a published package: TestAPINamesNoInternal.)
func TestAPIListsInternalAliases(t *testing.T) {
	got, err := exportedAPI("testdata/leaky", rootModule)
	require.NoError(t, err)
	require.Contains(t, got, "type Lint = kit.Lint\n")
	require.Contains(t, got, "type kit.Lint struct { Tool string Rule string // contains filtered or unexported fields }\n")
	require.Contains(t, got, "func (kit.Lint) String() string\n")
}

// TestPackagesCovered checks that the gate covers the packages users
// import, and no command or internal package.
func TestPackagesCovered(t *testing.T) {
	r, err := loadRepo("../..")
	require.NoError(t, err)
	pkgs, err := r.packages()
	require.NoError(t, err)
	var paths []string
	for _, p := range pkgs {
		paths = append(paths, p.ImportPath)
	}
	for _, want := range []string{
		rootModule,
		rootModule + "/dispatch",
		rootModule + "/adapters/anthropic",
		rootModule + "/adapters/gemini",
		rootModule + "/adapters/mcp",
		rootModule + "/adapters/openai",
		rootModule + "/adapters/otel",
		rootModule + "/adapters/temporal",
		rootModule + "/stores/sqlstore",
		rootModule + "/desk",
	} {
		require.Contains(t, paths, want)
	}
	for _, p := range paths {
		require.NotContains(t, p, "/internal/")
		require.NotContains(t, p, "/cmd/")
		require.NotContains(t, p, "/benchmarks")
	}
}
