package toolgemini_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/stretchr/testify/require"
)

// TestCorpusProjection projects every tool of the corpus of published tool
// schemas (adapters/internal/strictschema/testdata/corpus, shared with the
// strict lowering's tests) on both of Gemini's paths and keeps
// testdata/corpus-summary.md, the figures the README quotes, equal to the
// outcome: how many tools Gemini receives exactly, how many looser (with
// the lints that say where), how many it cannot take. Run with -update to
// rewrite it.
func TestCorpusProjection(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "internal", "strictschema", "testdata", "corpus", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var defs []tool.Definition
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var cf struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
		}
		require.NoError(t, json.Unmarshal(raw, &cf), f)
		for _, tl := range cf.Tools {
			defs = append(defs, tool.Definition{Name: tl.Name, InputSchema: tl.InputSchema})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!-- Written by `go test -run TestCorpusProjection -update` in adapters/gemini. -->\n\n%d tools in the corpus.\n", len(defs))
	for _, path := range []struct {
		name   string
		config toolgemini.Config
	}{{"JSON path (default)", toolgemini.Config{}}, {"OpenAPI path", toolgemini.Config{OpenAPI: true}}} {
		exact, looser, refused, invalid := 0, 0, 0, 0
		lintedBy, refusedBy := map[string]int{}, map[string]int{}
		for _, d := range defs {
			// One tool at a time, under a name Gemini takes: the
			// schema is what is measured.
			d.Name = "t"
			if d.Validate() != nil {
				// The core refuses the definition (GitLab's empty
				// schemas): no adapter offers it.
				invalid++
				continue
			}
			cfg := path.config
			cfg.Definitions = []tool.Definition{d}
			p, err := toolgemini.New(cfg)
			switch {
			case errors.Is(err, toolgemini.ErrInvalidConfig):
				refused++
				count(refusedBy, []toolgemini.Lint{{Rule: err.Error()}})
			case err != nil:
				t.Fatalf("%s: %v", d.InputSchema, err)
			case len(p.Relaxed()) == 0:
				exact++
			default:
				looser++
				count(lintedBy, p.Relaxed())
			}
		}
		fmt.Fprintf(&b, "\n## %s\n\n%d tools are received exactly, %d looser (the constraint written into the description, Prepare still checks it), %d refused; %d are definitions the core refuses, which no adapter offers.\n", path.name, exact, looser, refused, invalid)
		table(&b, "looser", lintedBy)
		table(&b, "refused", refusedBy)
	}
	golden := filepath.Join("testdata", "corpus-summary.md")
	if *adaptertest.Update {
		require.NoError(t, os.WriteFile(golden, []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	require.Equal(t, string(want), b.String(), "the projection now treats the corpus differently: run `go test -run TestCorpusProjection -update` in adapters/gemini and update the README's figures")
}

// count adds one to each distinct rule of lints, the keyword named in it
// kept and quoted names dropped.
func count(by map[string]int, lints []toolgemini.Lint) {
	seen := map[string]bool{}
	for _, l := range lints {
		r := l.Rule
		if i := strings.IndexAny(r, "\"“"); i >= 0 {
			r = r[:i] + "…"
		}
		if !seen[r] {
			seen[r] = true
			by[r]++
		}
	}
}

func table(b *strings.Builder, what string, by map[string]int) {
	if len(by) == 0 {
		return
	}
	fmt.Fprintf(b, "\n| tools | %s by |\n|---:|---|\n", what)
	keys := slices.Collect(maps.Keys(by))
	slices.SortFunc(keys, func(x, y string) int {
		if by[x] != by[y] {
			return by[y] - by[x]
		}
		return strings.Compare(x, y)
	})
	for _, k := range keys {
		fmt.Fprintf(b, "| %d | %s |\n", by[k], strings.ReplaceAll(k, "|", `\|`))
	}
}
