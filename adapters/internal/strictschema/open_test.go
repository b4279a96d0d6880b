package strictschema_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

// openRules keeps the structure, relaxes pattern, blocks $dynamicRef and
// rewrites const as a one-value enum.
var openRules = strictschema.Open{
	Action: func(k string) strictschema.Action {
		switch k {
		case "type", "properties", "items", "anyOf", "$defs", "$ref", "description", "required":
			return strictschema.Keep
		case "pattern":
			return strictschema.Relax
		case "$dynamicRef":
			return strictschema.Block
		case "const":
			return strictschema.Rewrite
		}
		return strictschema.Drop
	},
	Rewrite: func(n *strictschema.Node, k string, v any) {
		n.Out["enum"] = []any{v}
		n.Relax(k, "const becomes enum")
	},
	Note:    func(k string, v any) string { return k + ": " + string(strictschema.Encode(v)) },
	Relaxed: func(k string) string { return k + " relaxed" },
	Blocked: func(k string) string { return k + " blocked" },
}

func TestLowerOpen(t *testing.T) {
	for _, tc := range []struct {
		name, schema, want string
		relaxed, blocked   []strictschema.Finding
	}{
		{
			name:   "kept keywords are lowered below, dropped ones vanish",
			schema: `{"type":"object","title":"t","properties":{"b":{"type":"string","examples":["x"]},"a":{"items":{"const":1}}}}`,
			want:   `{"properties":{"a":{"items":{"enum":[1]}},"b":{"type":"string"}},"type":"object"}`,
			relaxed: []strictschema.Finding{
				{Pointer: "/properties/a/items/const", Rule: "const becomes enum"},
			},
		},
		{
			name:    "a relaxed keyword joins the description; findings in walk order",
			schema:  `{"description":"d","pattern":"^a","anyOf":[{"pattern":"x"},{"$dynamicRef":"#n"}]}`,
			want:    `{"anyOf":[{"description":"(pattern: \"x\")"},{}],"description":"d (pattern: \"^a\")"}`,
			relaxed: []strictschema.Finding{{Pointer: "/anyOf/0/pattern", Rule: "pattern relaxed"}, {Pointer: "/pattern", Rule: "pattern relaxed"}},
			blocked: []strictschema.Finding{{Pointer: "/anyOf/1/$dynamicRef", Rule: "$dynamicRef blocked"}},
		},
		{
			name:   "member names are escaped in pointers; values of the wrong shape are kept",
			schema: `{"$defs":{"a/b":{"pattern":"p"}},"properties":[1],"items":[{"pattern":"q"}]}`,
			want:   `{"$defs":{"a/b":{"description":"(pattern: \"p\")"}},"items":[{"pattern":"q"}],"properties":[1]}`,
			relaxed: []strictschema.Finding{
				{Pointer: "/$defs/a~1b/pattern", Rule: "pattern relaxed"},
			},
		},
		{name: "a boolean schema is kept", schema: `true`, want: `true`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := strictschema.Decode([]byte(tc.schema))
			require.NoError(t, err)
			res := strictschema.LowerOpen(doc, openRules)
			require.JSONEq(t, tc.want, string(strictschema.Encode(res.Tree)))
			require.Equal(t, tc.relaxed, res.Relaxed)
			require.Equal(t, tc.blocked, res.Blocked)
			// The document given is not changed.
			require.JSONEq(t, tc.schema, string(strictschema.Encode(doc)))
		})
	}
	// The zero rule set drops everything.
	doc, err := strictschema.Decode([]byte(`{"type":"string","properties":{"a":{}}}`))
	require.NoError(t, err)
	require.Equal(t, map[string]any{}, strictschema.LowerOpen(doc, strictschema.Open{}).Tree)
}

func TestRulesAction(t *testing.T) {
	for _, tc := range []struct {
		rules   strictschema.Rules
		keyword string
		value   any
		want    strictschema.Action
	}{
		{strictschema.OpenAI, "description", "d", strictschema.Keep},
		{strictschema.OpenAI, "title", "t", strictschema.Drop},                    // an annotation
		{strictschema.OpenAI, "x-vendor", 1, strictschema.Drop},                   // unknown: constrains nothing
		{strictschema.OpenAI, "not", map[string]any{}, strictschema.Block},        // no strict mode takes it
		{strictschema.OpenAI, "maxItems", "3", strictschema.Keep},                 // OpenAI enforces it
		{strictschema.Anthropic, "maxItems", "3", strictschema.Relax},             // Anthropic does not
		{strictschema.Anthropic, "minimum", "0", strictschema.Relax},              // nor number bounds
		{strictschema.Anthropic, "pattern", `(?=a)`, strictschema.Relax},          // lookaround
		{strictschema.Anthropic, "pattern", `^a+$`, strictschema.Keep},            // plain
		{strictschema.Anthropic, "format", "uri", strictschema.Keep},              // a format it lists
		{strictschema.OpenAI, "format", "uri", strictschema.Relax},                // one it does not
		{strictschema.Anthropic, "default", 1, strictschema.Keep},                 // Anthropic takes default
		{strictschema.OpenAI, "default", 1, strictschema.Drop},                    // OpenAI does not
		{strictschema.OpenAI, "minLength", json.Number("1"), strictschema.Relax},  // no strict mode enforces lengths
		{strictschema.Anthropic, "minItems", json.Number("1"), strictschema.Keep}, // 0 or 1 only
		{strictschema.Anthropic, "minItems", json.Number("2"), strictschema.Relax},
	} {
		require.Equal(t, tc.want, tc.rules.Action(tc.keyword, tc.value), "%s %v", tc.keyword, tc.value)
	}
}
