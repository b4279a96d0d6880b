package toolgemini_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// FuzzCallArguments checks the argument text made from a function call's
// args, as the SDK decodes them from a response, against encoding/json (the
// reference: sorted members, no HTML escaping), and that Prepare handles it
// without panicking.
func FuzzCallArguments(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"a":1}`, `{"z":1.50,"a":1e2,"big":9007199254740993}`, `{"s":"<&>\u2028\n\u0001\b\f\"\\ é 😀"}`,
		`{"n":1e-7,"m":1e21,"k":-0.000001,"l":123456789012345678901234567890}`, `{"a":[1,{"b":null,"c":[true,false]}],"d":{}}`,
		"{\"bad\":\"\xff\xfe\"}", `{"a":1,"a":2}`,
		`{"z":-0,"o":0,"n":-5,"i":2.0,"e":999999999999999,"f":1000000000000000,"g":-4503599627370497}`,
	} {
		f.Add([]byte(seed))
	}
	reg := newRegistry(f)
	b, _ := reg.Resolve("search_orders")
	f.Fuzz(func(t *testing.T, data []byte) {
		var fc genai.FunctionCall
		if json.Unmarshal(append(append([]byte(`{"name":"search_orders","args":`), data...), '}'), &fc) != nil {
			return
		}
		turn, err := toolgemini.NewTurn(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{
			Content: &genai.Content{Parts: []*genai.Part{{FunctionCall: &fc}}}}}})
		require.NoError(t, err)
		got := turn.Calls()[0].Request.Arguments

		want := "{}"
		if len(fc.Args) > 0 {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			require.NoError(t, enc.Encode(fc.Args))
			want = string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		}
		require.Equal(t, want, got)
		_, _ = b.Contract().Prepare(tool.Request{Name: "search_orders", Arguments: got}, tool.Admission{})
	})
}

// FuzzProject checks that no schema makes the projection panic, on either
// path, and that the JSON path hands the SDK a document it can encode.
func FuzzProject(f *testing.F) {
	for _, s := range []string{obj, derivedFuzz[propNested](f), derivedFuzz[propTree](f), fanOut(3),
		`{"type":"object","properties":{"a":{"$ref":"#/nope"},"b":{"enum":[null,{"x":1}]},"c":{"const":null,"type":"string"}}}`,
		`{"$defs":{"a":{"$anchor":"x","allOf":[{"$ref":"#x"}]}},"$ref":"#x","oneOf":[true,false]}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, schema []byte, openAPI bool) {
		p, err := project([]tool.Definition{{Name: "f", InputSchema: schema, OutputSchema: schema}}, toolgemini.Config{OpenAPI: openAPI})
		if err != nil {
			require.ErrorIs(t, err, toolgemini.ErrInvalidConfig)
			return
		}
		_, err = json.Marshal(p.Tools())
		require.NoError(t, err)
	})
}

func derivedFuzz[T any](f *testing.F) string {
	s, err := tool.SchemaFor[T]()
	require.NoError(f, err)
	return string(s.JSON())
}
