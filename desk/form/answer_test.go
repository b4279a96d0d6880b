package form_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/desk/form"
)

func TestAnswer(t *testing.T) {
	object := `{"type":"object","properties":{
		"ok":{"type":"boolean"},
		"note":{"type":"string"},
		"name":{"type":"string"},
		"n":{"type":"number"},
		"color":{"type":"string","enum":["red","<b>"]},
		"tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"},{"const":"b","title":"B"}]}},
		"must":{"type":"array","items":{"type":"string","enum":["x"]}}},
		"required":["ok","name","must"]}`
	for _, tc := range []struct {
		name, why string
		schema    string
		opts      form.Options
		values    map[string][]string
		want, err string
	}{
		{
			name: "every kind", why: "each entry becomes a JSON value of its field's kind, in the order of the fields",
			schema: object,
			values: map[string][]string{"ok": {"false"}, "note": {"<x> & y"}, "name": {""}, "n": {" -1.5e3 "}, "color": {"<b>"}, "tags": {"b", "a", "b"}, "must": nil},
			want:   `{"ok":false,"note":"<x> & y","name":"","n":-1.5e3,"color":"<b>","tags":["a","b"],"must":[]}`,
		},
		{
			name: "empty fields", why: "an empty optional field is left out; an empty required string is \"\" and an empty required multi-select []",
			schema: object,
			values: map[string][]string{"ok": {"true"}, "note": {""}},
			want:   `{"ok":true,"name":"","must":[]}`,
		},
		{
			name: "every refusal", why: "each field that does not do is named, in the order of the fields",
			schema: object,
			values: map[string][]string{"note": {"a", "b"}, "n": {"1 2"}, "color": {"green"}, "tags": {"c"}},
			err:    `"ok" is required; "note" takes one value, not 2; "n" must be a number, not "1 2"; "color" must be one of the choices; "tags" must be one of the choices`,
		},
		{
			name: "yes or no", why: "a boolean is true or false",
			schema: object, values: map[string][]string{"ok": {"yes"}},
			err: `"ok" must be yes or no`,
		},
		{
			name: "a long number is shortened", why: "the message quotes at most 40 characters",
			schema: `{"type":"object","properties":{"n":{"type":"integer"}}}`,
			values: map[string][]string{"n": {"12345678901234567890123456789012345678901234567890x"}},
			err:    `"n" must be a number, not "1234567890123456789012345678901234567890…"`,
		},
		{
			name: "NaN", why: "only a JSON number is a number",
			schema: `{"type":"object","properties":{"n":{"type":"number"}}}`,
			values: map[string][]string{"n": {"NaN"}},
			err:    `"n" must be a number, not "NaN"`,
		},
		{
			name: "approve", why: "an approval's answer is true",
			schema: `{"type":"boolean"}`, opts: desk,
			want: `true`,
		},
		{
			name: "root value", why: "a value form's answer is its field's value",
			schema: `{"type":"string","enum":["red","blue"]}`, opts: desk,
			values: map[string][]string{"": {"blue"}},
			want:   `"blue"`,
		},
		{
			name: "root value missing", why: "a value form's one field is required, and named \"the answer\"",
			schema: `{"type":"integer"}`, opts: desk,
			err: `the answer is required`,
		},
		{
			name: "root string empty", why: "a required string may be empty",
			schema: `{"type":"string"}`, opts: desk,
			want: `""`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := form.Read([]byte(tc.schema), tc.opts)
			require.NoError(t, err)
			got, err := f.Answer(tc.values)
			if tc.err != "" {
				require.ErrorIs(t, err, form.ErrInvalidValues, tc.why)
				require.EqualError(t, err, "tool: invalid form values: "+tc.err, tc.why)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err, tc.why)
			require.Equal(t, tc.want, string(got), tc.why)
		})
	}
}

// The zero Form is not a form, and a value form needs its one field.
func TestAnswerZeroForm(t *testing.T) {
	_, err := form.Form{}.Answer(nil)
	require.ErrorIs(t, err, form.ErrNotForm)
	require.EqualError(t, err, `tool: not a form: the form has no shape "" (the zero Form is none)`)
	_, err = form.Form{Shape: form.ShapeValue}.Answer(nil)
	require.EqualError(t, err, `tool: not a form: a form of shape "value" has 0 fields, want 1`)
	got, err := form.Form{Shape: form.ShapeObject}.Answer(nil)
	require.NoError(t, err)
	require.Equal(t, `{}`, string(got))
}

// Answer only reads the values it is given.
func TestAnswerReadsOnly(t *testing.T) {
	f, err := form.Read([]byte(`{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}}}}`), form.Options{})
	require.NoError(t, err)
	values := map[string][]string{"tags": {"b", "a"}}
	got, err := f.Answer(values)
	require.NoError(t, err)
	require.Equal(t, `{"tags":["a","b"]}`, string(got))
	require.Equal(t, map[string][]string{"tags": {"b", "a"}}, values)
}
