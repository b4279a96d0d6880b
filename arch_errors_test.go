package tool_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The rules of one error mechanism, over every module of the repository.
// The "tool: " prefix is written by internal/errprefix only: an error type
// gives its text without the prefix (its body) and has errprefix add the
// prefix once, so that an error quoting another prints it once. Nothing
// cuts an error's text after it was written: errprefix.Detail gives what
// an error says after its sentinel. A copy of errprefix in another module
// (any directory .../internal/errprefix) is the mechanism too.

// prefixRules lists the findings of the rules in one parsed file:
//
//   - a string literal that begins with "tool: ";
//   - errprefix.Prefix;
//   - strings.TrimPrefix, strings.CutPrefix or strings.TrimLeft whose first
//     argument is the text of an error (a call of an Error method or of
//     errprefix.Body), or whose second holds "tool: " or errprefix.Prefix.
func prefixRules(fset *token.FileSet, file *ast.File) []string {
	imports := map[string]string{} // local name → import path
	for _, spec := range file.Imports {
		p, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if spec.Name != nil {
			name = spec.Name.Name
		}
		imports[name] = p
	}
	// ref reports whether e is pkg.name for an import of a path ending in
	// pkgPath.
	ref := func(e ast.Expr, pkgPath, name string) bool {
		sel, ok := ast.Unparen(e).(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != name {
			return false
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return false
		}
		p, ok := imports[id.Name]
		return ok && (p == pkgPath || strings.HasSuffix(p, "/"+pkgPath))
	}
	isPrefixLit := func(e ast.Expr) bool {
		lit, ok := ast.Unparen(e).(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return false
		}
		s, err := strconv.Unquote(lit.Value)
		return err == nil && strings.HasPrefix(s, "tool: ")
	}
	errorText := func(e ast.Expr) bool {
		call, ok := ast.Unparen(e).(*ast.CallExpr)
		if !ok {
			return false
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Error" && len(call.Args) == 0 {
			return true
		}
		return ref(call.Fun, "internal/errprefix", "Body")
	}
	holdsPrefix := func(e ast.Expr) bool {
		found := false
		ast.Inspect(e, func(n ast.Node) bool {
			if x, ok := n.(ast.Expr); ok && (isPrefixLit(x) || ref(x, "internal/errprefix", "Prefix")) {
				found = true
			}
			return !found
		})
		return found
	}
	var findings []string
	report := func(n ast.Node, format string, args ...any) {
		findings = append(findings, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	ast.Inspect(file, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.BasicLit:
			if isPrefixLit(x) {
				report(x, "the literal %s writes the prefix by hand", x.Value)
			}
		case *ast.SelectorExpr:
			if ref(x, "internal/errprefix", "Prefix") {
				report(x, "errprefix.Prefix used by hand")
			}
		case *ast.CallExpr:
			cut := ref(x.Fun, "strings", "TrimPrefix") || ref(x.Fun, "strings", "CutPrefix") || ref(x.Fun, "strings", "TrimLeft")
			if cut && len(x.Args) == 2 && (errorText(x.Args[0]) || holdsPrefix(x.Args[1])) {
				report(x, "%s cuts the text of an error", x.Fun.(*ast.SelectorExpr).Sel.Name)
			}
		}
		return true
	})
	return findings
}

// repoRoot is the directory of go.work above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, dir, parent, "no go.work above the test's directory")
		dir = parent
	}
}

// isMechanism reports whether rel, a slash-separated directory relative
// to the repository root, is internal/errprefix or a copy of it.
func isMechanism(rel string) bool {
	return rel == "internal/errprefix" || strings.HasSuffix(rel, "/internal/errprefix")
}

// TestArchPrefixWrittenOnce applies prefixRules to every non-test Go file
// of every module of the repository, outside the mechanism.
func TestArchPrefixWrittenOnce(t *testing.T) {
	root := repoRoot(t)
	fset := token.NewFileSet()
	var checked int
	modules, seen := map[string]bool{}, map[string]bool{}
	err := walkSources(root, isMechanism, func(rel string, src []byte) error {
		if dir := pathDir(rel); !seen[dir] {
			seen[dir] = true
			if _, err := os.Stat(filepath.Join(root, dir, "go.mod")); err == nil {
				modules[dir] = true
			}
		}
		file, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		for _, finding := range prefixRules(fset, file) {
			t.Error(finding)
		}
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, checked, 150, "the walk found too few files")
	for _, m := range []string{".", "adapters/mcp", "adapters/temporal", "desk", "stores/sqlstore", "scripts/release"} {
		require.True(t, modules[m], "the walk reaches the module %s", m)
	}
}

// TestArchPrefixRulesFind: each rule finds what it is for, and leaves
// alone what is not its business.
func TestArchPrefixRulesFind(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want int
	}{
		{"literal in an Error method", `func (e *E) Error() string { return "tool: failure" }`, 1},
		{"literal in a format", `func (e *E) Error() string { return fmt.Sprintf("tool: %s", e.s) }`, 1},
		{"literal anywhere", `var m = map[string]string{"x": "tool: x"}`, 1},
		{"Prefix by hand", `func (e *E) Error() string { return errprefix.Prefix + e.s }`, 1},
		{"Prefix under another name", `func f() string { return ep.Prefix }`, 1},
		{"TrimPrefix of Error()", `func f(err error) string { return strings.TrimPrefix(err.Error(), "x: ") }`, 1},
		{"TrimPrefix of a body", `func f(err error) string { return strings.TrimPrefix(errprefix.Body(err), errprefix.Body(errX)+": ") }`, 1},
		{"CutPrefix of the prefix", `func f(s string) (string, bool) { return strings.CutPrefix(s, "tool: ") }`, 2},
		{"TrimLeft of Error()", `func f(err error) string { return strings.TrimLeft(err.Error(), "t") }`, 1},
		{"CutPrefix by Prefix", `func f(s string) (string, bool) { return strings.CutPrefix(s, errprefix.Prefix) }`, 2},
		{"a plain cut", `func f(s string) string { return strings.TrimPrefix(s, "#/$defs/") }`, 0},
		{"a literal that only holds the word", `var s = "a tool: x"`, 0},
		{"the mechanism's own helpers", `func (e *E) Error() string { return errprefix.Message(e) }`, 0},
		{"another package's Prefix", `func f() string { return other.Prefix }`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "package p\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n\n\t\"example.com/other\"\n\t\"github.com/agentcontract/tool/internal/errprefix\"\n\tep \"github.com/agentcontract/tool/adapters/internal/errprefix\"\n)\n\nvar _, _, _, _ = fmt.Sprint, strings.TrimSpace, other.X, ep.X\n\n" + tt.src + "\n"
			fset := token.NewFileSet()
			file, err := parser.ParseFile(fset, "p.go", src, parser.SkipObjectResolution)
			require.NoError(t, err)
			require.Len(t, prefixRules(fset, file), tt.want, "%v", prefixRules(fset, file))
		})
	}
}

// exportedSentinels lists the exported variables named Err… declared in
// the non-test files of dir.
func exportedSentinels(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, entry := range entries {
		if entry.IsDir() || !strings.HasSuffix(entry.Name(), ".go") || strings.HasSuffix(entry.Name(), "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, filepath.Join(dir, entry.Name()), nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range file.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.VAR {
				continue
			}
			for _, spec := range gen.Specs {
				for _, id := range spec.(*ast.ValueSpec).Names {
					if id.IsExported() && strings.HasPrefix(id.Name, "Err") {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// TestArchEverySentinelIsGolden: a new sentinel of tool or dispatch gets
// its text pinned in the golden file (errors_golden_test.go).
func TestArchEverySentinelIsGolden(t *testing.T) {
	for _, tt := range []struct {
		dir    string
		listed map[string]error
	}{
		{".", rootSentinels},
		{"dispatch", dispatchSentinels},
	} {
		var listed []string
		for name := range tt.listed {
			listed = append(listed, name)
		}
		slices.Sort(listed)
		found := exportedSentinels(t, tt.dir)
		require.NotEmpty(t, found)
		require.Equal(t, found, listed, "the sentinels of %q and the golden list", tt.dir)
	}
}
