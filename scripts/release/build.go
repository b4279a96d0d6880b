package main

import (
	"errors"
	"go/build"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// builtPackages lists, sorted, the import path of every package of every
// published module that the release check compiles in its consumer: every
// directory of a module's zip (the files moduleFiles gives, which is what
// a user downloads) that holds a Go file this machine's build constraints
// keep, other than a _test.go file; directories the go command ignores
// (testdata, hidden and "_" ones) are left out, as `go list ./...` leaves
// them. Commands, internal packages, test helpers and the internal module
// are compiled too: a user's go build, go vet or go test of them must work,
// and a package no program of the check imports would otherwise never be
// compiled outside the workspace. Nothing is hand-listed, so that a new
// package, or a new module, is compiled as soon as it is published.
func (r *repo) builtPackages() ([]string, error) {
	var pkgs []string
	for _, m := range r.Modules {
		if !m.published() {
			continue
		}
		files, err := moduleFiles(m.Dir)
		if err != nil {
			return nil, err
		}
		dirs := map[string]bool{}
		for _, f := range files {
			name := f.Path()
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			dir := path.Dir(name)
			if dir != "." && slices.ContainsFunc(strings.Split(dir, "/"), ignoredDir) {
				continue
			}
			dirs[dir] = true
		}
		for dir := range dirs {
			_, err := build.Default.ImportDir(filepath.Join(m.Dir, filepath.FromSlash(dir)), 0)
			var noGo *build.NoGoError
			if errors.As(err, &noGo) {
				continue // every Go file is left out by its build constraints
			}
			if err != nil {
				return nil, err
			}
			importPath := m.Path
			if dir != "." {
				importPath += "/" + dir
			}
			pkgs = append(pkgs, importPath)
		}
	}
	slices.Sort(pkgs)
	return pkgs, nil
}
