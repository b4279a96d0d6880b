package toolgemini_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/stretchr/testify/require"
)

func TestOpenAPI(t *testing.T) {
	for _, tc := range []struct {
		name, input, want string
		lints             []string
	}{
		{"a derived schema: closed objects are reported",
			derivedNested(t),
			`{"type":"OBJECT","required":["grid","by_name","kind"],"description":"(no other members)","properties":{
				"at":{"type":"STRING","format":"date-time"},
				"by_name":{"type":"OBJECT"},
				"grid":{"type":"ARRAY","items":{"type":"ARRAY","items":{"type":"NUMBER"}}},
				"kind":{"type":"STRING","enum":["a","b"]},
				"leaf":{"type":"OBJECT","nullable":true,"required":["x"],"description":"(no other members)","properties":{
					"p":{"type":"STRING","nullable":true},
					"x":{"type":"ARRAY","items":{"type":"INTEGER"}}}}}}`,
			[]string{
				"t input schema at /additionalProperties: additionalProperties cannot be expressed in parameters; dropped (Prepare still refuses extra members)",
				"t input schema at /properties/by_name/additionalProperties: additionalProperties cannot be expressed in parameters; dropped (Prepare still refuses extra members)",
				"t input schema at /properties/leaf/additionalProperties: additionalProperties cannot be expressed in parameters; dropped (Prepare still refuses extra members)",
			}},
		{"type lists, null enums and string consts",
			`{"type":"object","properties":{"a":{"type":["string","null"]},"b":{"enum":["x",null]},"c":{"const":"k"},"d":{"type":["integer","string"]}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING","nullable":true},"b":{"enum":["x"],"nullable":true},"c":{"enum":["k"]},
				"d":{"anyOf":[{"type":"INTEGER"},{"type":"STRING"}]}}}`, nil},
		{"allOf merged, $ref siblings merged",
			`{"type":"object","$defs":{"n":{"type":"integer","minimum":0}},"properties":{"a":{"allOf":[{"type":"string"},{"maxLength":3}]},
				"b":{"$ref":"#/$defs/n","maximum":9}}}`,
			`{"type":"OBJECT","properties":{"a":{"type":"STRING","maxLength":3},"b":{"type":"INTEGER","minimum":0,"maximum":9}}}`, nil},
		{"number enums and exclusive bounds are losses",
			`{"type":"object","properties":{"a":{"enum":[1,2]},"b":{"type":"number","exclusiveMinimum":0}}}`,
			`{"type":"OBJECT","properties":{"a":{"description":"(enum: [1,2])"},"b":{"type":"NUMBER","description":"(exclusiveMinimum: 0)"}}}`,
			[]string{
				"t input schema at /properties/a/enum: parameters take string enums only; dropped and written into the description",
				"t input schema at /properties/b/exclusiveMinimum: exclusiveMinimum is not supported in parameters; dropped and written into the description",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := project([]tool.Definition{adaptertest.Def("t", tc.input)}, toolgemini.Config{OpenAPI: true})
			require.NoError(t, err)
			decl := p.Tools()[0].FunctionDeclarations[0]
			require.Nil(t, decl.ParametersJsonSchema)
			got, err := json.Marshal(decl.Parameters)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(got))
			require.Equal(t, tc.lints, adaptertest.LintStrings(p.Relaxed()))
		})
	}
}

func derivedNested(t *testing.T) string { return derived[propNested](t) }

func TestOpenAPIRefuses(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"recursion", `{"type":"object","properties":{"next":{"$ref":"#"}}}`,
			`tool: invalid config for Gemini: t input schema at /properties/next/properties/next/$ref: $ref "#" is recursive; parameters cannot express recursion (use the JSON path)`},
		{"a parameter name with a dash", `{"type":"object","properties":{"a-b":{"type":"string"}}}`,
			`tool: invalid config for Gemini: t input schema at /properties/a-b: parameter name "a-b" is not one Gemini takes in parameters (^[A-Za-z_][A-Za-z0-9_]{0,63}$); use the JSON path`},
		{"a chain of 65 $refs", chain(65),
			`tool: invalid config for Gemini: t input schema at /properties/x: more than 64 nested $ref, allOf and one-branch anyOf to inline at one place`},
		{"exponential inlining", fanOut(7),
			`tool: invalid config for Gemini: t input schema at (root): inlining every $ref makes more than 10000 schema nodes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := project([]tool.Definition{adaptertest.Def("t", tc.input)}, toolgemini.Config{OpenAPI: true})
			require.ErrorIs(t, err, toolgemini.ErrInvalidConfig)
			require.EqualError(t, err, tc.want)
		})
	}
}

// fanOut is a schema of levels $defs, each with four members referring to
// the next: small as written, 4^levels nodes once inlined.
func fanOut(levels int) string {
	defs := ""
	for i := range levels {
		next := `{"type":"string"}`
		if i+1 < levels {
			next = fmt.Sprintf(`{"$ref":"#/$defs/d%d"}`, i+1)
		}
		defs += fmt.Sprintf(`"d%d":{"type":"object","properties":{"a":%s,"b":%s,"c":%s,"d":%s}},`, i, next, next, next, next)
	}
	return `{"type":"object","$defs":{` + strings.TrimSuffix(defs, ",") + `},"properties":{"x":{"$ref":"#/$defs/d0"}}}`
}

// chain is a schema whose member x is a $ref to a $ref … n times.
func chain(n int) string {
	defs := `"d0":{"type":"string"}`
	for i := 1; i < n; i++ {
		defs += fmt.Sprintf(`,"d%d":{"$ref":"#/$defs/d%d"}`, i, i-1)
	}
	return fmt.Sprintf(`{"type":"object","$defs":{%s},"properties":{"x":{"$ref":"#/$defs/d%d"}}}`, defs, n-1)
}
