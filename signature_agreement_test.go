package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// The property tests in this file are the evidence that the derived schema and
// the decoder agree: every value of an input type, encoded by the JSON
// codec, is admitted by Prepare and decodes back to itself; and whatever
// Prepare admits of a mutated text decodes without error.

type propFlat struct {
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	B   bool    `json:"b"`
	S   string  `json:"s"`
	R   rune    `json:"r"`
	By  byte    `json:"by"`
}

type propLeaf struct {
	ID     uint16   `json:"id"`
	Tags   []string `json:"tags"`
	Weight *float64 `json:"weight"`
}

type propBase struct {
	Kind string `json:"kind"`
	Rank int16  `json:"rank"`
}

type propNested struct {
	propBase
	Leaf   propLeaf            `json:"leaf"`
	Ptr    *propLeaf           `json:"ptr"`
	Leaves []propLeaf          `json:"leaves"`
	Ptrs   []*propLeaf         `json:"ptrs"`
	ByName map[string]propLeaf `json:"by_name"`
	ByID   map[int32]*int8     `json:"by_id"`
	ByU    map[uint16]string   `json:"by_u"`
	Matrix [][]int32           `json:"matrix"`
	Pair   [2]float32          `json:"pair"`
	Next   *propNested         `json:"next"`
}

type propWire struct {
	At    time.Time       `json:"at"`
	When  *time.Time      `json:"when"`
	Data  []byte          `json:"data"`
	Blobs [][]byte        `json:"blobs"`
	Fixed [5]byte         `json:"fixed"`
	Addr  netip.Addr      `json:"addr"`
	Raw   json.RawMessage `json:"raw"`
	Any   any             `json:"any"`
}

// PropExtra is embedded through a pointer: all or none of its members.
type PropExtra struct {
	Note  string `json:"note"`
	Score uint32 `json:"score"`
}

type propOptional struct {
	*PropExtra
	S    string          `json:"s,omitzero"`
	N    int32           `json:"n,omitzero"`
	P    *int16          `json:"p,omitzero"`
	L    []string        `json:"l,omitzero"`
	M    map[string]bool `json:"m,omitzero"`
	T    time.Time       `json:"t,omitzero"`
	St   propLeaf        `json:"st,omitzero"`
	E    string          `json:"e,omitempty"`
	Ptr  *propLeaf       `json:"ptr,omitempty"`
	Mode string          `json:"mode,omitzero" jsonschema:"enum=fast,enum=slow"`
}

// propGen draws values within the natural ranges of Go types, favouring
// the edges.
type propGen struct{ r *rand.Rand }

func newPropGen(seed uint64) *propGen { return &propGen{rand.New(rand.NewPCG(seed, 0x5eed))} }

func (g *propGen) edge() bool { return g.r.IntN(5) == 0 }

func (g *propGen) signed(bits int) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if g.edge() {
		return []int64{lo, hi, 0, -1, 1, lo + 1, hi - 1}[g.r.IntN(7)]
	}
	return int64(g.r.Uint64()) >> (64 - bits)
}

func (g *propGen) unsigned(bits int) uint64 {
	hi := uint64(math.MaxUint64) >> (64 - bits)
	if g.edge() {
		return []uint64{0, 1, hi, hi - 1}[g.r.IntN(4)]
	}
	return g.r.Uint64() >> (64 - bits)
}

func (g *propGen) float32() float32 {
	if g.edge() {
		return []float32{0, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1, -1.5, 0.1}[g.r.IntN(8)]
	}
	for {
		f := math.Float32frombits(g.r.Uint32())
		if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			return f
		}
	}
}

func (g *propGen) float64() float64 {
	if g.edge() {
		return []float64{0, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21, 1e-7, 0.1, -2.5}[g.r.IntN(8)]
	}
	for {
		f := math.Float64frombits(g.r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
}

// rune draws any Unicode scalar value that is not a noncharacter.
func (g *propGen) rune() rune {
	for {
		var r rune
		switch g.r.IntN(6) {
		case 0:
			r = rune(g.r.IntN(0x80)) // ASCII, controls, quote and backslash included
		case 1:
			r = []rune{'"', '\\', '/', 0, 0x1f, 0x7f, 0x2028, 0x2029, 0xfeff, 0xfffd, 0x10fffd}[g.r.IntN(11)]
		case 2:
			r = 0xa0 + rune(g.r.IntN(0x200))
		case 3:
			r = 0x4e00 + rune(g.r.IntN(0x5200))
		case 4:
			r = 0x1f300 + rune(g.r.IntN(0x800))
		default:
			r = rune(g.r.IntN(0x110000))
		}
		surrogate := r >= 0xd800 && r <= 0xdfff
		nonchar := (r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe
		if !surrogate && !nonchar {
			return r
		}
	}
}

func (g *propGen) string() string {
	n := g.r.IntN(12)
	if g.edge() {
		n = 0
	}
	var b strings.Builder
	for range n {
		b.WriteRune(g.rune())
	}
	return b.String()
}

func (g *propGen) strings() []string {
	out := make([]string, g.r.IntN(4))
	for i := range out {
		out[i] = g.string()
	}
	return out
}

func (g *propGen) bytes() []byte {
	out := make([]byte, g.r.IntN(20))
	for i := range out {
		out[i] = byte(g.r.Uint32())
	}
	return out
}

func (g *propGen) time() time.Time {
	zone := time.UTC
	if g.r.IntN(2) == 0 {
		zone = time.FixedZone("", (g.r.IntN(28*60+1)-14*60)*60)
	}
	nanos := 0
	if g.r.IntN(2) == 0 {
		nanos = g.r.IntN(1e9)
	}
	year := g.r.IntN(10000)
	if g.edge() {
		year = []int{0, 9999, 1970, 2000}[g.r.IntN(4)]
	}
	return time.Date(year, time.Month(1+g.r.IntN(12)), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), nanos, zone)
}

func (g *propGen) addr() netip.Addr {
	switch g.r.IntN(3) {
	case 0:
		return netip.Addr{}
	case 1:
		return netip.AddrFrom4([4]byte{byte(g.r.Uint32()), byte(g.r.Uint32()), byte(g.r.Uint32()), byte(g.r.Uint32())})
	}
	var a [16]byte
	for i := range a {
		a[i] = byte(g.r.Uint32())
	}
	return netip.AddrFrom16(a)
}

// anyValue draws a value that decodes into any as itself.
func (g *propGen) anyValue(depth int) any {
	switch k := g.r.IntN(6); {
	case k == 0:
		return nil
	case k == 1:
		return g.r.IntN(2) == 0
	case k == 2:
		return g.float64()
	case k == 3 || depth <= 0:
		return g.string()
	case k == 4:
		out := make([]any, g.r.IntN(3))
		for i := range out {
			out[i] = g.anyValue(depth - 1)
		}
		return out
	default:
		out := make(map[string]any, 2)
		for range g.r.IntN(3) {
			out[g.string()] = g.anyValue(depth - 1)
		}
		return out
	}
}

func (g *propGen) leaf() propLeaf {
	l := propLeaf{ID: uint16(g.unsigned(16)), Tags: g.strings()}
	if g.r.IntN(2) == 0 {
		w := g.float64()
		l.Weight = &w
	}
	return l
}

func (g *propGen) flat() propFlat {
	return propFlat{
		I: int(g.signed(64)), I8: int8(g.signed(8)), I16: int16(g.signed(16)), I32: int32(g.signed(32)), I64: g.signed(64),
		U: uint(g.unsigned(64)), U8: uint8(g.unsigned(8)), U16: uint16(g.unsigned(16)), U32: uint32(g.unsigned(32)), U64: g.unsigned(64),
		F32: g.float32(), F64: g.float64(), B: g.r.IntN(2) == 0, S: g.string(), R: rune(g.signed(32)), By: byte(g.unsigned(8)),
	}
}

func (g *propGen) nested(depth int) propNested {
	n := propNested{
		propBase: propBase{Kind: g.string(), Rank: int16(g.signed(16))},
		Leaf:     g.leaf(),
		Leaves:   make([]propLeaf, g.r.IntN(3)),
		Ptrs:     make([]*propLeaf, g.r.IntN(3)),
		ByName:   map[string]propLeaf{},
		ByID:     map[int32]*int8{},
		ByU:      map[uint16]string{},
		Matrix:   make([][]int32, g.r.IntN(3)),
		Pair:     [2]float32{g.float32(), g.float32()},
	}
	if g.r.IntN(2) == 0 {
		l := g.leaf()
		n.Ptr = &l
	}
	for i := range n.Leaves {
		n.Leaves[i] = g.leaf()
	}
	for i := range n.Ptrs {
		if g.r.IntN(3) > 0 {
			l := g.leaf()
			n.Ptrs[i] = &l
		}
	}
	for range g.r.IntN(3) {
		n.ByName[g.string()] = g.leaf()
	}
	for range g.r.IntN(3) {
		var v *int8
		if g.r.IntN(2) == 0 {
			x := int8(g.signed(8))
			v = &x
		}
		n.ByID[int32(g.signed(32))] = v
	}
	for range g.r.IntN(3) {
		n.ByU[uint16(g.unsigned(16))] = g.string()
	}
	for i := range n.Matrix {
		n.Matrix[i] = make([]int32, g.r.IntN(3))
		for j := range n.Matrix[i] {
			n.Matrix[i][j] = int32(g.signed(32))
		}
	}
	if depth > 0 && g.r.IntN(2) == 0 {
		next := g.nested(depth - 1)
		n.Next = &next
	}
	return n
}

func (g *propGen) wire() propWire {
	w := propWire{At: g.time(), Data: g.bytes(), Blobs: make([][]byte, g.r.IntN(3)), Addr: g.addr(), Any: g.anyValue(2)}
	if g.r.IntN(2) == 0 {
		when := g.time()
		w.When = &when
	}
	for i := range w.Blobs {
		w.Blobs[i] = g.bytes()
	}
	for i := range w.Fixed {
		w.Fixed[i] = byte(g.r.Uint32())
	}
	raw, err := jsonv2.Marshal(g.anyValue(2), jsonv2.Deterministic(true))
	if err != nil {
		panic(err)
	}
	w.Raw = raw
	return w
}

func (g *propGen) optional() propOptional {
	var o propOptional
	if g.r.IntN(2) == 0 {
		o.S = g.string()
	}
	if g.r.IntN(2) == 0 {
		o.N = int32(g.signed(32))
	}
	if g.r.IntN(2) == 0 {
		p := int16(g.signed(16))
		o.P = &p
	}
	if g.r.IntN(2) == 0 {
		o.L = g.strings() // possibly empty, never nil: written as []
	}
	if g.r.IntN(2) == 0 {
		o.M = map[string]bool{}
		for range g.r.IntN(3) {
			o.M[g.string()] = g.r.IntN(2) == 0
		}
	}
	if g.r.IntN(2) == 0 {
		o.T = g.time()
	}
	if g.r.IntN(2) == 0 {
		o.St = g.leaf()
	}
	if g.r.IntN(2) == 0 {
		o.E = g.string()
	}
	if g.r.IntN(2) == 0 {
		l := g.leaf()
		o.Ptr = &l
	}
	o.Mode = []string{"", "fast", "slow"}[g.r.IntN(3)]
	if g.r.IntN(2) == 0 {
		o.PropExtra = &PropExtra{Note: g.string(), Score: uint32(g.unsigned(32))}
	}
	return o
}

// utc makes times comparable with require.Equal: same instant, same
// location, no monotonic reading.
func utc(t time.Time) time.Time { return t.UTC().Round(0) }

const propValues = 300

func TestSchemaAndDecoderAgree(t *testing.T) {
	t.Run("flat scalars", func(t *testing.T) {
		checkAgreement(t, 1, (*propGen).flat, func(*propFlat) {})
	})
	t.Run("nested structs, pointers, slices, maps", func(t *testing.T) {
		checkAgreement(t, 2, func(g *propGen) propNested { return g.nested(2) }, func(*propNested) {})
	})
	t.Run("times, bytes and unconstrained values", func(t *testing.T) {
		checkAgreement(t, 3, (*propGen).wire, func(w *propWire) {
			w.At = utc(w.At)
			if w.When != nil {
				when := utc(*w.When)
				w.When = &when
			}
		})
	})
	t.Run("optional members", func(t *testing.T) {
		checkAgreement(t, 4, (*propGen).optional, func(o *propOptional) { o.T = utc(o.T) })
	})
	t.Run("pointer input", func(t *testing.T) {
		checkAgreement(t, 5, func(g *propGen) *propFlat { f := g.flat(); return &f }, func(**propFlat) {})
	})
}

// checkAgreement is the round trip encode → Prepare → Decode (and Call)
// over generated values, then the mutation differential.
func checkAgreement[T any](t *testing.T, seed uint64, gen func(*propGen) T, normalize func(*T)) {
	var seen T
	b := bindFunc(t, "prop", func(_ context.Context, in T) (string, error) {
		seen = in
		return "ok", nil
	})
	sig, err := tool.NewSignature[T, string]()
	require.NoError(t, err)
	g := newPropGen(seed)
	texts := make([][]byte, 0, propValues)
	for range propValues {
		want := gen(g)
		text, err := jsonv2.Marshal(want)
		require.NoError(t, err)
		inv, err := prepare(b, string(text))
		require.NoError(t, err, "the encoder's text is admitted: %s", text)
		got, err := sig.Decode(inv)
		require.NoError(t, err, "%s", text)
		normalize(&want)
		normalize(&got)
		require.Equal(t, want, got, "decoded value of %s", text)
		_, err = b.Call(context.Background(), inv)
		require.NoError(t, err)
		normalize(&seen)
		require.Equal(t, want, seen, "the function sees the value: %s", text)
		texts = append(texts, text)
	}

	// Negative differential: what Prepare admits of a mutated text always
	// decodes, and every refusal is a public rejection.
	admitted, refused := 0, 0
	r := rand.New(rand.NewPCG(seed, 0xbad))
	for _, text := range texts {
		for range 6 {
			mutated, ok := mutateJSON(r, text)
			if !ok {
				continue
			}
			inv, err := prepare(b, string(mutated))
			if err != nil {
				refused++
				// The message may quote the model's own member names, so
				// only its kind is checked here.
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
				_, ok := tool.ClassifyInputRejection(err)
				require.True(t, ok, "a refusal of %s is a public rejection: %v", mutated, err)
				continue
			}
			admitted++
			_, err = sig.Decode(inv)
			require.NoError(t, err, "admitted but not decodable: %s", mutated)
			_, err = b.Call(context.Background(), inv)
			require.NoError(t, err, "admitted but the call fails: %s", mutated)
		}
	}
	require.Positive(t, refused, "the mutations exercise refusals")
	require.Positive(t, admitted, "the mutations exercise admissions")
}

// jsonTok is one token of a JSON text, with its role.
type jsonTok struct {
	tok    jsontext.Token
	isName bool
}

// mutateJSON changes one token of a valid JSON text the way a careless
// model would: numbers with fractions, exponents or out of range, strings
// for numbers, renamed, dropped and unknown members, nulls.
func mutateJSON(r *rand.Rand, text []byte) ([]byte, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(text))
	var toks []jsonTok
	type frame struct{ object, wantName bool }
	var stack []frame
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		isName := false
		if n := len(stack); n > 0 && stack[n-1].object && tok.Kind() != '}' {
			isName = stack[n-1].wantName
			stack[n-1].wantName = !stack[n-1].wantName
		}
		toks = append(toks, jsonTok{tok: tok.Clone(), isName: isName})
		switch tok.Kind() {
		case '{':
			stack = append(stack, frame{object: true, wantName: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		}
	}
	if len(toks) < 2 {
		return nil, false
	}
	i := 1 + r.IntN(len(toks)-1) // never the root
	target := toks[i]
	var replacement string
	drop, insertUnknown := false, false
	switch k := target.tok.Kind(); {
	case target.isName:
		switch r.IntN(4) {
		case 0:
			drop = true
		case 1:
			name := []rune(target.tok.String())
			if len(name) > 0 {
				name[0] = unicode.ToUpper(name[0])
			}
			replacement = string(name)
			if replacement == target.tok.String() {
				replacement = "X" + replacement
			}
		case 2:
			replacement = target.tok.String() + "_"
		default:
			replacement = ""
		}
		replacement = strconvQuote(replacement)
	case k == '0':
		n := target.tok.String()
		options := []string{n + ".0", n + ".5", n + "e0", "1e1", "1.0", "-" + n, "-0", "0.1", "300", "-129", "256", "65536", "-1",
			"4294967296", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "3.5e38", "1e-50", "1E2", `"` + n + `"`, "null"}
		replacement = options[r.IntN(len(options))]
	case k == '"':
		options := []string{"1", "null", "true", `""`, `"@@"`, `"AQI"`, `"not-a-date"`, `"2016-12-31T23:59:60Z"`, `"2024-02-30T00:00:00Z"`,
			`"0000-01-01T00:00:00Z"`, `"::1"`, `"1.2.3.4"`, `"1.2.3"`, `"fast"`, `"medium"`, "[]", "{}"}
		replacement = options[r.IntN(len(options))]
	case k == '{':
		if r.IntN(2) == 0 {
			insertUnknown = true
		} else {
			replacement = []string{"null", "[]", `"{}"`, "{}"}[r.IntN(4)]
		}
	case k == '[':
		replacement = []string{"null", "{}", "[null]", "[[]]", "[1.5]", `["x"]`}[r.IntN(6)]
	case k == 't' || k == 'f':
		replacement = []string{`"true"`, "0", "null"}[r.IntN(3)]
	case k == 'n':
		replacement = []string{"0", `""`, "false", "{}", "[]"}[r.IntN(5)]
	default:
		return nil, false // a closing token
	}

	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true))
	for j := 0; j < len(toks); j++ {
		t := toks[j]
		if j != i {
			if err := enc.WriteToken(t.tok); err != nil {
				return nil, false
			}
			continue
		}
		switch {
		case insertUnknown:
			if enc.WriteToken(t.tok) != nil || enc.WriteToken(jsontext.String("zz_unknown")) != nil || enc.WriteToken(jsontext.Int(1)) != nil {
				return nil, false
			}
		case drop:
			j = skipValue(toks, j+1) // the member's value
		case t.isName:
			if err := enc.WriteValue(jsontext.Value(replacement)); err != nil {
				return nil, false
			}
		default:
			if err := enc.WriteValue(jsontext.Value(replacement)); err != nil {
				return nil, false
			}
			if k := t.tok.Kind(); k == '{' || k == '[' {
				j = skipValue(toks, j)
			}
		}
	}
	return bytes.TrimSpace(out.Bytes()), true
}

// skipValue returns the index of the last token of the value starting at i.
func skipValue(toks []jsonTok, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].tok.Kind() {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			return j
		}
	}
	return len(toks) - 1
}

func strconvQuote(s string) string {
	b, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
