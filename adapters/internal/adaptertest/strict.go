package adaptertest

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
)

// Projection is what a strict-mode adapter made of some definitions, as
// the shared strict-mode checks see it.
type Projection struct {
	// Lints are the adapter's Tools.Lints, converted with
	// adapterkit.ConvertLints.
	Lints []adapterkit.Lint
	// Strict is the adapter's Tools.Strict.
	Strict func(name string) bool
	// Tools are the tool parameters the adapter sends, as JSON.
	Tools []byte
	// Request is the request the adapter makes of the model's call of
	// name with the argument text args; it fails t when it cannot.
	Request func(t testing.TB, name, args string) tool.Request
}

// ProjectStrict projects defs with an adapter in strict mode and fails t
// when the adapter refuses them.
type ProjectStrict func(t testing.TB, defs ...tool.Definition) Projection

// CheckDraft07 checks an adapter against the cases of draft07: a
// schema whose meaning is the same in 2020-12 is sent strict, its
// definitions as $defs; one using a keyword whose meaning differs is sent
// non-strict with the lint naming it; and in both, the model's call
// reaches Prepare, the judge under the canonical (draft-07) schema, as
// written, and is admitted.
func CheckDraft07(t *testing.T, project ProjectStrict) {
	for _, tc := range draft07() {
		t.Run(tc.Name, func(t *testing.T) {
			d := Def(tc.Name, tc.Schema)
			p := project(t, d)
			var lints []adapterkit.Lint
			if !tc.Strict {
				lints = []adapterkit.Lint{{Tool: tc.Name, Schema: "input", Pointer: tc.Pointer, Rule: tc.Rule}}
			}
			require.Equal(t, lints, p.Lints)
			if tc.Strict {
				require.Contains(t, string(p.Tools), `"strict":true`)
				require.Contains(t, string(p.Tools), `"$ref":"#/$defs/pt"`)
				require.NotContains(t, string(p.Tools), `definitions`)
				require.NotContains(t, string(p.Tools), `$schema`)
			} else {
				require.Contains(t, string(p.Tools), `"strict":false`)
			}
			admit(t, d, p.Request(t, tc.Name, tc.Args))
		})
	}
}

// CheckOneOfOfDisjointTypes checks that an adapter sends a oneOf whose
// branches admit disjoint JSON types as the anyOf it means, strict, and
// the model's calls under it reach Prepare admitted; and that a oneOf
// whose branches overlap keeps its tool non-strict, with a lint.
func CheckOneOfOfDisjointTypes(t *testing.T, project ProjectStrict) {
	d := Def("pick", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"integer"}]}},"required":["v"]}`)
	p := project(t, d, Def("overlap", `{"type":"object","properties":{"v":{"oneOf":[{"type":"integer"},{"type":"number"}]}},"required":["v"]}`))
	require.True(t, p.Strict("pick"))
	require.False(t, p.Strict("overlap"))
	require.Equal(t, []adapterkit.Lint{{Tool: "overlap", Schema: "input", Pointer: "/properties/v/oneOf", Rule: "oneOf is not supported in strict mode unless its branches admit disjoint JSON types, so that it means anyOf"}}, p.Lints)
	require.Contains(t, string(p.Tools), `"v":{"anyOf":[{"type":"string"},{"type":"integer"}]}`)
	for _, args := range []string{`{"v":"a"}`, `{"v":3}`} {
		admit(t, d, p.Request(t, "pick", args))
	}
}

// admit fails t unless Prepare, under d, admits req.
func admit(t testing.TB, d tool.Definition, req tool.Request) {
	t.Helper()
	b, err := tool.Bind(Func{Def: d})
	require.NoError(t, err)
	_, err = b.Contract().Prepare(req, tool.Admission{})
	require.NoError(t, err)
}

// MarshalJSON returns the JSON of v, failing t when v does not encode.
func MarshalJSON(t testing.TB, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}

// LintStrings returns each of lints on its one line (an adapter's
// Lint.String), nil for none.
func LintStrings[L fmt.Stringer](lints []L) []string {
	var out []string
	for _, l := range lints {
		out = append(out, l.String())
	}
	return out
}
