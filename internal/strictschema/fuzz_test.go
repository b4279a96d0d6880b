package strictschema_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/strictschema"
)

// FuzzApply feeds Undo.Apply the argument text a model may send. Apply
// never panics; it returns the text unchanged or a rewrite that is one JSON
// value, no longer than the text.
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
		if out == args {
			return
		}
		require.True(t, json.Valid([]byte(out)), "rewrite of %q is not JSON: %q", args, out)
		require.LessOrEqual(t, len(out), len(args))
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
			_, err := tool.ParseSchema(res.Wire)
			require.NoError(t, err, "wire of %s: %s", schema, res.Wire)
			_, err = tool.ParseSchema(res.Checked)
			require.NoError(t, err, "checked of %s: %s", schema, res.Checked)
			res.Undo.Apply(`{"a":null,"b":[null,{"c":null}]}`)
		}
	})
}
