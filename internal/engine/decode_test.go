package engine

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/strictjson"
)

type decodeName string

// decodeAll holds every kind the Decoder decodes.
type decodeAll struct {
	S     string                  `json:"s"`
	B     bool                    `json:"b,omitempty"`
	I8    int8                    `json:"i8"`
	I16   int16                   `json:"i16"`
	I32   int32                   `json:"i32"`
	I64   int64                   `json:"i64"`
	I     int                     `json:"i,omitzero"`
	U8    uint8                   `json:"u8"`
	U16   uint16                  `json:"u16"`
	U32   uint32                  `json:"u32"`
	U64   uint64                  `json:"u64"`
	U     uint                    `json:"u"`
	F32   float32                 `json:"f32"`
	F64   float64                 `json:"f64"`
	Named decodeName              `json:"named"`
	Any   any                     `json:"any"`
	P     *int                    `json:"p"`
	PP    **string                `json:"pp"`
	Tags  []string                `json:"tags"`
	M     map[string]int          `json:"m"`
	MA    map[string]any          `json:"ma"`
	MK    map[decodeName]*float64 `json:"mk"`
	AS    []any                   `json:"as"`
	Kids  []decodeAll             `json:"kids,omitempty,omitzero"`
	Next  *decodeAll              `json:"next"`
	Inner struct {
		X []int `json:"x"`
	} `json:"inner"`
	Skip  string `json:"-"`
	Plain string
}

// decodeSeeds are documents of every shape: valid ones the Decoder must
// decode, and ones it must leave to the codec, which refuses them.
var decodeSeeds = []struct {
	doc     string
	decodes bool
}{
	{`{}`, true},
	{`null`, true},
	{`{"s":"a\u00e9\ud83d\ude00","b":true,"i8":-128,"i16":32767,"i32":-2147483648,"i64":-9223372036854775808,"i":-0}`, true},
	{`{"u8":255,"u16":65535,"u32":4294967295,"u64":18446744073709551615,"u":0}`, true},
	{`{"f32":3.4028234e38,"f64":-0,"named":"n","Plain":"p"}`, true},
	{`{"f64":-0e0,"f32":1e-45}`, true},
	{`{"any":{"a":[1,"x",true,null,{"b":{}}],"c":[]},"p":7,"pp":"s"}`, true},
	{`{"any":[],"as":[{},[],null,-1.5e3]}`, true},
	{`{"any":null,"p":null,"pp":null,"tags":null,"m":null,"next":null}`, true},
	{`{"tags":[],"m":{},"ma":{},"mk":{},"as":[]}`, true},
	{`{"tags":["a","b","c","d","e","f","g","h","i"],"m":{"a":1,"b":-2},"ma":{"x":null,"y":[1]},"mk":{"k":null,"l":2.5}}`, true},
	{`{"kids":[{"s":"a","kids":[{"next":{"s":"deep"}}]},{},{"inner":{"x":[1,2,3]}}],"next":{"next":{"i":1}}}`, true},
	{`{"s":null,"b":null,"i8":null,"f64":null,"named":null,"inner":null}`, true},
	{`{"s":"` + strings.Repeat("long string ", 10) + `","tags":["ab","ab","ab"]}`, true},

	{`{"i8":128}`, false},
	{`{"i8":-129}`, false},
	{`{"i64":9223372036854775808}`, false},
	{`{"u8":256}`, false},
	{`{"u":-1}`, false},
	{`{"u":-0}`, false},
	{`{"i":1.0}`, false},
	{`{"i":1e2}`, false},
	{`{"i":0e0}`, false},
	{`{"f32":3.5e38}`, false},
	{`{"s":1}`, false},
	{`{"s":true}`, false},
	{`{"b":"true"}`, false},
	{`{"tags":"a"}`, false},
	{`{"tags":[1]}`, false},
	{`{"m":[]}`, false},
	{`{"m":{"a":"b"}}`, false},
	{`{"inner":[]}`, false},
	{`{"unknown":1}`, false},
	{`{"S":"wrong case"}`, false},
	{`{"Skip":"x"}`, false},
	{`{"s":"a","s":"b"}`, false},
	{`{"m":{"a":1,"a":2}}`, false},
	{`{"next":{"kids":[{"x":1}]}}`, false},
	{`[]`, false},
	{`"text"`, false},
	{`{"s":"a"} {}`, false},
	{`{"s":"\ud800"}`, false},
	{`{"s":"a",}`, false},
}

func TestDecoderAgreesWithCodec(t *testing.T) {
	d := NewDecoder(reflect.TypeFor[decodeAll]())
	require.NotNil(t, d)
	for _, seed := range decodeSeeds {
		t.Run(seed.doc, func(t *testing.T) {
			decoded := agreeWithCodec(t, d, []byte(seed.doc))
			require.Equal(t, seed.decodes, decoded)
		})
	}
}

// agreeWithCodec decodes doc with d and with the codec, and reports whether
// d decoded it: when it did, the codec decodes it too, to the same value.
func agreeWithCodec(t *testing.T, d *Decoder, doc []byte) bool {
	t.Helper()
	var got, want decodeAll
	decoded := d.Decode(doc, &got)
	err := jsonv2.Unmarshal(doc, &want, jsonv2.RejectUnknownMembers(true))
	if !decoded {
		return false
	}
	require.NoError(t, err, "decoded what the codec refuses: %s", doc)
	require.Equal(t, want, got, "%s", doc)
	// Equal takes -0 for 0; the encoding tells them apart.
	wantText, err := jsonv2.Marshal(want, jsonv2.Deterministic(true))
	require.NoError(t, err)
	gotText, err := jsonv2.Marshal(got, jsonv2.Deterministic(true))
	require.NoError(t, err)
	require.Equal(t, string(wantText), string(gotText), "%s", doc)
	return true
}

func FuzzDecoderAgreesWithCodec(f *testing.F) {
	for _, seed := range decodeSeeds {
		f.Add([]byte(seed.doc))
	}
	d := NewDecoder(reflect.TypeFor[decodeAll]())
	f.Fuzz(func(t *testing.T, doc []byte) {
		agreeWithCodec(t, d, doc)
	})
}

func TestDecoderOfPointerAndNull(t *testing.T) {
	d := NewDecoder(reflect.TypeFor[*decodeAll]())
	require.NotNil(t, d)
	var p *decodeAll
	require.True(t, d.Decode([]byte(`{"s":"x"}`), &p))
	require.Equal(t, "x", p.S)
	var q *decodeAll
	require.True(t, d.Decode([]byte(`null`), &q))
	require.Nil(t, q)

	require.False(t, d.Decode([]byte(`{}`), new(decodeAll)), "into must point to the Decoder's type")
	require.False(t, d.Decode([]byte(`{}`), (**decodeAll)(nil)))
	require.False(t, d.Decode([]byte(`{}`), nil))
	var none *Decoder
	require.False(t, none.Decode([]byte(`{}`), &q))
}

type (
	withJSON struct{ A int }
	withText struct{ A int }
	withFrom struct{ A int }
	textKey  string
	embedded struct{ A int }
	stringer interface{ String() string }
)

func (*withJSON) UnmarshalJSON([]byte) error { return nil }
func (*withText) UnmarshalText([]byte) error { return nil }
func (withFrom) UnmarshalJSONFrom(any) error { return nil }
func (*textKey) UnmarshalText([]byte) error  { return nil }

var (
	_ json.Unmarshaler         = (*withJSON)(nil)
	_ encoding.TextUnmarshaler = (*withText)(nil)
)

func TestDecoderSkipsUnexportedFields(t *testing.T) {
	typ := reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
		{Name: "b", PkgPath: "p", Type: reflect.TypeFor[int]()},
		{Name: "Dash", Type: reflect.TypeFor[string](), Tag: `json:"-,omitempty"`},
	})
	d := NewDecoder(typ)
	require.NotNil(t, d)
	for doc, decodes := range map[string]bool{`{"a":1,"-":"x"}`: true, `{"b":1}`: false, `{"Dash":""}`: false} {
		got, want := reflect.New(typ), reflect.New(typ)
		require.Equal(t, decodes, d.Decode([]byte(doc), got.Interface()), doc)
		if decodes {
			require.NoError(t, jsonv2.Unmarshal([]byte(doc), want.Interface(), jsonv2.RejectUnknownMembers(true)))
			require.Equal(t, want.Interface(), got.Interface(), doc)
		}
	}
}

func TestNewDecoderRefuses(t *testing.T) {
	for name, typ := range map[string]reflect.Type{
		"its own JSON":      reflect.TypeFor[struct{ W withJSON }](),
		"its own text":      reflect.TypeFor[struct{ W []withText }](),
		"UnmarshalJSONFrom": reflect.TypeFor[struct{ W *withFrom }](),
		"time":              reflect.TypeFor[struct{ T time.Time }](),
		"duration":          reflect.TypeFor[struct{ D time.Duration }](),
		"bytes":             reflect.TypeFor[struct{ B []byte }](),
		"array":             reflect.TypeFor[struct{ A [2]int }](),
		"int keys":          reflect.TypeFor[struct{ M map[int]string }](),
		"text keys":         reflect.TypeFor[struct{ M map[textKey]string }](),
		"an interface":      reflect.TypeFor[struct{ S stringer }](),
		"embedded":          reflect.TypeFor[struct{ embedded }](),
		"only unexported, no tags": reflect.StructOf([]reflect.StructField{
			{Name: "a", PkgPath: "p", Type: reflect.TypeFor[int]()},
		}),
		"a channel":                   reflect.TypeFor[struct{ C chan int }](),
		"a function":                  reflect.TypeFor[struct{ F func() }](),
		"a complex number":            reflect.TypeFor[struct{ C complex128 }](),
		"uintptr":                     reflect.TypeFor[struct{ U uintptr }](),
		"refused deep in a recursion": reflect.TypeFor[refusedDeep](),
	} {
		require.Nil(t, NewDecoder(typ), name)
	}
	for _, tag := range []string{
		`json:",string"`, `json:"n,inline"`, `json:"n,case:ignore"`, `json:"n,format:RFC3339"`,
		`json:"'quoted'"`, `json:"a\"b"`, `json:"n,"`, `json:"-,"`, `json:"n,,omitempty"`, `json:"n,unknown"`,
	} {
		typ := reflect.StructOf([]reflect.StructField{{Name: "N", Type: reflect.TypeFor[int](), Tag: reflect.StructTag(tag)}})
		require.Nil(t, NewDecoder(typ), tag)
	}
	twice := reflect.StructOf([]reflect.StructField{
		{Name: "A", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
		{Name: "B", Type: reflect.TypeFor[int](), Tag: `json:"x"`},
	})
	require.Nil(t, NewDecoder(twice), "two fields of one name")
	tagged := reflect.StructOf([]reflect.StructField{
		{Name: "a", PkgPath: "p", Type: reflect.TypeFor[int](), Tag: `json:"a"`},
	})
	require.Nil(t, NewDecoder(tagged), "an unexported field with a tag")

	require.NotNil(t, NewDecoder(reflect.TypeFor[struct{}]()), "an empty struct")
	ignored := reflect.StructOf([]reflect.StructField{
		{Name: "a", PkgPath: "p", Type: reflect.TypeFor[int](), Tag: `json:"-"`},
	})
	require.NotNil(t, NewDecoder(ignored), "only an ignored field, but a tag")
}

type refusedDeep struct {
	Next *refusedDeep `json:"next"`
	T    []time.Time  `json:"t"`
}

// checkDecodeSchema compiles a schema for CheckDecode's tests.
func checkDecodeSchema(t *testing.T, doc string) *Schema {
	t.Helper()
	tree, err := strictjson.Parse([]byte(doc))
	require.NoError(t, err)
	s, err := Compile(tree, Options{})
	require.NoError(t, err)
	return s
}

type checkDecodeInput struct {
	Name string   `json:"name"`
	Tags []string `json:"tags"`
	N    int      `json:"n"`
}

func TestCheckDecode(t *testing.T) {
	d := NewDecoder(reflect.TypeFor[checkDecodeInput]())
	for _, c := range []struct {
		name, schema, doc string
		decoded, valid    bool
	}{
		{"valid", `{"type":"object","properties":{"name":{"type":"string"},"n":{"type":"integer"}},"required":["name"]}`,
			`{"name":"a","tags":["x"],"n":3}`, true, true},
		{"invalid", `{"type":"object","required":["name"]}`, `{"tags":["x"]}`, false, false},
		{"read again for allOf and a reference",
			`{"$defs":{"o":{"type":"object"}},"allOf":[{"$ref":"#/$defs/o"},{"properties":{"tags":{"maxItems":2}}}]}`,
			`{"name":"a","tags":["x","y"]}`, true, true},
		{"valid, but a member no field holds", `{"type":"object"}`, `{"other":1}`, false, true},
		{"valid, but an integer the codec refuses", `{"type":"object"}`, `{"n":1.0}`, false, true},
		{"valid, but not read directly", `{"properties":{"tags":{"uniqueItems":true}}}`, `{"tags":["x","y"]}`, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := checkDecodeSchema(t, c.schema)
			var got checkDecodeInput
			decoded, err := s.CheckDecode([]byte(c.doc), d, &got)
			require.Equal(t, c.valid, err == nil, "%v", err)
			require.Equal(t, s.Check([]byte(c.doc)) == nil, err == nil, "CheckDecode and Check agree")
			require.Equal(t, c.decoded, decoded)
			if decoded {
				var want checkDecodeInput
				require.NoError(t, jsonv2.Unmarshal([]byte(c.doc), &want, jsonv2.RejectUnknownMembers(true)))
				require.Equal(t, want, got)
			}
		})
	}

	s := checkDecodeSchema(t, `{"type":"object"}`)
	var other struct{ Name string }
	decoded, err := s.CheckDecode([]byte(`{"name":"a"}`), d, &other)
	require.NoError(t, err)
	require.False(t, decoded, "into of another type than the decoder's")

	// A defect of the decoder (here a plan that lies about its type)
	// leaves the check standing.
	broken := &Decoder{typ: reflect.TypeFor[map[string]int](), root: &plan{kind: planMap, typ: reflect.TypeFor[int](), elem: &plan{kind: planInt, typ: reflect.TypeFor[int](), size: 8}}}
	var m map[string]int
	decoded, err = s.CheckDecode([]byte(`{"a":1}`), broken, &m)
	require.NoError(t, err)
	require.False(t, decoded)
	_, err = s.CheckDecode([]byte(`[]`), broken, &m)
	require.Error(t, err)
}
