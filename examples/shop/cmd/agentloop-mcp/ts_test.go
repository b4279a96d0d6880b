package main

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/tsclient/expected.json")

// The official TypeScript SDK client, a second implementation of MCP,
// starts the example server over stdio, lists its tools and calls them,
// answering its elicitations; the test compares what it saw with the
// golden file testdata/tsclient/expected.json.
func TestTypeScriptClient(t *testing.T) {
	dir := filepath.Join("testdata", "tsclient")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("the TypeScript SDK is not installed: run `npm ci --prefix examples/shop/cmd/agentloop-mcp/testdata/tsclient` (.ci/run does)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not on PATH; it runs the TypeScript SDK client")
	}
	bin := exampleServer(t)
	cmd := exec.CommandContext(t.Context(), node, "client.mjs", bin)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderrOf(err))

	golden := filepath.Join(dir, "expected.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, out, 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(out))
}

func stderrOf(err error) string {
	if exit, ok := err.(*exec.ExitError); ok {
		return string(exit.Stderr)
	}
	return ""
}
