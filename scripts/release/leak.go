package main

import (
	"fmt"
	"go/ast"
	"go/doc"
	"go/token"
	"strconv"
	"strings"
)

// internalName is one place where a package's exported API names a type
// of an internal package.
type internalName struct {
	Decl    string // the exported declaration, e.g. "type Lint" or "func (*Client) Do"
	Name    string // the name as written, e.g. "adapterkit.Lint"
	Package string // the internal package's import path
}

// internalNames lists, in source order, every place where the exported API
// of the package in dir names something of an internal package: in the
// type of an exported constant or variable, the signature of an exported
// function or method, or an exported type (an alias of an internal type,
// an exported field, an embedded type, an interface method). A user cannot
// import an internal package, so such a name is one the user cannot write,
// and its API changes without the package's api.txt showing it. The bodies
// of functions, unexported declarations and fields, and the values of
// variables are not API and are not read. A variable whose type is
// inferred from its value (var V = internalpkg.New()) is not seen: the
// check reads declarations, not types.
func internalNames(dir, importPath string) ([]internalName, error) {
	fset := token.NewFileSet()
	files, err := parseFiles(fset, dir)
	if err != nil || len(files) == 0 {
		return nil, err
	}
	// The local names of internal imports, per file: a name means the
	// package its own file imports under it.
	imports := map[string]map[string]string{}
	for _, f := range files {
		names := map[string]string{}
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil || !isInternal(p) {
				continue
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = p
		}
		imports[fset.Position(f.Pos()).Filename] = names
	}
	d, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return nil, err
	}
	s := &internalScan{fset: fset, imports: imports}
	s.scan(d)
	return s.found, nil
}

// internalScan walks the exported declarations of one package.
type internalScan struct {
	fset    *token.FileSet
	imports map[string]map[string]string // file → local name → internal import path
	found   []internalName
}

// scan reads every exported declaration go/doc keeps, which has already
// dropped unexported names, fields and methods.
func (s *internalScan) scan(d *doc.Package) {
	s.values(d.Consts)
	s.values(d.Vars)
	s.funcs(d.Funcs)
	for _, typ := range d.Types {
		for _, spec := range typ.Decl.Specs {
			ts := spec.(*ast.TypeSpec)
			decl := "type " + ts.Name.Name
			if ts.TypeParams != nil {
				s.inspect(decl, ts.TypeParams)
			}
			s.inspect(decl, ts.Type)
		}
		s.values(typ.Consts)
		s.values(typ.Vars)
		s.funcs(typ.Funcs)
		s.funcs(typ.Methods)
	}
}

// values reads the declared types of exported constants and variables.
func (s *internalScan) values(vs []*doc.Value) {
	for _, v := range vs {
		for _, spec := range v.Decl.Specs {
			vs := spec.(*ast.ValueSpec)
			if vs.Type == nil {
				continue
			}
			for _, n := range vs.Names {
				if n.IsExported() {
					s.inspect(v.Decl.Tok.String()+" "+n.Name, vs.Type)
					break
				}
			}
		}
	}
}

// funcs reads the receivers and signatures of functions and methods.
func (s *internalScan) funcs(fs []*doc.Func) {
	for _, f := range fs {
		decl := "func " + f.Name
		if f.Decl.Recv != nil {
			decl = "func (" + f.Recv + ") " + f.Name
			s.inspect(decl, f.Decl.Recv)
		}
		s.inspect(decl, f.Decl.Type)
	}
}

// inspect records every selector in node whose left side is the local
// name of an internal import of node's file.
func (s *internalScan) inspect(decl string, node ast.Node) {
	ast.Inspect(node, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		if p, ok := s.imports[s.fset.Position(sel.Pos()).Filename][x.Name]; ok {
			s.found = append(s.found, internalName{Decl: decl, Name: x.Name + "." + sel.Sel.Name, Package: p})
		}
		return false
	})
}

// checkAPINamesNoInternal refuses a published package whose exported API
// names a type of an internal package (see internalNames).
func (r *repo) checkAPINamesNoInternal() []error {
	pkgs, err := r.packages()
	if err != nil {
		return []error{err}
	}
	var errs []error
	for _, p := range pkgs {
		names, err := internalNames(p.Dir, p.ImportPath)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.ImportPath, err))
		}
		for _, n := range names {
			errs = append(errs, fmt.Errorf("%s: the exported %s names %s, of the internal package %s, which a user cannot import: "+
				"export a type of the package's own, or keep the declaration unexported", p.ImportPath, n.Decl, n.Name, n.Package))
		}
	}
	return errs
}
