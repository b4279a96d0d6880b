package strictjson_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/strictjson"
)

// builder is a Handler that builds the value tree of what a Push reads,
// refusing duplicate member names as Parse does, so that the two can be
// compared.
type builder struct {
	p      *strictjson.Push
	stack  []any    // open containers: *[]any or map[string]any
	keys   []string // the pending member name of each open object
	root   any
	done   bool
	growth []int // lengths Growing reported for the string being read
}

func (b *builder) put(v any) error {
	if len(b.stack) == 0 {
		b.root, b.done = v, true
		return nil
	}
	switch top := b.stack[len(b.stack)-1].(type) {
	case *[]any:
		*top = append(*top, v)
	case map[string]any:
		top[b.keys[len(b.keys)-1]] = v
	}
	return nil
}

func (b *builder) Value(kind byte) error {
	b.growth = b.growth[:0]
	switch kind {
	case strictjson.KindObject:
		b.stack = append(b.stack, map[string]any{})
		b.keys = append(b.keys, "")
	case strictjson.KindArray:
		b.stack = append(b.stack, &[]any{})
		b.keys = append(b.keys, "")
	}
	return nil
}

func (b *builder) Name(name []byte, whole bool) error {
	if !whole {
		return fmt.Errorf("name cut")
	}
	obj := b.stack[len(b.stack)-1].(map[string]any)
	if _, dup := obj[string(name)]; dup {
		return &strictjson.Error{Offset: b.p.Start(), Reason: fmt.Sprintf("duplicate member name %q", strictjson.Elide(string(name), 64))}
	}
	b.keys[len(b.keys)-1] = string(name)
	return nil
}

func (b *builder) String(content []byte, whole bool, runes int) error {
	if !whole {
		return fmt.Errorf("string cut")
	}
	if runes != utf8.RuneCount(content) {
		return fmt.Errorf("runes %d, want %d", runes, utf8.RuneCount(content))
	}
	for i := 1; i < len(b.growth); i++ {
		if b.growth[i] < b.growth[i-1] || b.growth[i] > runes {
			return fmt.Errorf("growth %v beyond %d", b.growth, runes)
		}
	}
	return b.put(string(content))
}

func (b *builder) Growing(runes int) error {
	b.growth = append(b.growth, runes)
	return nil
}

func (b *builder) Number(token []byte) error { return b.put(json.Number(token)) }

func (b *builder) Literal(kind byte) error {
	switch kind {
	case strictjson.KindTrue:
		return b.put(true)
	case strictjson.KindFalse:
		return b.put(false)
	}
	return b.put(nil)
}

func (b *builder) Close(kind byte) error {
	top := b.stack[len(b.stack)-1]
	b.stack, b.keys = b.stack[:len(b.stack)-1], b.keys[:len(b.keys)-1]
	if arr, ok := top.(*[]any); ok {
		return b.put(*arr)
	}
	return b.put(top)
}

// pushPieces reads data with a Push in pieces cut at the given lengths
// (cycled), and returns the tree, the offset of the end of the piece that
// was refused (len(data) when End refused), and the error.
func pushPieces(data []byte, cuts []byte) (any, int, error) {
	b := &builder{}
	p := strictjson.NewPush(b, 1<<20)
	b.p = p
	for i, at := 0, 0; at < len(data); i++ {
		n := len(data) - at
		if len(cuts) > 0 {
			n = min(n, int(cuts[i%len(cuts)])%17+1)
		}
		if err := p.Write(data[at : at+n]); err != nil {
			return nil, at + n, err
		}
		at += n
	}
	if err := p.End(); err != nil {
		return nil, len(data), err
	}
	return b.root, len(data), nil
}

// samePushVerdict checks that Push, given data in pieces, refuses it
// exactly when Parse does, at the same offset and for the same reason
// (a number token is refused as too long before a later syntax error
// Parse would name), and builds the same tree otherwise.
func samePushVerdict(t *testing.T, data, cuts []byte) {
	t.Helper()
	want, wantErr := strictjson.Parse(data)
	got, refusedAt, err := pushPieces(data, cuts)
	if wantErr == nil {
		require.NoError(t, err, "%q", data)
		equalTrees(t, want, got)
		return
	}
	require.Error(t, err, "Parse refuses %q: %v", data, wantErr)
	var perr, wantPerr *strictjson.Error
	require.ErrorAs(t, err, &perr, "%q", data)
	require.ErrorAs(t, wantErr, &wantPerr)
	require.LessOrEqual(t, perr.Offset, refusedAt, "a refusal is about a byte already read: %q", data)
	if perr.Reason == "number is longer than 100 characters" {
		return
	}
	require.Equal(t, wantPerr.Offset, perr.Offset, "%q: %v against %v", data, err, wantErr)
	require.Equal(t, wantPerr.Reason, perr.Reason, "%q", data)
}

func TestPushAgreesWithParse(t *testing.T) {
	docs := []string{
		`{}`, `[]`, ` {"a" : [1, 2.5e3, -0, true, false, null, "x"]} `,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, "\xef\xbb\xbf{}", "\xef\xbb", "\xef{}",
		`"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, `"\ud800x"`, `"\ud83d\ude00"`,
		`"\ufdd0"`, "\"\xef\xb7\x90\"", "\"\xf0\x9f\xbf\xbe\"", "\"\xed\xa0\x80\"", "\"\xc0\x80\"",
		"\"\xe0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"", "\"\xc3", "\"\xc3\x28\"",
		`1e400`, `1e-400`, `0e-400`, `5e-324`, `-`, `-a`, `1.`, `1.x`, `1e`, `1e+`, `1ex`,
		`01`, `00`, `1.5.`, `[1,]`, `[,1]`, `{"a" 1}`, `{"a":}`, `{,}`, `{"a":1,}`, `{"a":1 "b":2}`,
		``, ` `, `{} {}`, `{}x`, "\"\x01\"", `"\u0000"`, `"\x"`, `"\u12"`, `"\u12x4"`, `"\`,
		`tru`, `trux`, `nul`, `[true false]`, `{"a":[1}`, `{"a":{]}`, strings.Repeat("9", 100),
		`"é ☃ 😀 \n\t\/"`, `{"":{"":[""]}}`, `[` + strings.Repeat("1", 100) + `]`,
		nested(strictjson.MaxDepth, false), nested(strictjson.MaxDepth+1, false),
		nested(strictjson.MaxDepth, true), nested(strictjson.MaxDepth+1, true),
	}
	for _, doc := range docs {
		for _, cuts := range [][]byte{nil, {0}, {1}, {2, 5, 0, 9}} {
			samePushVerdict(t, []byte(doc), cuts)
		}
	}
}

// FuzzPushSplits holds Push equal to Parse on any document cut into any
// pieces.
func FuzzPushSplits(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"}}`, `{"a":1,"a":2}`, "\xef\xbb\xbf{}",
		`"\ud800\udc00"`, `"\ud800\u0041"`, "\"\xf0\x9f\x98\x80\"", `[1e400, 0e-400]`,
		strings.Repeat("1", 101) + "x", `{"a" : [ 1 , { } ] } `, `[01]`, `"\u00e9"`,
	} {
		f.Add([]byte(s), []byte{3, 1, 4, 1, 5})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		samePushVerdict(t, data, cuts)
	})
}

// TestPushRefusesEarly checks that a piece is refused as soon as no text
// can complete the document, and not before.
func TestPushRefusesEarly(t *testing.T) {
	tests := []struct {
		pieces  []string
		refused int // index of the piece refused; -1: none before End
		reason  string
	}{
		{[]string{`{"a":`, `tr`, `ux`}, 2, "invalid literal, expected true"},
		{[]string{`{"a":"`, "\xc3", "("}, 2, "invalid UTF-8 in a string"},
		{[]string{`{"a":"\u`, `d8`, `00\`, `n`}, 3, `lone high surrogate \uD800`},
		{[]string{`{"a":1`, `2`, ` 3`}, 2, `invalid character "3", expected ',' or '}'`},
		{[]string{`{"a":-`, `0.`, `5e`, `+`}, -1, "invalid number, expected a digit in the exponent"},
		{[]string{"{\"a\":" + strings.Repeat("1", 100), "1"}, 1, "number is longer than 100 characters"},
		{[]string{`{"a":[1,2`}, -1, "unexpected end of input, expected ',' or ']'"},
	}
	for _, tc := range tests {
		p := strictjson.NewPush(&builder{}, 64)
		refused := -1
		var err error
		for i, piece := range tc.pieces {
			if err = p.Write([]byte(piece)); err != nil {
				refused = i
				break
			}
		}
		if err == nil {
			err = p.End()
		}
		require.Equal(t, tc.refused, refused, "%q", tc.pieces)
		require.ErrorContains(t, err, tc.reason, "%q", tc.pieces)
	}
}

// TestPushKeepsStringsBounded checks that a string longer than the limit
// is given cut, with its full length, and that a Push of a megabyte
// document allocates nothing per byte.
func TestPushKeepsStringsBounded(t *testing.T) {
	var got struct {
		content string
		whole   bool
		runes   int
	}
	h := &recorder{str: func(content []byte, whole bool, runes int) {
		got.content, got.whole, got.runes = string(content), whole, runes
	}}
	p := strictjson.NewPush(h, 8)
	require.NoError(t, p.Write([]byte(`"é123456789`)))
	require.NoError(t, p.Write([]byte(`ab"`)))
	require.NoError(t, p.End())
	require.Equal(t, "é123456", got.content, "8 bytes kept")
	require.False(t, got.whole)
	require.Equal(t, 12, got.runes)

	doc := []byte(`[` + strings.Repeat(`{"name":"a string of text","n":12.5,"ok":true},`, 20000) + `{}]`)
	allocs := testing.AllocsPerRun(3, func() {
		p := strictjson.NewPush(&recorder{}, 64)
		for i := 0; i < len(doc); i += 512 {
			require.NoError(t, p.Write(doc[i:min(i+512, len(doc))]))
		}
		require.NoError(t, p.End())
	})
	require.LessOrEqual(t, allocs, 4.0, "the Push, its handler and its string scratch")
}

// recorder is a Handler that accepts everything.
type recorder struct {
	str func(content []byte, whole bool, runes int)
}

func (*recorder) Value(byte) error        { return nil }
func (*recorder) Name([]byte, bool) error { return nil }
func (*recorder) Growing(int) error       { return nil }
func (*recorder) Number([]byte) error     { return nil }
func (*recorder) Literal(byte) error      { return nil }
func (*recorder) Close(byte) error        { return nil }
func (r *recorder) String(content []byte, whole bool, runes int) error {
	if r.str != nil {
		r.str(content, whole, runes)
	}
	return nil
}
