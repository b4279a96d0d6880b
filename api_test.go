package tool_test

import (
	"bytes"
	"flag"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite api.txt from the package's exported API")

// TestAPI pins the exported API: api.txt lists every exported symbol with
// its signature, and the test fails when the API changes without the file
// being regenerated with `go test -run TestAPI -update`.
func TestAPI(t *testing.T) {
	got := exportedAPI(t)
	if *update {
		require.NoError(t, os.WriteFile("api.txt", []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile("api.txt")
	require.NoError(t, err, "api.txt is missing: run go test -run TestAPI -update")
	require.Equal(t, string(want), got, "the exported API changed: review it, then run go test -run TestAPI -update")
}

// exportedAPI renders one line per exported declaration of package tool.
func exportedAPI(t *testing.T) string {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	require.NoError(t, err)
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, "github.com/agentcontract/tool")
	require.NoError(t, err)

	var lines []string
	render := func(node any) string {
		var b bytes.Buffer
		require.NoError(t, (&printer.Config{Mode: printer.RawFormat}).Fprint(&b, fset, node))
		return strings.Join(strings.Fields(b.String()), " ")
	}
	values := func(vs []*doc.Value, kind string) {
		for _, v := range vs {
			for _, spec := range v.Decl.Specs {
				vs := spec.(*ast.ValueSpec)
				for _, n := range vs.Names {
					if n.IsExported() {
						typ := ""
						if vs.Type != nil {
							typ = " " + render(vs.Type)
						}
						lines = append(lines, kind+" "+n.Name+typ)
					}
				}
			}
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			decl := *f.Decl
			decl.Body, decl.Doc = nil, nil
			if decl.Recv != nil {
				// Receiver names are not API.
				recv := *decl.Recv.List[0]
				recv.Names = nil
				decl.Recv = &ast.FieldList{List: []*ast.Field{&recv}}
			}
			lines = append(lines, render(&decl))
		}
	}
	values(d.Consts, "const")
	values(d.Vars, "var")
	funcs(d.Funcs)
	for _, typ := range d.Types {
		for _, spec := range typ.Decl.Specs {
			ts := spec.(*ast.TypeSpec)
			ts.Doc, ts.Comment = nil, nil
			if st, ok := ts.Type.(*ast.StructType); ok {
				// Only exported fields are API.
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
			}
			lines = append(lines, "type "+render(ts))
		}
		values(typ.Consts, "const")
		values(typ.Vars, "var")
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n") + "\n"
}
