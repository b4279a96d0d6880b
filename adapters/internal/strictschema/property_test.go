package strictschema_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"regexp/syntax"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

type address struct {
	Street string  `json:"street"`
	Zip    *string `json:"zip,omitempty"`
	Kind   string  `json:"kind,omitempty" jsonschema:"enum=home,enum=work"`
}

type item struct {
	SKU   string   `json:"sku" jsonschema:"minLength=2,maxLength=8"`
	Count int      `json:"count" jsonschema:"minimum=1,maximum=9"`
	Tags  []string `json:"tags,omitempty" jsonschema:"maxItems=3"`
}

type orderInput struct {
	Customer string      `json:"customer" jsonschema:"format=email"`
	Items    []item      `json:"items" jsonschema:"minItems=1"`
	Ship     *address    `json:"ship,omitempty"`
	Bill     address     `json:"bill" jsonschema:"description=Billing address"`
	Notes    string      `json:"notes,omitempty"`
	Priority *int        `json:"priority,omitempty"`
	Express  bool        `json:"express,omitempty"`
	When     time.Time   `json:"when"`
	Grid     [][]float64 `json:"grid,omitempty"`
}

type flat struct {
	City string `json:"city"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
	Days uint8  `json:"days,omitempty"`
}

func derived[T any](t *testing.T) string {
	s, err := tool.SchemaFor[T]()
	require.NoError(t, err)
	return string(s.JSON())
}

// handWritten are schemas written as people write them: $ref with a
// description, anyOf of different kinds, enums with null, nested arrays,
// optional members deep inside definitions, const, recursion.
var handWritten = map[string]string{
	"ref and anyOf": `{"type":"object","properties":{
		"target":{"$ref":"#/$defs/target","description":"where to send it"},
		"mode":{"anyOf":[{"type":"string","enum":["fast","slow"]},{"type":"integer","minimum":0,"maximum":3}]},
		"choice":{"anyOf":[{"$ref":"#/$defs/target"},{"type":"string"}]}},
		"required":["target"],
		"$defs":{"target":{"type":"object","properties":{"host":{"type":"string"},"port":{"type":"integer","minimum":1,"maximum":65535}},"required":["host"]}}}`,
	"enums and const": `{"type":"object","properties":{
		"level":{"enum":["low","high",null]},
		"code":{"type":"integer","enum":[1,2,3]},
		"kind":{"const":"order"},
		"flag":{"type":["boolean","null"]}},"required":["kind"],"additionalProperties":false}`,
	"nested arrays": `{"type":"object","properties":{
		"matrix":{"type":"array","items":{"type":"array","items":{"type":"object","properties":{"v":{"type":"number"},"note":{"type":"string"}},"required":["v"]},"maxItems":2},"maxItems":2},
		"labels":{"type":"array","items":{"type":"string","enum":["a","b"]},"minItems":1,"maxItems":2}},
		"required":["matrix"]}`,
	"optional in definitions": `{"type":"object","properties":{"a":{"$ref":"#/$defs/outer"}},
		"$defs":{"outer":{"type":"object","properties":{"inner":{"$ref":"#/$defs/inner"},"name":{"type":"string"}}},
		"inner":{"type":"object","properties":{"x":{"type":"integer"},"y":{"type":"integer"}},"required":["x"]}}}`,
	// oneOf whose branches admit disjoint JSON types: it means anyOf.
	"disjoint oneOf": `{"type":"object","properties":{
		"v":{"oneOf":[{"type":"string","enum":["x","y"]},{"type":"integer","minimum":0,"maximum":9},{"$ref":"#/$defs/pt"}]},
		"w":{"oneOf":[{"type":"boolean"},{"type":"array","items":{"type":"string"},"maxItems":2}]}},
		"required":["v"],
		"$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"},"tag":{"type":"string"}},"required":["x"]}}}`,
	// Draft-07, as zod-to-json-schema writes it: definitions, $ref with a
	// description, nullable members through anyOf.
	"draft-07 definitions": `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{
		"to":{"$ref":"#/definitions/addr","description":"recipient"},
		"cc":{"type":"array","items":{"$ref":"#/definitions/addr"},"maxItems":2},
		"note":{"anyOf":[{"type":"string","maxLength":5},{"type":"null"}]},
		"mode":{"type":"string","enum":["a","b"],"default":"a"}},
		"required":["to"],"additionalProperties":false,
		"definitions":{"addr":{"type":"object","properties":{"host":{"type":"string"},"port":{"type":"integer","minimum":1}},"required":["host"],"additionalProperties":false}}}`,
}

// recursive is lowered for OpenAI only: Anthropic refuses recursion.
const recursive = `{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"required":["root"],
	"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/node"},"maxItems":2}},"required":["name"]}}}`

// TestLoweringRoundTrip is the property of the lowering, on schemas NewFunc
// derives and on hand-written ones, for each provider's rules:
//   - every value valid under the canonical schema, lifted (a null added
//     for each absent member made nullable), is valid under the lowered
//     schema;
//   - every value valid under the lowered schema (Checked: with the relaxed
//     constraints kept), after Undo, is valid under the canonical schema;
//   - every value valid under Checked is valid under Wire, which differs
//     only by the relaxed constraints.
//
// Values are generated from each schema at random with a fixed seed; the
// generator aims at valid values, the validator decides, and each
// direction must see enough valid values to mean something.
func TestLoweringRoundTrip(t *testing.T) {
	schemas := map[string]string{
		"derived order": derived[orderInput](t),
		"derived flat":  derived[flat](t),
	}
	for name, s := range handWritten {
		schemas[name] = s
	}
	rulesets := map[string]strictschema.Rules{"openai": strictschema.OpenAI, "anthropic": strictschema.Anthropic}
	for rname, rules := range rulesets {
		cases := map[string]string{}
		for k, v := range schemas {
			cases[k] = v
		}
		if rules.Recursion {
			cases["recursive"] = recursive
		}
		for name, src := range cases {
			t.Run(rname+"/"+name, func(t *testing.T) {
				res := strictschema.Lower([]byte(src), rules)
				require.Empty(t, res.Blocked, "%s", src)
				canonical := compile(t, src)
				checkedSrc := string(strictschema.Checked([]byte(src), rules))
				checked := compile(t, checkedSrc)
				wire := compile(t, string(res.Wire()))
				rng := rand.New(rand.NewPCG(1, 2))

				up, down := 0, 0
				for range 400 {
					canon := mustDecode(t, src)
					v := generate(rng, canon, canon, 0)
					if canonical.Validate(encode(t, v)) != nil {
						continue
					}
					up++
					lifted := lift(v, res.Undo)
					require.NoError(t, checked.Validate(encode(t, lifted)), "canonical %s lifted to %s", encode(t, v), encode(t, lifted))
					undone := res.Undo.Apply(string(encode(t, lifted)))
					require.NoError(t, canonical.Validate([]byte(undone)), "lifted %s undone to %s", encode(t, lifted), undone)
				}
				for range 400 {
					lowered := mustDecode(t, checkedSrc)
					w := generate(rng, lowered, lowered, 0)
					raw := encode(t, w)
					if checked.Validate(raw) != nil {
						continue
					}
					down++
					require.NoError(t, wire.Validate(raw), "checked-valid %s refused by wire", raw)
					undone := res.Undo.Apply(string(raw))
					require.NoError(t, canonical.Validate([]byte(undone)), "lowered %s undone to %s", raw, undone)
				}
				require.Greater(t, up, 40, "too few canonical-valid values generated")
				require.Greater(t, down, 40, "too few lowered-valid values generated")
			})
		}
	}
}

func compile(t *testing.T, src string) tool.Schema {
	t.Helper()
	s, err := tool.ParseSchema([]byte(src))
	require.NoError(t, err, "%s", src)
	return s
}

func mustDecode(t *testing.T, src string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(src), &v))
	return v
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

// lift maps a canonical value to the lowered shape: a null for every absent
// member made nullable, following u as Apply does.
func lift(v any, u *strictschema.Undo) any {
	if u == nil {
		return v
	}
	if len(u.Branches) > 0 {
		k := kindOf(v)
		var pick *strictschema.Undo
		n := 0
		for _, b := range u.Branches {
			if b.Kinds == "" || strings.IndexByte(b.Kinds, k) >= 0 {
				pick, n = b.Undo, n+1
			}
		}
		if n != 1 {
			return v
		}
		return lift(v, pick)
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = lift(e, u.Props[k])
		}
		for k := range u.Nullable {
			if _, ok := out[k]; !ok {
				out[k] = nil
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = lift(e, u.Items)
		}
		return out
	}
	return v
}

func kindOf(v any) byte {
	switch v.(type) {
	case map[string]any:
		return '{'
	case []any:
		return '['
	case string:
		return '"'
	case bool:
		return 't'
	case nil:
		return 'n'
	}
	return '0'
}

// generate makes a value that is likely, not certain, to be valid under s;
// root resolves references. It reads the keywords real tool schemas use:
// bounds, lengths, patterns (through the regular expression's syntax
// tree), formats, minProperties and uniqueItems.
func generate(rng *rand.Rand, s, root any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		if depth > 6 {
			return nil
		}
		return generate(rng, resolve(root, ref), root, depth+1)
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		return generate(rng, mergeAllOf(m, all, root), root, depth+1)
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[rng.IntN(len(e))]
	}
	if c, ok := m["const"]; ok {
		return c
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if br, ok := m[k].([]any); ok && len(br) > 0 {
			return generate(rng, br[rng.IntN(len(br))], root, depth+1)
		}
	}
	var types []string
	switch tt := m["type"].(type) {
	case string:
		types = []string{tt}
	case []any:
		for _, x := range tt {
			if name, ok := x.(string); ok {
				types = append(types, name)
			}
		}
	}
	if len(types) == 0 {
		if _, ok := m["properties"]; ok {
			types = []string{"object"}
		} else {
			return nil
		}
	}
	switch types[rng.IntN(len(types))] {
	case "null":
		return nil
	case "boolean":
		return rng.IntN(2) == 0
	case "integer":
		return genNumber(rng, m, true)
	case "number":
		return genNumber(rng, m, false)
	case "string":
		return genString(rng, m)
	case "array":
		n := int(between(rng, map[string]any{"minimum": m["minItems"], "maximum": m["maxItems"]}, 0, 3))
		if depth > 6 {
			n = 0
		}
		out := make([]any, 0, n)
		seen := map[string]bool{}
		for range n {
			e := generate(rng, m["items"], root, depth+1)
			if m["uniqueItems"] == true {
				key, _ := json.Marshal(e)
				if seen[string(key)] {
					continue
				}
				seen[string(key)] = true
			}
			out = append(out, e)
		}
		return out
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		required := map[string]bool{}
		if rs, ok := m["required"].([]any); ok {
			for _, r := range rs {
				if name, ok := r.(string); ok {
					required[name] = true
				}
			}
		}
		minProps, _ := m["minProperties"].(float64)
		// In name order, so that a seed gives the same values every run.
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if required[name] || rng.IntN(2) == 0 && depth < 6 || float64(len(out)) < minProps {
				out[name] = generate(rng, props[name], root, depth+1)
			}
		}
		return out
	}
	return nil
}

// mergeAllOf folds the branches of an allOf (references resolved) into
// their node: the keywords of each, the members of properties and
// required joined. Enough to aim at values all branches accept.
func mergeAllOf(m map[string]any, all []any, root any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var required []any
	for _, b := range append([]any{m}, all...) {
		bm, _ := b.(map[string]any)
		if ref, ok := bm["$ref"].(string); ok {
			bm, _ = resolve(root, ref).(map[string]any)
		}
		for k, v := range bm {
			switch k {
			case "allOf", "$ref":
			case "properties":
				if pm, ok := v.(map[string]any); ok {
					maps.Copy(props, pm)
				}
			case "required":
				if rs, ok := v.([]any); ok {
					required = append(required, rs...)
				}
			default:
				out[k] = v
			}
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if required != nil {
		out["required"] = required
	}
	return out
}

func resolve(root any, ref string) any {
	if ref == "#" {
		return root
	}
	cur := root
	for _, p := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		m, _ := cur.(map[string]any)
		cur = m[strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")]
	}
	return cur
}

// between picks an integer within the schema's minimum and maximum,
// clamped to [lo, hi] where the schema says nothing.
func between(rng *rand.Rand, m map[string]any, lo, hi int64) int64 {
	if v, ok := m["minimum"].(float64); ok && v > float64(lo) {
		lo = int64(math.Ceil(v))
		if hi < lo {
			hi = lo + 3
		}
	}
	if v, ok := m["maximum"].(float64); ok && v < float64(hi) {
		hi = int64(math.Floor(v))
	}
	if hi < lo {
		return lo
	}
	return lo + rng.Int64N(hi-lo+1)
}

// genNumber picks a number within the bounds of m, exclusive ones and
// multipleOf included; a whole number when integer.
func genNumber(rng *rand.Rand, m map[string]any, integer bool) float64 {
	lo, hi := -50.0, 50.0
	if integer {
		lo, hi = 0, 100
	}
	step := 0.25
	if integer {
		step = 1
	}
	if f, ok := m["multipleOf"].(float64); ok && f > 0 {
		step = f
		if integer && f != math.Trunc(f) {
			step = f * 4
		}
	}
	if v, ok := m["minimum"].(float64); ok {
		lo = v
		hi = max(hi, lo+10*step)
	}
	if v, ok := m["exclusiveMinimum"].(float64); ok {
		lo = v + step
		hi = max(hi, lo+10*step)
	}
	if v, ok := m["maximum"].(float64); ok {
		hi = v
		lo = min(lo, hi-10*step)
	}
	if v, ok := m["exclusiveMaximum"].(float64); ok {
		hi = v - step
		lo = min(lo, hi-10*step)
	}
	first := math.Ceil(lo/step) * step
	n := int64(math.Floor((hi - first) / step))
	if n < 0 {
		return first
	}
	return first + float64(rng.Int64N(n+1))*step
}

func genString(rng *rand.Rand, m map[string]any) string {
	if p, ok := m["pattern"].(string); ok {
		if re, err := syntax.Parse(p, syntax.Perl); err == nil {
			var b strings.Builder
			genRegexp(rng, re, &b, 0)
			return b.String()
		}
	}
	switch m["format"] {
	case "email":
		return fmt.Sprintf("user%d@example.com", rng.IntN(100))
	case "date-time":
		return "2026-11-30T10:00:00Z"
	case "date":
		return "2026-11-30"
	case "time":
		return "10:00:00Z"
	case "duration":
		return "P1DT2H"
	case "uri", "url", "iri":
		return fmt.Sprintf("https://example.com/p%d", rng.IntN(100))
	case "uri-reference", "iri-reference":
		return fmt.Sprintf("/p%d", rng.IntN(100))
	case "uuid":
		return fmt.Sprintf("123e4567-e89b-12d3-a456-4266141740%02d", rng.IntN(100))
	case "ipv4":
		return fmt.Sprintf("192.0.2.%d", rng.IntN(255))
	case "ipv6":
		return "2001:db8::1"
	case "hostname":
		return "example.com"
	}
	n := int(between(rng, map[string]any{"minimum": m["minLength"], "maximum": m["maxLength"]}, 0, 6))
	const letters = "abcxyz"
	var b strings.Builder
	for range n {
		b.WriteByte(letters[rng.IntN(len(letters))])
	}
	return b.String()
}

// genRegexp writes a string the regular expression re matches; anchors and
// word boundaries write nothing, so the string is as likely to match as the
// expression's assertions allow.
func genRegexp(rng *rand.Rand, re *syntax.Regexp, b *strings.Builder, depth int) {
	if depth > 20 {
		return
	}
	repeat := func(lo, hi int) {
		if hi < 0 || hi > lo+2 {
			hi = lo + 2
		}
		for range lo + rng.IntN(hi-lo+1) {
			genRegexp(rng, re.Sub[0], b, depth+1)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		b.WriteString(string(re.Rune))
	case syntax.OpCharClass:
		b.WriteRune(classRune(rng, re.Rune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		b.WriteByte('a')
	case syntax.OpCapture:
		genRegexp(rng, re.Sub[0], b, depth+1)
	case syntax.OpStar:
		repeat(0, 2)
	case syntax.OpPlus:
		repeat(1, 3)
	case syntax.OpQuest:
		repeat(0, 1)
	case syntax.OpRepeat:
		repeat(re.Min, re.Max)
	case syntax.OpConcat:
		for _, s := range re.Sub {
			genRegexp(rng, s, b, depth+1)
		}
	case syntax.OpAlternate:
		genRegexp(rng, re.Sub[rng.IntN(len(re.Sub))], b, depth+1)
	}
}

// classRune picks a rune of a character class (pairs of bounds), printable
// ASCII where the class has some.
func classRune(rng *rand.Rand, ranges []rune) rune {
	var ascii [][2]rune
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := max(ranges[i], ' '), min(ranges[i+1], '~')
		if lo <= hi {
			ascii = append(ascii, [2]rune{lo, hi})
		}
	}
	if len(ascii) > 0 {
		r := ascii[rng.IntN(len(ascii))]
		return r[0] + rune(rng.IntN(int(r[1]-r[0])+1))
	}
	if len(ranges) >= 2 {
		return ranges[0]
	}
	return 'a'
}
