package strictschema_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

func TestLowerBlocks(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		rules        strictschema.Rules
		want         []strictschema.Finding
	}{
		{"free-form object", `{"type":"object","additionalProperties":true}`, strictschema.OpenAI, []strictschema.Finding{
			{"", "an object that declares no properties and does not forbid others is free-form, which strict mode cannot express"}}},
		{"free-form member", `{"type":"object","properties":{"meta":{"type":"object","properties":{}}}}`, strictschema.Anthropic, []strictschema.Finding{
			{"/properties/meta", "an object that declares no properties and does not forbid others is free-form, which strict mode cannot express"}}},
		{"no arguments but some required", `{"type":"object","minProperties":1}`, strictschema.OpenAI, []strictschema.Finding{
			{"/minProperties", "a tool without declared arguments that requires some cannot be strict: the closed object admits only {}"}}},
		{"map", `{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"integer"}}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/m", "an object that declares no properties and does not forbid others is free-form, which strict mode cannot express"},
			{"/properties/m/additionalProperties", "additionalProperties with a schema (a map) cannot be strict: every member must be named"}}},
		{"any value", `{"type":"object","properties":{"x":true,"y":{}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/x", "the schema true admits any value, which strict mode cannot express"},
			{"/properties/y", "a schema without type, enum, const, anyOf or $ref admits any value, which strict mode cannot express"}}},
		{"allOf oneOf not", `{"type":"object","properties":{"a":{"type":"string","allOf":[{"type":"string"}],"oneOf":[{"type":"string"},{"type":"string","minLength":1}],"not":{"type":"null"}}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/a/allOf", "allOf is not supported in strict mode"},
			{"/properties/a/not", "not is not supported in strict mode"},
			{"/properties/a/oneOf", "oneOf is not supported in strict mode unless its branches admit disjoint JSON types, so that it means anyOf"}}},
		{"oneOf of integer and number", `{"type":"object","properties":{"a":{"oneOf":[{"type":"integer"},{"type":"number","multipleOf":0.5}]}}}`, strictschema.Anthropic, []strictschema.Finding{
			{"/properties/a/oneOf", "oneOf is not supported in strict mode unless its branches admit disjoint JSON types, so that it means anyOf"}}},
		{"oneOf with an untyped branch", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string"},{"minimum":1}]}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/a/oneOf", "oneOf is not supported in strict mode unless its branches admit disjoint JSON types, so that it means anyOf"}}},
		{"oneOf beside anyOf", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string"}],"oneOf":[{"type":"string"}]}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/a/oneOf", "oneOf beside anyOf is not supported in strict mode"}}},
		{"oneOf at the root", `{"type":"object","oneOf":[{"type":"object","properties":{"a":{"type":"string"}}}]}`, strictschema.OpenAI, []strictschema.Finding{
			{"/oneOf", "the root of a strict schema cannot be anyOf, which this oneOf would be"}}},
		{"root anyOf", `{"type":"object","anyOf":[{"properties":{"a":{"type":"string"}}}]}`, strictschema.OpenAI, []strictschema.Finding{
			{"/anyOf", "the root of a strict schema cannot be anyOf"},
			{"/anyOf/0", "a schema without type, enum, const, anyOf or $ref admits any value, which strict mode cannot express"},
			{"/anyOf/0/properties", "properties on a schema whose type does not include object"}}},
		{"recursion under Anthropic", recursive, strictschema.Anthropic, []strictschema.Finding{
			{"/$defs/node/properties/children/items/$ref", `a recursive schema (through "#/$defs/node") cannot be strict here`}}},
		{"ref with siblings", `{"type":"object","properties":{"a":{"$ref":"#/$defs/s","minLength":2}},"$defs":{"s":{"type":"string"}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/a/minLength", "$ref with the sibling keyword minLength cannot be strict"}}},
		{"ref outside $defs", `{"type":"object","properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/b/$ref", `only references to the root or to a definition of the root's $defs can be strict; found "#/properties/a"`}}},
		{"complex enum", `{"type":"object","properties":{"a":{"enum":[{"x":1}]}}}`, strictschema.Anthropic, []strictschema.Finding{
			{"/properties/a/enum/0", "enum values must be strings, numbers, booleans or null"}}},
		{"array without items", `{"type":"object","properties":{"a":{"type":"array"}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/a", "an array must declare the schema of its items"}}},
		{"ambiguous anyOf", `{"type":"object","properties":{"a":{"anyOf":[{"type":"object","properties":{"x":{"type":"string"}}},{"type":"object","properties":{"y":{"type":"string"}}}]}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/a/anyOf", "anyOf branches with optional members must differ in JSON type from the other branches, so that a null sent for an absent member can be removed unambiguously"}}},
		{"older dialect", `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"a":{"type":"string"}}}`, strictschema.OpenAI, []strictschema.Finding{
			{"/$schema", `only JSON Schema 2020-12 and draft-07 are lowered; the schema declares "http://json-schema.org/draft-04/schema#"`}}},
		{"required names an undeclared member, OpenAI", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`, strictschema.OpenAI, []strictschema.Finding{
			{"/required/1", `required names the member "b", which properties does not declare: a closed strict schema would refuse every call or admit none`}}},
		{"required names an undeclared member, Anthropic", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`, strictschema.Anthropic, []strictschema.Finding{
			{"/required/1", `required names the member "b", which properties does not declare: a closed strict schema would refuse every call or admit none`}}},
		{"integer with a string enum", `{"type":"object","properties":{"n":{"type":"integer","enum":["1","2"]}},"required":["n"]}`, strictschema.Anthropic, []strictschema.Finding{
			{"/properties/n/enum", "no value of enum has the declared type, so no value is valid"}}},
		{"integer with a fractional enum", `{"type":"object","properties":{"n":{"type":"integer","enum":[1.5]}},"required":["n"]}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/n/enum", "no value of enum has the declared type, so no value is valid"}}},
		{"const of another type", `{"type":"object","properties":{"k":{"type":"string","const":1}},"required":["k"]}`, strictschema.OpenAI, []strictschema.Finding{
			{"/properties/k/const", "the value of const does not have the declared type, so no value is valid"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := strictschema.Lower([]byte(tc.schema), tc.rules)
			require.Equal(t, tc.want, res.Blocked)
			require.Nil(t, res.Wire())
		})
	}
}

func TestLowerRelaxes(t *testing.T) {
	schema := `{"type":"object","properties":{
		"name":{"type":"string","minLength":1,"description":"Who"},
		"n":{"type":"integer","minimum":1,"maximum":5},
		"tags":{"type":"array","items":{"type":"string","pattern":"\\bx"},"minItems":2,"maxItems":4,"uniqueItems":true},
		"site":{"type":"string","format":"uri"}},"required":["name"]}`
	openai := strictschema.Lower([]byte(schema), strictschema.OpenAI)
	require.Empty(t, openai.Blocked)
	require.Equal(t, []strictschema.Finding{
		{"/properties/name/minLength", "minLength is not enforced in strict mode; moved into the description"},
		{"/properties/site/format", "format is not enforced in strict mode; moved into the description"},
		{"/properties/tags/uniqueItems", "uniqueItems is not enforced in strict mode; moved into the description"},
	}, openai.Relaxed)
	require.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["n","name","site","tags"],"properties":{
		"name":{"type":"string","description":"Who (minLength: 1)"},
		"n":{"type":["integer","null"],"minimum":1,"maximum":5},
		"tags":{"type":["array","null"],"items":{"type":"string","pattern":"\\bx"},"minItems":2,"maxItems":4,"description":"(uniqueItems: true)"},
		"site":{"type":["string","null"],"description":"(format: \"uri\")"}}}`, string(openai.Wire()))

	anthropic := strictschema.Lower([]byte(schema), strictschema.Anthropic)
	require.Empty(t, anthropic.Blocked)
	require.Len(t, anthropic.Relaxed, 7)
	require.Equal(t, 3, anthropic.Optional)
	require.JSONEq(t, `{"type":"object","additionalProperties":false,"required":["name"],"properties":{
		"name":{"type":"string","description":"Who (minLength: 1)"},
		"n":{"type":"integer","description":"(maximum: 5; minimum: 1)"},
		"tags":{"type":"array","items":{"type":"string","description":"(pattern: \"\\\\bx\")"},"description":"(maxItems: 4; minItems: 2; uniqueItems: true)"},
		"site":{"type":"string","format":"uri"}}}`, string(anthropic.Wire()))
	// Checked keeps what Wire relaxes, and both compile.
	for _, s := range [][]byte{openai.Wire(), strictschema.Checked([]byte(schema), strictschema.OpenAI), anthropic.Wire(), strictschema.Checked([]byte(schema), strictschema.Anthropic)} {
		_, err := tool.ParseSchema(s)
		require.NoError(t, err)
	}
}

func TestApply(t *testing.T) {
	res := strictschema.Lower([]byte(`{"type":"object","properties":{
		"a":{"type":"string"},
		"b":{"type":"object","properties":{"c":{"type":"integer"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"d":{"type":"string"}}}}},"required":["a"]}`), strictschema.OpenAI)
	require.Empty(t, res.Blocked)
	for _, tc := range []struct{ name, in, want string }{
		{"nulls removed at every level", `{"a":null,"b":{"c":null},"list":[{"d":null},{"d":"x"}]}`, `{"a":null,"b":{},"list":[{},{"d":"x"}]}`},
		{"first member removed, with the comma after it", `{"b":null,"a":"x"}`, `{"a":"x"}`},
		{"spacing kept around what stays", `{"a":"x", "b" : null , "list":[]}`, `{"a":"x" , "list":[]}`},
		{"every member removed", `{ "b":null, "list":null }`, `{ }`},
		{"two leading members removed", `{"b":null,"list":null,"a":"x"}`, `{"a":"x"}`},
		{"nothing to remove: the same text", `{ "a" : "x",  "b":{"c":1.50} }`, `{ "a" : "x",  "b":{"c":1.50} }`},
		{"number text kept", `{"a":"x","b":null,"n":1.0e2}`, `{"a":"x","n":1.0e2}`},
		{"malformed: unchanged", `{"a":"x","b":null`, `{"a":"x","b":null`},
		{"duplicate names: unchanged", `{"a":"x","b":null,"b":null}`, `{"a":"x","b":null,"b":null}`},
		{"trailing data: unchanged", `{"b":null} {}`, `{"b":null} {}`},
		{"not an object: unchanged", `[null]`, `[null]`},
		{"blank: unchanged", ``, ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, res.Undo.Apply(tc.in))
		})
	}
	var none *strictschema.Undo
	require.Equal(t, `{"b":null}`, none.Apply(`{"b":null}`))
}

// TestLowerNoArguments: a tool without arguments is closed with no
// members, so the provider sends {}, which the canonical schema admits.
func TestLowerNoArguments(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		rules        strictschema.Rules
		want         string
	}{
		{"empty properties, OpenAI", `{"type":"object","properties":{}}`, strictschema.OpenAI,
			`{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{"empty properties, Anthropic", `{"type":"object","properties":{}}`, strictschema.Anthropic,
			`{"type":"object","properties":{},"additionalProperties":false}`},
		{"type only, OpenAI", `{"type":"object"}`, strictschema.OpenAI,
			`{"type":"object","properties":{},"required":[],"additionalProperties":false}`},
		{"type only, Anthropic", `{"type":"object","description":"none"}`, strictschema.Anthropic,
			`{"type":"object","properties":{},"additionalProperties":false,"description":"none"}`},
		{"already closed", `{"type":"object","additionalProperties":false}`, strictschema.OpenAI,
			`{"type":"object","additionalProperties":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := strictschema.Lower([]byte(tc.schema), tc.rules)
			require.Empty(t, res.Blocked)
			require.JSONEq(t, tc.want, string(res.Wire()))
			canonical, err := tool.ParseSchema([]byte(tc.schema))
			require.NoError(t, err)
			lowered, err := tool.ParseSchema(res.Wire())
			require.NoError(t, err)
			require.NoError(t, lowered.Validate(json.RawMessage(`{}`)))
			require.NoError(t, canonical.Validate(json.RawMessage(res.Undo.Apply(`{}`))))
			require.Error(t, lowered.Validate(json.RawMessage(`{"x":1}`)), "closed")
		})
	}
}

const draft07 = `"$schema":"http://json-schema.org/draft-07/schema#",`

// TestLowerDraft07: a draft-07 schema that uses nothing whose meaning
// differs in 2020-12 is lowered, definitions read as $defs; one that does
// is not, with a finding naming the keyword.
func TestLowerDraft07(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		rules        strictschema.Rules
		want         string
		blocked      []strictschema.Finding
	}{
		{"plain", `{` + draft07 + `"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, strictschema.OpenAI,
			`{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}`, nil},
		{"without the empty fragment", `{"$schema":"https://json-schema.org/draft-07/schema","type":"object","properties":{"a":{"type":"string"}}}`, strictschema.Anthropic,
			`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, nil},
		{"definitions become $defs", `{` + draft07 + `"type":"object","properties":{"p":{"$ref":"#/definitions/pt"},"q":{"$ref":"#/definitions/pt","description":"second"}},"required":["p","q"],
			"definitions":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"]}}}`, strictschema.OpenAI,
			`{"type":"object","properties":{"p":{"$ref":"#/$defs/pt"},"q":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false,"description":"second"}},"required":["p","q"],"additionalProperties":false,
			"$defs":{"pt":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],"additionalProperties":false}}}`, nil},
		{"items as a schema", `{` + draft07 + `"type":"object","properties":{"l":{"type":"array","items":{"type":"integer"}}},"required":["l"]}`, strictschema.Anthropic,
			`{"type":"object","properties":{"l":{"type":"array","items":{"type":"integer"}}},"required":["l"],"additionalProperties":false}`, nil},
		{"keyword beside $ref", `{` + draft07 + `"type":"object","properties":{"p":{"$ref":"#/definitions/s","maxLength":3,"title":"t"}},"definitions":{"s":{"type":"string"}}}`, strictschema.OpenAI, "",
			[]strictschema.Finding{{"/properties/p/maxLength", "draft-07 ignores maxLength beside $ref, 2020-12 applies it: the draft-07 schema is not lowered"}}},
		{"items as an array", `{` + draft07 + `"type":"object","properties":{"t":{"type":"array","items":[{"type":"string"},{"type":"integer"}]}}}`, strictschema.OpenAI, "",
			[]strictschema.Finding{{"/properties/t/items", "items as an array is a tuple in draft-07 (prefixItems in 2020-12): the draft-07 schema is not lowered"}}},
		{"additionalItems and dependencies", `{` + draft07 + `"type":"object","properties":{"t":{"type":"array","items":{"type":"string"},"additionalItems":false}},"dependencies":{"a":["b"]}}`, strictschema.Anthropic, "",
			[]strictschema.Finding{
				{"/dependencies", "dependencies is draft-07's dependentRequired and dependentSchemas in one: the draft-07 schema is not lowered"},
				{"/properties/t/additionalItems", "additionalItems is the rest of a draft-07 tuple (items in 2020-12): the draft-07 schema is not lowered"}}},
		{"deep in definitions and anyOf", `{` + draft07 + `"type":"object","properties":{"u":{"anyOf":[{"$ref":"#/definitions/d"},{"type":"null"}]}},
			"definitions":{"d":{"type":"array","items":[{"type":"string"}]}}}`, strictschema.OpenAI, "",
			[]strictschema.Finding{{"/definitions/d/items", "items as an array is a tuple in draft-07 (prefixItems in 2020-12): the draft-07 schema is not lowered"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := strictschema.Lower([]byte(tc.schema), tc.rules)
			require.Equal(t, tc.blocked, res.Blocked)
			if tc.blocked != nil {
				require.Nil(t, res.Wire())
				return
			}
			require.JSONEq(t, tc.want, string(res.Wire()))
			_, err := tool.ParseSchema(res.Wire())
			require.NoError(t, err)
		})
	}
}

// TestLowerOneOfDisjoint: a oneOf whose branches admit disjoint JSON types
// means anyOf, and is lowered as one.
func TestLowerOneOfDisjoint(t *testing.T) {
	for _, tc := range []struct {
		name, schema string
		rules        strictschema.Rules
		want         string
	}{
		{"by type", `{"type":"object","properties":{"v":{"oneOf":[{"type":"string","maxLength":4},{"type":"integer"},{"type":["boolean","null"]}]}},"required":["v"]}`, strictschema.OpenAI,
			`{"type":"object","properties":{"v":{"anyOf":[{"type":"string","description":"(maxLength: 4)"},{"type":"integer"},{"type":["boolean","null"]}]}},"required":["v"],"additionalProperties":false}`},
		{"by enum, const and reference, optional", `{"type":"object","properties":{"v":{"oneOf":[{"enum":["a","b"]},{"const":3},{"$ref":"#/$defs/o"}]}},
			"$defs":{"o":{"type":"object","properties":{"x":{"type":"string"}}}}}`, strictschema.OpenAI,
			`{"type":"object","properties":{"v":{"anyOf":[{"anyOf":[{"enum":["a","b"]},{"const":3},{"$ref":"#/$defs/o"}]},{"type":"null"}]}},"required":["v"],"additionalProperties":false,
			"$defs":{"o":{"type":"object","properties":{"x":{"type":["string","null"]}},"required":["x"],"additionalProperties":false}}}`},
		{"nested anyOf branch", `{"type":"object","properties":{"v":{"oneOf":[{"anyOf":[{"type":"string"},{"type":"null"}]},{"type":"array","items":{"type":"number"}}]}}}`, strictschema.Anthropic,
			`{"type":"object","properties":{"v":{"anyOf":[{"anyOf":[{"type":"string"},{"type":"null"}]},{"type":"array","items":{"type":"number"}}]}},"additionalProperties":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := strictschema.Lower([]byte(tc.schema), tc.rules)
			require.Empty(t, res.Blocked)
			require.JSONEq(t, tc.want, string(res.Wire()))
			_, err := tool.ParseSchema(res.Wire())
			require.NoError(t, err)
		})
	}
}

// TestLowerOwnNullOfOptionalMember: an optional member whose own schema
// admits null reads the same as one not given once strict mode makes it
// required and nullable. The lowering says so, for each such member and
// for no other, and Undo takes the null as "not given": never a meaning
// the canonical schema gives it that the model did not choose.
func TestLowerOwnNullOfOptionalMember(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"manager":{"type":["string","null"]},
		"note":{"anyOf":[{"type":"string"},{"type":"null"}]},
		"team":{"type":"string"},
		"id":{"type":["string","null"]}},"required":["id"]}`)
	res := strictschema.Lower(schema, strictschema.OpenAI)
	require.Empty(t, res.Blocked)
	var nulls []string
	for _, f := range res.Relaxed {
		nulls = append(nulls, f.Pointer)
		require.Contains(t, f.Rule, "explicit null")
	}
	require.Equal(t, []string{"/properties/manager", "/properties/note"}, nulls)
	require.Equal(t, `{"id":null}`, res.Undo.Apply(`{"id":null,"manager":null,"note":null,"team":null}`))

	anthropic := strictschema.Lower(schema, strictschema.Anthropic)
	require.Empty(t, anthropic.Relaxed, "optional members stay optional: an explicit null keeps its meaning")
}

// TestLowerAllOf: Anthropic's strict mode takes allOf without $ref.
// Branches that describe objects are merged into their node (closed one by
// one they would refuse each other's members); others stay in allOf.
func TestLowerAllOf(t *testing.T) {
	objects := `{"type":"object","properties":{"order":{"type":"string"}},"required":["order"],
		"allOf":[{"properties":{"amount":{"type":"integer"}},"required":["amount"]},
			{"type":"object","properties":{"note":{"type":"string"}},"description":"extra"}]}`
	for _, tc := range []struct {
		name, schema string
		rules        strictschema.Rules
		want         string   // the lowered schema, when not blocked
		blocked      []string // pointers of the blocking findings
		valid        []string // arguments the lowered schema admits
		invalid      []string // arguments it refuses
	}{
		{name: "object branches merged", schema: objects, rules: strictschema.Anthropic,
			want: `{"type":"object","additionalProperties":false,"required":["order","amount"],"properties":{
				"order":{"type":"string"},"amount":{"type":"integer"},"note":{"type":"string"}}}`,
			valid:   []string{`{"order":"A-1","amount":3}`, `{"order":"A-1","amount":3,"note":"x"}`},
			invalid: []string{`{"order":"A-1"}`, `{"amount":3}`, `{"order":"A-1","amount":3,"other":1}`}},
		{name: "value branches kept", schema: `{"type":"object","properties":{"code":{"type":"string","allOf":[{"pattern":"^A"},{"pattern":"9$"}]}},"required":["code"]}`,
			rules: strictschema.Anthropic,
			want:  `{"type":"object","additionalProperties":false,"required":["code"],"properties":{"code":{"type":"string","allOf":[{"type":"string","pattern":"^A"},{"type":"string","pattern":"9$"}]}}}`,
			valid: []string{`{"code":"A19"}`}, invalid: []string{`{"code":"B19"}`, `{"code":"A1"}`}},
		{name: "$ref in a branch", schema: `{"type":"object","properties":{"a":{"allOf":[{"$ref":"#/$defs/x"}]}},"$defs":{"x":{"type":"string"}}}`,
			rules: strictschema.Anthropic, blocked: []string{"/properties/a/allOf/0/$ref"}},
		{name: "a member declared twice", schema: `{"type":"object","properties":{"a":{"type":"string"}},"allOf":[{"properties":{"a":{"minLength":2}}}]}`,
			rules: strictschema.Anthropic, blocked: []string{"/allOf/0/properties/a"}},
		{name: "a branch that closes the object", schema: `{"type":"object","allOf":[{"properties":{"a":{"type":"string"}},"additionalProperties":false},{"properties":{"b":{"type":"string"}}}]}`,
			rules: strictschema.Anthropic, blocked: []string{"/allOf/0/additionalProperties"}},
		{name: "OpenAI takes no allOf", schema: objects, rules: strictschema.OpenAI, blocked: []string{"/allOf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := strictschema.Lower([]byte(tc.schema), tc.rules)
			var blocked []string
			for _, f := range res.Blocked {
				blocked = append(blocked, f.Pointer)
			}
			require.Equal(t, tc.blocked, blocked, "%v", res.Blocked)
			if tc.blocked != nil {
				return
			}
			require.JSONEq(t, tc.want, string(res.Wire()))
			canonical, err := tool.ParseSchema([]byte(tc.schema))
			require.NoError(t, err)
			lowered, err := tool.ParseSchema(res.Wire())
			require.NoError(t, err)
			for _, v := range tc.valid {
				require.NoError(t, lowered.Validate(json.RawMessage(v)), v)
				require.NoError(t, canonical.Validate(json.RawMessage(res.Undo.Apply(v))), v)
			}
			for _, v := range tc.invalid {
				require.Error(t, lowered.Validate(json.RawMessage(v)), v)
			}
		})
	}
}
