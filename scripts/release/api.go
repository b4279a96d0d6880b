package main

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// apiFile is the name of the file, in each published package's directory,
// that lists the package's exported API.
const apiFile = "api.txt"

// publishedPackage is one package of a published module that users import.
type publishedPackage struct {
	ImportPath string
	Dir        string
}

// packages lists the importable packages of the published modules: every
// directory of a published module that holds non-test Go files, other than
// commands, internal packages (and modules), testdata and directories of other modules.
func (r *repo) packages() ([]publishedPackage, error) {
	var pkgs []publishedPackage
	for _, m := range r.Modules {
		// A module whose path has an internal element (adapters/internal)
		// has no package that users import.
		if !m.published() || slices.Contains(strings.Split(m.Path, "/"), "internal") {
			continue
		}
		err := filepath.WalkDir(m.Dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return err
			}
			name := d.Name()
			if path != m.Dir {
				if ignoredDir(name) || name == "internal" {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir
				}
			}
			rel, _ := filepath.Rel(m.Dir, path)
			importPath := m.Path
			if rel != "." {
				importPath += "/" + filepath.ToSlash(rel)
			}
			f, err := parseDoc(token.NewFileSet(), path, importPath)
			if err != nil || f == nil || f.Name == "main" {
				return err
			}
			pkgs = append(pkgs, publishedPackage{ImportPath: importPath, Dir: path})
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return pkgs, nil
}

// parseDoc returns the documentation of the package in dir, or nil when
// dir holds no non-test Go file.
func parseDoc(fset *token.FileSet, dir, importPath string) (*doc.Package, error) {
	files, err := parseFiles(fset, dir)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	return doc.NewFromFiles(fset, files, importPath)
}

// parseFiles parses the non-test Go files of the package in dir, whatever
// their build constraints.
func parseFiles(fset *token.FileSet, dir string) ([]*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// exportedAPI renders one line per exported declaration of the package in
// dir, sorted: constants, variables and functions with their types and
// signatures, types with their exported fields, and methods without their
// receivers' names. Documentation is not API and is left out.
func exportedAPI(dir, importPath string) (string, error) {
	fset := token.NewFileSet()
	d, err := parseDoc(fset, dir, importPath)
	if err != nil || d == nil {
		return "", err
	}
	l := &apiLister{fset: fset}
	l.values(d.Consts, "const")
	l.values(d.Vars, "var")
	l.funcs(d.Funcs)
	for _, typ := range d.Types {
		for _, spec := range typ.Decl.Specs {
			ts := spec.(*ast.TypeSpec)
			l.lines = append(l.lines, "type "+l.render(typeWithoutDocs(ts)))
			if ts.Assign.IsValid() && ts.Name.IsExported() {
				// An alias of a type of an internal package of this
				// repository: its API is that type's, which users
				// reach only through the alias, so it is listed here.
				// (The release check refuses such an alias in a
				// published package; this keeps its api.txt true.)
				target, err := internalTarget(dir, importPath, d.Imports, ts.Type)
				if err != nil {
					return "", err
				}
				l.lines = append(l.lines, target...)
			}
		}
		l.values(typ.Consts, "const")
		l.values(typ.Vars, "var")
		l.funcs(typ.Funcs)
		l.funcs(typ.Methods)
	}
	sort.Strings(l.lines)
	return strings.Join(l.lines, "\n") + "\n", l.err
}

// apiLister collects the lines of a package's API listing.
type apiLister struct {
	fset  *token.FileSet
	lines []string
	err   error // the first error of rendering a node
}

// render prints node on one line, its runs of white space made one space.
func (l *apiLister) render(node any) string {
	var b bytes.Buffer
	if err := (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, l.fset, node); err != nil && l.err == nil {
		l.err = err
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// values lists each exported name of vs, of the given kind (const or var),
// with its declared type if it has one.
func (l *apiLister) values(vs []*doc.Value, kind string) {
	for _, v := range vs {
		for _, spec := range v.Decl.Specs {
			vs := spec.(*ast.ValueSpec)
			for _, n := range vs.Names {
				if !n.IsExported() {
					continue
				}
				typ := ""
				if vs.Type != nil {
					typ = " " + l.render(vs.Type)
				}
				l.lines = append(l.lines, kind+" "+n.Name+typ)
			}
		}
	}
}

// funcs lists each function or method of fs by its signature, without its
// body, its documentation or its receiver's name, which are not API.
func (l *apiLister) funcs(fs []*doc.Func) {
	for _, f := range fs {
		decl := *f.Decl
		decl.Body, decl.Doc = nil, nil
		if decl.Recv != nil {
			recv := *decl.Recv.List[0]
			recv.Names = nil
			decl.Recv = &ast.FieldList{List: []*ast.Field{&recv}}
		}
		l.lines = append(l.lines, l.render(&decl))
	}
}

// typeWithoutDocs strips ts, in place, of its documentation and, when it
// is a struct, of its unexported fields: neither is API.
func typeWithoutDocs(ts *ast.TypeSpec) *ast.TypeSpec {
	ts.Doc, ts.Comment = nil, nil
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return ts
	}
	kept := st.Fields.List[:0:0]
	for _, f := range st.Fields.List {
		exported := len(f.Names) == 0
		for _, n := range f.Names {
			exported = exported || n.IsExported()
		}
		if exported {
			f.Doc, f.Comment = nil, nil
			kept = append(kept, f)
		}
	}
	st.Fields.List = kept
	return ts
}

// internalTarget lists the API of the type an alias names, when it is a type
// of an internal package of the same repository (pkg.Name, pkg imported by
// a path with an internal element under the path of the repository's root
// module): its declaration and its methods, each written with pkg.Name.
// Otherwise it lists nothing. dir is the directory of the package whose
// import path is importPath; imports are that package's imports.
func internalTarget(dir, importPath string, imports []string, typ ast.Expr) ([]string, error) {
	sel, ok := typ.(*ast.SelectorExpr)
	if !ok {
		return nil, nil
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return nil, nil
	}
	var path string
	for _, imp := range imports {
		if strings.HasSuffix(imp, "/"+pkg.Name) && slices.Contains(strings.Split(imp, "/"), "internal") {
			path = imp
		}
	}
	// The root of the repository: dir with the part of importPath below
	// the root module's path removed.
	rel, ok := strings.CutPrefix(importPath, rootModule)
	targetRel, inRepo := strings.CutPrefix(path, rootModule+"/")
	if path == "" || !ok || !inRepo {
		return nil, nil
	}
	root := filepath.Clean(filepath.Join(dir, strings.Repeat("../", strings.Count(rel, "/"))))
	all, err := exportedAPI(filepath.Join(root, filepath.FromSlash(targetRel)), path)
	if err != nil {
		return nil, err
	}
	name := sel.Sel.Name
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(all, "\n"), "\n") {
		for _, prefix := range []string{"type " + name + " ", "func (" + name + ") ", "func (*" + name + ") "} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				out = append(out, strings.Replace(prefix, name, pkg.Name+"."+name, 1)+rest)
			}
		}
	}
	return out, nil
}
