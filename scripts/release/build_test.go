package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBuiltPackages: the release check builds every package of every
// published module, exactly the ones `go list` finds in each (the desk
// module, commands, internal packages and test helpers included), and no
// package of a module that is not published.
func TestBuiltPackages(t *testing.T) {
	r, err := loadRepo("../..")
	require.NoError(t, err)
	built, err := r.builtPackages()
	require.NoError(t, err)

	// One go list over the workspace gives each package with its module.
	cmd := exec.Command("go", "list", "-f", "{{.Module.Path}} {{if or .GoFiles .CgoFiles}}{{.ImportPath}}{{end}}", rootModule+"/...")
	cmd.Dir = r.Root
	out, err := cmd.Output()
	require.NoError(t, err)
	var listed []string
	modules := map[string]bool{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		require.NotEmpty(t, fields, "a package without a module")
		m, ok := r.module(fields[0])
		require.True(t, ok, "the module %s of the repository", fields[0])
		if !m.published() || len(fields) == 1 {
			continue
		}
		modules[m.Path] = true
		listed = append(listed, fields[1])
	}
	for _, m := range r.Modules {
		if m.published() {
			require.True(t, modules[m.Path], "go list finds no package of the published module %s", m.Path)
		}
	}
	missing, extra := diffLists(listed, built)
	require.Empty(t, missing, "published packages the release check would not build")
	require.Empty(t, extra, "packages the release check would build that go list does not find")
	require.Contains(t, built, rootModule+"/desk")
}

// TestBuiltPackagesSelection: the directories of a module the go command
// makes no package of are not built; the others are, whatever their name.
func TestBuiltPackagesSelection(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"go.mod":                         "module example.com/m\n",
		"LICENSE":                        "x",
		"m.go":                           "package m\n",
		"cmd/tool/main.go":               "package main\n\nfunc main() {}\n",
		"internal/x/x.go":                "package x\n",
		"onlytests/a_test.go":            "package onlytests\n",
		"ignored/a.go":                   "//go:build ignore\n\npackage ignored\n",
		"testdata/p/p.go":                "package p\n",
		"_hidden/h.go":                   "package h\n",
		".dot/d.go":                      "package d\n",
		"sub/go.mod":                     "module example.com/m/sub\n",
		"sub/s.go":                       "package sub\n",
		"npm/node_modules/pkg/pkg.go":    "package pkg\n",
		"docs/readme.md":                 "x",
		"deep/er/still/a/package/pk.go":  "package pk\n",
		"deep/er/still/a/package/pk2.go": "package pk\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	r := &repo{Root: dir, Modules: []modEntry{
		{Path: "example.com/m", Dir: dir, Rel: ".", Set: "s", Version: "v0.1.0"},
		{Path: "example.com/m/sub", Dir: filepath.Join(dir, "sub"), Rel: "sub"},
	}}
	built, err := r.builtPackages()
	require.NoError(t, err)
	require.Equal(t, []string{
		"example.com/m",
		"example.com/m/cmd/tool",
		"example.com/m/deep/er/still/a/package",
		"example.com/m/internal/x",
	}, built)
}
