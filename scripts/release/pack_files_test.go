package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestModuleFiles: a module's zip holds its own files, not what npm
// installed for its tests, another module's or version control's.
func TestModuleFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{
		"go.mod", "LICENSE", "a.go", "testdata/x.json",
		"testdata/npm/node_modules/pkg/index.js",
		"sub/go.mod", "sub/b.go",
		".git/HEAD",
	} {
		path := filepath.Join(dir, filepath.FromSlash(f))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte("x"), 0o644))
	}
	files, err := moduleFiles(dir)
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, f.Path())
	}
	slices.Sort(names)
	require.Equal(t, []string{"LICENSE", "a.go", "go.mod", "testdata/x.json"}, names)
}
