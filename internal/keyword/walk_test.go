package keyword

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func decode(t testing.TB, text string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}

func TestWalk(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []string // the pointers visited, in order
	}{
		{"a boolean schema has no children", `true`, []string{""}},
		{"keywords of no subschema are not walked", `{"type":"object","enum":[{"a":1}],"const":{"x":{}},"default":{"properties":{}}}`, []string{""}},
		{"keywords in name order, members by name, items by position",
			`{"properties":{"b":{},"a":{"items":true}},"anyOf":[{},{"not":false}],"additionalProperties":false}`,
			[]string{"", "/additionalProperties", "/anyOf/0", "/anyOf/1", "/anyOf/1/not", "/properties/a", "/properties/a/items", "/properties/b"}},
		{"member names are escaped in the pointer", `{"$defs":{"a/b":{},"c~d":{}},"patternProperties":{"^x/":{}}}`,
			[]string{"", "/$defs/a~1b", "/$defs/c~0d", "/patternProperties/^x~1"}},
		{"dependencies: arrays are names, the others subschemas", `{"dependencies":{"a":["b"],"c":{"required":["d"]}}}`,
			[]string{"", "/dependencies/c"}},
		{"a value of the wrong type holds no subschema", `{"properties":[{}],"allOf":{"a":{}},"not":[{}]}`,
			[]string{"", "/not"}},
		{"items as an array is a tuple of subschemas", `{"items":[{"type":"string"},{"items":{}}]}`,
			[]string{"", "/items/0", "/items/1", "/items/1/items"}},
		{"unknown keywords are not subschemas", `{"x-extension":{"type":"string"},"definitions":{"n":{}}}`,
			[]string{"", "/definitions/n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			Walk(decode(t, tt.schema), "", func(ptr string, _ any) bool {
				got = append(got, ptr)
				return true
			})
			require.Equal(t, tt.want, got)
		})
	}
}

func TestWalkSkipsAndStops(t *testing.T) {
	doc := decode(t, `{"properties":{"a":{"items":{}},"b":{}},"not":{}}`)
	var got []string
	Walk(doc, "#", func(ptr string, _ any) bool {
		got = append(got, ptr)
		return ptr != "#/properties/a" // its items are skipped
	})
	require.Equal(t, []string{"#", "#/not", "#/properties/a", "#/properties/b"}, got)

	// Breaking out of Children stops it.
	n := 0
	for range Children(doc) {
		n++
		break
	}
	require.Equal(t, 1, n)
	for range Each("anyOf", []any{true, false}) {
		n++
		break
	}
	require.Equal(t, 2, n)
}

func TestWalkVisitsEveryNodeOfTheDocument(t *testing.T) {
	// Every subschema is an object with a "title": counting titles in
	// the text and nodes in the walk must agree.
	doc := `{"title":"r","properties":{"a":{"title":"a","anyOf":[{"title":"x"},{"title":"y","items":{"title":"i"}}]}},` +
		`"$defs":{"d":{"title":"d","prefixItems":[{"title":"p"}],"contains":{"title":"c"}}},` +
		`"if":{"title":"if"},"then":{"title":"then"},"else":{"title":"else"},"dependentSchemas":{"k":{"title":"k"}},` +
		`"propertyNames":{"title":"pn"},"unevaluatedItems":{"title":"ui"},"unevaluatedProperties":{"title":"up"},"contentSchema":{"title":"cs"}}`
	n := 0
	Walk(decode(t, doc), "", func(_ string, s any) bool {
		require.Contains(t, s, "title")
		n++
		return true
	})
	require.Equal(t, strings.Count(doc, `"title"`), n)
}

func TestChildPointer(t *testing.T) {
	tests := []struct {
		child Child
		want  string
	}{
		{Child{Keyword: "items", Shape: Schema, Index: -1}, "/r/items"},
		{Child{Keyword: "anyOf", Shape: SchemaList, Index: 2}, "/r/anyOf/2"},
		{Child{Keyword: "properties", Shape: SchemaMap, Name: "", Index: -1}, "/r/properties/"}, // "" is a member name
		{Child{Keyword: "properties", Shape: SchemaMap, Name: "a/~b", Index: -1}, "/r/properties/a~1~0b"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, tt.child.Pointer("/r"))
	}
}

func TestPointers(t *testing.T) {
	tests := []struct {
		ptr    string
		tokens []string
		ok     bool
	}{
		{"", nil, true},
		{"/", []string{""}, true},
		{"/a/b", []string{"a", "b"}, true},
		{"/a~1b/~0~1/~01", []string{"a/b", "~/", "~1"}, true},
		{"a", nil, false},
		{"/a~", nil, false},
		{"/a~2", nil, false},
	}
	for _, tt := range tests {
		got, err := Split(tt.ptr)
		if !tt.ok {
			require.ErrorIs(t, err, ErrPointer, tt.ptr)
			continue
		}
		require.NoError(t, err, tt.ptr)
		require.Equal(t, tt.tokens, got, tt.ptr)
		rebuilt := ""
		for _, tok := range got {
			rebuilt = Append(rebuilt, tok)
		}
		require.Equal(t, tt.ptr, rebuilt)
	}
	require.Equal(t, "plain", Escape("plain"))
}

func TestResolve(t *testing.T) {
	doc := decode(t, `{"$defs":{"a/b":{"type":"string"},"list":[{"x":1},{"x":2}]},"":{"y":true}}`)
	tests := []struct {
		ptr  string
		want any
		ok   bool
	}{
		{"", doc, true},
		{"/$defs/a~1b/type", "string", true},
		{"/$defs/list/1/x", json.Number("2"), true},
		{"//y", true, true},
		{"/$defs/list/01", nil, false}, // no leading zero
		{"/$defs/list/2", nil, false},
		{"/$defs/list/-1", nil, false},
		{"/$defs/missing", nil, false},
		{"/$defs/a~1b/type/x", nil, false},
		{"$defs", nil, false},
	}
	for _, tt := range tests {
		got, ok := Resolve(doc, tt.ptr)
		require.Equal(t, tt.ok, ok, tt.ptr)
		require.Equal(t, tt.want, got, tt.ptr)
	}
}

func TestSortedNames(t *testing.T) {
	require.Equal(t, []string{"", "A", "a", "b"}, SortedNames(map[string]int{"b": 1, "a": 2, "A": 3, "": 4}))
	require.Empty(t, SortedNames[any](nil))
}

// FuzzPointer holds Split, Unescape and Escape to one another: a pointer
// that splits rebuilds to itself, and every token survives escaping.
func FuzzPointer(f *testing.F) {
	for _, s := range []string{"", "/", "/a~0b/c~1d", "/~", "/~2", "a/b", "/0/01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ptr string) {
		tokens, err := Split(ptr)
		if err != nil {
			require.ErrorIs(t, err, ErrPointer)
			return
		}
		rebuilt := ""
		for _, tok := range tokens {
			back, err := Unescape(Escape(tok))
			require.NoError(t, err)
			require.Equal(t, tok, back)
			rebuilt = Append(rebuilt, tok)
		}
		require.Equal(t, ptr, rebuilt)
		_, _ = Resolve(map[string]any{"a": []any{true}}, ptr)
	})
}
