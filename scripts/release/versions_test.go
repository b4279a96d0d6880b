package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The repository itself passes every static check: what .ci/run's release
// check verifies before it packs anything.
func TestRepositoryIsReleasable(t *testing.T) {
	r, err := loadRepo("../..")
	require.NoError(t, err)
	require.NoError(t, errors.Join(r.staticChecks()...))
}

// fakeRepo writes a small repository of two modules, the core and one
// adapter, with the files given on top of a releasable baseline.
func fakeRepo(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	base := map[string]string{
		"versions.yaml": "module-sets:\n  stable:\n    version: v0.3.0\n    modules:\n      - github.com/agentcontract/tool\n" +
			"  experimental:\n    version: v0.2.0\n    modules:\n      - github.com/agentcontract/tool/adapters/x\n" +
			"excluded-modules:\n  - github.com/agentcontract/tool/benchmarks\n",
		"go.work":                    "go 1.26.0\n\nuse (\n\t.\n\t./adapters/x\n\t./benchmarks\n)\n",
		"go.mod":                     "module github.com/agentcontract/tool\n\ngo 1.26.0\n",
		"LICENSE":                    "license",
		"README.md":                  "readme",
		"tool.go":                    "package tool\n",
		"adapters/x/go.mod":          "module github.com/agentcontract/tool/adapters/x\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.3.0\n\nreplace github.com/agentcontract/tool => ../..\n",
		"adapters/x/LICENSE":         "license",
		"adapters/x/README.md":       "readme",
		"adapters/x/x.go":            "package x\n",
		"benchmarks/go.mod":          "module github.com/agentcontract/tool/benchmarks\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.3.0\n\nreplace github.com/agentcontract/tool => ../\n",
		"benchmarks/bench_test.go":   "package benchmarks\n",
		"testdata/ignored/go.mod":    "module ignored\n",
		"adapters/x/testdata/go.mod": "module alsoignored\n",
	}
	for name, content := range files {
		base[name] = content
	}
	for name, content := range base {
		if content == "" {
			continue // removed by the case
		}
		path := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	return root
}

func TestChecks(t *testing.T) {
	cases := []struct {
		name  string
		files map[string]string
		want  string // a problem the checks must report; "" for none
	}{
		{"the baseline is releasable", nil, ""},
		{"a placeholder requirement is refused, since no proxy serves v0.0.0",
			map[string]string{"adapters/x/go.mod": "module github.com/agentcontract/tool/adapters/x\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.0.0\n\nreplace github.com/agentcontract/tool => ../..\n"},
			"requires github.com/agentcontract/tool v0.0.0, want the declared version v0.3.0"},
		{"a requirement of another version than the declared one is refused",
			map[string]string{"adapters/x/go.mod": "module github.com/agentcontract/tool/adapters/x\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.2.0\n\nreplace github.com/agentcontract/tool => ../..\n"},
			"want the declared version v0.3.0"},
		{"a requirement without its development replace is refused",
			map[string]string{"adapters/x/go.mod": "module github.com/agentcontract/tool/adapters/x\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.3.0\n"},
			"has no replace => ../.. for development"},
		{"a replace pointing elsewhere is refused",
			map[string]string{"adapters/x/go.mod": "module github.com/agentcontract/tool/adapters/x\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.3.0\n\nreplace github.com/agentcontract/tool => ../\n"},
			"replaces github.com/agentcontract/tool by ../, want ../.."},
		{"a replace of a module that a required module requires is kept: tidy needs it to load that module's tests",
			map[string]string{"benchmarks/go.mod": "module github.com/agentcontract/tool/benchmarks\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool/adapters/x v0.2.0\n\nreplace (\n\tgithub.com/agentcontract/tool => ../\n\tgithub.com/agentcontract/tool/adapters/x => ../adapters/x\n)\n"},
			""},
		{"a replace of a module nothing it requires requires is refused",
			map[string]string{"benchmarks/go.mod": "module github.com/agentcontract/tool/benchmarks\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool v0.3.0\n\nreplace (\n\tgithub.com/agentcontract/tool => ../\n\tgithub.com/agentcontract/tool/adapters/x => ../adapters/x\n)\n"},
			"replaces github.com/agentcontract/tool/adapters/x, which it does not require"},
		{"a replace of a module a required module requires must point at its directory",
			map[string]string{"benchmarks/go.mod": "module github.com/agentcontract/tool/benchmarks\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool/adapters/x v0.2.0\n\nreplace (\n\tgithub.com/agentcontract/tool => ../adapters\n\tgithub.com/agentcontract/tool/adapters/x => ../adapters/x\n)\n"},
			"replaces github.com/agentcontract/tool by ../adapters, want .."},
		{"the short go line is refused: tidy would rewrite it",
			map[string]string{"go.mod": "module github.com/agentcontract/tool\n\ngo 1.26\n"},
			"go line says 1.26, want go 1.26.0"},
		{"a toolchain line is refused",
			map[string]string{"go.mod": "module github.com/agentcontract/tool\n\ngo 1.26.0\n\ntoolchain go1.27.3\n"},
			"has a toolchain line"},
		{"a published module may not require an unpublished one",
			map[string]string{"adapters/x/go.mod": "module github.com/agentcontract/tool/adapters/x\n\ngo 1.26.0\n\nrequire github.com/agentcontract/tool/benchmarks v0.3.0\n\nreplace github.com/agentcontract/tool/benchmarks => ../../benchmarks\n"},
			"requires github.com/agentcontract/tool/benchmarks, which is never published"},
		{"a module path that is not its directory is refused",
			map[string]string{"adapters/x/go.mod": "module github.com/agentcontract/tool/adapters/y\n\ngo 1.26.0\n"},
			"module github.com/agentcontract/tool/adapters/y is in no set"},
		{"a published module needs a LICENSE",
			map[string]string{"adapters/x/LICENSE": ""},
			"adapters/x: a published module needs a LICENSE"},
		{"a published module needs a README",
			map[string]string{"README.md": ""},
			": a published module needs a README.md"},
		{"a module outside the workspace is refused",
			map[string]string{"go.work": "go 1.26.0\n\nuse (\n\t.\n\t./adapters/x\n)\n"},
			"go.work: module github.com/agentcontract/tool/benchmarks (benchmarks) is not in the workspace"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := loadRepo(fakeRepo(t, c.files))
			if err != nil {
				require.NotEmpty(t, c.want, "%v", err)
				require.ErrorContains(t, err, c.want)
				return
			}
			err = errors.Join(append(r.checkModFiles(), r.checkFiles()...)...)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestLoadRepoRefusesBadVersionsFiles(t *testing.T) {
	cases := []struct{ name, versions, want string }{
		{"placeholder version", "module-sets:\n  s:\n    version: v0.0.0\n    modules: [github.com/agentcontract/tool]\n", "v0.0.0 is a placeholder"},
		{"not semver", "module-sets:\n  s:\n    version: 1.0\n    modules: [github.com/agentcontract/tool]\n", "not a canonical semantic version"},
		{"module in two sets", "module-sets:\n  a:\n    version: v0.1.0\n    modules: [github.com/agentcontract/tool]\n  b:\n    version: v0.1.0\n    modules: [github.com/agentcontract/tool]\n", "is in two sets"},
		{"module that does not exist", "module-sets:\n  a:\n    version: v0.1.0\n    modules: [github.com/agentcontract/tool, github.com/agentcontract/tool/adapters/x, github.com/agentcontract/tool/nope]\nexcluded-modules: [github.com/agentcontract/tool/benchmarks]\n", "nope has no go.mod"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadRepo(fakeRepo(t, map[string]string{"versions.yaml": c.versions}))
			require.ErrorContains(t, err, c.want)
		})
	}
}

func TestPrepareMovesASetEverywhere(t *testing.T) {
	root := fakeRepo(t, nil)
	r, err := loadRepo(root)
	require.NoError(t, err)
	require.ErrorContains(t, prepare(r, "stable", "v0.2.0"), "must be higher")
	require.ErrorContains(t, prepare(r, "nope", "v0.4.0"), `no module set named "nope"`)
	require.NoError(t, prepare(r, "stable", "v0.4.0"))

	r, err = loadRepo(root)
	require.NoError(t, err)
	require.NoError(t, errors.Join(r.checkModFiles()...), "the repository stays releasable")
	core, ok := r.module(rootModule)
	require.True(t, ok)
	require.Equal(t, "v0.4.0", core.Version)
	x, ok := r.module(rootModule + "/adapters/x")
	require.True(t, ok)
	require.Equal(t, "v0.2.0", x.Version, "the other set keeps its version")
	for _, dir := range []string{"adapters/x", "benchmarks"} {
		data, err := os.ReadFile(filepath.Join(root, dir, "go.mod"))
		require.NoError(t, err)
		require.Contains(t, string(data), "github.com/agentcontract/tool v0.4.0", dir)
	}
	versions, err := os.ReadFile(filepath.Join(root, versionsFile))
	require.NoError(t, err)
	require.Equal(t, 1, strings.Count(string(versions), "version: v0.4.0"))
}

func TestTags(t *testing.T) {
	root := fakeRepo(t, nil)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(root))
	t.Cleanup(func() { _ = os.Chdir(wd) })
	var out bytes.Buffer
	require.NoError(t, run([]string{"tags"}, &out))
	require.Equal(t, "v0.3.0\nadapters/x/v0.2.0\n", out.String())
}

// Packing refuses a module whose zip would hold no LICENSE, and lays out
// a proxy the go command reads.
func TestPack(t *testing.T) {
	root := fakeRepo(t, nil)
	r, err := loadRepo(root)
	require.NoError(t, err)
	proxy := t.TempDir()
	require.NoError(t, r.pack(proxy))
	for _, name := range []string{"list", "v0.3.0.info", "v0.3.0.mod", "v0.3.0.zip"} {
		_, err := os.Stat(filepath.Join(proxy, "github.com", "agentcontract", "tool", "@v", name))
		require.NoError(t, err, name)
	}
	_, err = os.Stat(filepath.Join(proxy, "github.com", "agentcontract", "tool", "benchmarks"))
	require.True(t, os.IsNotExist(err), "an unpublished module is not packed")

	require.NoError(t, os.Remove(filepath.Join(root, "adapters", "x", "LICENSE")))
	require.ErrorContains(t, r.pack(t.TempDir()), "its zip would hold no LICENSE")
}

// The packed versions leave the module cache, read-only as the go command
// leaves them; other versions and other modules stay.
func TestUncache(t *testing.T) {
	r, err := loadRepo(fakeRepo(t, nil))
	require.NoError(t, err)
	cache := t.TempDir()
	write := func(name string) string {
		p := filepath.Join(cache, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o444))
		return p
	}
	gone := []string{
		write("github.com/agentcontract/tool@v0.3.0/tool.go"),
		write("cache/download/github.com/agentcontract/tool/@v/v0.3.0.zip"),
		write("cache/download/github.com/agentcontract/tool/@v/list"),
		write("github.com/agentcontract/tool/adapters/x@v0.2.0/x.go"),
	}
	kept := []string{
		write("github.com/agentcontract/tool@v0.2.9/tool.go"),
		write("cache/download/github.com/agentcontract/tool/@v/v0.2.9.zip"),
		write("github.com/other/mod@v0.3.0/mod.go"),
	}
	require.NoError(t, os.Chmod(filepath.Join(cache, "github.com", "agentcontract", "tool@v0.3.0"), 0o555))
	require.NoError(t, r.uncache(cache))
	for _, p := range gone {
		_, err := os.Stat(p)
		require.True(t, os.IsNotExist(err), p)
	}
	for _, p := range kept {
		require.FileExists(t, p)
	}
	require.NoError(t, r.uncache(cache), "nothing left to remove is not an error")
}
