package form_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/desk/form"
)

// FuzzRead reads arbitrary bytes as a schema, as a schema imported from a
// peer may be: Read never panics, refuses with ErrNotForm, reads every
// schema the zero Options read the same with the desk's options, and
// every form it returns makes an answer that is JSON (or refuses the
// values with ErrInvalidValues).
func FuzzRead(f *testing.F) {
	for _, seed := range []string{
		`{"type":"object","properties":{"a":{"type":"string","format":"email","minLength":3,"default":"x@y.z"},"b":{"type":"integer","minimum":1},"c":{"type":"boolean","default":false}},"required":["a"]}`,
		`{"type":"object","additionalProperties":false,"properties":{"pick":{"type":"string","enum":["x","y"],"enumNames":["X","Y"]},"one":{"type":"string","oneOf":[{"const":"x","title":"X"}]},"many":{"type":"array","items":{"type":"string","enum":["p","q"]},"maxItems":2,"default":["q"]}}}`,
		`{"type":"object","properties":{"many":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"}]}}}}`,
		`{"type":"boolean","description":"Go ahead?"}`,
		`{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10.5}`,
		`{"type":"number","minimum":1e999999999}`,
		`{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"number"}}}`,
		`{"type":"object","properties":{}} []`,
		`[{"type":"object"}]`,
		`null`,
		"\xff",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		mcp, mcpErr := form.Read(schema, form.Options{})
		got, err := form.Read(schema, desk)
		for _, err := range []error{mcpErr, err} {
			if err != nil {
				require.ErrorIs(t, err, form.ErrNotForm)
				require.False(t, errors.Is(err, form.ErrInvalidValues))
			}
		}
		if mcpErr == nil {
			require.NoError(t, err, "the desk's options only add")
			require.Equal(t, mcp, got)
		}
		if err != nil {
			return
		}
		values := map[string][]string{}
		for _, fd := range got.Fields {
			values[fd.Name] = sample(fd)
		}
		answer, err := got.Answer(values)
		if err != nil {
			require.ErrorIs(t, err, form.ErrInvalidValues)
			return
		}
		require.True(t, json.Valid(answer), "%s", answer)
	})
}

// sample is what a person might enter in fd: its default, or a value of
// its kind.
func sample(fd form.Field) []string {
	var d any
	if json.Unmarshal(fd.Default, &d) == nil {
		switch d := d.(type) {
		case string:
			return []string{d}
		case bool, float64:
			b, _ := json.Marshal(d)
			return []string{string(b)}
		case []any:
			var list []string
			for _, v := range d {
				s, _ := v.(string)
				list = append(list, s)
			}
			return list
		}
	}
	switch fd.Kind {
	case form.KindBoolean:
		return []string{"true"}
	case form.KindNumber, form.KindInteger:
		return []string{"7"}
	case form.KindSelect, form.KindMultiSelect:
		return []string{fd.Options[0].Value}
	}
	return []string{"text"}
}
