package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"runtime"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/strictjson"
)

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want any
		why  string
	}{
		{"empty object", `{}`, map[string]any{}, "the smallest object"},
		{"empty array", `[]`, []any{}, "the smallest array, never nil"},
		{"literals", `[true,false,null]`, []any{true, false, nil}, "the three literals"},
		{"surrounding whitespace", " \t\r\n{ \"a\" : 1 }\n", map[string]any{"a": json.Number("1")}, "JSON whitespace around tokens"},
		{"escapes", `"\"\\\/\b\f\n\r\t\u0041"`, "\"\\/\b\f\n\r\tA", "every escape sequence"},
		{"escaped NUL", `"\u0000"`, "\x00", "an escaped control character is fine"},
		{"surrogate pair", `"\ud83d\ude00"`, "\U0001F600", "a pair decodes to one code point"},
		{"raw multibyte", `"héllo ☃ 😀"`, "héllo ☃ 😀", "raw UTF-8 is kept"},
		{"replacement character", "\"\xef\xbf\xbd\"", "\uFFFD", "U+FFFD is a character, not an error"},
		{"last character before noncharacters", `"\uFDCF\uFDF0\uFFFD"`, "\uFDCF\uFDF0\uFFFD", "neighbours of noncharacters are fine"},
		{"plane 1 last character", `"\ud83f\udffd"`, "\U0001FFFD", "U+1FFFD is a character"},
		{"big integer kept exactly", `9007199254740993`, json.Number("9007199254740993"), "beyond 2^53, not rounded"},
		{"number text kept", `[1.0E+2,-0,0.5e-3]`, []any{json.Number("1.0E+2"), json.Number("-0"), json.Number("0.5e-3")}, "the exact token text"},
		{"zero with huge negative exponent", `0e-400`, json.Number("0"), "zero is zero whatever the exponent"},
		{"zero with huge positive exponent", `-0.000e999999`, json.Number("0"), "zero is zero whatever the exponent"},
		{"smallest denormal", `5e-324`, json.Number("5e-324"), "a nonzero denormal does not round to zero"},
		{"largest float", `1.7976931348623157e308`, json.Number("1.7976931348623157e308"), "fits a float64"},
		{"100-character number", strings.Repeat("9", 100), json.Number(strings.Repeat("9", 100)), "exactly the length bound"},
		{"nested", `{"a":[1,{"b":null}],"c":"d"}`, map[string]any{"a": []any{json.Number("1"), map[string]any{"b": nil}}, "c": "d"}, "objects in arrays in objects"},
		{"names differing in case", `{"a":1,"A":2}`, map[string]any{"a": json.Number("1"), "A": json.Number("2")}, "names are case-sensitive"},
		{"empty name", `{"":1}`, map[string]any{"": json.Number("1")}, "the empty name is a name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := strictjson.Parse([]byte(tt.in))
			require.NoError(t, err, tt.why)
			require.Equal(t, tt.want, got, tt.why)
			require.True(t, strictjson.Valid([]byte(tt.in)))
		})
	}
}

func TestParseRefuses(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		pointer string
		offset  int
		reason  string
	}{
		{"duplicate name", `{"a":1,"a":2}`, "/a", 7, `duplicate member name "a"`},
		{"duplicate name after escape", `{"a":1,"\u0061":2}`, "/a", 7, `duplicate member name "a"`},
		{"duplicate name nested", `{"x":{"b":1,"b":2}}`, "/x/b", 12, `duplicate member name "b"`},
		{"invalid UTF-8 in string", "\"\xff\"", "", 1, "invalid UTF-8 in a string"},
		{"invalid UTF-8 in name", "{\"\xc3\x28\":1}", "", 2, "invalid UTF-8 in a string"},
		{"UTF-8 encoded surrogate", "\"\xed\xa0\x80\"", "", 1, "invalid UTF-8 in a string"},
		{"overlong UTF-8", "\"\xc0\xaf\"", "", 1, "invalid UTF-8 in a string"},
		{"invalid UTF-8 outside strings", "\xff", "", 0, "invalid character byte 0xFF, expected a value"},
		{"byte-order mark", "\xef\xbb\xbf{}", "", 0, "a byte-order mark is not allowed"},
		{"lone high surrogate", `"\ud800"`, "", 1, `lone high surrogate \uD800`},
		{"high surrogate then letter", `"\ud800x"`, "", 1, `lone high surrogate \uD800`},
		{"two high surrogates", `"\ud800\ud800"`, "", 1, `lone high surrogate \uD800`},
		{"lone low surrogate", `"\udc00"`, "", 1, `lone low surrogate \uDC00`},
		{"inverted pair", `"\udc00\ud800"`, "", 1, `lone low surrogate \uDC00`},
		{"raw noncharacter U+FDD0", "\"\xef\xb7\x90\"", "", 1, "the Unicode noncharacter U+FDD0 is not allowed"},
		{"escaped noncharacter U+FDD0", `"\ufdd0"`, "", 1, "the Unicode noncharacter U+FDD0 is not allowed"},
		{"escaped noncharacter U+FDEF", `"\uFDEF"`, "", 1, "the Unicode noncharacter U+FDEF is not allowed"},
		{"raw noncharacter U+FFFE", "\"\xef\xbf\xbe\"", "", 1, "the Unicode noncharacter U+FFFE is not allowed"},
		{"escaped noncharacter U+FFFE", `"\ufffe"`, "", 1, "the Unicode noncharacter U+FFFE is not allowed"},
		{"escaped noncharacter U+FFFF", `"\uFFFF"`, "", 1, "the Unicode noncharacter U+FFFF is not allowed"},
		{"noncharacter U+1FFFF as pair", `"\ud83f\udfff"`, "", 1, "the Unicode noncharacter U+1FFFF is not allowed"},
		{"raw noncharacter U+10FFFF", "\"\xf4\x8f\xbf\xbf\"", "", 1, "the Unicode noncharacter U+10FFFF is not allowed"},
		{"noncharacter in a name", `{"\ufdd0":1}`, "", 2, "the Unicode noncharacter U+FDD0 is not allowed"},
		{"float overflow", `1e400`, "", 0, "number 1e400 is too large for a 64-bit float"},
		{"negative float overflow", `{"n":-1.5E+400}`, "/n", 5, "number -1.5E+400 is too large for a 64-bit float"},
		{"nonzero underflow", `1e-400`, "", 0, "number 1e-400 is too small for a 64-bit float (it would round to zero)"},
		{"underflow below the smallest denormal", `[2e-324]`, "/0", 1, "number 2e-324 is too small for a 64-bit float (it would round to zero)"},
		{"101-character number", strings.Repeat("1", 101), "", 0, "number is longer than 100 characters"},
		{"101-character zero", "0." + strings.Repeat("0", 99), "", 0, "number is longer than 100 characters"},
		{"trailing value", `{} {}`, "", 3, "unexpected data after the JSON value"},
		{"trailing garbage", `{}x`, "", 2, "unexpected data after the JSON value"},
		{"leading zero", `01`, "", 1, "unexpected data after the JSON value"},
		{"raw control character", "\"a\x01\"", "", 2, "control character byte 0x01 must be escaped in a string"},
		{"raw newline in string", "\"a\nb\"", "", 2, "control character byte 0x0A must be escaped in a string"},
		{"raw tab in name", "{\"\t\":1}", "", 2, "control character byte 0x09 must be escaped in a string"},
		{"empty input", ``, "", 0, "unexpected end of input, expected a value"},
		{"whitespace only", " \n", "", 2, "unexpected end of input, expected a value"},
		{"bad literal", `{"a":[1,{"b":tru}]}`, "/a/1/b", 13, "invalid literal, expected true"},
		{"trailing comma in array", `[1,]`, "/1", 3, `invalid character "]", expected a value`},
		{"trailing comma in object", `{"a":1,}`, "", 7, `invalid character "}", expected a member name`},
		{"missing colon", `{"a" 1}`, "/a", 5, "expected ':' after the member name"},
		{"missing comma", `{"a":1 "b":2}`, "", 7, `invalid character "\"", expected ',' or '}'`},
		{"unquoted name", `{a:1}`, "", 1, `invalid character "a", expected a member name`},
		{"unterminated string", `"abc`, "", 4, "unexpected end of input inside a string"},
		{"unterminated object", `{"a":1`, "", 6, "unexpected end of input, expected ',' or '}'"},
		{"invalid escape", `"\x"`, "", 1, `invalid escape sequence \x`},
		{"escape of a control byte", "\"\\\x01\"", "", 1, "invalid escape sequence: a backslash followed by byte 0x01"},
		{"escape of a non-ASCII byte", "\"\\\xc3\xa9\"", "", 1, "invalid escape sequence: a backslash followed by byte 0xC3"},
		{"short unicode escape", `"\u12"`, "", 1, `invalid \u escape, expected four hexadecimal digits`},
		{"minus alone", `-`, "", 1, "invalid number, expected a digit"},
		{"plus sign", `+1`, "", 0, `invalid character "+", expected a value`},
		{"dot without digits", `1.`, "", 2, "invalid number, expected a digit after the decimal point"},
		{"exponent without digits", `1e+`, "", 3, "invalid number, expected a digit in the exponent"},
		{"pointer escaping", `{"a~/b":[0,1e999]}`, "/a~0~1b/1", 11, "number 1e999 is too large for a 64-bit float"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := strictjson.Parse([]byte(tt.in))
			require.Error(t, err)
			require.Nil(t, v)
			var perr *strictjson.Error
			require.ErrorAs(t, err, &perr)
			require.Equal(t, tt.reason, perr.Reason)
			require.Equal(t, tt.pointer, perr.Pointer)
			require.Equal(t, tt.offset, perr.Offset)
			where := tt.pointer
			if where == "" {
				where = "the root"
			}
			require.Contains(t, err.Error(), "at "+where+" ")
			require.False(t, strictjson.Valid([]byte(tt.in)))
		})
	}
}

// nested returns depth arrays around a value, or depth-1 objects and an
// array when objects is set.
func nested(depth int, objects bool) string {
	if objects {
		return strings.Repeat(`{"a":`, depth-1) + "[]" + strings.Repeat("}", depth-1)
	}
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func TestParseDepth(t *testing.T) {
	require.Equal(t, 1000, strictjson.MaxDepth)
	tests := []struct {
		name    string
		in      string
		refused bool
		offset  int // of the opening bracket of level 1001
	}{
		{"arrays at the bound", nested(strictjson.MaxDepth, false), false, 0},
		{"objects at the bound", nested(strictjson.MaxDepth, true), false, 0},
		{"arrays one over the bound", nested(strictjson.MaxDepth+1, false), true, 1000},
		{"objects one over the bound", nested(strictjson.MaxDepth+1, true), true, 5000},
		// A megabyte of open brackets: refused at the bound, without
		// recursing further and without exhausting the stack.
		{"a megabyte of brackets", strings.Repeat("[", 1<<20), true, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := strictjson.Parse([]byte(tt.in))
			if !tt.refused {
				require.NoError(t, err)
				return
			}
			var perr *strictjson.Error
			require.ErrorAs(t, err, &perr)
			require.Equal(t, "nesting is deeper than 1000 levels", perr.Reason)
			require.Equal(t, tt.offset, perr.Offset)
		})
	}
}

// TestParseLongPointer pins that the pointer of an error deep inside a
// document with a long member name is built once: the document is a
// megabyte, nested a thousand levels, and the message names every level.
func TestParseLongPointer(t *testing.T) {
	name := strings.Repeat("n", 1<<19)
	doc := []byte(strings.Repeat("[", 999) + `{"` + name + `":x}` + strings.Repeat("]", 999))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := strictjson.Parse(doc)
	runtime.ReadMemStats(&after)
	var perr *strictjson.Error
	require.ErrorAs(t, err, &perr)
	require.Equal(t, strings.Repeat("/0", 999)+"/"+name, perr.Pointer)
	// Prefixing the pointer level by level allocated 999 copies of the
	// name, half a gigabyte; building it once needs a few megabytes.
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20))
}

func TestParseDetached(t *testing.T) {
	data := []byte(`{"name":["value"]}`)
	v, err := strictjson.Parse(data)
	require.NoError(t, err)
	copy(data, bytes.Repeat([]byte("x"), len(data)))
	require.Equal(t, map[string]any{"name": []any{"value"}}, v, "the tree shares no memory with the input")
}

func TestCompact(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"whitespace removed", " { \"a\" : [ 1 , 2 ] }\n", `{"a":[1,2]}`},
		{"member order kept", `{ "b":1, "a":2 }`, `{"b":1,"a":2}`},
		{"number text kept", `[ 1.0E+2, -0, 1e-7 ]`, `[1.0E+2,-0,1e-7]`},
		{"escapes kept", `[ "\u0041 \" x", "\/" ]`, `["\u0041 \" x","\/"]`},
		{"escaped backslash before quote", `[ "a\\" , "b" ]`, `["a\\","b"]`},
		{"whitespace inside strings kept", "[ \" a \\t b \" ]", `[" a \t b "]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prefix := []byte("prefix:")
			got := strictjson.Compact(prefix, []byte(tt.in))
			require.Equal(t, "prefix:"+tt.want, string(got))
		})
	}
}

func TestIsBlank(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", true},
		{" \t\r\n", true},
		{" x ", false},
		{"\v", false},           // vertical tab is not JSON whitespace
		{"\u00a0", false},       // nor is a no-break space
		{"\xef\xbb\xbf", false}, // nor a byte-order mark
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, strictjson.IsBlank([]byte(tt.in)), "%q", tt.in)
	}
	for _, c := range []byte{' ', '\t', '\r', '\n'} {
		require.True(t, strictjson.IsSpace(c))
	}
	require.False(t, strictjson.IsSpace('\f'))
}

// reference decodes data with jsontext, which implements RFC 7493 apart
// from the extra rules of this package, into the same kind of tree Parse
// returns, numbers as their exact token text.
func reference(data []byte) (any, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(data))
	v, err := referenceValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	return v, nil
}

func referenceValue(dec *jsontext.Decoder) (any, error) {
	switch dec.PeekKind() {
	case '0':
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		return json.Number(v), nil
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		obj := map[string]any{}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return nil, err
			}
			name := tok.String() // before the next call voids the token
			v, err := referenceValue(dec)
			if err != nil {
				return nil, err
			}
			obj[name] = v
		}
		_, err := dec.ReadToken()
		return obj, err
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return nil, err
		}
		arr := []any{}
		for dec.PeekKind() != ']' {
			v, err := referenceValue(dec)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
		_, err := dec.ReadToken()
		return arr, err
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return nil, err
	}
	switch tok.Kind() {
	case 'n':
		return nil, nil
	case 't', 'f':
		return tok.Bool(), nil
	case '"':
		return tok.String(), nil
	}
	return nil, errors.New("unexpected token")
}

// equalTrees compares two trees; numbers compare by exact value, because
// Parse writes a zero with an exponent as "0".
func equalTrees(t *testing.T, want, got any) {
	t.Helper()
	switch want := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		require.True(t, ok, "object expected, got %T", got)
		require.Len(t, g, len(want))
		for k, v := range want {
			gv, ok := g[k]
			require.True(t, ok, "member %q missing", k)
			equalTrees(t, v, gv)
		}
	case []any:
		g, ok := got.([]any)
		require.True(t, ok, "array expected, got %T", got)
		require.Len(t, g, len(want))
		for i := range want {
			equalTrees(t, want[i], g[i])
		}
	case json.Number:
		g, ok := got.(json.Number)
		require.True(t, ok, "number expected, got %T", got)
		w, ok1 := new(big.Rat).SetString(string(want))
		n, ok2 := new(big.Rat).SetString(string(g))
		require.True(t, ok1 && ok2, "numbers %s and %s", want, g)
		require.Zero(t, w.Cmp(n), "numbers %s and %s", want, g)
		if !strings.ContainsAny(string(want), "eE") {
			require.Equal(t, want, g, "number text without exponent is kept")
		}
	default:
		require.Equal(t, want, got)
	}
}

// extraRules are the refusals this package adds to RFC 8259 as jsontext
// implements it.
var extraRules = []string{
	"noncharacter",
	"too large for a 64-bit float",
	"too small for a 64-bit float",
	"number is longer than 100 characters",
	"nesting is deeper than 1000 levels",
}

// FuzzParse checks Parse against jsontext: a document jsontext refuses is
// refused; a document Parse accepts decodes to the same tree with both; a
// document only Parse refuses breaks one of the documented extra rules.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`{}`, `[]`, `{"a":1,"b":[true,false,null],"c":{"d":"e"}}`,
		`{"a":1,"\u0061":2}`, `{"a":1,"a":2}`, "\xef\xbb\xbf{}", "\"\xff\"",
		`"\ud800"`, `"\udc00"`, `"\udc00\ud800"`, `"\ud83d\ude00"`,
		`"\ufdd0"`, "\"\xef\xb7\x90\"", `"\ufffe"`, `"\ud83f\udfff"`,
		`1e400`, `1e-400`, `0e-400`, `5e-324`, `2e-324`, `-0.0`, `1.0E+2`,
		`9007199254740993`, strings.Repeat("1", 101), strings.Repeat("1", 100),
		`{} {}`, `{}x`, "\"\x01\"", `"\u0000"`, `[1,]`, `{"a" 1}`, ``, " ",
		nested(strictjson.MaxDepth, false), nested(strictjson.MaxDepth+1, false),
		`{"":{"":[""]}}`, `"\/\b\f\n\r\t"`, `01`, `-`, `1.`, `1e`, `"\x"`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := strictjson.Parse(data)
		want, refErr := reference(data)
		switch {
		case refErr != nil:
			require.Error(t, err, "jsontext refuses %q: %v", data, refErr)
		case err == nil:
			equalTrees(t, want, got)
			// The compact form is the same document.
			compact := strictjson.Compact(nil, data)
			again, err := strictjson.Parse(compact)
			require.NoError(t, err)
			equalTrees(t, want, again)
			require.True(t, jsontext.Value(compact).IsValid())
			// Interning strings changes nothing about the tree.
			known := map[string]string{"a": "a", "": "", "b": "b"}
			interned, _, err := strictjson.ParseInterning(data, known)
			require.NoError(t, err)
			equalTrees(t, want, interned)
		default:
			var perr *strictjson.Error
			require.ErrorAs(t, err, &perr)
			extra := false
			for _, rule := range extraRules {
				extra = extra || strings.Contains(perr.Reason, rule)
			}
			require.True(t, extra, "jsontext accepts %q, Parse refuses it: %v", data, err)
		}
	})
}

// A refusal quotes the document in short: a megabyte member name makes a
// message of a few hundred bytes, its start and end kept.
func TestErrorIsShort(t *testing.T) {
	name := strings.Repeat("n", 1<<20)
	for _, doc := range []string{
		`{"` + name + `":1,"` + name + `":2}`,
		`{"` + name + `":[1,}`,
	} {
		_, err := strictjson.Parse([]byte(doc))
		require.Error(t, err)
		require.Less(t, len(err.Error()), 1024, err.Error())
		require.Contains(t, err.Error(), "at /nnn")
		require.Contains(t, err.Error(), "…")
	}
}

// An error in an array nested in an array is located at the outer item
// it is in: the items the refused inner array read before are not
// counted as the outer array's.
func TestErrorPointerOfNestedArrays(t *testing.T) {
	for doc, pointer := range map[string]string{
		`{"0":[[0`:      "/0/0",
		`[1,[2,3,x]]`:   "/1/2",
		`[[1,2],[3,}]]`: "/1/1",
		`[[1,[2,[`:      "/0/1/1/0",
	} {
		_, err := strictjson.Parse([]byte(doc))
		var perr *strictjson.Error
		require.ErrorAs(t, err, &perr, doc)
		require.Equal(t, pointer, perr.Pointer, doc)
	}
}
