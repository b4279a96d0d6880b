package toolgemini_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// Types whose schemas NewFunc derives.
type (
	propFlat struct {
		Name  string   `json:"name" jsonschema:"minLength=1"`
		Count int16    `json:"count"`
		Ratio float32  `json:"ratio,omitempty"`
		Tags  []string `json:"tags,omitempty"`
		On    bool     `json:"on"`
	}
	propLeaf struct {
		X []int32 `json:"x"`
		P *string `json:"p,omitempty"`
	}
	propNested struct {
		Leaf   *propLeaf           `json:"leaf,omitempty"`
		Grid   [][]float64         `json:"grid"`
		ByName map[string]propLeaf `json:"by_name"`
		Kind   string              `json:"kind" jsonschema:"enum=a,enum=b"`
		At     time.Time           `json:"at,omitzero"`
	}
	propTree struct {
		Label    string      `json:"label"`
		Children []*propTree `json:"children,omitempty"`
		Next     *propTree   `json:"next,omitempty"`
	}
)

func derived[T any](t *testing.T) string {
	s, err := tool.SchemaFor[T]()
	require.NoError(t, err)
	return string(s.JSON())
}

// propertySchemas are canonical schemas with whether their lowering must be
// exact (no Lint).
// propertySchemas are canonical schemas with what each path makes of them:
// exact (no Lint), lossy or refused.
func propertySchemas(t *testing.T) []struct {
	name, schema      string
	jsonPath, openAPI string
} {
	return []struct {
		name, schema      string
		jsonPath, openAPI string
	}{
		{"derived flat (minLength is lost)", derived[propFlat](t), lossy, lossy},
		{"derived nested, $ref and nullable pointers", derived[propNested](t), exact, lossy},
		{"derived recursive through optional members", derived[propTree](t), exact, refused},
		{"$ref with siblings", `{"type":"object","$defs":{"n":{"type":"integer","minimum":0}},
			"properties":{"a":{"$ref":"#/$defs/n","maximum":9,"description":"digit"}},"required":["a"]}`, exact, exact},
		{"anyOf and nested arrays", `{"type":"object","properties":{
			"m":{"type":"array","items":{"type":"array","items":{"anyOf":[{"type":"string"},{"type":"integer","minimum":-3,"maximum":3}]},"maxItems":3}}},
			"additionalProperties":false}`, exact, lossy},
		{"enum with null, const, optional members", `{"type":"object","properties":{
			"e":{"enum":["x",1,null]},"c":{"const":"fixed"},"n":{"const":null},"o":{"type":["string","null"]}},
			"required":["c"],"additionalProperties":false}`, exact, lossy},
		{"anchor ref and prefixItems", `{"type":"object","$defs":{"p":{"$anchor":"pair","type":"array",
			"prefixItems":[{"type":"string"},{"type":"number"}],"items":false,"minItems":2}},
			"properties":{"p":{"$ref":"#pair"}},"required":["p"],"additionalProperties":false}`, exact, lossy},
		{"oneOf becomes anyOf", `{"type":"object","properties":{"v":{"oneOf":[{"type":"integer"},{"type":"number","minimum":0}]}},
			"required":["v"],"additionalProperties":false}`, lossy, lossy},
		{"pattern, lengths and exclusive bounds", `{"type":"object","properties":{
			"s":{"type":"string","pattern":"^[a-c]+$","maxLength":3},"n":{"type":"number","exclusiveMinimum":0},
			"u":{"type":"array","uniqueItems":true,"items":{"type":"integer","minimum":0,"maximum":3}}},"additionalProperties":false}`, lossy, lossy},
		{"open objects, nullable members, string enums", `{"type":"object","$defs":{"n":{"type":"object","properties":{"v":{"type":"number"}},"required":["v"]}},
			"properties":{"a":{"type":["string","null"],"maxLength":4},"b":{"enum":["x","y",null]},"c":{"anyOf":[{"$ref":"#/$defs/n"},{"type":"null"}]},
			"d":{"type":"array","items":{"type":"integer","minimum":0},"maxItems":3}},"required":["d"]}`, lossy, exact},
		{"const object and allOf", `{"type":"object","properties":{"k":{"const":{"a":1}},
			"w":{"allOf":[{"type":"integer"},{"minimum":2}]}},"required":["k"],"additionalProperties":false}`, lossy, lossy},
	}
}

// TestLoweringProperty checks, on every schema, that each value the
// canonical schema admits is admitted by the lowered one (the model is never
// told something stricter than the truth), and, for the lowerings reported
// exact, that each value the lowered schema admits, after the SDK's decoding
// and this package's re-encoding (the only undoing the Gemini path needs),
// is admitted by the canonical one.
func TestLoweringProperty(t *testing.T) {
	for _, tc := range propertySchemas(t) {
		t.Run("json/"+tc.name, func(t *testing.T) {
			t.Parallel()
			checkLowering(t, tc.schema, toolgemini.Config{}, tc.jsonPath)
		})
		t.Run("openapi/"+tc.name, func(t *testing.T) {
			t.Parallel()
			checkLowering(t, tc.schema, toolgemini.Config{OpenAPI: true}, tc.openAPI)
		})
	}
}

const (
	exact   = "exact"
	lossy   = "lossy"
	refused = "refused"
)

func checkLowering(t *testing.T, schema string, config toolgemini.Config, want string) {
	const values = 600
	def := tool.Definition{Name: "p", InputSchema: json.RawMessage(schema)}
	p, err := project([]tool.Definition{def}, config)
	if want == refused {
		require.ErrorIs(t, err, toolgemini.ErrInvalidConfig)
		return
	}
	require.NoError(t, err)
	require.Equal(t, want == exact, len(p.Relaxed()) == 0, "lints: %v", p.Relaxed())
	decl := p.Tools()[0].FunctionDeclarations[0]
	var lowered []byte
	if config.OpenAPI {
		// The proto Schema's meaning, written as JSON Schema.
		lowered, err = json.Marshal(openAPIMeaning(decl.Parameters))
	} else {
		lowered, err = json.Marshal(decl.ParametersJsonSchema)
	}
	require.NoError(t, err)
	canonical := mustSchema(t, schema)
	low := mustSchema(t, string(lowered))

	docs := []any{decode(t, schema), decode(t, string(lowered))}
	rng := rand.New(rand.NewPCG(1, uint64(len(schema))))
	var canonValid, lowValid int
	for i := range values {
		// Half from each schema, so that each side's
		// valid values are well represented.
		doc := docs[i%2]
		v := generate(rng, doc, doc, 0)
		text, err := json.Marshal(v)
		require.NoError(t, err)
		if canonical.Validate(text) == nil {
			canonValid++
			require.NoError(t, low.Validate(text), "canonical admits %s, lowered %s refuses it", text, lowered)
		}
		if low.Validate(text) == nil {
			lowValid++
			if want == exact {
				undone := viaSDK(t, text)
				require.NoError(t, canonical.Validate([]byte(undone)), "lowered %s admits %s, canonical refuses it", lowered, undone)
			}
		}
	}
	// The generator must produce valid values on both sides,
	// or the test checks nothing.
	require.Greater(t, canonValid, values/10)
	require.Greater(t, lowValid, values/10)
}

// openAPIMeaning writes what a proto Schema admits as JSON Schema: the
// reference the OpenAPI path is checked against. Objects are open (the
// proto Schema cannot close them), nullable adds null, formats are
// annotations.
func openAPIMeaning(s *genai.Schema) map[string]any {
	m := map[string]any{}
	if s == nil {
		return m
	}
	nullable := s.Nullable != nil && *s.Nullable
	if s.Type != "" {
		t := strings.ToLower(string(s.Type))
		if nullable && t != "null" {
			m["type"] = []any{t, "null"}
		} else {
			m["type"] = t
		}
	}
	if s.Enum != nil {
		e := []any{}
		for _, v := range s.Enum {
			e = append(e, v)
		}
		if nullable {
			e = append(e, nil)
		}
		m["enum"] = e
	}
	if s.AnyOf != nil {
		var branches []any
		for _, b := range s.AnyOf {
			branches = append(branches, openAPIMeaning(b))
		}
		if nullable && s.Type == "" {
			branches = append(branches, map[string]any{"type": "null"})
		}
		m["anyOf"] = branches
	}
	if s.Properties != nil {
		props := map[string]any{}
		for k, v := range s.Properties {
			props[k] = openAPIMeaning(v)
		}
		m["properties"] = props
	}
	if s.Required != nil {
		m["required"] = s.Required
	}
	if s.Items != nil {
		m["items"] = openAPIMeaning(s.Items)
	}
	for k, v := range map[string]*int64{"minItems": s.MinItems, "maxItems": s.MaxItems, "minLength": s.MinLength,
		"maxLength": s.MaxLength, "minProperties": s.MinProperties, "maxProperties": s.MaxProperties} {
		if v != nil {
			m[k] = *v
		}
	}
	for k, v := range map[string]*float64{"minimum": s.Minimum, "maximum": s.Maximum} {
		if v != nil {
			m[k] = *v
		}
	}
	if s.Pattern != "" {
		m["pattern"] = s.Pattern
	}
	return m
}

func mustSchema(t *testing.T, s string) tool.Schema {
	t.Helper()
	compiled, err := tool.ParseSchema([]byte(s))
	require.NoError(t, err, s)
	return compiled
}

func decode(t *testing.T, s string) any {
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	return v
}

// viaSDK takes arguments the way they reach Prepare from Gemini: decoded by
// the SDK into a FunctionCall, then turned into a dispatch call.
func viaSDK(t *testing.T, args []byte) string {
	var fc genai.FunctionCall
	require.NoError(t, json.Unmarshal(fmt.Appendf(nil, `{"name":"p","args":%s}`, args), &fc))
	turn, err := toolgemini.NewTurn(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
		Content: &genai.Content{Parts: []*genai.Part{{FunctionCall: &fc}}}}}})
	require.NoError(t, err)
	return turn.Calls()[0].Request.Arguments
}

// generate makes a value for schema s (in document root), mostly valid, with
// a chance of a random value at each node so that invalid values occur too.
func generate(rng *rand.Rand, root, s any, depth int) any {
	if rng.IntN(12) == 0 || depth > 6 {
		return randomValue(rng, depth)
	}
	obj, ok := s.(map[string]any)
	if !ok {
		if s == false {
			return randomValue(rng, depth)
		}
		return randomValue(rng, depth)
	}
	if ref, ok := obj["$ref"].(string); ok {
		merged := map[string]any{}
		if target, ok := resolveRef(root, ref).(map[string]any); ok {
			for key, v := range target {
				merged[key] = v
			}
		}
		for key, v := range obj {
			if key != "$ref" {
				merged[key] = v
			}
		}
		return generate(rng, root, merged, depth+1)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if branches, ok := obj[k].([]any); ok && len(branches) > 0 {
			merged := map[string]any{}
			for key, v := range obj {
				if key != k {
					merged[key] = v
				}
			}
			b, _ := branches[rng.IntN(len(branches))].(map[string]any)
			for key, v := range b {
				merged[key] = v
			}
			return generate(rng, root, merged, depth+1)
		}
	}
	if c, ok := obj["const"]; ok {
		return c
	}
	if e, ok := obj["enum"].([]any); ok && len(e) > 0 {
		return e[rng.IntN(len(e))]
	}
	typ := obj["type"]
	if list, ok := typ.([]any); ok && len(list) > 0 {
		typ = list[rng.IntN(len(list))]
	}
	switch typ {
	case "null":
		return nil
	case "boolean":
		return rng.IntN(2) == 0
	case "integer":
		lo, hi := bounds(obj, -1000, 1000)
		return math.Floor(lo + rng.Float64()*(hi-lo+1))
	case "number":
		lo, hi := bounds(obj, -1000, 1000)
		return lo + rng.Float64()*(hi-lo)
	case "string":
		n := rng.IntN(5)
		if f, ok := obj["maxLength"].(float64); ok {
			n = min(n, int(f))
		}
		if f, ok := obj["minLength"].(float64); ok {
			n = max(n, int(f))
		}
		if obj["format"] == "date-time" && rng.IntN(2) == 0 {
			return "2026-12-01T08:00:00Z"
		}
		return strings.Repeat(string(rune('a'+rng.IntN(4))), n)
	case "array":
		var out []any
		prefix, _ := obj["prefixItems"].([]any)
		for _, p := range prefix {
			out = append(out, generate(rng, root, p, depth+1))
		}
		n := rng.IntN(4)
		if obj["items"] == false {
			n = 0
		}
		for range n {
			out = append(out, generate(rng, root, obj["items"], depth+1))
		}
		if out == nil {
			out = []any{}
		}
		return out
	case "object", nil:
		out := map[string]any{}
		props, _ := obj["properties"].(map[string]any)
		req, _ := obj["required"].([]any)
		for _, k := range sortedNames(props) {
			if slices.Contains(req, any(k)) || rng.IntN(2) == 0 {
				out[k] = generate(rng, root, props[k], depth+1)
			}
		}
		if ap, ok := obj["additionalProperties"].(map[string]any); ok {
			for range rng.IntN(3) {
				out[fmt.Sprintf("k%d", rng.IntN(9))] = generate(rng, root, ap, depth+1)
			}
		}
		if rng.IntN(10) == 0 {
			out["extra"] = 1.0
		}
		return out
	}
	return randomValue(rng, depth)
}

func bounds(obj map[string]any, lo, hi float64) (float64, float64) {
	if f, ok := obj["minimum"].(float64); ok {
		lo = max(lo, f)
	}
	if f, ok := obj["maximum"].(float64); ok {
		hi = min(hi, f)
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func randomValue(rng *rand.Rand, depth int) any {
	switch rng.IntN(7) {
	case 0:
		return nil
	case 1:
		return rng.IntN(2) == 0
	case 2:
		return float64(rng.IntN(21) - 10)
	case 3:
		return rng.Float64() * 10
	case 4:
		return []string{"", "a", "x", "fixed", "celsius", "b"}[rng.IntN(6)]
	case 5:
		if depth < 4 {
			return []any{randomValue(rng, depth+1)}
		}
		return []any{}
	default:
		if depth < 4 {
			return map[string]any{"a": randomValue(rng, depth+1)}
		}
		return map[string]any{}
	}
}

func resolveRef(root any, ref string) any {
	frag := strings.TrimPrefix(ref, "#")
	if frag == "" {
		return root
	}
	if !strings.HasPrefix(frag, "/") {
		return findAnchorNode(root, frag)
	}
	node := root
	for _, tok := range strings.Split(frag[1:], "/") {
		m, _ := node.(map[string]any)
		node = m[strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")]
	}
	return node
}

func findAnchorNode(node any, name string) any {
	switch n := node.(type) {
	case map[string]any:
		if n["$anchor"] == name {
			return n
		}
		for _, v := range n {
			if found := findAnchorNode(v, name); found != nil {
				return found
			}
		}
	case []any:
		for _, v := range n {
			if found := findAnchorNode(v, name); found != nil {
				return found
			}
		}
	}
	return nil
}

func sortedNames(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
