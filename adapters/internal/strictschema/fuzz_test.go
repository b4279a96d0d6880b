package strictschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

// FuzzApply feeds Undo.Apply the argument text a model may send. Apply
// never panics, and it agrees with the tree-based reference: text that is
// not one well-formed JSON value with unique member names comes back
// unchanged; any other text comes back as a value equal to what the
// reference makes of the decoded value, no longer than the text, and the
// same text when nothing was removed.
func FuzzApply(f *testing.F) {
	for _, s := range []string{`{"a":null}`, `{"b":{"c":null},"list":[{"d":null}]}`, `{"a":"x","a":null}`, `{"b":null`, `null`, `[]`, `{"b":null} x`, "{\"b\":\"\xff\",\"a\":null}"} {
		f.Add(s)
	}
	res := strictschema.Lower([]byte(`{"type":"object","properties":{
		"a":{"type":"string"},
		"b":{"anyOf":[{"type":"object","properties":{"c":{"type":"integer"}}},{"type":"string"}]},
		"list":{"type":"array","items":{"type":"object","properties":{"d":{"type":"string"}}}}}}`), strictschema.OpenAI)
	require.Empty(f, res.Blocked)
	f.Fuzz(func(t *testing.T, args string) {
		out := res.Undo.Apply(args)
		if !jsontext.Value(args).IsValid() {
			require.Equal(t, args, out, "malformed text is Prepare's to refuse")
			return
		}
		want := undoReference(decodeNumbers(t, args), res.Undo)
		if out == args {
			require.Equal(t, want, decodeNumbers(t, args), "%q needed a rewrite", args)
			return
		}
		require.True(t, jsontext.Value(out).IsValid(), "rewrite of %q is not JSON: %q", args, out)
		require.Less(t, len(out), len(args))
		require.Equal(t, want, decodeNumbers(t, out), "rewrite of %q", args)
	})
}

// FuzzLower feeds Lower arbitrary schema text. It never panics, and a
// schema it lowers yields Wire and Checked schemas that compile.
func FuzzLower(f *testing.F) {
	for _, s := range []string{recursive, `{"type":"object"}`, `{"type":"object","properties":{"a":{"$ref":"#"}}}`, `[]`, `{"$defs":1}`} {
		f.Add(s)
	}
	for _, s := range handWritten {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if _, err := tool.ParseSchema([]byte(schema)); err != nil {
			return
		}
		for _, rules := range []strictschema.Rules{strictschema.OpenAI, strictschema.Anthropic} {
			res := strictschema.Lower([]byte(schema), rules)
			if len(res.Blocked) > 0 {
				continue
			}
			_, err := tool.ParseSchema(res.Wire())
			require.NoError(t, err, "wire of %s: %s", schema, res.Wire())
			checked := strictschema.Checked([]byte(schema), rules)
			_, err = tool.ParseSchema(checked)
			require.NoError(t, err, "checked of %s: %s", schema, checked)
			res.Undo.Apply(`{"a":null,"b":[null,{"c":null}]}`)
		}
	})
}

// undoReference removes, from a decoded value, the nulls u stands for.
func undoReference(v any, u *strictschema.Undo) any {
	if u == nil {
		return v
	}
	if len(u.Branches) > 0 {
		var pick *strictschema.Undo
		n := 0
		for _, b := range u.Branches {
			if b.Kinds == "" || strings.IndexByte(b.Kinds, kindOf(v)) >= 0 {
				pick, n = b.Undo, n+1
			}
		}
		if n != 1 {
			return v
		}
		return undoReference(v, pick)
	}
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if e == nil && u.Nullable[k] {
				continue
			}
			out[k] = undoReference(e, u.Props[k])
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = undoReference(e, u.Items)
		}
		return out
	}
	return v
}

func decodeNumbers(t *testing.T, s string) any {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	require.NoError(t, dec.Decode(&v))
	return v
}
