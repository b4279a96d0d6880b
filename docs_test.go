package tool_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the Go snippets of README.md and docs/ from their compiled sources")

// A Go snippet of the README or a guide is the body of a function of a
// test file, so that it is compiled (and an Example is run) by the tests
// of its module. The line before its ```go fence names it:
//
//	<!-- go: dispatch/example_test.go Example -->
//
// The snippet is the function's body, one tab less indented, with one
// rewrite so that a reader is not shown test plumbing: a statement
//
//	if err != nil {
//		panic(err)
//	}
//
// (or log.Fatal(err)) reads "// handle err". TestDocSnippets fails when a fence and its
// source differ, and when a ```go fence names no source; go test -run
// TestDocSnippets -update-docs rewrites the fences from the sources.
var snippetMark = regexp.MustCompile(`^<!-- go: (\S+\.go) (\w+) -->$`)

// docFiles are the documents whose snippets must compile: the README and
// the guides.
func docFiles(t *testing.T) []string {
	files := []string{"README.md"}
	guides, err := filepath.Glob(filepath.Join("docs", "*.md"))
	require.NoError(t, err)
	return append(files, guides...)
}

func TestDocSnippets(t *testing.T) {
	for _, name := range docFiles(t) {
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(name)
			require.NoError(t, err)
			rewritten, problems := checkSnippets(t, name, string(text))
			if *updateDocs {
				require.NoError(t, os.WriteFile(name, []byte(rewritten), 0o644))
				return
			}
			for _, p := range problems {
				t.Error(p)
			}
		})
	}
}

// checkSnippets returns text with every marked snippet taken from its
// source, and a problem for each snippet that differs or names none.
func checkSnippets(t *testing.T, name, text string) (string, []string) {
	lines := strings.SplitAfter(text, "\n")
	var out strings.Builder
	var problems []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		out.WriteString(line)
		if strings.TrimSpace(line) != "```go" {
			continue
		}
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		fence := strings.Join(lines[i+1:end], "")
		var mark []string
		if i > 0 {
			mark = snippetMark.FindStringSubmatch(strings.TrimSpace(lines[i-1]))
		}
		if mark == nil {
			problems = append(problems, fmt.Sprintf("%s:%d: a Go snippet without its source: put <!-- go: FILE FUNC --> on the line before the fence", name, i+1))
			out.WriteString(fence)
			i = end - 1
			continue
		}
		want, err := snippet(mark[1], mark[2])
		switch {
		case os.IsNotExist(err):
			// Another module's file, absent from a module cache.
			t.Logf("%s:%d: %s is not here; its snippet is not checked", name, i+1, mark[1])
			want = fence
		case err != nil:
			problems = append(problems, fmt.Sprintf("%s:%d: %v", name, i+1, err))
			want = fence
		case want != fence:
			problems = append(problems, fmt.Sprintf("%s:%d: the snippet differs from the body of %s in %s (go test -run TestDocSnippets -update-docs rewrites it):\n--- in %s\n%s--- in %s\n%s",
				name, i+1, mark[2], mark[1], name, fence, mark[1], want))
		}
		out.WriteString(want)
		i = end - 1
	}
	return out.String(), problems
}

// handleErr is the rewrite of a snippet: test plumbing a reader is not shown.
var handleErr = regexp.MustCompile(`(?m)^(\t*)if err != nil \{\n\t*(?:panic|log\.Fatal)\(err\)\n\t*\}\n`)

// snippet returns the body of the function fn of the Go file path, one
// tab less indented, with the handleErr rewrite.
func snippet(path, fn string) (string, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(path, "_test.go") {
		return "", fmt.Errorf("%s: a snippet's source is a test file, compiled and run by its module's tests", path)
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Recv != nil || fd.Name.Name != fn || fd.Body == nil {
			continue
		}
		open := fset.Position(fd.Body.Lbrace).Offset
		closing := fset.Position(fd.Body.Rbrace).Offset
		body := src[open+1 : closing]
		body = bytes.TrimPrefix(body, []byte("\n"))
		var b strings.Builder
		for _, l := range strings.SplitAfter(string(body), "\n") {
			b.WriteString(strings.TrimPrefix(l, "\t"))
		}
		return handleErr.ReplaceAllString(b.String(), "$1// handle err\n"), nil
	}
	return "", fmt.Errorf("%s has no function %s", path, fn)
}

// TestDocLinks fails on a relative link of the README or a guide to a file
// that is not in the repository. Outside the repository (in a module
// cache, which holds the root module alone) links into the other modules
// are not checked.
func TestDocLinks(t *testing.T) {
	_, err := os.Stat(filepath.Join("adapters", "openai", "go.mod"))
	inRepo := err == nil
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, name := range docFiles(t) {
		text, err := os.ReadFile(name)
		require.NoError(t, err)
		for _, m := range link.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(name), target)); err != nil && inRepo {
				t.Errorf("%s links to %s: %v", name, target, err)
			}
		}
	}
}

// TestTestCommand fails unless the test command the README gives is the
// one CI runs (.ci/run, which a module cache does not hold).
func TestTestCommand(t *testing.T) {
	const command = "go test -race github.com/agentcontract/tool/..."
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	require.Contains(t, string(readme), "\n"+command+" ", "README.md's two commands")
	ci, err := os.ReadFile(filepath.Join(".ci", "run"))
	if os.IsNotExist(err) {
		t.Skip(".ci/run is not here (a module cache); the README's command is not compared with CI's")
	}
	require.NoError(t, err)
	require.Contains(t, string(ci), "\n"+command+"\n", ".ci/run runs the README's test command")
}
