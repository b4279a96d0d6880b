package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fixture testdata/unpinned is two modules, the adapter importing three
// internal packages of the core: from its code, from its test, and from a
// file built only for another system. No shared-internal list names them,
// so the release check refuses each import, and nothing else.
func TestUnpinnedInternalImportRefused(t *testing.T) {
	r, err := loadRepo("testdata/unpinned")
	require.NoError(t, err)
	errs := r.staticChecks()
	var got []string
	for _, err := range errs {
		got = append(got, err.Error())
	}
	require.Len(t, got, 3, "%s", strings.Join(got, "\n"))
	for i, c := range []struct{ pkg, file string }{
		{"internal/secret", "adapters/x/x.go"},
		{"internal/plan", "adapters/x/x_plan9.go"},
		{"internal/fixture", "adapters/x/x_test.go"},
	} {
		require.Equal(t, "module github.com/agentcontract/tool/adapters/x imports github.com/agentcontract/tool/"+c.pkg+
			" (in "+c.file+"), an internal package of the module github.com/agentcontract/tool: "+
			"a module may import another module's internal package only when versions.yaml names it under shared-internal, "+
			`with an api.txt beside it that pins its API (CONTRIBUTING.md, "Modules that upgrade independently")`, got[i])
	}
}

// The fixture testdata/pinned is the same two modules with the three
// packages named under shared-internal, each with its api.txt: the
// release check passes, and the API test holds each package to its
// api.txt.
func TestPinnedInternalImportPasses(t *testing.T) {
	r, err := loadRepo("testdata/pinned")
	require.NoError(t, err)
	require.NoError(t, errors.Join(r.staticChecks()...))
	shared, err := r.sharedPackages()
	require.NoError(t, err)
	require.Len(t, shared, 3)
	for _, p := range shared {
		require.NoError(t, checkAPIFile(p), p.ImportPath)
	}
}

// A change of a pinned package's API fails the API test, which names what
// went (a break for a module built against the older API) and what came.
func TestPinnedAPIChangeFails(t *testing.T) {
	root := copyFixture(t, "testdata/pinned")
	secret := filepath.Join(root, "internal", "secret", "secret.go")
	require.NoError(t, os.WriteFile(secret, []byte("package secret\n\n// KeyOf returns a key.\nfunc KeyOf(name string) string { return name }\n"), 0o644))
	r, err := loadRepo(root)
	require.NoError(t, err)
	shared, err := r.sharedPackages()
	require.NoError(t, err)
	var checked bool
	for _, p := range shared {
		if p.ImportPath != rootModule+"/internal/secret" {
			require.NoError(t, checkAPIFile(p))
			continue
		}
		checked = true
		require.EqualError(t, checkAPIFile(p), "the exported API of github.com/agentcontract/tool/internal/secret changed: "+
			"review it, then run go test ./scripts/release -run TestAPI -update\n"+
			"removed or changed (breaks a module built against the older API):\n\tfunc Key() string\n"+
			"added:\n\tfunc KeyOf(name string) string")
	}
	require.True(t, checked)
}

// The list of exceptions is checked too: each names an internal package of
// a module of the repository, with Go code and an api.txt, that another
// module imports.
func TestSharedListChecked(t *testing.T) {
	const head = "module-sets:\n  stable:\n    version: v0.1.0\n    modules:\n      - github.com/agentcontract/tool\n" +
		"  experimental:\n    version: v0.1.0\n    modules:\n      - github.com/agentcontract/tool/adapters/x\n" +
		"shared-internal:\n  - github.com/agentcontract/tool/internal/secret\n  - github.com/agentcontract/tool/internal/fixture\n" +
		"  - github.com/agentcontract/tool/internal/plan\n"
	cases := []struct {
		name  string
		extra string            // appended to the shared-internal list
		edit  func(root string) // changes the fixture
		want  string
	}{
		{"a package that is not internal", "  - github.com/agentcontract/tool/adapters/x\n", nil,
			"versions.yaml: shared-internal names github.com/agentcontract/tool/adapters/x, which is not an internal package"},
		{"a package of no module of the repository", "  - example.com/other/internal/p\n", nil,
			"versions.yaml: shared-internal names example.com/other/internal/p, which is in no module of the repository"},
		{"a directory without Go code", "  - github.com/agentcontract/tool/internal/nothing\n", nil,
			"holds no Go package"},
		{"a package without its api.txt", "", func(root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "internal", "plan", apiFile)))
		}, "versions.yaml: shared-internal names github.com/agentcontract/tool/internal/plan, whose API no api.txt pins"},
		{"a package no other module imports", "", func(root string) {
			require.NoError(t, os.Remove(filepath.Join(root, "adapters", "x", "x_plan9.go")))
		}, "versions.yaml: shared-internal names github.com/agentcontract/tool/internal/plan, which no other module imports: remove it from the list"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := copyFixture(t, "testdata/pinned")
			require.NoError(t, os.WriteFile(filepath.Join(root, versionsFile), []byte(head+c.extra), 0o644))
			if c.edit != nil {
				c.edit(root)
			}
			r, err := loadRepo(root)
			require.NoError(t, err)
			require.ErrorContains(t, errors.Join(r.staticChecks()...), c.want)
		})
	}
	t.Run("a package named twice", func(t *testing.T) {
		root := copyFixture(t, "testdata/pinned")
		require.NoError(t, os.WriteFile(filepath.Join(root, versionsFile), []byte(head+"  - github.com/agentcontract/tool/internal/plan\n"), 0o644))
		_, err := loadRepo(root)
		require.EqualError(t, err, "versions.yaml: shared-internal names github.com/agentcontract/tool/internal/plan twice")
	})
}

// The repository itself: every cross-module import of an internal package
// is of a named exception, and every exception is used and pinned.
func TestRepositoryInternalImportsPinned(t *testing.T) {
	r, err := loadRepo("../..")
	require.NoError(t, err)
	require.NoError(t, errors.Join(r.checkInternalImports()...))
}

// copyFixture copies the fixture repository at dir into a new temporary
// directory and returns it.
func copyFixture(t *testing.T, dir string) string {
	t.Helper()
	root := t.TempDir()
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(root, rel), data, 0o644)
	})
	require.NoError(t, err)
	return root
}
