package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// schemaDoc decodes a schema document for inspection, keeping numbers as
// their exact text.
func schemaDoc(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc map[string]any
	require.NoError(t, dec.Decode(&doc), "schema %s", raw)
	return doc
}

// at follows keys through nested objects of a decoded schema.
func at(t *testing.T, doc map[string]any, keys ...string) any {
	t.Helper()
	var cur any = doc
	for i, k := range keys {
		obj, ok := cur.(map[string]any)
		require.Truef(t, ok, "%v is not an object at %v", cur, keys[:i])
		cur, ok = obj[k]
		require.Truef(t, ok, "no member %q at %v in %v", k, keys[:i], obj)
	}
	return cur
}

// schemaOf derives the schema of T and fails the test on error.
func schemaOf[T any](t *testing.T) tool.Schema {
	t.Helper()
	s, err := tool.SchemaFor[T]()
	require.NoError(t, err)
	require.True(t, s.Valid())
	return s
}

type reflNames struct {
	Plain    string `json:"plain"`
	Empty    string `json:"empty,omitempty"`
	Zero     int    `json:"zero,omitzero"`
	Untagged bool
	Renamed  int    `json:"other_name"`
	Ignored  string `json:"-"`
	//lint:ignore U1000 present to show that unexported fields are left out
	unexported int
}

func TestSchemaForNamesAndRequired(t *testing.T) {
	s := schemaOf[reflNames](t)
	doc := schemaDoc(t, s.JSON())

	require.Equal(t, "object", doc["type"])
	require.Equal(t, false, doc["additionalProperties"], "a struct admits no other members")
	_, hasRef := doc["$ref"]
	require.False(t, hasRef, "the root is inlined")

	props := at(t, doc, "properties").(map[string]any)
	var names []string
	for name := range props {
		names = append(names, name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"Untagged", "empty", "other_name", "plain", "zero"}, names,
		"JSON names, Go name when untagged, nothing for - and unexported fields")

	var required []string
	for _, r := range doc["required"].([]any) {
		required = append(required, r.(string))
	}
	slices.Sort(required)
	require.Equal(t, []string{"Untagged", "other_name", "plain"}, required,
		"omitempty and omitzero fields are optional, all others required")

	require.NoError(t, s.Validate([]byte(`{"plain":"a","Untagged":true,"other_name":1}`)))
	for _, bad := range []string{
		`{"Untagged":true,"other_name":1}`,                          // missing plain
		`{"plain":"a","Untagged":true,"other_name":1,"Ignored":""}`, // ignored field is unknown
		`{"plain":"a","untagged":true,"other_name":1}`,              // wrong case
	} {
		require.Error(t, s.Validate([]byte(bad)), bad)
	}
}

type reflInner struct {
	Deep struct {
		X int `json:"x"`
	} `json:"deep"`
}

type reflClosed struct {
	Named     reflInner            `json:"named"`
	Anonymous struct{ A int }      `json:"anonymous"`
	List      []reflInner          `json:"list"`
	ByKey     map[string]reflInner `json:"by_key"`
	Ptr       *reflInner           `json:"ptr"`
	Nested    [][]*reflInner       `json:"nested"`
}

// objectSchemas collects every subschema with properties.
func objectSchemas(v any, out *[]map[string]any) {
	switch v := v.(type) {
	case map[string]any:
		if _, ok := v["properties"]; ok {
			*out = append(*out, v)
		}
		for _, c := range v {
			objectSchemas(c, out)
		}
	case []any:
		for _, c := range v {
			objectSchemas(c, out)
		}
	}
}

func TestSchemaForClosesEveryStruct(t *testing.T) {
	s := schemaOf[reflClosed](t)
	doc := schemaDoc(t, s.JSON())
	var objects []map[string]any
	objectSchemas(doc, &objects)
	require.Len(t, objects, 4, "root, reflInner, its anonymous deep struct and the anonymous struct")
	for _, o := range objects {
		require.Equal(t, false, o["additionalProperties"], "%v", o)
	}

	valid := `{"named":{"deep":{"x":1}},"anonymous":{"A":1},"list":[{"deep":{"x":1}}],` +
		`"by_key":{"k":{"deep":{"x":1}}},"ptr":null,"nested":[[null,{"deep":{"x":2}}]]}`
	require.NoError(t, s.Validate([]byte(valid)))
	for _, extra := range []string{
		`{"named":{"deep":{"x":1,"y":2}},"anonymous":{"A":1},"list":[],"by_key":{},"ptr":null,"nested":[]}`,
		`{"named":{"deep":{"x":1}},"anonymous":{"A":1,"B":2},"list":[],"by_key":{},"ptr":null,"nested":[]}`,
		`{"named":{"deep":{"x":1}},"anonymous":{"A":1},"list":[{"deep":{"x":1},"z":0}],"by_key":{},"ptr":null,"nested":[]}`,
		`{"named":{"deep":{"x":1}},"anonymous":{"A":1},"list":[],"by_key":{"k":{"deep":{"x":1},"z":0}},"ptr":null,"nested":[]}`,
		`{"named":{"deep":{"x":1}},"anonymous":{"A":1},"list":[],"by_key":{},"ptr":{"deep":{"x":1},"z":0},"nested":[]}`,
		`{"named":{"deep":{"x":1}},"anonymous":{"A":1},"list":[],"by_key":{},"ptr":null,"nested":[[{"deep":{"x":1},"z":0}]]}`,
	} {
		require.Error(t, s.Validate([]byte(extra)), "an unknown member anywhere is refused: %s", extra)
	}
}

type reflTagged struct {
	Mode    string `json:"mode" jsonschema:"description=how to search,enum=fast,enum=slow"`
	Level   int8   `json:"level" jsonschema:"minimum=-3,maximum=1000"`
	Count   uint16 `json:"count" jsonschema:"minimum=2"`
	Pattern string `json:"pattern" jsonschema:"pattern=^[a-z]+$"`
}

func TestSchemaForHonoursJSONSchemaTags(t *testing.T) {
	s := schemaOf[reflTagged](t)
	doc := schemaDoc(t, s.JSON())
	require.Equal(t, "how to search", at(t, doc, "properties", "mode", "description"))
	require.Equal(t, []any{"fast", "slow"}, at(t, doc, "properties", "mode", "enum"))
	require.Equal(t, json.Number("-3"), at(t, doc, "properties", "level", "minimum"), "a tag stricter than the type's range is kept")
	require.Equal(t, json.Number("127"), at(t, doc, "properties", "level", "maximum"), "a tag looser than the type's range is tightened")
	require.Equal(t, json.Number("2"), at(t, doc, "properties", "count", "minimum"))
	require.Equal(t, json.Number("65535"), at(t, doc, "properties", "count", "maximum"))

	require.NoError(t, s.Validate([]byte(`{"mode":"fast","level":-3,"count":2,"pattern":"abc"}`)))
	for _, bad := range []string{
		`{"mode":"medium","level":0,"count":2,"pattern":"abc"}`,
		`{"mode":"fast","level":-4,"count":2,"pattern":"abc"}`,
		`{"mode":"fast","level":128,"count":2,"pattern":"abc"}`,
		`{"mode":"fast","level":0,"count":1,"pattern":"abc"}`,
		`{"mode":"fast","level":0,"count":2,"pattern":"ABC"}`,
	} {
		require.Error(t, s.Validate([]byte(bad)), bad)
	}
}

type reflNode struct {
	Name     string      `json:"name"`
	Children []*reflNode `json:"children,omitzero"`
	Next     *reflNode   `json:"next,omitzero"`
}

type reflTree struct {
	Root  reflNode  `json:"root"`
	Other *reflNode `json:"other"`
	Leaf  reflLeaf  `json:"leaf"`
}

type reflLeaf struct {
	Value int16 `json:"value"`
}

func TestSchemaForDefinitionsAndRecursion(t *testing.T) {
	s := schemaOf[reflTree](t)
	doc := schemaDoc(t, s.JSON())
	_, hasRef := doc["$ref"]
	require.False(t, hasRef, "no top-level $ref: the root is inlined")
	require.Equal(t, "object", doc["type"])
	defs := at(t, doc, "$defs").(map[string]any)
	require.Contains(t, defs, "reflNode")
	require.Contains(t, defs, "reflLeaf")
	require.NotContains(t, defs, "reflTree", "the root is not repeated in $defs")
	require.Equal(t, "#/$defs/reflLeaf", at(t, doc, "properties", "leaf", "$ref"))

	require.NoError(t, s.Validate([]byte(`{"root":{"name":"a","children":[{"name":"b","next":{"name":"c"}},null]},"other":null,"leaf":{"value":1}}`)))
	require.Error(t, s.Validate([]byte(`{"root":{"name":"a","children":[{"name":"b","next":{"name":1}}]},"other":null,"leaf":{"value":1}}`)),
		"the recursive reference is followed to depth")
	require.Error(t, s.Validate([]byte(`{"root":{"name":"a"},"other":{"nom":"x"},"leaf":{"value":1}}`)))
	require.Error(t, s.Validate([]byte(`{"root":{"name":"a"},"other":null,"leaf":{"value":32768}}`)),
		"annotations reach definitions")

	// A recursive root is inlined too; its self-references go to $defs.
	r := schemaOf[reflNode](t)
	rdoc := schemaDoc(t, r.JSON())
	_, hasRef = rdoc["$ref"]
	require.False(t, hasRef)
	require.Equal(t, "object", rdoc["type"])
	require.NoError(t, r.Validate([]byte(`{"name":"a","next":{"name":"b","next":{"name":"c"}}}`)))
	require.Error(t, r.Validate([]byte(`{"name":"a","next":{"name":"b","next":{"name":"c","x":1}}}`)))
}

type reflPair[T any] struct {
	A T `json:"a"`
	B T `json:"b"`
}

// Output is named like the package's own Output on purpose.
type Output struct {
	Score uint8 `json:"score"`
}

type reflWith[A, B any] struct {
	First  A `json:"first"`
	Second B `json:"second"`
}

func TestSchemaForDistinctDefinitionNames(t *testing.T) {
	type both struct {
		Ints    reflPair[int]    `json:"ints"`
		Strings reflPair[string] `json:"strings"`
		Mine    Output           `json:"mine"`
		Theirs  tool.Output      `json:"theirs"`
	}
	s := schemaOf[both](t)
	doc := schemaDoc(t, s.JSON())
	defs := at(t, doc, "$defs").(map[string]any)
	for name := range defs {
		require.NotContains(t, name, "/", "definition names are safe in a JSON pointer")
		require.NotContains(t, name, "[", "definition names are safe in a JSON pointer")
	}
	refs := map[string]bool{}
	for _, field := range []string{"ints", "strings", "mine", "theirs"} {
		ref := at(t, doc, "properties", field, "$ref").(string)
		require.False(t, refs[ref], "%s shares a definition: %s", field, ref)
		refs[ref] = true
	}

	valid := `{"ints":{"a":1,"b":2},"strings":{"a":"x","b":"y"},` +
		`"mine":{"score":3},"theirs":{"content":[{"kind":"text","text":"hi"}]}}`
	require.NoError(t, s.Validate([]byte(valid)))
	for _, bad := range []string{
		`{"ints":{"a":"x","b":2},"strings":{"a":"x","b":"y"},"mine":{"score":3},"theirs":{}}`,
		`{"ints":{"a":1,"b":2},"strings":{"a":1,"b":"y"},"mine":{"score":3},"theirs":{}}`,
		`{"ints":{"a":1,"b":2},"strings":{"a":"x","b":"y"},"mine":{"content":[]},"theirs":{}}`,
		`{"ints":{"a":1,"b":2},"strings":{"a":"x","b":"y"},"mine":{"score":3},"theirs":{"score":3}}`,
	} {
		require.Error(t, s.Validate([]byte(bad)), bad)
	}

	// Two types named item, declared in two scopes, in one document.
	type item struct {
		Count int8 `json:"count"`
	}
	type outerItem = item
	{
		type item struct {
			Label string `json:"label"`
		}
		two := schemaOf[reflWith[outerItem, reflPair[item]]](t)
		twoDoc := schemaDoc(t, two.JSON())
		require.NotEqual(t, at(t, twoDoc, "properties", "first", "$ref"),
			resolve(t, twoDoc, at(t, twoDoc, "properties", "second")).(map[string]any)["properties"].(map[string]any)["a"].(map[string]any)["$ref"])
		require.NoError(t, two.Validate([]byte(`{"first":{"count":1},"second":{"a":{"label":"x"},"b":{"label":"y"}}}`)))
		require.Error(t, two.Validate([]byte(`{"first":{"label":"x"},"second":{"a":{"label":"x"},"b":{"label":"y"}}}`)))
		require.Error(t, two.Validate([]byte(`{"first":{"count":1},"second":{"a":{"count":1},"b":{"label":"y"}}}`)))
	}
}

type reflWire struct {
	Bytes    []byte          `json:"bytes"`
	Fixed    [4]byte         `json:"fixed"`
	When     time.Time       `json:"when"`
	Raw      json.RawMessage `json:"raw"`
	Any      any             `json:"any"`
	Ptr      *string         `json:"ptr"`
	NotPtr   string          `json:"not_ptr"`
	PtrList  []*int16        `json:"ptr_list"`
	Addr     netip.Addr      `json:"addr"`
	Negative map[int]string  `json:"negative"`
	Unsigned map[uint8]bool  `json:"unsigned"`
	F32      float32         `json:"f32"`
}

func TestSchemaForWireForms(t *testing.T) {
	s := schemaOf[reflWire](t)
	doc := schemaDoc(t, s.JSON())
	require.Equal(t, map[string]any{"type": "string", "contentEncoding": "base64"}, at(t, doc, "properties", "bytes"))
	require.Equal(t, map[string]any{"type": "string", "contentEncoding": "base64"}, at(t, doc, "properties", "fixed"),
		"the codec writes byte arrays as base64 too")
	require.Equal(t, map[string]any{"type": "string", "format": "date-time"}, at(t, doc, "properties", "when"))
	require.Equal(t, true, at(t, doc, "properties", "raw"), "json.RawMessage is unconstrained")
	require.Equal(t, true, at(t, doc, "properties", "any"), "any is unconstrained")
	require.Equal(t, map[string]any{"type": "string"}, at(t, doc, "properties", "addr"), "a text type is a string")

	base := map[string]string{
		"bytes": `"AQID"`, "fixed": `"AQIDBA=="`, "when": `"2024-02-29T12:00:00.5+05:30"`,
		"raw": `{"any":["json"]}`, "any": `[1,"two",null]`, "ptr": `"p"`, "not_ptr": `"q"`,
		"ptr_list": `[1,null,-32768]`, "addr": `"2001:db8::1"`, "negative": `{"-1":"minus","7":"seven"}`,
		"unsigned": `{"255":true}`, "f32": `3.4028235e+38`,
	}
	encode := func(over map[string]string) []byte {
		var b strings.Builder
		b.WriteByte('{')
		keys := make([]string, 0, len(base))
		for k := range base {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			v := base[k]
			if o, ok := over[k]; ok {
				v = o
			}
			b.WriteString(`"` + k + `":` + v)
		}
		b.WriteByte('}')
		return []byte(b.String())
	}
	require.NoError(t, s.Validate(encode(nil)))
	admitted := []map[string]string{
		{"ptr": `null`},
		{"raw": `null`, "any": `{"x":1}`},
		{"ptr_list": `[null]`},
		{"addr": `"192.0.2.1"`},
		{"addr": `""`},
		{"f32": `-3.4028235e+38`},
		{"f32": `3.40282356779733661637539395458142568448e38`}, // the decoder refuses it; see TestDecodeRejectionMessages
	}
	for _, over := range admitted {
		require.NoError(t, s.Validate(encode(over)), "%v", over)
	}
	refused := []map[string]string{
		{"not_ptr": `null`},
		{"bytes": `null`},
		{"when": `"yesterday"`},
		{"when": `null`},
		{"ptr_list": `[32768]`},
		{"negative": `{"x":"letters"}`},
	}
	for _, over := range refused {
		require.Error(t, s.Validate(encode(over)), "%v", over)
	}
}

type reflRanges struct {
	I8   int8   `json:"i8"`
	I16  int16  `json:"i16"`
	I32  int32  `json:"i32"`
	I64  int64  `json:"i64"`
	I    int    `json:"i"`
	U8   uint8  `json:"u8"`
	U16  uint16 `json:"u16"`
	U32  uint32 `json:"u32"`
	U64  uint64 `json:"u64"`
	U    uint   `json:"u"`
	Byte byte   `json:"byte"`
}

// The schema states the range of 8- and 16-bit integers and the minimum 0
// of unsigned ones, and no other bound of a Go type: the 32- and 64-bit
// bounds are noise a model reads on every turn. The typed decode refuses
// what the schema leaves out (TestPrepareRefusesOutOfRangeIntegers).
func TestSchemaForIntegerRanges(t *testing.T) {
	s := schemaOf[reflRanges](t)
	doc := schemaDoc(t, s.JSON())
	tests := []struct {
		field, min, max string // "" when the schema states no such bound
	}{
		{"i8", "-128", "127"},
		{"i16", "-32768", "32767"},
		{"i32", "", ""},
		{"i64", "", ""},
		{"i", "", ""},
		{"u8", "0", "255"},
		{"u16", "0", "65535"},
		{"u32", "0", ""},
		{"u64", "0", ""},
		{"u", "0", ""},
		{"byte", "0", "255"},
	}
	for _, tc := range tests {
		t.Run(tc.field, func(t *testing.T) {
			prop := at(t, doc, "properties", tc.field).(map[string]any)
			require.Equal(t, "integer", prop["type"])
			for keyword, want := range map[string]string{"minimum": tc.min, "maximum": tc.max} {
				if want == "" {
					require.NotContains(t, prop, keyword)
					continue
				}
				require.Equal(t, json.Number(want), prop[keyword], keyword)
			}
		})
	}
}

// A bound stated in a tag is kept, on every integer type.
func TestSchemaForKeepsStatedBounds(t *testing.T) {
	type limits struct {
		Limit int   `json:"limit" jsonschema:"minimum=1,maximum=100"`
		Small int8  `json:"small" jsonschema:"maximum=10"`
		Count uint  `json:"count" jsonschema:"minimum=5"`
		Wide  int64 `json:"wide" jsonschema:"minimum=-1000"`
	}
	doc := schemaDoc(t, schemaOf[limits](t).JSON())
	require.Equal(t, map[string]any{"type": "integer", "minimum": json.Number("1"), "maximum": json.Number("100")}, at(t, doc, "properties", "limit"))
	require.Equal(t, map[string]any{"type": "integer", "minimum": json.Number("-128"), "maximum": json.Number("10")}, at(t, doc, "properties", "small"))
	require.Equal(t, map[string]any{"type": "integer", "minimum": json.Number("5")}, at(t, doc, "properties", "count"))
	require.Equal(t, map[string]any{"type": "integer", "minimum": json.Number("-1000")}, at(t, doc, "properties", "wide"))
}

// celsius writes itself as a bare number and says so with its own model.
type celsius struct{ degrees float64 }

func (c celsius) MarshalJSON() ([]byte, error) { return json.Marshal(c.degrees) }

func (c *celsius) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &c.degrees) }

func (celsius) JSONSchemaModel() any { return float64(0) }

// opaque writes its own JSON and has no model: its fields state its form.
type opaque struct{ secret int }

func (o opaque) MarshalJSON() ([]byte, error) { return json.Marshal([]int{o.secret}) }

func (o *opaque) UnmarshalJSON(b []byte) error {
	var v []int
	if err := json.Unmarshal(b, &v); err != nil || len(v) != 1 {
		return errors.New("opaque: want one number in an array")
	}
	o.secret = v[0]
	return nil
}

type reflModels struct {
	Output     tool.Output             `json:"output"`
	Block      tool.Block              `json:"block"`
	Definition tool.Definition         `json:"definition"`
	Request    *tool.InputRequest      `json:"request"`
	Blocks     []tool.Block            `json:"blocks,omitzero"`
	Outputs    map[string]*tool.Output `json:"outputs,omitzero"`
	Celsius    celsius                 `json:"celsius"`
	Opaque     opaque                  `json:"opaque" jsonschema:"type=array,minItems=1,maxItems=1"`
}

func TestSchemaForModels(t *testing.T) {
	s := schemaOf[reflModels](t)
	doc := schemaDoc(t, s.JSON())
	require.Equal(t, map[string]any{"type": "number"}, resolve(t, doc, at(t, doc, "properties", "celsius")),
		"a user type described by its own model")
	require.Equal(t, map[string]any{"type": "array", "minItems": json.Number("1"), "maxItems": json.Number("1")}, at(t, doc, "properties", "opaque"),
		"a type with its own JSON and no model is described by its field's tag")

	schema, err := tool.ParseSchema([]byte(`{"type":"object"}`))
	require.NoError(t, err)
	request, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"approve?"`), ResponseSchema: schema})
	require.NoError(t, err)
	def := tool.Definition{Name: "x", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectSafe}
	value := reflModels{
		Output:     tool.Output{Content: []tool.Block{tool.NewTextBlock("hi"), tool.NewMediaBlock("image/png", []byte{1, 2})}, Details: json.RawMessage(`{"n":1}`)},
		Block:      tool.NewMediaURIBlock("image/png", "https://example.com/a.png"),
		Definition: def,
		Request:    &request,
		Blocks:     []tool.Block{tool.NewTextBlock("x")},
		Outputs:    map[string]*tool.Output{"none": nil, "one": {Details: json.RawMessage(`1`)}},
		Celsius:    celsius{21.5},
		Opaque:     opaque{7},
	}
	encoded, err := json.Marshal(value)
	require.NoError(t, err)
	require.NoError(t, s.Validate(encoded), "what the types encode, their models admit: %s", encoded)

	refused := []string{
		`"block":{"kind":"video"}`,
		`"block":{"kind":"text","text":"a","extra":1}`,
		`"output":{"content":[{"kind":"text","text":"a"}],"unknown":1}`,
		`"definition":{"name":"bad name!","input_schema":{"type":"object"}}`,
		`"definition":{"name":"x","input_schema":{"type":"object"},"effect":"sometimes"}`,
		`"request":{"prompt":"p"}`,
		`"celsius":"warm"`,
		`"opaque":[]`,
	}
	for _, member := range refused {
		name, _, _ := strings.Cut(member, ":")
		mutated := replaceMember(t, encoded, strings.Trim(name, `"`), member[len(name)+1:])
		require.Error(t, s.Validate(mutated), "%s", mutated)
	}

	// The models work inside outputs too, through a typed function.
	type out struct {
		Result     tool.Output        `json:"result"`
		Blocks     []tool.Block       `json:"blocks"`
		Definition tool.Definition    `json:"definition"`
		Request    *tool.InputRequest `json:"request"`
	}
	f, err := tool.NewFunc(tool.FuncConfig{Name: "wrap"}, func(_ context.Context, in reflModels) (out, error) {
		return out{Result: in.Output, Blocks: []tool.Block{in.Block}, Definition: in.Definition, Request: in.Request}, nil
	})
	require.NoError(t, err)
	b, err := tool.Bind(f)
	require.NoError(t, err)
	inv, err := b.Contract().Prepare(tool.Request{Name: "wrap", Arguments: string(encoded)}, tool.Admission{})
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	require.JSONEq(t, `{"result":{"content":[{"kind":"text","text":"hi"},{"kind":"media","media_type":"image/png","data":"AQI="}],"details":{"n":1}},`+
		`"blocks":[{"kind":"media","media_type":"image/png","uri":"https://example.com/a.png"}],`+
		`"definition":{"name":"x","input_schema":{"type":"object"},"effect":"safe"},`+
		`"request":{"prompt":"approve?","response_schema":{"type":"object"}}}`, string(result.Output.Details))
	out2 := schemaDoc(t, b.Contract().Definition().OutputSchema)
	require.Equal(t, "object", out2["type"])
	require.Contains(t, at(t, out2, "properties"), "request")
}

// resolve follows a local $ref of a decoded schema.
func resolve(t *testing.T, doc map[string]any, s any) any {
	t.Helper()
	for range 8 {
		obj, ok := s.(map[string]any)
		if !ok {
			return s
		}
		ref, ok := obj["$ref"].(string)
		if !ok {
			return s
		}
		name, ok := strings.CutPrefix(ref, "#/$defs/")
		require.True(t, ok, ref)
		s = at(t, doc, "$defs", name)
	}
	t.Fatalf("reference chain too long")
	return nil
}

// replaceMember replaces the value of one top-level member of a JSON object.
func replaceMember(t *testing.T, object []byte, name, value string) []byte {
	t.Helper()
	var members map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(object, &members))
	members[name] = json.RawMessage(value)
	out, err := json.Marshal(members)
	require.NoError(t, err)
	return out
}

// Types the codec or the reflector cannot handle, each somewhere else.
type (
	unsChan struct{ C chan int }
	unsFunc struct {
		F func() `json:"f"`
	}
	unsComplex   struct{ C complex64 }
	unsNestedMap struct {
		M map[string]map[string]complex128
	}
	unsSliceFunc  struct{ L []func() }
	unsPtrComplex struct{ P *complex128 }
	unsDeep       struct {
		Inner struct{ M map[string][]chan bool }
	}
	unsDuration   struct{ D time.Duration }
	unsStringBool struct {
		B bool `json:"b,string"`
	}
	unsBoolKey   struct{ M map[bool]int }
	unsStructKey struct{ M map[reflLeaf]int }
	unsInline    struct {
		L reflLeaf `json:"l,inline"`
	}
	unsEmbedOpt struct {
		L reflLeaf `json:",embed"`
	}
	unsShadow struct {
		Value string `json:"value"`
		reflLeaf
	}
	unsBadTag struct {
		//lint:ignore SA5008 a malformed tag is the case under test
		A int `json:"a,omitEmpty"`
	}
	unsFormat struct {
		T time.Time `json:"t,format:unix"`
	}
	unsDash struct {
		//lint:ignore SA5008 a malformed tag is the case under test
		A int `json:"-,"`
	}
	unsUintptr        struct{ P uintptr }
	unsEmbeddedHidden struct {
		*reflLeaf
		X int
	}
	UnsCycleA struct {
		*UnsCycleB
		X int
	}
	UnsCycleB struct {
		*UnsCycleA
		Y int
	}
)

func TestSchemaForRefusesUnsupportedTypes(t *testing.T) {
	tests := []struct {
		name   string
		schema func() error
		sig    func() error
		fn     func() error
	}{
		{"chan field", schemaErr[unsChan], sigErr[unsChan], funcErr[unsChan]},
		{"func field", schemaErr[unsFunc], sigErr[unsFunc], funcErr[unsFunc]},
		{"complex64 field", schemaErr[unsComplex], sigErr[unsComplex], funcErr[unsComplex]},
		{"complex in a nested map value", schemaErr[unsNestedMap], sigErr[unsNestedMap], funcErr[unsNestedMap]},
		{"func in a slice", schemaErr[unsSliceFunc], sigErr[unsSliceFunc], funcErr[unsSliceFunc]},
		{"pointer to complex", schemaErr[unsPtrComplex], sigErr[unsPtrComplex], funcErr[unsPtrComplex]},
		{"chan deep in an anonymous struct", schemaErr[unsDeep], sigErr[unsDeep], funcErr[unsDeep]},
		{"time.Duration has no default JSON form", schemaErr[unsDuration], sigErr[unsDuration], funcErr[unsDuration]},
		{"string option on a bool", schemaErr[unsStringBool], sigErr[unsStringBool], funcErr[unsStringBool]},
		{"bool map key", schemaErr[unsBoolKey], sigErr[unsBoolKey], funcErr[unsBoolKey]},
		{"struct map key", schemaErr[unsStructKey], sigErr[unsStructKey], funcErr[unsStructKey]},
		{"inline option read differently", schemaErr[unsInline], sigErr[unsInline], funcErr[unsInline]},
		{"embed option read differently", schemaErr[unsEmbedOpt], sigErr[unsEmbedOpt], funcErr[unsEmbedOpt]},
		{"two fields share a name through embedding", schemaErr[unsShadow], sigErr[unsShadow], funcErr[unsShadow]},
		{"tag the codec refuses", schemaErr[unsBadTag], sigErr[unsBadTag], funcErr[unsBadTag]},
		{"format option", schemaErr[unsFormat], sigErr[unsFormat], funcErr[unsFormat]},
		{"field named -", schemaErr[unsDash], sigErr[unsDash], funcErr[unsDash]},
		{"uintptr", schemaErr[unsUintptr], sigErr[unsUintptr], funcErr[unsUintptr]},
		{"embedding cycle", schemaErr[UnsCycleA], sigErr[UnsCycleA], funcErr[UnsCycleA]},
		{"embedded pointer to an unexported struct", schemaErr[unsEmbeddedHidden], sigErr[unsEmbeddedHidden], funcErr[unsEmbeddedHidden]},
		{"top-level chan", schemaErr[chan int], sigErr[*chan int], funcErr[*chan int]},
		{"top-level func", schemaErr[func()], sigErr[func()], funcErr[func()]},
		{"top-level complex", schemaErr[complex128], sigErr[complex128], funcErr[complex128]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.NotPanics(t, func() {
				err := tc.schema()
				require.ErrorIs(t, err, tool.ErrInvalidSchema)
				require.True(t, strings.HasPrefix(err.Error(), "tool: "), err.Error())
				err = tc.sig()
				require.ErrorIs(t, err, tool.ErrInvalidTool)
				err = tc.fn()
				require.ErrorIs(t, err, tool.ErrInvalidTool)
			})
		})
	}
}

func schemaErr[T any]() error { _, err := tool.SchemaFor[T](); return err }

func sigErr[In any]() error { _, err := tool.NewSignature[In, string](); return err }

func funcErr[In any]() error {
	_, err := tool.NewFunc(tool.FuncConfig{Name: "t"}, func(context.Context, In) (string, error) { return "", nil })
	return err
}

// outErr reports the error of a Signature whose output type is Out.
func outErr[Out any]() error { _, err := tool.NewSignature[reflLeaf, Out](); return err }

type reflOwnJSON struct{ A int }

func (reflOwnJSON) MarshalJSON() ([]byte, error) { return []byte(`[1]`), nil }

// reflChecked decodes itself to check a rule, and describes its fields
// through a model of the same shape without methods.
type reflChecked struct {
	A int8 `json:"a"`
}

func (c *reflChecked) UnmarshalJSON(b []byte) error {
	type plain reflChecked
	if err := json.Unmarshal(b, (*plain)(c)); err != nil {
		return err
	}
	if c.A == 13 {
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "value at /a must not be 13"})
		if err != nil {
			return err
		}
		return r
	}
	return nil
}

func (reflChecked) JSONSchemaModel() any {
	type plain reflChecked
	return plain{}
}

func TestJSONSchemaModelOfItsOwnShape(t *testing.T) {
	b := bindFunc(t, "checked", func(_ context.Context, in reflChecked) (int8, error) { return in.A, nil })
	doc := schemaDoc(t, b.Contract().Definition().InputSchema)
	require.Equal(t, json.Number("127"), at(t, doc, "properties", "a", "maximum"))
	_, err := prepare(b, `{"a":300}`)
	requirePublicRejection(t, err, "/a")
	_, err = prepare(b, `{"a":13}`)
	rej := requirePublicRejection(t, err, "/a")
	require.Equal(t, "value at /a must not be 13", rej.Message())
	result, err := callOnce(t, b, `{"a":12}`)
	require.NoError(t, err)
	require.Equal(t, "12", string(result.Output.Details))
}

func TestNewSignatureRefusesNonObjectInputs(t *testing.T) {
	tests := []struct {
		name string
		err  func() error
	}{
		{"int", sigErr[int]},
		{"string", sigErr[string]},
		{"slice of structs", sigErr[[]reflLeaf]},
		{"map", sigErr[map[string]int]},
		{"pointer to int", sigErr[*int]},
		{"pointer to pointer to struct", sigErr[**reflLeaf]},
		{"interface", sigErr[any]},
		{"error interface", sigErr[error]},
		{"struct with its own JSON encoding", sigErr[reflOwnJSON]},
		{"unsupported output", outErr[unsChan]},
		{"unsupported output field", outErr[unsDuration]},
		{"func output", outErr[func()]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tc.err() })
			require.ErrorIs(t, err, tool.ErrInvalidTool)
			require.True(t, strings.HasPrefix(err.Error(), "tool: "), err.Error())
		})
	}

	// A struct and a pointer to a struct are both fine, and give the same
	// schema.
	v, err := tool.NewSignature[reflLeaf, string]()
	require.NoError(t, err)
	p, err := tool.NewSignature[*reflLeaf, string]()
	require.NoError(t, err)
	require.JSONEq(t, string(v.InputSchema()), string(p.InputSchema()))
}

func TestSchemaForIsStable(t *testing.T) {
	// Derivation is deterministic: the same type gives the same bytes.
	a := schemaOf[reflModels](t)
	b := schemaOf[reflModels](t)
	require.Equal(t, string(a.JSON()), string(b.JSON()))
}

// A comma escaped as \, stays in the value, end to end: in the schema and
// in what Prepare admits.
type tagEscaped struct {
	City string `json:"city" jsonschema:"description=City name\\, e.g. Lisbon,pattern=^[a-z]{1\\,40}$"`
	Note string `json:"note,omitzero" jsonschema:"description=a\\,b\\,c,required"`
}

func TestSchemaForTagEscapes(t *testing.T) {
	doc := schemaDoc(t, schemaOf[tagEscaped](t).JSON())
	require.Equal(t, "City name, e.g. Lisbon", at(t, doc, "properties", "city", "description"))
	require.Equal(t, "^[a-z]{1,40}$", at(t, doc, "properties", "city", "pattern"))
	require.Equal(t, "a,b,c", at(t, doc, "properties", "note", "description"))
	require.Equal(t, []any{"city", "note"}, doc["required"], "a flag after an escaped value is read")

	b := bindFunc(t, "weather", func(_ context.Context, in tagEscaped) (string, error) { return in.City, nil })
	_, err := prepare(b, `{"city":"lisbon","note":"n"}`)
	require.NoError(t, err)
	_, err = prepare(b, `{"city":"`+strings.Repeat("a", 41)+`","note":"n"}`)
	requirePublicRejection(t, err, "/city")
}

// Tags the schema reflector would cut or drop silently.
type (
	tagCutDescription struct {
		City string `json:"city" jsonschema:"description=City name, e.g. Lisbon"`
	}
	tagCutPattern struct {
		Code string `json:"code" jsonschema:"pattern=^[a-z]{1,40}$"`
	}
	tagUnknownKey struct {
		N int `json:"n" jsonschema:"minimun=1"`
	}
	tagKeyInOtherCase struct {
		S string `json:"s" jsonschema:"maxlength=3"`
	}
	tagKeySwapped struct {
		S string `json:"s" jsonschema:"descritpion=a name"`
	}
	tagFarKey struct {
		S string `json:"s" jsonschema:"colour=red"`
	}
	tagMisspeltFlag struct {
		S string `json:"s" jsonschema:"requried"`
	}
	tagBadNumber struct {
		N int `json:"n" jsonschema:"maximum=ten"`
	}
	tagBadCount struct {
		S string `json:"s" jsonschema:"maxLength=-1"`
	}
	tagFlagInValue struct {
		S string `json:"s" jsonschema:"description=set\\,required"`
	}
	tagCutExtras struct {
		S string `json:"s" jsonschema_extras:"x-hint=one, two"`
	}
	tagNested struct {
		Inner []tagCutPattern `json:"inner"`
	}
)

func TestSchemaForRefusesCutTags(t *testing.T) {
	hint := `a comma inside a value must be escaped as \, (written \\, between the tag's quotes in Go source)`
	malformed := reflect.StructOf([]reflect.StructField{{
		Name: "City", Type: reflect.TypeFor[string](),
		Tag: reflect.StructTag(`json:"city" jsonschema:"description=City name\, e.g. Lisbon"`),
	}})
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"a description cut at a comma", schemaErr[tagCutDescription],
			`tool: invalid schema: field tool_test.tagCutDescription.City: jsonschema tag piece " e.g. Lisbon" is neither a known key=value nor a flag (required, nullable); ` + hint},
		{"a pattern cut at a comma", schemaErr[tagCutPattern],
			`tool: invalid schema: field tool_test.tagCutPattern.Code: jsonschema tag piece "40}$" is neither a known key=value nor a flag (required, nullable); ` + hint},
		// A key or flag a slip away from a known one is named with it; a
		// word far from every one gets the comma hint, as a cut value does.
		{"a misspelt key", schemaErr[tagUnknownKey],
			`tool: invalid schema: field tool_test.tagUnknownKey.N: jsonschema tag key "minimun" is not a key the schema reads; did you mean "minimum" (as in minimum=1)?`},
		{"a key in another case", schemaErr[tagKeyInOtherCase],
			`tool: invalid schema: field tool_test.tagKeyInOtherCase.S: jsonschema tag key "maxlength" is not a key the schema reads; did you mean "maxLength" (as in maxLength=3)?`},
		{"a key with two letters swapped", schemaErr[tagKeySwapped],
			`tool: invalid schema: field tool_test.tagKeySwapped.S: jsonschema tag key "descritpion" is not a key the schema reads; did you mean "description" (as in description=a name)?`},
		{"a key near none", schemaErr[tagFarKey],
			`tool: invalid schema: field tool_test.tagFarKey.S: jsonschema tag piece "colour=red" is neither a known key=value nor a flag (required, nullable); ` + hint},
		{"a misspelt flag", schemaErr[tagMisspeltFlag],
			`tool: invalid schema: field tool_test.tagMisspeltFlag.S: jsonschema tag piece "requried" is not a flag the schema reads; did you mean "required"? (if it is part of a value, ` + hint + `)`},
		{"a bound that is not a number", schemaErr[tagBadNumber],
			`tool: invalid schema: field tool_test.tagBadNumber.N: jsonschema tag maximum="ten" needs a JSON number`},
		{"a length that is not a count", schemaErr[tagBadCount],
			`tool: invalid schema: field tool_test.tagBadCount.S: jsonschema tag maxLength="-1" needs a non-negative integer`},
		{"a flag hidden in an escaped value", schemaErr[tagFlagInValue],
			`tool: invalid schema: field tool_test.tagFlagInValue.S: jsonschema tag has "required" after an escaped comma, which is read as the flag all the same`},
		{"extras cut at a comma", schemaErr[tagCutExtras],
			`tool: invalid schema: field tool_test.tagCutExtras.S: jsonschema_extras tag piece " two" is not key=value; ` + hint},
		{"a nested type", schemaErr[tagNested],
			`tool: invalid schema: field tool_test.tagCutPattern.Code: jsonschema tag piece "40}$" is neither a known key=value nor a flag (required, nullable); ` + hint},
		{"a backslash not doubled in Go source", func() error { _, err := tool.SchemaForType(malformed); return err },
			`tool: invalid schema: field struct { City string "json:\"city\" jsonschema:\"description=City name\\, e.g. Lisbon\"" }.City: its struct tag is malformed, so the schema tags are ignored; ` + hint},
		{"NewSignature", func() error { _, err := tool.NewSignature[tagCutPattern, string](); return err },
			`tool: invalid tool: input type tool_test.tagCutPattern: invalid schema: field tool_test.tagCutPattern.Code: jsonschema tag piece "40}$" is neither a known key=value nor a flag (required, nullable); ` + hint},
		{"NewFunc", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "codes"}, func(context.Context, tagCutPattern) (string, error) { return "", nil })
			return err
		}, `tool: invalid tool: tool "codes": input type tool_test.tagCutPattern: invalid schema: field tool_test.tagCutPattern.Code: jsonschema tag piece "40}$" is neither a known key=value nor a flag (required, nullable); ` + hint},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.EqualError(t, err, tc.want)
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
		})
	}
}

// level writes itself as a JSON string of its own choosing.
type level int

func (l level) MarshalJSON() ([]byte, error) { return json.Marshal([]string{"low", "high"}[l]) }

func (l *level) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	switch s {
	case "low":
		*l = 0
	case "high":
		*l = 1
	default:
		return errors.New("level: want low or high")
	}
	return nil
}

// code writes itself as text: a string.
type code string

func (c code) MarshalText() ([]byte, error) { return []byte(c), nil }

func (c *code) UnmarshalText(b []byte) error { *c = code(b); return nil }

type customTagged struct {
	Amount *big.Int `json:"amount" jsonschema:"type=integer,minimum=0,description=Amount in cents"`
	Level  level    `json:"level" jsonschema:"type=string,enum=low,enum=high"`
	Code   code     `json:"code" jsonschema:"enum=a1,enum=b2,description=Product code"`
	Temp   celsius  `json:"temp" jsonschema:"description=Temperature"`
}

// A type that reads and writes its own JSON is described by the tags of
// its field, or by its own schema; its tags are applied, not dropped.
func TestSchemaForCustomMarshalledTypes(t *testing.T) {
	doc := schemaDoc(t, schemaOf[customTagged](t).JSON())
	require.Equal(t, map[string]any{"anyOf": []any{map[string]any{"type": "integer", "minimum": json.Number("0")}, map[string]any{"type": "null"}}, "description": "Amount in cents"},
		at(t, doc, "properties", "amount"))
	require.Equal(t, map[string]any{"type": "string", "enum": []any{"low", "high"}}, at(t, doc, "properties", "level"))
	require.Equal(t, map[string]any{"type": "string", "enum": []any{"a1", "b2"}, "description": "Product code"}, at(t, doc, "properties", "code"),
		"a text type is a string, and its tags apply")
	require.Equal(t, "Temperature", at(t, doc, "properties", "temp", "description"))

	b := bindFunc(t, "pay", func(_ context.Context, in customTagged) (string, error) { return in.Amount.String(), nil })
	inv, err := prepare(b, `{"amount":123456789012345678901234567890,"level":"high","code":"a1","temp":21.5}`)
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	text, _ := result.Output.Text()
	require.Equal(t, "123456789012345678901234567890", text)
	for arguments, pointer := range map[string]string{
		`{"amount":"12","level":"high","code":"a1","temp":1}`: "/amount",
		`{"amount":-1,"level":"high","code":"a1","temp":1}`:   "/amount",
		`{"amount":1,"level":"medium","code":"a1","temp":1}`:  "/level",
		`{"amount":1,"level":"low","code":"c3","temp":1}`:     "/code",
	} {
		_, err := prepare(b, arguments)
		requirePublicRejection(t, err, pointer)
	}
}

type (
	customUntagged struct {
		Amount *big.Int `json:"amount"`
	}
	customDescribedOnly struct {
		Level level `json:"level" jsonschema:"description=low or high"`
	}
	customInSlice struct {
		Amounts []*big.Int `json:"amounts" jsonschema:"type=array"`
	}
	customModelKeyword struct {
		Temp celsius `json:"temp" jsonschema:"minimum=-273.15"`
	}
)

func TestSchemaForRefusesUndescribedCustomTypes(t *testing.T) {
	remedy := "state its form in the field's tag, such as `jsonschema:\"type=string\"` or `jsonschema:\"type=integer\"` (a type written as JSON text), or give the type a JSONSchemaModel method (see SchemaFor) or a JSONSchema method"
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"a field without a tag", schemaErr[customUntagged],
			"tool: invalid schema: tool_test.customUntagged.Amount has type *big.Int, which reads and writes its own JSON, so its form cannot be derived and would be advertised as any value; " + remedy},
		{"a field whose tag states no type", schemaErr[customDescribedOnly],
			"tool: invalid schema: tool_test.customDescribedOnly.Level has type tool_test.level, which reads and writes its own JSON, so its form cannot be derived and would be advertised as any value; " + remedy},
		{"items of an array", schemaErr[customInSlice],
			"tool: invalid schema: tool_test.customInSlice.Amounts[] has type *big.Int, which reads and writes its own JSON, so its form cannot be derived and would be advertised as any value; " + remedy},
		{"the root", schemaErr[opaque],
			"tool: invalid schema: tool_test.opaque has type tool_test.opaque, which reads and writes its own JSON, so its form cannot be derived and would be advertised as any value; " + remedy},
		{"a keyword a described type would drop", schemaErr[customModelKeyword],
			`tool: invalid schema: field tool_test.customModelKeyword.Temp: jsonschema tag key "minimum" would be dropped, because type tool_test.celsius describes itself; put the keyword in its schema, or state the type in the tag (type=...)`},
		{"NewFunc", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "pay"}, func(context.Context, customUntagged) (string, error) { return "", nil })
			return err
		}, `tool: invalid tool: tool "pay": input type tool_test.customUntagged: invalid schema: tool_test.customUntagged.Amount has type *big.Int, which reads and writes its own JSON, so its form cannot be derived and would be advertised as any value; ` + remedy},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.err()
			require.EqualError(t, err, tc.want)
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
		})
	}
}
