package conformance_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/mcp/internal/conformance"
	"github.com/agentcontract/tool/adapters/mcp/internal/interop"
)

// The official MCP conformance suite runs every server scenario it has
// against the conformance server, with testdata/interop/baseline.yml as its
// list of expected failures: a scenario outside the list that fails, and
// one on the list that passes, both fail the test.
func TestOfficialSuite(t *testing.T) {
	pkgs := interop.Require(t)
	handler, err := conformance.Handler(nil)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/mcp", handler)
	srv := httptest.NewServer(mux) // 127.0.0.1: the DNS rebinding scenario needs a loopback server
	t.Cleanup(srv.Close)

	out := t.TempDir()
	baseline := filepath.Join(pkgs.Dir, "baseline.yml")
	cmd := exec.CommandContext(t.Context(), pkgs.Node, pkgs.Path("@modelcontextprotocol", "conformance", "dist", "index.js"),
		"server", "--url", srv.URL+"/mcp", "--suite", "all", "--expected-failures", baseline, "-o", out)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	report, err := cmd.CombinedOutput()
	require.NoError(t, err, "the suite found a change against the baseline:\n%s", report)

	passed, failed := results(t, out)
	expected := baselineScenarios(t, baseline)
	require.Equal(t, expected, failed, "the scenarios that failed are the baseline's")
	require.NotEmpty(t, passed)
	for _, s := range []string{"tools-list", "tools-call-simple-text", "tools-call-elicitation", "json-schema-2020-12", "tools-call-with-progress"} {
		require.Contains(t, passed, s)
	}
	t.Logf("%d scenarios passed: %s", len(passed), strings.Join(passed, ", "))
	t.Logf("%d out of scope: %s", len(failed), strings.Join(failed, ", "))
}

// timestamp is the end of the name of a scenario's folder.
var timestamp = regexp.MustCompile(`-\d{4}-\d{2}-\d{2}T[\d-]+Z$`)

// results reads the checks the suite saved under dir, one folder per
// scenario, and sorts the scenarios into passed and not passed (a failure
// or a warning).
func results(t *testing.T, dir string) (passed, failed []string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		require.NoError(t, err)
		var checks []struct {
			Status string `json:"status"`
		}
		require.NoError(t, json.Unmarshal(data, &checks))
		name := strings.TrimPrefix(e.Name(), "server-")
		name = timestamp.ReplaceAllString(name, "")
		ok := true
		for _, c := range checks {
			ok = ok && c.Status != "FAILURE" && c.Status != "WARNING"
		}
		if ok {
			passed = append(passed, name)
		} else {
			failed = append(failed, name)
		}
	}
	sort.Strings(passed)
	sort.Strings(failed)
	return passed, failed
}

// baselineScenarios lists the scenarios of the baseline file, sorted.
func baselineScenarios(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok {
			names = append(names, rest)
		}
	}
	sort.Strings(names)
	return names
}
