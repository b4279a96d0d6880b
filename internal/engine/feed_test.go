package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/strictjson"
)

// compileSchema compiles a schema as package tool does, or returns nil.
func compileSchema(t testing.TB, schema []byte) *engine.Schema {
	t.Helper()
	tree, err := strictjson.Parse(schema)
	if err != nil {
		return nil
	}
	s, err := engine.Compile(tree, engine.Options{})
	if err != nil {
		return nil
	}
	return s
}

// feed gives data to a Feed of s in pieces cut at the lengths of cuts
// (cycled; the whole at once when cuts is empty), then ends it, and
// returns the refusal and the number of bytes given when it came.
func feed(s *engine.Schema, data, cuts []byte) (*engine.Refusal, int) {
	f := s.Feed()
	defer f.Release()
	for i, at := 0, 0; at < len(data); i++ {
		n := len(data) - at
		if len(cuts) > 0 {
			n = min(n, int(cuts[i%len(cuts)])%23+1)
		}
		at += n
		if r := f.Write(data[at-n : at]); r != nil {
			return r, at
		}
	}
	return f.End(), len(data)
}

// agreeFeed requires a Feed to refuse data, given in pieces, only when
// Check refuses it: a text that is not I-JSON for the same reason, a
// value that breaks the schema or costs too much as a value that does,
// and a first value other than an object only when there is one.
func agreeFeed(t *testing.T, s *engine.Schema, data, cuts []byte, where string) *engine.Refusal {
	t.Helper()
	r, at := feed(s, data, cuts)
	if r == nil {
		return nil
	}
	require.LessOrEqual(t, r.Offset, at, "refused at a byte not yet read: %s", where)
	if r.NotObject {
		require.NotEqual(t, byte('{'), firstByte(data), where)
		return r
	}
	err := s.Check(data)
	require.Error(t, err, "the Feed refuses what Check accepts (%v): %s", r, where)
	var rej *engine.Rejection
	require.True(t, errors.As(err, &rej), "%v: %s", err, where)
	if r.Syntax != nil {
		require.NotNil(t, rej.Syntax, "the Feed finds invalid JSON (%v), Check %v: %s", r, rej, where)
		var got, want *strictjson.Error
		require.ErrorAs(t, r.Syntax, &got)
		require.ErrorAs(t, rej.Syntax, &want)
		if got.Reason != "number is longer than 100 characters" {
			require.Equal(t, want.Offset, got.Offset, where)
			require.Equal(t, want.Reason, got.Reason, where)
			if len(data) < 4<<10 {
				// A Feed names a member by its first 4 KiB.
				require.Equal(t, rej.Message, engine.OneLine("invalid JSON "+r.Syntax.Error()), where)
			}
		}
	}
	return r
}

func firstByte(data []byte) byte {
	for _, c := range data {
		if !strictjson.IsSpace(c) {
			return c
		}
	}
	return 0
}

// TestFeedAgreesWithCheck runs every pair of streamSchemas and
// streamInputs, and more objects, through a Feed in several cuttings.
func TestFeedAgreesWithCheck(t *testing.T) {
	inputs := append(slicesOf(streamInputs), feedInputs...)
	refused := 0
	for i, schema := range append(slicesOf(streamSchemas), feedSchemas...) {
		s := compileSchema(t, []byte(schema))
		require.NotNil(t, s, schema)
		for _, data := range inputs {
			for _, cuts := range [][]byte{nil, {0}, {3, 1, 7}} {
				if agreeFeed(t, s, []byte(data), cuts, fmt.Sprintf("schema %d, %s", i, data)) != nil {
					refused++
				}
			}
		}
	}
	require.Greater(t, refused, 100)
}

// TestFeedAgreesOnSuite runs the object documents of JSON-Schema-Test-Suite
// through a Feed of their schema.
func TestFeedAgreesOnSuite(t *testing.T) {
	eachSuiteTest(t, func(tc suiteTest) {
		s := compileSchema(t, tc.raw)
		if s == nil || firstByte(tc.data) != '{' {
			return
		}
		agreeFeed(t, s, tc.data, []byte{2}, tc.where)
	})
}

func slicesOf(s []string) []string { return append([]string(nil), s...) }

// feedSchemas add to streamSchemas what only a Feed checks early.
var feedSchemas = []string{
	`{"type":"object","properties":{"a":{"type":"string","maxLength":3},"b":{"type":"array","maxItems":2,"minItems":1,"items":{"type":"integer"}},"c":{"anyOf":[{"type":"object","additionalProperties":false,"properties":{"x":{"type":"null"}}},{"type":"null"}]}},"required":["a"],"additionalProperties":false,"maxProperties":3}`,
	`{"type":"object","properties":{"o":{"type":"string"}},"patternProperties":{"^p":{"type":"integer"}},"additionalProperties":false}`,
	`{"type":"object","properties":{"n":{"oneOf":[{"type":"string"},{"type":"object","required":["k"]}]},"m":{"allOf":[{"$ref":"#/$defs/m"},{"minProperties":1}]}},"$defs":{"m":{"type":"object","properties":{"v":{"type":"boolean"}},"required":["v"]}}}`,
	`{"type":"object","properties":{"f":false,"d":{"type":"string","format":"date"},"e":{"enum":["a","b"]}}}`,
}

// feedInputs are objects for feedSchemas, valid and invalid.
var feedInputs = []string{
	`{"a":"abc","b":[1,2],"c":{"x":null}}`, `{"a":"abcd"}`, `{"a":"ab","b":[1,2,3]}`, `{"a":"ab","b":[]}`,
	`{"a":"ab","b":[1.5]}`, `{"a":"ab","c":{"y":1}}`, `{"a":"ab","c":null}`, `{"a":"ab","c":1}`, `{"b":[1]}`,
	`{"a":"a","z":1}`, `{"a":"a","b":[1],"c":null,"d":1}`, `{"o":"x","p1":2,"q":3}`, `{"p1":"x"}`,
	`{"n":"s","m":{"v":true}}`, `{"n":{"k":1},"m":{}}`, `{"n":1}`, `{"m":{"v":1}}`, `{"f":1}`,
	`{"d":"2020-01-01","e":"a"}`, `{"d":"2020-13-01"}`, `{"e":"c"}`, `{"e":null}`,
	` { "a" : "\u0061" } `, `{"a":"a","a":"b"}`, `{"a":tru}`, `{"a":"` + strings.Repeat("é", 5000) + `"}`,
	`{"` + strings.Repeat("k", 5000) + `":1}`, `{"a":[` + strings.Repeat("1,", 30) + `1]}`, ``, `   `, `[1]`,
}

// FuzzFeedAgrees compares a Feed with Check on arbitrary bytes in
// arbitrary pieces against each schema of streamSchemas and feedSchemas.
func FuzzFeedAgrees(f *testing.F) {
	schemas := append(slicesOf(streamSchemas), feedSchemas...)
	for i := range schemas {
		for _, data := range feedInputs[:12] {
			f.Add(uint8(i), []byte(data), []byte{5, 2})
		}
	}
	compiled := make([]*engine.Schema, len(schemas))
	for i, schema := range schemas {
		compiled[i] = compileSchema(f, []byte(schema))
	}
	f.Fuzz(func(t *testing.T, which uint8, data, cuts []byte) {
		i := int(which) % len(schemas)
		agreeFeed(t, compiled[i], data, cuts, fmt.Sprintf("schema %d, %q", i, data))
	})
}

// TestFeedRefusesEarly checks where each early check refuses, and what it
// says.
func TestFeedRefusesEarly(t *testing.T) {
	s := compileSchema(t, []byte(feedSchemas[0]))
	tests := []struct {
		text    string
		refused int // bytes read when refused; -1 for End
		message string
	}{
		{`{"a":"abcd`, 10, `at /a: maxLength: got at least 4, want 3`},
		{`{"a":1`, 6, `at /a: got number, want string`},
		{`{"z"`, 4, `at the root: additional properties 'z' not allowed`},
		{`{"a":"","b":[1,2,3`, 18, `at /b: maxItems: got 3, want 2`},
		{`{"a":"","b":[]`, 14, `at /b: minItems: got 0, want 1`},
		{`{"a":"","b":[1.5]`, 17, `at /b/0: got number, want integer`},
		{`{"a":"","c":{"y"`, 16, `at /c: additional properties 'y' not allowed`},
		{`{"b":[1]}`, 9, `at the root: missing property 'a'`},
		{`{"a":"","b":[1],"c":null,"a"`, 28, `invalid JSON at /a (byte 25): duplicate member name "a"`},
		{`{"a":"","b":[1],"c":null,"d"`, 28, `at the root: maxProperties`},
		{`{"a":"","c":1`, 13, `at /c: 'anyOf' failed`},
		{`{"a":"",`, -1, `invalid JSON at the root (byte 8): unexpected end of input, expected a member name`},
		{`[`, 1, `not a JSON object`},
	}
	for _, tc := range tests {
		f := s.Feed()
		var r *engine.Refusal
		at := -1
		for i := range len(tc.text) {
			if r = f.Write([]byte{tc.text[i]}); r != nil {
				at = i + 1
				break
			}
		}
		if r == nil {
			r = f.End()
		}
		f.Release()
		require.NotNil(t, r, tc.text)
		require.Equal(t, tc.refused, at, "%s: %v", tc.text, r)
		require.Contains(t, r.Error(), tc.message, tc.text)
	}
}

// TestFeedMemoryIsFlat checks that a Feed of a long text of many small
// objects, in small pieces, allocates no more than one of a short text.
func TestFeedMemoryIsFlat(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool, which package regexp uses for its matches, drop a share of what it is given")
	}
	s := compileSchema(t, []byte(streamSchemas[0]))
	item := `{"field":"a_b","op":"eq","weight":4}`
	doc := func(n int) []byte {
		return []byte(`{"query":"q","mode":"fast","limit":25,"offset":0,"filter":` + item + `,"tags":["x"],"include_archived":false,"min_score":0.5,"nested":[` +
			strings.TrimSuffix(strings.Repeat(item+",", n), ",") + `]}`)
	}
	run := func(data []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			r, _ := feed(s, data, []byte{16})
			require.Nil(t, r)
		})
	}
	short, long := run(doc(10)), run(doc(20000))
	require.Less(t, len(doc(10)), 1000)
	require.Greater(t, len(doc(20000)), 700_000)
	require.LessOrEqual(t, long, short+2, "allocations: %v for a short text, %v for a long one", short, long)
}
