package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the api.txt file of every published package")

// TestAPI pins the exported API of every published package: the api.txt
// beside each package lists its exported declarations, and the test fails
// when one changes and the file was not rewritten with
// `go test ./scripts/release -run TestAPI -update` (from the repository
// root). Review the diff of api.txt files as the change of the public
// surface it is.
func TestAPI(t *testing.T) {
	r, err := loadRepo("../..")
	require.NoError(t, err)
	pkgs, err := r.packages()
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	for _, p := range pkgs {
		t.Run(p.ImportPath, func(t *testing.T) {
			got, err := exportedAPI(p.Dir, p.ImportPath)
			require.NoError(t, err)
			path := filepath.Join(p.Dir, apiFile)
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "%s is missing: run go test ./scripts/release -run TestAPI -update", path)
			require.Equal(t, string(want), got, "the exported API of %s changed: review it, then run go test ./scripts/release -run TestAPI -update", p.ImportPath)
		})
	}
}

// TestAPIListsInternalAliases: an alias of a type of an internal package
// lists that type's exported fields and methods, which a user reaches
// through the alias, so that a change of them shows in api.txt. The
// published packages name no internal type (the adapters' Lint is each
// adapter's own), so the fixture repository of testdata/aliasrepo has one.
func TestAPIListsInternalAliases(t *testing.T) {
	got, err := exportedAPI("testdata/aliasrepo/pub", rootModule+"/pub")
	require.NoError(t, err)
	require.Equal(t, "func (kit.Finding) String() string\n"+
		"type Finding = kit.Finding\n"+
		"type kit.Finding struct { Tool string Rule string }\n", got)
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
