package adapterkit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/adapterkit"
	"github.com/agentcontract/tool/internal/strictschema"
)

// TestSchemaMap: every copy is deep and the caller's, numbers typed for
// the SDKs' encoders.
func TestSchemaMap(t *testing.T) {
	tree := adapterkit.Tree([]byte(`{"a":[1,2.5,{"b":null},[]],"c":{"d":"x","e":{}},"big":1e400,"n":-7}`))
	want := map[string]any{
		"a":   []any{int64(1), 2.5, map[string]any{"b": nil}, []any{}},
		"c":   map[string]any{"d": "x", "e": map[string]any{}},
		"big": tree["big"], "n": int64(-7),
	}
	first := adapterkit.SchemaMap(tree)
	require.Equal(t, want, first)
	first["a"].([]any)[2].(map[string]any)["b"] = "changed"
	first["c"].(map[string]any)["e"].(map[string]any)["f"] = 1
	first["n"] = 0
	require.Equal(t, want, adapterkit.SchemaMap(tree))
}

// TestSchemasOncePerSchema: the same bytes give the same tree and the
// same lowering; other bytes, others.
func TestSchemasOncePerSchema(t *testing.T) {
	var s adapterkit.Schemas
	obj, str := []byte(`{"type":"object","properties":{"a":{"type":"string"}}}`), []byte(`{"type":"string"}`)
	tree := s.Tree(obj)
	tree["x"] = 1 // a marker: the second call must give this very map
	require.Equal(t, 1, s.Tree(append([]byte(nil), obj...))["x"])
	require.NotContains(t, s.Tree(str), "x")
	lowered := s.Lower(obj, strictschema.OpenAI)
	require.Same(t, lowered, s.Lower(append([]byte(nil), obj...), strictschema.OpenAI))
	require.NotSame(t, lowered, s.Lower(str, strictschema.OpenAI))
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
