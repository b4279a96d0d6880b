package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Modules that upgrade independently (CONTRIBUTING.md, "Modules that
// upgrade independently"): no module of the repository imports an
// internal package of another module, except the packages versions.yaml
// names under shared-internal, whose API the api.txt beside each pins.
// Go's own rule does not hold this line: it lets any package under a
// directory import that directory's internal packages, whichever module
// holds them.

// isInternal reports whether importPath has an element "internal", which
// makes it an internal package for the go command.
func isInternal(importPath string) bool {
	return slices.Contains(strings.Split(importPath, "/"), "internal")
}

// moduleOf returns the module of the repository that holds the package
// importPath: the one with the longest module path that is importPath or
// a parent of it.
func (r *repo) moduleOf(importPath string) (modEntry, bool) {
	var best modEntry
	found := false
	for _, m := range r.Modules {
		if (importPath == m.Path || strings.HasPrefix(importPath, m.Path+"/")) && len(m.Path) >= len(best.Path) {
			best, found = m, true
		}
	}
	return best, found
}

// packageDir is the directory of the package importPath of module m.
func packageDir(m modEntry, importPath string) string {
	rel := strings.TrimPrefix(strings.TrimPrefix(importPath, m.Path), "/")
	return filepath.Join(m.Dir, filepath.FromSlash(rel))
}

// crossImport is one import, by a Go file of one module of the repository,
// of an internal package of another.
type crossImport struct {
	Module  string // the importing module's path
	File    string // the importing file, relative to the repository root, slash-separated
	Package string // the imported package's import path
	Owner   string // the module path of the module that holds it
}

// crossInternalImports lists every import of an internal package of
// another module of the repository, in every Go file of every module
// (published or not): test files too, and files of every build
// constraint, since a user's go test or another platform's build compiles
// them. Directories the go command ignores (testdata, hidden and "_"
// ones) are left out.
func (r *repo) crossInternalImports() ([]crossImport, error) {
	var found []crossImport
	fset := token.NewFileSet()
	for _, m := range r.Modules {
		files, err := moduleFiles(m.Dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			name := f.Path()
			dir := path.Dir(name)
			if !strings.HasSuffix(name, ".go") || dir != "." && slices.ContainsFunc(strings.Split(dir, "/"), ignoredDir) {
				continue
			}
			parsed, err := parser.ParseFile(fset, filepath.Join(m.Dir, filepath.FromSlash(name)), nil, parser.ImportsOnly)
			if err != nil {
				return nil, err
			}
			for _, imp := range parsed.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil || !isInternal(p) {
					continue
				}
				if owner, ok := r.moduleOf(p); ok && owner.Path != m.Path {
					found = append(found, crossImport{Module: m.Path, File: path.Join(filepath.ToSlash(m.Rel), name), Package: p, Owner: owner.Path})
				}
			}
		}
	}
	return found, nil
}

// sharedPackages returns the packages versions.yaml names under
// shared-internal, each with its directory, for the API test to pin.
func (r *repo) sharedPackages() ([]publishedPackage, error) {
	var pkgs []publishedPackage
	for _, p := range r.Shared {
		m, ok := r.moduleOf(p)
		if !ok {
			return nil, fmt.Errorf("%s: shared-internal names %s, which is in no module of the repository", versionsFile, p)
		}
		pkgs = append(pkgs, publishedPackage{ImportPath: p, Dir: packageDir(m, p)})
	}
	return pkgs, nil
}

// checkInternalImports refuses every import of another module's internal
// package that is not a named exception, and checks the exceptions
// themselves: each is an internal package of a module of the repository,
// holds Go code and an api.txt, and is imported by another module (an
// exception nothing needs is one to remove).
func (r *repo) checkInternalImports() []error {
	errs := r.checkSharedList()
	imports, err := r.crossInternalImports()
	if err != nil {
		return append(errs, err)
	}
	used := map[string]bool{}
	var refused []crossImport
	files := map[[2]string][]string{} // importing module's directory, package → files
	for _, imp := range imports {
		if slices.Contains(r.Shared, imp.Package) {
			used[imp.Package] = true
			continue
		}
		key := [2]string{imp.Module, imp.Package}
		if files[key] == nil {
			refused = append(refused, imp)
		}
		files[key] = append(files[key], imp.File)
	}
	for _, imp := range refused {
		in := files[[2]string{imp.Module, imp.Package}]
		where := in[0]
		if len(in) > 1 {
			where += fmt.Sprintf(" and %d other files", len(in)-1)
		}
		errs = append(errs, fmt.Errorf("module %s imports %s (in %s), an internal package of the module %s: "+
			"a module may import another module's internal package only when %s names it under shared-internal, "+
			"with an api.txt beside it that pins its API (CONTRIBUTING.md, \"Modules that upgrade independently\")",
			imp.Module, imp.Package, where, imp.Owner, versionsFile))
	}
	for _, p := range r.Shared {
		if !used[p] {
			errs = append(errs, fmt.Errorf("%s: shared-internal names %s, which no other module imports: remove it from the list", versionsFile, p))
		}
	}
	return errs
}

// checkSharedList checks each package named under shared-internal.
func (r *repo) checkSharedList() []error {
	var errs []error
	for _, p := range r.Shared {
		if !isInternal(p) {
			errs = append(errs, fmt.Errorf("%s: shared-internal names %s, which is not an internal package: "+
				"a package other modules import without an internal element is public API, pinned as every published package is", versionsFile, p))
			continue
		}
		m, ok := r.moduleOf(p)
		if !ok {
			errs = append(errs, fmt.Errorf("%s: shared-internal names %s, which is in no module of the repository", versionsFile, p))
			continue
		}
		dir := packageDir(m, p)
		if d, err := parseDoc(token.NewFileSet(), dir, p); err != nil {
			errs = append(errs, fmt.Errorf("%s: shared-internal names %s: %w", versionsFile, p, err))
			continue
		} else if d == nil {
			errs = append(errs, fmt.Errorf("%s: shared-internal names %s, but %s holds no Go package", versionsFile, p, dir))
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, apiFile)); err != nil {
			errs = append(errs, fmt.Errorf("%s: shared-internal names %s, whose API no %s pins: run go test ./scripts/release -run TestAPI -update", versionsFile, p, apiFile))
		}
	}
	return errs
}
