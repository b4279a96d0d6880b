package strictschema

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"
)

// applyTokens is the reference Apply: it reads the text token by token
// with jsontext, whose reader is the authority on what is well-formed
// JSON, and cuts the same members.
func applyTokens(u *Undo, args string) string {
	if u == nil || !u.need || !strings.Contains(args, "null") {
		return args
	}
	dec := jsontext.NewDecoder(strings.NewReader(args))
	var cuts []span
	if err := u.cutTokens(dec, args, &cuts); err != nil || len(cuts) == 0 {
		return args
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return args
	}
	var b strings.Builder
	last := 0
	for _, c := range cuts {
		b.WriteString(args[last:c.from])
		last = c.to
	}
	b.WriteString(args[last:])
	return b.String()
}

func (u *Undo) cutTokens(dec *jsontext.Decoder, args string, cuts *[]span) error {
	k := dec.PeekKind()
	if u != nil && len(u.Branches) > 0 {
		return u.pick(kindOf(byte(k))).cutTokens(dec, args, cuts)
	}
	switch {
	case u != nil && u.need && k == '{':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		kept, pendingComma := false, false
		for dec.PeekKind() != '}' {
			lead := int(dec.InputOffset())
			name, err := dec.ReadToken()
			if err != nil {
				return err
			}
			if name.Kind() != '"' {
				return fmt.Errorf("a member name at byte %d is not a string", lead)
			}
			key := name.String()
			if u.Nullable[key] && dec.PeekKind() == 'n' {
				if _, err := dec.ReadValue(); err != nil {
					return err
				}
				*cuts = append(*cuts, span{lead, int(dec.InputOffset())})
				pendingComma = pendingComma || !kept
				continue
			}
			if pendingComma {
				comma := strings.IndexByte(args[lead:], ',')
				*cuts = append(*cuts, span{lead, lead + comma + 1})
				pendingComma = false
			}
			kept = true
			if err := u.Props[key].cutTokens(dec, args, cuts); err != nil {
				return err
			}
		}
		_, err := dec.ReadToken()
		return err
	case u != nil && u.need && u.Items != nil && k == '[':
		if _, err := dec.ReadToken(); err != nil {
			return err
		}
		for dec.PeekKind() != ']' {
			if err := u.Items.cutTokens(dec, args, cuts); err != nil {
				return err
			}
		}
		_, err := dec.ReadToken()
		return err
	}
	_, err := dec.ReadValue()
	return err
}

// differentialSchemas cover nullable members at several depths, through
// anyOf branches told apart by kind, array items and recursion.
var differentialSchemas = []string{
	`{"type":"object","properties":{
		"a":{"type":"string"},
		"b":{"anyOf":[{"type":"object","properties":{"c":{"type":"integer"}}},{"type":"string"}]},
		"list":{"type":"array","items":{"type":"object","properties":{"d":{"type":"string"}}}}}}`,
	`{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#"}}},"required":["name"]}`,
	`{"type":"object","properties":{"é":{"type":"string"},"a/b":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"object","properties":{"x":{"type":"number"},"y":{"type":"boolean"}},"required":["y"]}}}`,
	// More members than Undo lists: its maps are read instead.
	`{"type":"object","properties":{"p0":{"type":"integer"},"p1":{"type":"integer"},"p2":{"type":"integer"},"p3":{"type":"integer"},"p4":{"type":"integer"},"p5":{"type":"integer"},"p6":{"type":"integer"},"p7":{"type":"integer"},"p8":{"type":"integer"},"p9":{"type":"integer"},"p10":{"type":"integer"},"p11":{"type":"integer"},"p12":{"type":"integer"},"p13":{"type":"integer"},"p14":{"type":"integer"},"p15":{"type":"integer"},"p16":{"type":"integer"}}}`,
}

var differentialSeeds = []string{
	`{"a":null}`, `{"b":{"c":null},"list":[{"d":null}]}`, `{"a":"x","a":null}`, `{"b":null`, `null`, `[]`,
	`{"b":null} x`, "{\"b\":\"\xff\",\"a\":null}", `{ "a" : null , "b" : { "c" : null } }`,
	`{"\u0061":null,"a":"x"}`, `{"\u00e9":null}`, `{"é":null,"\u00e9":null}`, `{"a":"\ud800","b":null}`,
	`{"a":"\ud83d\ude00","b":null}`, `{"a":01,"b":null}`, `{"a":-0.5e+3,"b":null}`, `{"a":1.,"b":null}`,
	`{"a":nul}`, `{"a":null,}`, `{,"a":null}`, `{"name":"r","kids":[{"name":"k","kids":null}]}`,
	`{"a/b":{"x":null,"y":true},"é":null}`, "{\"a\":\"\t\",\"b\":null}", `{"a":"\/\b\f\n\r\t\"\\","b":null}`,
	`{"a":"\x","b":null}`, `{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"1":null,"a":null}`,
	`{"1":1,"2":2,"3":3,"4":4,"5":5,"6":6,"7":7,"8":8,"9":9,"a":null}`, `{"b":[null,{"c":null}]}`,
	`{"list":[` + strings.Repeat(`{"d":null,"e":1},`, 12) + `{"d":null}],"a":null}`,
	`{"p0":null,"p1":1,"p16":null,"p3":null,"x":null}`,
	// Names past those compared one by one, past the scanner's stack of
	// names, written with escapes, and given again after a nested object.
	manyMembers(fewNames+1) + `"1":null,"a":null}`, manyMembers(fewNames+1) + `"a":null}`,
	manyMembers(fewNames-1) + `"n":` + manyMembers(fewNames-1) + `"n":` + manyMembers(3) + `"x":1,"x":null},"a":null},"a":null}`,
	manyMembers(fewNames-1) + `"n":` + manyMembers(fewNames-1) + `"n":` + manyMembers(3) + `"x":null},"a":null},"1":null}`,
	`{"a":1,"b":2,"\u0062":null}`, `{"\u0062":1,"a":2,"b":null}`, `{"a":{"q":1,"r":2},"a":null}`,
	`{"a":{"q":1,"a":2},"b":null}`,
}

// manyMembers is the opening of an object with members "1" to "n".
func manyMembers(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%q:%d,", fmt.Sprint(i), i)
	}
	return b.String()
}

// TestApplyMatchesTokens: the byte-level Apply cuts what the token reader
// cuts, and refuses what it refuses, byte for byte.
func TestApplyMatchesTokens(t *testing.T) {
	deep := strings.Repeat(`{"a":`, maxDepth)
	for _, schema := range differentialSchemas {
		res := Lower([]byte(schema), OpenAI)
		require.Empty(t, res.Blocked)
		seeds := append(differentialSeeds,
			`{"name":null,"kids":`+strings.Repeat(`[`, maxDepth-1)+strings.Repeat(`]`, maxDepth-1)+`}`,
			`{"name":null,"kids":`+strings.Repeat(`[`, maxDepth)+strings.Repeat(`]`, maxDepth)+`}`,
			deep[:len(deep)-5]+`null`+strings.Repeat(`}`, maxDepth-1),
			deep+`null`+strings.Repeat(`}`, maxDepth))
		for _, args := range seeds {
			require.Equal(t, applyTokens(res.Undo, args), res.Undo.Apply(args), "%s on %.200q", schema, args)
		}
	}
}

// TestApplyAllocations: nothing cut, nothing allocated; something cut,
// only the result.
func TestApplyAllocations(t *testing.T) {
	res := Lower([]byte(differentialSchemas[0]), OpenAI)
	require.Empty(t, res.Blocked)
	for _, tc := range []struct {
		args   string
		allocs float64
	}{
		{`{"a":"x","b":{"c":1},"list":[{"d":"y"}],"z":null}`, 0},
		{`{"a":"x","b":{"c":null},"list":[{"d":null}]}`, 1},
		{manyMembers(9) + `"a":null}`, 1},
	} {
		require.Equal(t, tc.allocs, testing.AllocsPerRun(100, func() { res.Undo.Apply(tc.args) }), tc.args)
	}
}

// FuzzApplyMatchesTokens is TestApplyMatchesTokens on arbitrary text.
func FuzzApplyMatchesTokens(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add(s)
	}
	var undos []*Undo
	for _, schema := range differentialSchemas {
		res := Lower([]byte(schema), OpenAI)
		require.Empty(f, res.Blocked)
		undos = append(undos, res.Undo)
	}
	f.Fuzz(func(t *testing.T, args string) {
		for _, u := range undos {
			require.Equal(t, applyTokens(u, args), u.Apply(args), "%q", args)
		}
	})
}

// FuzzDecode: Decode accepts exactly what jsontext accepts, and builds the
// value encoding/json decodes.
func FuzzDecode(f *testing.F) {
	for _, s := range differentialSeeds {
		f.Add(s)
	}
	for _, s := range differentialSchemas {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := Decode([]byte(raw))
		if !jsontext.Value(raw).IsValid() {
			require.Error(t, err, "%q", raw)
			return
		}
		require.NoError(t, err, "%q", raw)
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.UseNumber()
		var want any
		require.NoError(t, dec.Decode(&want))
		if want == nil {
			require.Nil(t, v)
			return
		}
		require.Equal(t, want, v, "%q", raw)
	})
}
