package strictschema_test

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

// ajvCase is one schema lowered under one provider's rules, with argument
// objects for ajv to judge: testdata/ajv/validate.mjs reads a list of them.
type ajvCase struct {
	Name      string          `json:"name"`
	Canonical json.RawMessage `json:"canonical"`
	Lowered   json.RawMessage `json:"lowered"`
	// Pairs are [x, u]: x sent under the lowered schema, u = Undo(x).
	Pairs [][2]json.RawMessage `json:"pairs"`
}

type ajvVerdicts struct {
	Name      string `json:"name"`
	Canonical []bool `json:"canonical"`
	Lowered   []bool `json:"lowered"`
}

// TestAjvAgrees checks the lowering with a second, independent validator:
// ajv (pinned by testdata/ajv/package-lock.json; its 2020-12 class, or its
// draft-07 class for a schema declaring draft-07) judges every schema the
// property test lowers, on the same kind of generated argument objects.
// ajv and the Go validator must give the same verdict on each object under
// the canonical and under the lowered (Checked) schema, and by ajv too an
// object the lowered schema accepts is valid under the canonical one once
// undone.
//
// It needs node and `npm ci --prefix adapters/internal/strictschema/testdata/ajv`;
// without them it skips, unless TOOL_CI_NODE=1 (set by .ci/run) says they
// are there, and then it fails.
func TestAjvAgrees(t *testing.T) {
	dir := filepath.Join("testdata", "ajv")
	node, err := exec.LookPath("node")
	if _, statErr := os.Stat(filepath.Join(dir, "node_modules", "ajv")); err != nil || statErr != nil {
		if os.Getenv("TOOL_CI_NODE") == "1" {
			t.Fatalf("TOOL_CI_NODE=1 but node or ajv is missing (node: %v; ajv: %v): run `npm ci --prefix adapters/internal/strictschema/testdata/ajv`", err, statErr)
		}
		t.Skip("node or ajv is missing: install node and run `npm ci --prefix adapters/internal/strictschema/testdata/ajv` (.ci/run does)")
	}

	var cases []ajvCase
	var goVerdicts []ajvVerdicts
	for _, p := range providerRules {
		for _, s := range propertySchemas(t) {
			name := p.name + "/" + s.name
			if _, known := knownDisagreements[name]; known {
				continue
			}
			c, v, ok := ajvCaseOf(t, name, s.schema, p.rules, samples(30))
			if ok {
				cases = append(cases, c)
				goVerdicts = append(goVerdicts, v)
			}
		}
	}
	require.Greater(t, len(cases), 200)

	in := filepath.Join(t.TempDir(), "cases.json")
	raw, err := json.Marshal(cases)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(in, raw, 0o644))
	abs, err := filepath.Abs(in)
	require.NoError(t, err)
	cmd := exec.CommandContext(t.Context(), node, "validate.mjs", abs)
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "%s", stderrOf(err))
	var ajv []ajvVerdicts
	require.NoError(t, json.Unmarshal(out, &ajv))
	require.Len(t, ajv, len(cases))

	pairs := 0
	for i, c := range cases {
		a, g := ajv[i], goVerdicts[i]
		require.Equal(t, c.Name, a.Name)
		for j, pair := range c.Pairs {
			pairs++
			require.Equal(t, g.Canonical[j], a.Canonical[j], "%s: ajv and Go differ on %s under the canonical schema %s", c.Name, pair[1], c.Canonical)
			require.Equal(t, g.Lowered[j], a.Lowered[j], "%s: ajv and Go differ on %s under the lowered schema %s", c.Name, pair[0], c.Lowered)
			if a.Lowered[j] {
				require.True(t, a.Canonical[j], "%s: by ajv, the lowered schema %s accepts %s, the canonical one refuses it undone, %s", c.Name, c.Lowered, pair[0], pair[1])
			}
		}
	}
	t.Logf("%d schemas, %d argument objects, each judged by ajv under both schemas", len(cases), pairs)
}

// ajvCaseOf lowers one schema and generates argument objects for it, as
// checkLowering does: canonical values lifted to the lowered shape, values
// of the lowered schema, and near misses of both; it returns them with the
// Go validator's verdicts, and false when the schema is blocked.
func ajvCaseOf(t *testing.T, name string, src []byte, rules strictschema.Rules, n int) (ajvCase, ajvVerdicts, bool) {
	res := strictschema.Lower(src, rules)
	if len(res.Blocked) > 0 {
		return ajvCase{}, ajvVerdicts{}, false
	}
	checkedSrc := strictschema.Checked(src, rules)
	canonical, err := tool.ParseSchema(src)
	require.NoError(t, err, name)
	checked, err := tool.ParseSchema(checkedSrc)
	require.NoError(t, err, name)
	var canonDoc, loweredDoc any
	require.NoError(t, json.Unmarshal(src, &canonDoc))
	require.NoError(t, json.Unmarshal(checkedSrc, &loweredDoc))
	h := fnv.New64a()
	fmt.Fprintf(h, "ajv %s", src)
	rng := rand.New(rand.NewPCG(h.Sum64(), 7))

	c := ajvCase{Name: name, Canonical: src, Lowered: checkedSrc}
	v := ajvVerdicts{Name: name}
	add := func(x []byte) {
		u := []byte(res.Undo.Apply(string(x)))
		c.Pairs = append(c.Pairs, [2]json.RawMessage{x, u})
		v.Canonical = append(v.Canonical, canonical.Validate(u) == nil)
		v.Lowered = append(v.Lowered, checked.Validate(x) == nil)
	}
	for range n {
		g := generate(rng, canonDoc, canonDoc, 0)
		for _, e := range []any{g, mutate(rng, g)} {
			add(mustJSON(lift(e, res.Undo)))
		}
		w := generate(rng, loweredDoc, loweredDoc, 0)
		for _, e := range []any{w, mutate(rng, w)} {
			add(mustJSON(e))
		}
	}
	return c, v, true
}

func stderrOf(err error) string {
	if exit, ok := err.(*exec.ExitError); ok {
		return string(exit.Stderr)
	}
	return ""
}
