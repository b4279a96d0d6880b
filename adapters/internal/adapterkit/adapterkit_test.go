package adapterkit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

// TestSchemaMap: every copy is deep and the caller's, numbers typed for
// the SDKs' encoders.
func TestSchemaMap(t *testing.T) {
	tree := adapterkit.Tree([]byte(`{"a":[1,2.5,{"b":null},[]],"c":{"d":"x","e":{}},"n":-7}`))
	want := map[string]any{
		"a": []any{int64(1), 2.5, map[string]any{"b": nil}, []any{}},
		"c": map[string]any{"d": "x", "e": map[string]any{}},
		"n": int64(-7),
	}
	first := adapterkit.SchemaMap(tree)
	require.Equal(t, want, first)
	first["a"].([]any)[2].(map[string]any)["b"] = "changed"
	first["c"].(map[string]any)["e"].(map[string]any)["f"] = 1
	first["n"] = 0
	require.Equal(t, want, adapterkit.SchemaMap(tree))
}

// TestSchemasOncePerSchema: the same bytes give the same lowering; other
// bytes, another.
func TestSchemasOncePerSchema(t *testing.T) {
	var s adapterkit.Schemas
	obj, str := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), []byte(`{"type":"string"}`)
	lowered := s.Lower(obj, strictschema.OpenAI)
	require.Same(t, lowered, s.Lower(append([]byte(nil), obj...), strictschema.OpenAI))
	require.NotSame(t, lowered, s.Lower(str, strictschema.OpenAI))
}

// TestParams: a lowered tree is copied; a schema as written is decoded,
// numbers typed as SchemaMap types them, and copied for a second tool of
// the same schema; a schema that does not decode gives an empty map.
func TestParams(t *testing.T) {
	raw := []byte(`{"a":[1,{"b":2.5}],"c":{"d":"x","e":12345678901234567890}}`)
	want := map[string]any{"a": []any{int64(1), map[string]any{"b": 2.5}}, "c": map[string]any{"d": "x", "e": 12345678901234567890.0}}
	var p adapterkit.Params
	first, second := p.Schema(nil, raw), p.Schema(nil, append([]byte(nil), raw...))
	require.Equal(t, want, first)
	require.Equal(t, want, second)
	first["a"].([]any)[1].(map[string]any)["b"] = "changed"
	require.Equal(t, want, second)
	require.Equal(t, want, new(adapterkit.Params).Schema(nil, raw))
	require.Equal(t, want, p.Schema(adapterkit.Tree(raw), []byte(`{}`)))
	require.Equal(t, map[string]any{}, p.Schema(nil, []byte(`{"a":`)))
}

// TestClone: a deep copy that keeps number text.
func TestClone(t *testing.T) {
	tree := adapterkit.Tree([]byte(`{"a":[1.50,{"b":null}],"c":{"d":"x"}}`))
	c := adapterkit.Clone(tree).(map[string]any)
	require.Equal(t, tree, c)
	c["a"].([]any)[1].(map[string]any)["b"] = 1
	c["c"].(map[string]any)["d"] = "y"
	require.Equal(t, adapterkit.Tree([]byte(`{"a":[1.50,{"b":null}],"c":{"d":"x"}}`)), tree)
}

func TestLintString(t *testing.T) {
	for _, tc := range []struct {
		lint adapterkit.Lint
		want string
	}{
		{adapterkit.Lint{Tool: "w", Schema: "input", Pointer: "/properties/a", Rule: "r"}, "w input schema at /properties/a: r"},
		{adapterkit.Lint{Tool: "w", Schema: "output", Rule: "r"}, "w output schema at (root): r"},
		{adapterkit.Lint{Tool: "w", Rule: "budget"}, `tool "w": budget`},
	} {
		require.Equal(t, tc.want, tc.lint.String())
	}
	got := adapterkit.InputLints(nil, "w", []strictschema.Finding{{Pointer: "/a", Rule: "r"}})
	require.Equal(t, []adapterkit.Lint{{Tool: "w", Schema: "input", Pointer: "/a", Rule: "r"}}, got)
}
