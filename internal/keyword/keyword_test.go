package keyword

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFits(t *testing.T) {
	// A subschema is a boolean or an object; a pattern is anything
	// without a backslash at its end.
	schema := func(v any) bool {
		switch v.(type) {
		case bool, map[string]any:
			return true
		}
		return false
	}
	pattern := func(p string) bool { return !strings.HasSuffix(p, `\`) }
	tests := []struct {
		keyword string
		value   any
		fits    bool
	}{
		{"items", true, true},
		{"items", []any{true}, false},
		{"allOf", []any{true, map[string]any{}}, true},
		{"allOf", []any{}, false},
		{"allOf", []any{1}, false},
		{"properties", map[string]any{"a": true}, true},
		{"properties", map[string]any{"a": "x"}, false},
		{"patternProperties", map[string]any{"^a": true}, true},
		{"patternProperties", map[string]any{`a\`: true}, false},
		{"dependencies", map[string]any{"a": []any{"b"}, "c": map[string]any{}}, true},
		{"dependencies", map[string]any{"a": []any{"b", "b"}}, false},
		{"dependentRequired", map[string]any{"a": []any{"b"}}, true},
		{"dependentRequired", map[string]any{"a": true}, false},
		{"required", []any{"a", "b"}, true},
		{"required", []any{"a", "a"}, false},
		{"required", []any{"a", 1}, false},
		{"type", "string", true},
		{"type", "text", false},
		{"type", []any{"string", "null"}, true},
		{"type", []any{}, false},
		{"type", []any{"string", "string"}, false},
		{"enum", []any{1, "a"}, true},
		{"enum", "a", false},
		{"multipleOf", json.Number("0.5"), true},
		{"multipleOf", json.Number("0"), false},
		{"multipleOf", json.Number("-1"), false},
		{"minimum", json.Number("-1.5"), true},
		{"minimum", "1", false},
		{"maxLength", json.Number("3"), true},
		{"maxLength", json.Number("3.0"), false},
		{"maxLength", json.Number("-3"), false},
		{"pattern", "^a", true},
		{"pattern", `a\`, false},
		{"$anchor", "node_1", true},
		{"$anchor", "1node", false},
		{"uniqueItems", true, true},
		{"uniqueItems", "true", false},
		{"title", "x", true},
		{"title", 1, false},
		{"$vocabulary", map[string]any{}, true},
		{"const", []any{map[string]any{}}, true},
	}
	for _, tt := range tests {
		require.Equal(t, tt.fits, Fits(Of(tt.keyword), tt.value, schema, pattern), "%s: %v", tt.keyword, tt.value)
	}
	require.Equal(t, Any, Of("x-unknown"))
	many := make([]any, 20)
	for i := range many {
		many[i] = string(rune('a' + i))
	}
	require.True(t, Fits(Names, many, schema, pattern))
	require.False(t, Fits(Names, append(many, "a"), schema, pattern))
}
