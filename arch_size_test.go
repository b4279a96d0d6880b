package tool_test

// This file holds the architecture test of size: no function a reader
// cannot hold, no file past the limit, in every module of the repository.

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The limits of size for non-test Go files: a function or method, from
// its func keyword to its closing brace, and a file, in lines.
const (
	maxFunctionLines = 80
	maxFileLines     = 700
)

// largeFiles are the non-test files allowed past maxFileLines (or known to
// be near it), by slash-separated path from the repository root, each
// with its line count when the limit was set: a ceiling, so that none of
// them grows.
var largeFiles = map[string]int{
	"schemafor.go":             552,
	"internal/engine/check.go": 964,
	"internal/regex/bound.go":  871,
}

// TestArchSize walks every non-test Go file of the repository, in every
// module of go.work (testdata and node_modules left out), and fails on a
// function over maxFunctionLines and on a file over maxFileLines (but for
// the files of largeFiles, held at their length).
func TestArchSize(t *testing.T) {
	root := repoRoot(t)
	sizes := measureTree(t, root)
	var problems []string
	for _, f := range sizes.files {
		limit, known := largeFiles[f.path]
		if !known {
			limit = maxFileLines
		}
		if f.lines > limit {
			problems = append(problems, fmt.Sprintf("%s: %d lines, over the limit of %d: split it by concern", f.path, f.lines, limit))
		}
	}
	for _, fn := range sizes.functions {
		if fn.lines > maxFunctionLines {
			problems = append(problems, fmt.Sprintf("%s:%d: %s is %d lines, over the limit of %d: split it by concern", fn.path, fn.line, fn.display, fn.lines, maxFunctionLines))
		}
	}
	for path := range largeFiles {
		if !slices.ContainsFunc(sizes.files, func(f fileSize) bool { return f.path == path }) {
			problems = append(problems, fmt.Sprintf("%s: listed in largeFiles but not found: remove it from the list", path))
		}
	}
	slices.Sort(problems)
	for _, p := range problems {
		t.Error(p)
	}
	for _, dir := range workspaceModules(t, root) {
		require.Positive(t, sizes.perModule[dir], "the walk found no Go file of the module in %s", dir)
	}
	require.Greater(t, len(sizes.files), 150, "the walk found too few files")
	longestFile := slices.MaxFunc(sizes.files, func(a, b fileSize) int { return a.lines - b.lines })
	longestFunction := slices.MaxFunc(sizes.functions, func(a, b functionSize) int { return a.lines - b.lines })
	t.Logf("%d files, %d functions; the longest file: %s, %d lines; the longest function: %s in %s, %d lines",
		len(sizes.files), len(sizes.functions), longestFile.path, longestFile.lines, longestFunction.display, longestFunction.path, longestFunction.lines)
}

// fileSize is the length of one non-test Go file.
type fileSize struct {
	path  string
	lines int
}

// functionSize is the length of one function or method, from its func
// keyword to its closing brace: name is its name, display adds the
// receiver, line is where it begins.
type functionSize struct {
	path, name, display string
	line, lines         int
}

// treeSizes is what measureTree finds: every file and function, and how
// many files each module directory (slash-separated, "." for the root)
// holds, its nested modules' files included.
type treeSizes struct {
	files     []fileSize
	functions []functionSize
	perModule map[string]int
}

// measureTree measures every non-test Go file of the repository under
// root (see walkSources).
func measureTree(t *testing.T, root string) treeSizes {
	t.Helper()
	sizes := treeSizes{perModule: map[string]int{}}
	fset := token.NewFileSet()
	err := walkSources(root, nil, func(rel string, src []byte) error {
		sizes.files = append(sizes.files, fileSize{rel, lineCount(src)})
		for dir := rel; dir != "."; {
			dir = pathDir(dir)
			sizes.perModule[dir]++
		}
		functions, err := measureFunctions(fset, rel, src)
		sizes.functions = append(sizes.functions, functions...)
		return err
	})
	require.NoError(t, err)
	return sizes
}

// walkSources calls visit with every non-test Go file under root, by its
// slash-separated path relative to root, skipping the directories that
// hold no code of the repository (testdata, node_modules, vendor, and
// those whose names start with a dot or an underscore, as the go command
// does) and those skip reports, given their relative paths.
func walkSources(root string, skip func(rel string) bool, visit func(rel string, src []byte) error) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		name := d.Name()
		if d.IsDir() {
			ignored := name == "testdata" || name == "node_modules" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
			if rel != "." && (ignored || skip != nil && skip(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return visit(rel, src)
	})
}

// measureFunctions lists the functions and methods declared in src, the
// file at path.
func measureFunctions(fset *token.FileSet, path string, src []byte) ([]functionSize, error) {
	file, err := parser.ParseFile(fset, path, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var out []functionSize
	for _, decl := range file.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start, end := fset.Position(fn.Pos()).Line, fset.Position(fn.End()).Line
		display := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) == 1 {
			display = "(" + receiverType(fn.Recv.List[0].Type) + ")." + display
		}
		out = append(out, functionSize{path: path, name: fn.Name.Name, display: display, line: start, lines: end - start + 1})
	}
	return out, nil
}

// receiverType writes a receiver's type as the source has it, type parameters
// left out: T or *T.
func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return "*" + receiverType(x.X)
	case *ast.Ident:
		return x.Name
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	}
	return "?"
}

// lineCount counts the lines of src as wc -l does, a last line without a
// newline included.
func lineCount(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// pathDir is the directory of a slash-separated relative path, "." at the
// top.
func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}

// workspaceModules lists the module directories go.work uses, slash
// separated and relative to root ("." for the root).
func workspaceModules(t *testing.T, root string) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "go.work"))
	require.NoError(t, err)
	var dirs []string
	inUse := false
	for line := range strings.Lines(string(src)) {
		line = strings.TrimSpace(line)
		switch {
		case line == "use (":
			inUse = true
		case inUse && line == ")":
			inUse = false
		case inUse && line != "" && !strings.HasPrefix(line, "//"):
			dirs = append(dirs, strings.TrimPrefix(filepath.ToSlash(filepath.Clean(line)), "./"))
		case strings.HasPrefix(line, "use ") && !strings.HasSuffix(line, "("):
			dirs = append(dirs, filepath.ToSlash(filepath.Clean(strings.TrimSpace(strings.TrimPrefix(line, "use ")))))
		}
	}
	require.NotEmpty(t, dirs, "go.work uses no module")
	return dirs
}
