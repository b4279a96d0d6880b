package dispatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// streamSchema is the input schema of the tool "search" of
// streamRegistry: the shapes tool inputs use.
const streamSchema = `{"type":"object","properties":{
	"query":{"type":"string","minLength":1,"maxLength":64},
	"mode":{"enum":["fast","exact"]},
	"limit":{"type":"integer","minimum":1,"maximum":100},
	"tags":{"type":"array","items":{"type":"string","pattern":"^[a-z]+$"},"maxItems":4},
	"filter":{"$ref":"#/$defs/filter"},
	"rows":{"type":"array","items":{"$ref":"#/$defs/filter"}},
	"note":{"type":"string"},
	"at":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}},
	"required":["query","mode"],"additionalProperties":false,
	"$defs":{"filter":{"type":"object","properties":{"field":{"type":"string"},"value":{"type":"number"}},"required":["field"],"additionalProperties":false}}}`

// streamRegistry binds "search" (streamSchema) and "any" (any object),
// both of which complete with "ok", and "typed", a Func of streamInput,
// whose Prepare decodes in the read that checks.
func streamRegistry(t testing.TB) *tool.Registry {
	t.Helper()
	ok := func(context.Context, tool.Invocation) (tool.Result, error) {
		return tool.Result{Output: tool.NewTextOutput("ok")}, nil
	}
	reg := &tool.Registry{}
	for _, def := range []tool.Definition{
		{Name: "search", InputSchema: json.RawMessage(streamSchema)},
		{Name: "any", InputSchema: json.RawMessage(`{"type":"object"}`)},
	} {
		b, err := tool.Bind(toolFunc{def: def, fn: ok})
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	typed, err := tool.NewFunc(tool.FuncConfig{Name: "typed", Effect: tool.EffectSafe},
		func(_ context.Context, in streamInput) (string, error) { return in.Query, nil })
	require.NoError(t, err)
	b, err := tool.Bind(typed)
	require.NoError(t, err)
	require.NoError(t, reg.Register(b))
	return reg
}

// streamInput is the typed input of the tool "typed" of streamRegistry,
// of the shapes of streamSchema.
type streamInput struct {
	Query string      `json:"query" jsonschema:"minLength=1,maxLength=64"`
	Mode  string      `json:"mode" jsonschema:"enum=fast,enum=exact"`
	Limit int8        `json:"limit,omitzero"`
	Tags  []string    `json:"tags,omitzero"`
	Rows  []streamRow `json:"rows,omitzero"`
	Note  *string     `json:"note,omitzero"`
	Extra any         `json:"extra,omitzero"`
}

type streamRow struct {
	Field string  `json:"field"`
	Value float32 `json:"value,omitzero"`
}

// prepared says whether Prepare admits args for the tool name of reg.
func prepared(reg *tool.Registry, name, args string) error {
	b, _ := reg.Resolve(name)
	_, err := b.Contract().Prepare(tool.Request{Name: name, Arguments: args}, tool.Admission{})
	return err
}

// write gives the deltas to s and returns the index of the delta refused,
// or -1.
func write(s *dispatch.Stream, deltas []string) (int, error) {
	for i, d := range deltas {
		if _, err := s.WriteString(d); err != nil {
			return i, err
		}
	}
	return -1, nil
}

func TestStreamRefusesEarly(t *testing.T) {
	reg := streamRegistry(t)
	tests := []struct {
		deltas  []string
		refused int // the delta refused; -1: End refuses; -2: nothing refuses
		message string
		why     string
	}{
		{[]string{`{"query":`, `5`, `, "mode":"fast"}`}, 1, `arguments of "search" do not match its input schema at /query: got number, want string (refused at byte 9)`, "a wrong type at its first byte"},
		{[]string{`{"qu`, `ery":"a","mod":`}, 1, `at the root: additional properties 'mod' not allowed`, "an unknown member at its name"},
		{[]string{`{"query":"a","query"`}, 0, `arguments of "search" are not valid JSON at /query (byte 13): duplicate member name "query"`, "a duplicate"},
		{[]string{`{"query":"`, strings.Repeat("x", 64), `x`}, 2, `at /query: maxLength: got at least 65, want 64 (refused at byte 75)`, "a string that grows too long"},
		{[]string{`{"query":"`, strings.Repeat("x", 65) + `"`}, 1, `at /query: maxLength: got 65, want 64 (refused at byte 9)`, "a string too long at its end"},
		{[]string{`{"query":"a","mode":"slow"`, `}`}, 0, `at /mode: value must be one of 'fast', 'exact'`, "a string outside its enum, at its end"},
		{[]string{`{"query":"a","limit":101`, `}`}, 1, `at /limit: maximum: got 101, want 100`, "a number ends at the byte after it"},
		{[]string{`{"query":"a","tags":["a","b","c","d",`, `"e"]}`}, 1, `at /tags: maxItems: got 5, want 4`, "an item too many"},
		{[]string{`{"query":"a","filter":{"value":1}`}, 0, `at /filter: missing property 'field'`, "required, at the end of the object"},
		{[]string{`{"query":"a","rows":[{"field":"f","valu":1}]}`}, 0, `at /rows/0: additional properties 'valu' not allowed (did you mean 'value'?)`, "through a reference, with advice"},
		{[]string{`{"query":"a","at":"2024-02-30"}`}, 0, `at /at: `, "a format, through the one anyOf branch a string can take"},
		{[]string{`{"query":"a","mode":"fast","note":"`, "\xff"}, 1, `arguments of "search" are not valid JSON at /note (byte 35): invalid UTF-8 in a string`, "invalid UTF-8"},
		{[]string{`["query"]`}, 0, `arguments of "search" must be a JSON object (refused at byte 0)`, "not an object"},
		{[]string{`{"query":"a","mode":"fast"`}, -1, `arguments of "search" are not valid JSON at the root (byte 26): unexpected end of input, expected ',' or '}'`, "incomplete at the end"},
		{[]string{`{"mode":"fast"}`}, 0, `at the root: missing property 'query'`, "a required member missing"},
		{[]string{`{"query":"a",`, `"mode":"exact","rows":[{"field":"f","value":2.5}]}`}, -2, ``, "valid"},
		{[]string{" \n\t"}, -2, ``, "blank: Prepare reads it as {}, and then refuses it: the stream only refuses early"},
	}
	for _, tc := range tests {
		s := dispatch.NewStream(reg, "search")
		refused, err := write(s, tc.deltas)
		if refused < 0 {
			if err = s.End(); err != nil {
				refused = -1
			} else {
				refused = -2
			}
		}
		require.Equal(t, tc.refused, refused, "%s: %v", tc.why, err)
		whole := strings.Join(tc.deltas, "")
		if refused == -2 {
			if tc.why == "valid" {
				require.NoError(t, prepared(reg, "search", whole), tc.why)
			}
			continue
		}
		rejection, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%s: %v", tc.why, err)
		require.ErrorIs(t, err, tool.ErrInvalidInvocation)
		require.Contains(t, rejection.Message(), tc.message, tc.why)
		require.Equal(t, err, s.Err())
		if refused >= 0 {
			_, again := s.WriteString(`"more"`)
			require.Equal(t, err, again, "a refusal stays")
		}
		prepareErr := prepared(reg, "search", whole)
		require.Error(t, prepareErr, "Prepare refuses what the stream refused: %s", tc.why)
		_, ok = tool.ClassifyInputRejection(prepareErr)
		require.True(t, ok, "the same kind of error: %s", tc.why)
	}
}

func TestStreamEnds(t *testing.T) {
	reg := streamRegistry(t)
	args := `{"query":"a","mode":"fast"}`

	s := dispatch.NewStream(reg, "search")
	_, err := write(s, []string{args[:10], args[10:]})
	require.NoError(t, err)
	require.Equal(t, len(args), s.Len())
	require.NoError(t, s.EndWith(args), "the completion event carries the text the deltas made")
	_, err = s.WriteString(" ")
	require.ErrorIs(t, err, dispatch.ErrInvalidStream, "nothing after the end")
	require.ErrorIs(t, s.End(), dispatch.ErrInvalidStream, "one end")

	// A completion event that disagrees with the deltas: each text alone
	// is admitted, and the call is not.
	s = dispatch.NewStream(reg, "search")
	_, err = s.WriteString(`{"query":"a","mode":"exact"}`)
	require.NoError(t, err)
	err = s.EndWith(args)
	require.ErrorIs(t, err, dispatch.ErrInvalidStream)
	require.EqualError(t, err, `tool: invalid argument stream: the completion event of the call of "search" carries 27 bytes of arguments that differ from the 28 bytes its deltas made`)

	// A prefix that parses is not the call its completion event carries.
	s = dispatch.NewStream(reg, "search")
	_, err = s.WriteString(`{"query":"a","mode":"fast"}`)
	require.NoError(t, err)
	require.ErrorIs(t, s.EndWith(`{"query":"a","mode":"fast","limit":5}`), dispatch.ErrInvalidStream)

	// A tool the registry does not hold is not checked: Run reports it.
	s = dispatch.NewStream(reg, "nope")
	_, err = s.WriteString(`[not json`)
	require.NoError(t, err)
	require.NoError(t, s.End())
	s = dispatch.NewStream(nil, "search")
	_, err = s.WriteString(`[`)
	require.NoError(t, err, "a nil registry checks nothing")

	var zero dispatch.Stream
	_, err = zero.WriteString("{}")
	require.ErrorIs(t, err, dispatch.ErrInvalidStream)
	require.ErrorIs(t, zero.End(), dispatch.ErrInvalidStream)
}

// TestStreamRefusesLongArgumentsEarly checks that a megabyte of
// arguments is refused within 4 KiB of the byte that makes it invalid,
// however it is cut, and that the text is refused at the first byte
// beyond tool.MaxInputBytes.
func TestStreamRefusesLongArgumentsEarly(t *testing.T) {
	reg := streamRegistry(t)
	const size = 1 << 20
	rows := func(n int) string {
		return strings.TrimSuffix(strings.Repeat(`{"field":"a field","value":12.5},`, n), ",")
	}
	half := rows(size / 2 / 33)
	tests := []struct {
		name, bad, rest, message string
	}{
		{"wrong type", `{"field":true}`, "", "at /rows/"},
		{"unknown member", `{"field":"f","other":1}`, "", "additional properties 'other' not allowed"},
		{"duplicate", `{"field":"f","field":"g"}`, "", `duplicate member name "field"`},
		{"invalid UTF-8", "{\"field\":\"\xc0\xaf\"}", "", "invalid UTF-8"},
		{"syntax", `{"field":"f",}`, "", "expected a member name"},
		{"missing", `{"value":1}`, "", "missing property 'field'"},
		{"long string", strings.Repeat("q", 65), strings.Repeat("q", size/2) + `"}`, "at /query: maxLength: got at least "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			head := `{"query":"q","mode":"fast","rows":[` + half + `,`
			if tc.name == "long string" {
				head = `{"rows":[` + half + `],"query":"`
			}
			offending := len(head) + len(tc.bad) - 1
			text := head + tc.bad + tc.rest
			if tc.rest == "" {
				text += `,` + rows(max(0, (size-len(text))/33)) + `]}`
			}
			require.Greater(t, len(text), size-(64<<10))
			pieces := []int{1 << 10}
			if tc.name == "wrong type" {
				pieces = append(pieces, 61) // deltas of the size models stream
			}
			if !raceEnabled { // slow there, and FuzzStreamDeltas holds it
				require.Error(t, prepared(reg, "search", text), "Prepare refuses it too")
			}
			for _, piece := range pieces {
				s := dispatch.NewStream(reg, "search")
				at := 0
				var err error
				for at < len(text) && err == nil {
					n := min(piece, len(text)-at)
					_, err = s.WriteString(text[at : at+n])
					at += n
				}
				require.Error(t, err, "refused before the end")
				require.LessOrEqual(t, at-offending, 4<<10, "refused within 4 KiB of byte %d (at %d)", offending, at)
				require.Contains(t, err.Error(), tc.message)
			}
		})
	}

	// One byte beyond the limit, in a valid string.
	s := dispatch.NewStream(reg, "any")
	text := `{"a":"` + strings.Repeat("x", tool.MaxInputBytes)
	_, err := s.WriteString(text[:tool.MaxInputBytes])
	require.NoError(t, err)
	_, err = s.WriteString(text[tool.MaxInputBytes:])
	rejection, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "%v", err)
	require.Equal(t, fmt.Sprintf(`arguments of "any" are more than the limit of %d bytes (refused at byte %d)`, tool.MaxInputBytes, tool.MaxInputBytes), rejection.Message())
}

func TestRefusedCall(t *testing.T) {
	reg := streamRegistry(t)
	s := dispatch.NewStream(reg, "search")
	_, refusal := s.WriteString(`{"query":5`)
	require.Error(t, refusal)
	err := error(&dispatch.RefusedCall{Call: call("call_1", "search", `{"query":5`), Err: refusal})
	require.EqualError(t, err, `tool: invalid invocation: call "call_1" refused while its arguments streamed: arguments of "search" do not match its input schema at /query: got number, want string (refused at byte 9)`)
	rejection, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)

	var refused *dispatch.RefusedCall
	require.True(t, errors.As(err, &refused))
	d, err2 := dispatch.New(dispatch.Config{Registry: reg})
	require.NoError(t, err2)
	o := d.Settle(refused.Call, "", "", tool.Result{}, refused.Err)
	require.Equal(t, dispatch.KindRejected, o.Kind)
	require.Equal(t, rejection.Message(), o.Text())
	require.Equal(t, "call_1", o.CallID)
	require.EqualError(t, (*dispatch.RefusedCall)(nil), "tool: invalid invocation")
}

// FuzzStreamDeltas holds the Stream to its promises on arbitrary
// arguments for the tools of streamRegistry, cut into arbitrary deltas and
// cut short at an arbitrary point: a refusal while streaming is a text
// Prepare refuses (whole, and as far as it came); the end of a stream cut
// short never lets its prefix through, even when the prefix parses; and a
// stream whose deltas and completion event agree is refused at its end
// only when Prepare refuses it.
func FuzzStreamDeltas(f *testing.F) {
	reg := streamRegistry(f)
	for _, seed := range []string{
		`{"query":"a","mode":"fast","tags":["x"],"rows":[{"field":"f","value":1}]}`,
		`{"query":"a","mode":"fast"} `, `{"query":5}`, `{"query":"a","query":"b"}`, `{"mode":"fast"}`,
		`{"query":"a","mode":"fast","at":"2020-01-01"}`, ` `, `[]`, `{"a":[1,{"b":null}]}`,
		`{"query":"q","mode":"exact","limit":127,"rows":[{"field":"f","value":-0}],"extra":{"x":[1.5,"y",null]}}`,
		`{"query":"q","mode":"exact","limit":128}`, `{"query":"q","mode":"exact","limit":1.0}`,
	} {
		f.Add(seed, []byte{3, 9, 1}, uint16(len(seed)/2), false)
	}
	f.Fuzz(func(t *testing.T, text string, cuts []byte, cutAt uint16, other bool) {
		name := "search"
		if other {
			name = "any"
		}
		streamDeltas(t, reg, name, text, cuts, cutAt)
		// The same text and cuts to a Func, whose Prepare also decodes.
		streamDeltas(t, reg, "typed", text, cuts, cutAt)
	})
}

// streamDeltas streams text to the tool name of reg in deltas of the
// lengths cuts gives, cut short at cutAt, and checks the promises
// FuzzStreamDeltas names.
func streamDeltas(t *testing.T, reg *tool.Registry, name, text string, cuts []byte, cutAt uint16) {
	t.Helper()
	whole := prepared(reg, name, text)
	s := dispatch.NewStream(reg, name)
	short := min(int(cutAt), len(text))
	at := 0
	for i := 0; at < short; i++ {
		n := short - at
		if len(cuts) > 0 {
			n = min(n, int(cuts[i%len(cuts)])%19+1)
		}
		_, err := s.WriteString(text[at : at+n])
		at += n
		if err != nil {
			require.Error(t, whole, "the stream refused %q, which Prepare admits: %v", text, err)
			_, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok, "%v", err)
			require.Error(t, prepared(reg, name, text[:at]), "the stream refused %q, which Prepare admits", text[:at])
			return
		}
	}
	err := s.EndWith(text)
	if short < len(text) {
		require.ErrorIs(t, err, dispatch.ErrInvalidStream, "a stream cut short at %d of %q let its prefix through", short, text)
		return
	}
	if err != nil {
		require.Error(t, whole, "the stream refused %q at its end, which Prepare admits: %v", text, err)
	}
}

// BenchmarkStream streams arguments of a megabyte and less, in deltas of
// 64 bytes, to their end: bytes allocated per operation do not grow with
// the arguments.
func BenchmarkStream(b *testing.B) {
	reg := streamRegistry(b)
	row := `{"field":"a field","value":12.5},`
	for _, size := range []int{64 << 10, 256 << 10, 1 << 20} {
		text := `{"query":"q","mode":"fast","rows":[` + strings.Repeat(row, (size-64)/len(row)) + `{"field":"f"}]}`
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				s := dispatch.NewStream(reg, "search")
				for at := 0; at < len(text); at += 64 {
					if _, err := s.WriteString(text[at:min(at+64, len(text))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.EndWith(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestStreamMemoryIsFlat checks that streaming a megabyte of arguments
// allocates no more than streaming 64 KiB: a Stream keeps none of the
// text.
func TestStreamMemoryIsFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop a share of what it is given")
	}
	reg := streamRegistry(t)
	row := `{"field":"a field","value":12.5},`
	allocated := func(size int) uint64 {
		text := `{"query":"q","mode":"fast","rows":[` + strings.Repeat(row, (size-64)/len(row)) + `{"field":"f"}]}`
		run := func() {
			s := dispatch.NewStream(reg, "search")
			for at := 0; at < len(text); at += 64 {
				_, err := s.WriteString(text[at:min(at+64, len(text))])
				require.NoError(t, err)
			}
			require.NoError(t, s.EndWith(text))
		}
		run() // fill the pools
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		run()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(64<<10), allocated(1<<20)
	require.LessOrEqual(t, large, small+1024, "bytes allocated: %d for 64 KiB, %d for 1 MiB", small, large)
}
