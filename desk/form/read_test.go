package form_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/desk/form"
)

// desk is what the approval desk reads.
var desk = form.Options{Approve: true, Value: true, ExclusiveBounds: true}

func TestReadForms(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		schema    string
		opts      form.Options
		want      form.Form
	}{
		{
			name: "every kind of field", why: "the fields come in the order written, each with what the schema says of it",
			schema: `{"type":"object","title":"Refund","description":"Decide the refund","$schema":"https://json-schema.org/draft/2020-12/schema","additionalProperties":false,"properties":{
				"ok":{"type":"boolean","title":"Approve","default":false},
				"email":{"type":"string","format":"email","minLength":3,"maxLength":5.0e1,"default":"a@b.c"},
				"cents":{"type":"integer","minimum":1,"maximum":1e5,"default":100},
				"rate":{"type":"number","minimum":-0.5,"description":"a rate"},
				"color":{"type":"string","enum":["r","g"],"enumNames":["Red","Green"],"default":"g"},
				"size":{"type":"string","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"Large"}]},
				"tags":{"type":"array","items":{"type":"string","enum":["a","<b>"]},"minItems":1,"maxItems":2,"default":["<b>"]},
				"picks":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}},
				"required":["cents","ok"]}`,
			want: form.Form{Shape: form.ShapeObject, Title: "Refund", Description: "Decide the refund", Fields: []form.Field{
				{Name: "ok", Kind: form.KindBoolean, Required: true, Title: "Approve", Default: json.RawMessage(`false`)},
				{Name: "email", Kind: form.KindString, Format: "email", MinLength: "3", MaxLength: "50", Default: json.RawMessage(`"a@b.c"`)},
				{Name: "cents", Kind: form.KindInteger, Required: true, Minimum: "1", Maximum: "1e5", Default: json.RawMessage(`100`)},
				{Name: "rate", Kind: form.KindNumber, Minimum: "-0.5", Description: "a rate"},
				{Name: "color", Kind: form.KindSelect, Options: []form.Option{{Value: "r", Title: "Red"}, {Value: "g", Title: "Green"}}, Default: json.RawMessage(`"g"`)},
				{Name: "size", Kind: form.KindSelect, Options: []form.Option{{Value: "s", Title: "Small"}, {Value: "l", Title: "Large"}}},
				{Name: "tags", Kind: form.KindMultiSelect, Options: []form.Option{{Value: "a"}, {Value: "<b>"}}, MinItems: "1", MaxItems: "2", Default: json.RawMessage(`["<b>"]`)},
				{Name: "picks", Kind: form.KindMultiSelect, Options: []form.Option{{Value: "x", Title: "X"}}},
			}},
		},
		{
			name: "no properties", why: "MCP allows an empty form: its answer is {}",
			schema: `{"type":"object","properties":{}}`,
			want:   form.Form{Shape: form.ShapeObject},
		},
		{
			name: "approve", why: "a bare boolean is an approval, with the desk's option",
			schema: `{"type":"boolean","title":"Refund","description":"Go ahead?"}`, opts: desk,
			want: form.Form{Shape: form.ShapeApprove, Title: "Refund", Description: "Go ahead?"},
		},
		{
			name: "a boolean with a default is a value", why: "an approval's answer is always true; a default asks for a yes or a no",
			schema: `{"type":"boolean","default":true}`, opts: desk,
			want: form.Form{Shape: form.ShapeValue, Fields: []form.Field{{Kind: form.KindBoolean, Required: true, Default: json.RawMessage(`true`)}}},
		},
		{
			name: "root value", why: "the schema's title and description are the form's; its one field is required",
			schema: `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"integer","title":"Count","description":"How many","exclusiveMinimum":0,"maximum":10.5}`, opts: desk,
			want: form.Form{Shape: form.ShapeValue, Title: "Count", Description: "How many", Fields: []form.Field{{Kind: form.KindInteger, Required: true, ExclusiveMinimum: "0", Maximum: "10.5"}}},
		},
		{
			name: "root select", why: "a root enum is one select",
			schema: `{"type":"string","enum":["red","blue"]}`, opts: form.Options{Value: true},
			want: form.Form{Shape: form.ShapeValue, Fields: []form.Field{{Kind: form.KindSelect, Required: true, Options: []form.Option{{Value: "red"}, {Value: "blue"}}}}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := form.Read([]byte(tc.schema), tc.opts)
			require.NoError(t, err, tc.why)
			require.Equal(t, tc.want, got, tc.why)
		})
	}
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, why string
		schema    string
		opts      form.Options
		err       string
	}{
		{"not JSON", "any bytes are safe", `{"type":`, form.Options{}, `the schema is not an object with "type":"object"`},
		{"two documents", "one document and nothing more", `{"type":"object","properties":{}} {}`, form.Options{}, `the schema is not an object with "type":"object"`},
		{"an array", "the root is an object", `[]`, desk, `the schema is not an object with "type":"object"`},
		{"a root boolean", "an approval is the desk's option", `{"type":"boolean"}`, form.Options{}, `the root must have "type":"object"`},
		{"a root string", "a root value is the desk's option", `{"type":"string"}`, form.Options{Approve: true}, `the root must have "type":"object"`},
		{"a root null", "no option reads a null", `{"type":"null"}`, desk, `the root must have "type":"object"`},
		{"a root value outside the subset", "the option adds the root, not keywords", `{"type":"string","pattern":"x"}`, desk, `the root: keyword "pattern" is not allowed on a string in an elicitation form`},
		{"an approval with a constraint", "an approval has no field to show it", `{"type":"boolean","const":true}`, form.Options{Approve: true}, `the root must have "type":"object"`},
		{"exclusive bounds", "MCP has none", `{"type":"object","properties":{"n":{"type":"number","exclusiveMinimum":0}}}`, form.Options{}, `property "n": keyword "exclusiveMinimum" is not allowed on a number in an elicitation form`},
		{"no type", "a property says what it is", `{"type":"object","properties":{"a":{}}}`, form.Options{}, `property "a": "type" must be one of string, number, integer, boolean, array`},
		{"a boolean property", "a property is a schema object", `{"type":"object","properties":{"a":true}}`, form.Options{}, `property "a" must be a schema object`},
		{"required not an array", "names of members", `{"type":"object","properties":{},"required":"a"}`, form.Options{}, `"required" must be an array of member names`},
		{"a title not a string", "a title is text", `{"type":"object","properties":{"a":{"type":"boolean","title":1}}}`, form.Options{}, `property "a": "title" must be a string`},
		{"enum and oneOf", "one list of options", `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"oneOf":[{"const":"x","title":"X"}]}}}`, form.Options{}, `property "a": a single-select has "enum" or "oneOf", not both`},
		{"a select with a length", "a select cannot show it", `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"maxLength":3}}}`, form.Options{}, `property "a": keyword "maxLength" is not allowed on a single-select in an elicitation form`},
		{"enumNames too short", "one title a value", `{"type":"object","properties":{"a":{"type":"string","enum":["x","y"],"enumNames":["X"]}}}`, form.Options{}, `property "a": "enumNames" must hold one string for each value of "enum"`},
		{"enumNames alone", "titles of nothing", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}],"enumNames":["X"]}}}`, form.Options{}, `property "a": "enumNames" needs "enum"`},
		{"an option without a title", "MCP requires it", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x"}]}}}`, form.Options{}, `property "a": option "x" needs a "title", a non-empty string`},
		{"an empty const", "it would read as nothing chosen", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"","title":"None"}]}}}`, form.Options{}, `property "a": an option's "const" must be a non-empty string`},
		{"oneOf empty", "no choice", `{"type":"object","properties":{"a":{"type":"string","oneOf":[]}}}`, form.Options{}, `property "a": "oneOf" must be a non-empty array of {"const","title"}`},
		{"an option with more", "only a value and a title", `{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X","description":"d"}]}}}`, form.Options{}, `property "a": keyword "description" is not allowed on an option in an elicitation form`},
		{"untyped enum items", "MCP's untitled multi-select has \"type\":\"string\"", `{"type":"object","properties":{"a":{"type":"array","items":{"enum":["x"]}}}}`, form.Options{}, `property "a": the items of an array with "enum" need "type":"string"`},
		{"typed anyOf items", "MCP's titled multi-select has no type", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","anyOf":[{"const":"x","title":"X"}]}}}}`, form.Options{}, `property "a": the items of an array with "anyOf" take no "type"`},
		{"items with both", "one list of options", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"],"anyOf":[{"const":"x","title":"X"}]}}}}`, form.Options{}, `property "a": the items of an array have "enum" or "anyOf", not both`},
		{"minLength above maxLength", "no value would do", `{"type":"object","properties":{"a":{"type":"string","minLength":5,"maxLength":2}}}`, form.Options{}, `property "a": "minLength" (5) is more than "maxLength" (2)`},
		{"minimum above maximum", "no value would do", `{"type":"object","properties":{"a":{"type":"number","minimum":1.5,"maximum":1.25}}}`, form.Options{}, `property "a": "minimum" (1.5) is more than "maximum" (1.25)`},
		{"minItems above maxItems", "no choice would do", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]},"minItems":2,"maxItems":1}}}`, form.Options{}, `property "a": "minItems" (2) is more than "maxItems" (1)`},
		{"a fractional length", "a count of characters", `{"type":"object","properties":{"a":{"type":"string","minLength":1.5}}}`, form.Options{}, `property "a": "minLength" must be a non-negative integer`},
		{"a huge exponent", "reading it would cost too much", `{"type":"object","properties":{"a":{"type":"number","minimum":1e999999999}}}`, form.Options{}, `property "a": "minimum" must be a number of at most 100 characters, its exponent within ±1000`},
		{"a string default of a number", "a default is of the field's kind", `{"type":"object","properties":{"a":{"type":"number","default":"1"}}}`, form.Options{}, `property "a": "default" must be a number`},
		{"a fractional integer default", "a default is of the field's kind", `{"type":"object","properties":{"a":{"type":"integer","default":1.5}}}`, form.Options{}, `property "a": "default" must be an integer`},
		{"a boolean default of a string", "a default is of the field's kind", `{"type":"object","properties":{"a":{"type":"boolean","default":"yes"}}}`, form.Options{}, `property "a": "default" must be true or false`},
		{"a default not an option", "a select can only start on an option", `{"type":"object","properties":{"a":{"type":"string","enum":["x"],"default":"y"}}}`, form.Options{}, `property "a": "default" must be one of the options`},
		{"a multi-select default not options", "only options can be chosen", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]},"default":["x","y"]}}}`, form.Options{}, `property "a": "default" must be an array of the options`},
		{"a property named twice", "one field a name", `{"type":"object","properties":{"a":{"type":"boolean"},"a":{"type":"boolean"}}}`, form.Options{}, `"properties" names "a" twice`},
		{"the first problem in sorted order", "the message is the same however the schema orders its properties", `{"type":"object","properties":{"b":{"type":"null"},"a":{"type":"null"}}}`, form.Options{}, `property "a": type null is not one of string, number, integer, boolean, array`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := form.Read([]byte(tc.schema), tc.opts)
			require.ErrorIs(t, err, form.ErrNotForm, tc.why)
			require.EqualError(t, err, "tool: not a form: "+tc.err, tc.why)
			require.Zero(t, f)
		})
	}
}

// The desk's options add to the zero Options, never take away: every
// schema the zero Options read, the desk reads the same.
func TestOptionsOnlyAdd(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{}}`,
		`{"type":"object","properties":{"n":{"type":"number","minimum":1},"s":{"type":"string","enum":["a"]}},"required":["n"]}`,
		`{"type":"object","additionalProperties":false,"properties":{"m":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}}}`,
	} {
		mcp, err := form.Read([]byte(schema), form.Options{})
		require.NoError(t, err)
		got, err := form.Read([]byte(schema), desk)
		require.NoError(t, err)
		require.Equal(t, mcp, got, schema)
	}
}

// Read keeps nothing of the schema: changing it afterwards changes no
// Form.
func TestReadCopies(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{"a":{"type":"string","title":"T","default":"dd"}}}`)
	f, err := form.Read(schema, form.Options{})
	require.NoError(t, err)
	for i := range schema {
		schema[i] = ' '
	}
	require.Equal(t, "T", f.Fields[0].Title)
	require.JSONEq(t, `"dd"`, string(f.Fields[0].Default))
}

// A large schema is read in time linear in its size: a form of many
// properties and options is read whole.
func TestReadLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{`)
	const n = 20000
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p` + strings.Repeat("x", i%7) + strconv.Itoa(i) + `":{"type":"boolean"}`)
	}
	b.WriteString(`},"required":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"p` + strings.Repeat("x", i%7) + strconv.Itoa(i) + `"`)
	}
	b.WriteString(`]}`)
	f, err := form.Read([]byte(b.String()), form.Options{})
	require.NoError(t, err)
	require.Len(t, f.Fields, n)
	require.True(t, f.Fields[n-1].Required)
}
