package tool_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// Fuzz targets for every parser of untrusted input. Each has a seed corpus
// in f.Add and more seeds under testdata/fuzz/<Target>/; scripts/fuzz.sh
// runs them all for a given time. The invariants are the package's promises:
// no panic, a refusal wraps the documented sentinel, and whatever is
// admitted is valid RFC 7493 and round-trips.

// fuzzSearchSchema is a realistic input schema: nested objects and arrays,
// an enum, integer bounds, a pattern and a format.
const fuzzSearchSchema = `{
  "type": "object",
  "properties": {
    "query": {"type": "string", "minLength": 1, "maxLength": 200},
    "mode": {"enum": ["fast", "exact", "fuzzy"]},
    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
    "owner": {"type": "string", "format": "email"},
    "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,31}$"}, "uniqueItems": true, "maxItems": 8},
    "filters": {
      "type": "array",
      "maxItems": 4,
      "items": {
        "type": "array",
        "items": {
          "type": "object",
          "properties": {
            "field": {"type": "string", "pattern": "^[a-z_]+$"},
            "op": {"enum": ["eq", "lt", "gt"]},
            "value": {"type": ["string", "number", "boolean", "null"]}
          },
          "required": ["field", "op"],
          "additionalProperties": false
        }
      }
    },
    "window": {
      "type": "object",
      "properties": {
        "from": {"type": "string", "format": "date"},
        "to": {"type": "string", "format": "date"}
      },
      "additionalProperties": false
    }
  },
  "required": ["query"],
  "additionalProperties": false
}`

// fuzzSearchBinding binds the search tool.
func fuzzSearchBinding(tb testing.TB) tool.Binding {
	tb.Helper()
	b, err := tool.Bind(echoTool{definition: tool.Definition{
		Name:        "search",
		Description: "search the catalogue",
		InputSchema: []byte(fuzzSearchSchema),
		Effect:      tool.EffectSafe,
	}})
	require.NoError(tb, err)
	return b
}

// requireOneLineRejection checks that err is a refused admission whose
// public message can be shown to a model as it is.
func requireOneLineRejection(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "refusal carries no InputRejection: %v", err)
	msg := rej.Message()
	require.NotEmpty(t, msg)
	require.True(t, utf8.ValidString(msg), "message is not valid UTF-8: %q", msg)
	require.False(t, strings.ContainsFunc(msg, fuzzBreaksLine), "message is not one line of text: %q", msg)
}

// fuzzBreaksLine reports control characters and line separators.
func fuzzBreaksLine(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}

// TestRejectionMessageIsOneLine covers member names that hold line breaks
// and other control characters: a public message quotes them in JSON
// pointers, escaped, so that it stays one line. FuzzPrepare found the
// first case.
func TestRejectionMessageIsOneLine(t *testing.T) {
	binding, err := tool.Bind(echoTool{definition: tool.Definition{
		Name:        "probe",
		InputSchema: []byte(`{"type":"object","additionalProperties":{"type":"integer"}}`),
	}})
	require.NoError(t, err)
	for _, c := range []struct {
		arguments, message string
	}{
		{`{"\n"`, `arguments of "probe" are not valid JSON at /\n (byte 5): expected ':' after the member name`},
		{`{"a\u2028b":[1,}`, `arguments of "probe" are not valid JSON at /a\u2028b/1 (byte 15): invalid character "}", expected a value`},
		{`{"a\nb":"x"}`, `arguments of "probe" do not match its input schema at /a\nb: got string, want integer`},
		{`{"\u0085\r\t\u0000":{"\u2029":"x"}}`, `arguments of "probe" do not match its input schema at /\u0085\r\t\x00: got object, want integer`},
	} {
		_, err := binding.Contract().Prepare(tool.Request{Name: "probe", Arguments: c.arguments}, tool.Admission{})
		requireOneLineRejection(t, err)
		rej, _ := tool.ClassifyInputRejection(err)
		require.Equal(t, c.message, rej.Message(), c.arguments)
	}
}

func FuzzPrepare(f *testing.F) {
	for _, seed := range []string{
		``,
		`   `,
		`{}`,
		`{"query":"lamps"}`,
		`{"query":"lamps","mode":"exact","limit":100,"owner":"a@example.com"}`,
		`{"query":"x","tags":["red","blue-2"],"window":{"from":"2024-02-29","to":"2024-03-01"}}`,
		`{"query":"x","filters":[[{"field":"price","op":"lt","value":12.5}],[{"field":"stock","op":"gt","value":0},{"field":"sale","op":"eq","value":true}]]}`,
		`{"query":"x","limit":0}`,
		`{"query":"x","limit":1.5}`,
		`{"query":"x","limit":1e2}`,
		`{"query":"x","limit":100.0}`,
		`{"query":"x","mode":"slow"}`,
		`{"query":"x","owner":"not an email"}`,
		`{"query":"x","tags":["Red"]}`,
		`{"query":"x","tags":["a","a"]}`,
		`{"query":"x","window":{"from":"2024-02-30"}}`,
		`{"query":"x","filters":[[{"field":"price"}]]}`,
		`{"query":"x","extra":1}`,
		`{"query":"x","query":"y"}`,
		`{"query":"\ud800"}`,
		`{"query":"\uFFFF"}`,
		"{\"query\":\"\xff\"}",
		"\xef\xbb\xbf{\"query\":\"x\"}",
		`{"query":"x"} {}`,
		`{"query":"x","limit":1e400}`,
		`{"query":"x","limit":1e-400}`,
		`[{"query":"x"}]`,
		`"query"`,
		`{"query":"line one\nline two"}`,
		`{"query":"x","filters":[[{"field":"a\u2028b","op":"eq"}]]}`,
		`{"query":"x","tags":[[[[[[[[[[]]]]]]]]]]}`,
		`{"query":"x",`,
	} {
		f.Add(seed)
	}
	binding := fuzzSearchBinding(f)
	contract := binding.Contract()
	schema, err := tool.ParseSchema(contract.Definition().InputSchema)
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, arguments string) {
		inv, err := contract.Prepare(tool.Request{Name: "search", Arguments: arguments}, tool.Admission{})
		if err != nil {
			requireOneLineRejection(t, err)
			return
		}
		admitted := inv.Arguments()
		want := []byte(arguments)
		if strings.Trim(arguments, " \t\r\n") == "" {
			want = []byte("{}")
		}
		require.Equal(t, want, admitted, "admitted arguments differ from the proposal")
		require.True(t, jsontext.Value(admitted).IsValid(), "admitted arguments are not valid RFC 7493: %q", admitted)
		require.Equal(t, byte('{'), firstNonSpace(admitted), "admitted arguments are not an object: %q", admitted)
		require.NoError(t, schema.Validate(admitted), "the input schema alone refuses admitted arguments")
	})
}

// firstNonSpace returns the first byte of data that is not JSON whitespace.
func firstNonSpace(data []byte) byte {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

// fuzzProbeValues are validated against every schema FuzzParseSchema
// accepts.
var fuzzProbeValues = []string{`{}`, `[]`, `1`, `"x"`, `null`, `{"a":[1,"b",{"c":null}]}`, `1e308`, `-0.5`}

func FuzzParseSchema(f *testing.F) {
	for _, seed := range []string{
		`true`,
		`false`,
		`{}`,
		fuzzSearchSchema,
		`{"type":"integer","minimum":1,"exclusiveMaximum":1e3,"multipleOf":0.5}`,
		`{"type":"string","pattern":"^(a+)+$","format":"date-time"}`,
		`{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{"anyOf":[{"$ref":"#/$defs/a"},{"$ref":"#/$defs/a"}],"$defs":{"a":{"oneOf":[{"type":"null"},{"not":{"const":1}}]}}}`,
		`{"if":{"required":["a"]},"then":{"required":["b"]},"else":{"maxProperties":0}}`,
		`{"prefixItems":[{"type":"string"}],"items":false,"contains":{"const":"x"},"minContains":1,"uniqueItems":true}`,
		`{"dependentSchemas":{"a":{"required":["b"]}},"propertyNames":{"maxLength":3},"unevaluatedProperties":false}`,
		`{"$dynamicAnchor":"node","items":{"$dynamicRef":"#node"}}`,
		`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`,
		`{"$ref":"https://example.com/other.json"}`,
		`{"$ref":"#/$defs/missing"}`,
		`{"type":"nope"}`,
		`{"pattern":"("}`,
		`{"format":"no-such-format"}`,
		`{"contentMediaType":"application/json","contentEncoding":"base64","contentSchema":{"type":"object"}}`,
		`{"enum":[1,1.0,"1"]}`,
		`[]`,
		`1`,
		`{"a":1,"a":2}`,
		`{"minimum":1e-400}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		schema, err := tool.ParseSchema(raw)
		if err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidSchema)
			require.False(t, schema.Valid(), "a refused schema is not the zero Schema")
			return
		}
		require.True(t, schema.Valid())
		doc := schema.JSON()
		again, err := tool.ParseSchema(doc)
		require.NoError(t, err, "the canonical form of an accepted schema is refused: %s", doc)
		require.Equal(t, string(doc), string(again.JSON()), "the canonical form is not stable")
		for _, v := range fuzzProbeValues {
			err := schema.Validate([]byte(v))
			if err != nil {
				requireOneLineRejection(t, err)
			}
			require.Equal(t, err == nil, again.Validate([]byte(v)) == nil, "the re-parsed schema judges %s differently", v)
		}
	})
}

func FuzzDefinitionUnmarshal(f *testing.F) {
	for _, seed := range []string{
		`{"name":"search","input_schema":{"type":"object"}}`,
		`{"name":"search","description":"find things","input_schema":` + fuzzSearchSchema + `,"output_schema":{"type":"array"},"effect":"safe"}`,
		`{"name":"put_file","input_schema":{"type":"object","required":["path"]},"effect":"idempotent"}`,
		`{"name":"a","description":null,"input_schema":{"type":"object"}}`,
		`{"name":"a","input_schema":{"type":"object"},"output_schema":null}`,
		`{"name":"a","input_schema":{"type":"array"}}`,
		`{"name":"a b","input_schema":{"type":"object"}}`,
		`{"name":"a","input_schema":{"type":"object"},"effect":"unsafe"}`,
		`{"name":"a","input_schema":{"type":"object"},"Name":"b"}`,
		`{"name":"a","input_schema":{"type":"object"},"extra":1}`,
		`{"name":"a","name":"b","input_schema":{"type":"object"}}`,
		`{"name":"a","description":"caf\u00e9 \u2028 \ud83d\ude00","input_schema":{ "type" : "object" , "properties" : { } }}`,
		`{"name":"a","input_schema":{"type":"object","$ref":"file:///etc/passwd"}}`,
		`{"name":"a"}`,
		`[]`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var def tool.Definition
		err := def.UnmarshalJSON(data)
		if err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidDefinition)
			require.Equal(t, tool.Definition{}, def, "a refused document changed the Definition")
			return
		}
		require.NoError(t, def.Validate())
		first, err := def.MarshalJSON()
		require.NoError(t, err)
		require.True(t, jsontext.Value(first).IsValid(), "encoding is not valid RFC 7493: %q", first)
		var again tool.Definition
		require.NoError(t, again.UnmarshalJSON(first), "the encoding of an accepted definition is refused: %s", first)
		require.Equal(t, def, again)
		second, err := again.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(first), string(second))
	})
}

func FuzzOutputUnmarshal(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"content":[{"kind":"text","text":"hello"}]}`,
		`{"content":[{"kind":"text","text":"caf\u00e9"},{"kind":"media","media_type":"image/png","data":"iVBORw0KGgo="}]}`,
		`{"content":[{"kind":"media","media_type":"text/plain","uri":"https://example.com/a.txt"}]}`,
		`{"details":{"rows":[1,2,3],"next":null}}`,
		`{"details": [ 1 , 2 ] }`,
		`{"details":null}`,
		`{"content":null}`,
		`{"content":[{"kind":"text","text":""}]}`,
		`{"content":[{"kind":"text","text":"a","uri":"https://x"}]}`,
		`{"content":[{"kind":"media","media_type":"image/png","data":"","uri":"https://example.com/a"}]}`,
		`{"content":[{"kind":"media","media_type":"image/png","data":"AA==","uri":"https://example.com/a"}]}`,
		`{"content":[{"kind":"media","media_type":"image","uri":"https://example.com/a"}]}`,
		`{"content":[{"kind":"media","media_type":"image/png","uri":"relative/path"}]}`,
		`{"content":[{"kind":"media","media_type":"image/png","data":"not base64!"}]}`,
		`{"content":[{"kind":"video","text":"x"}]}`,
		`{"details":1,"details":2}`,
		`{"Details":1}`,
		`{"details":1e999}`,
		`[]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out tool.Output
		err := out.UnmarshalJSON(data)
		if err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidOutput)
			require.Equal(t, tool.Output{}, out, "a refused document changed the Output")
			return
		}
		require.NoError(t, out.Validate())
		first, err := out.MarshalJSON()
		require.NoError(t, err)
		require.True(t, jsontext.Value(first).IsValid(), "encoding is not valid RFC 7493: %q", first)
		var again tool.Output
		require.NoError(t, again.UnmarshalJSON(first), "the encoding of an accepted output is refused: %s", first)
		second, err := again.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(first), string(second))
	})
}

func FuzzRequest(f *testing.F) {
	for _, seed := range []struct{ name, arguments string }{
		{"search", `{"query":"lamps"}`},
		{"search", ``},
		{"search", `{"query":""}`},
		{"", `{"query":"lamps"}`},
		{"Search", `{"query":"lamps"}`},
		{"search ", `{"query":"lamps"}`},
		{"search\x00", `{"query":"lamps"}`},
		{"lookup", `{"id":7}`},
		{"lookup", `{"id":"7"}`},
		{"missing", `{}`},
		{"\xff", `{}`},
		{"search", `{"query":"lamps"`},
	} {
		f.Add(seed.name, seed.arguments)
	}
	search := fuzzSearchBinding(f)
	lookup, err := tool.Bind(echoTool{definition: tool.Definition{
		Name:        "lookup",
		InputSchema: []byte(`{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}`),
	}})
	require.NoError(f, err)
	registry, err := tool.NewRegistry(search, lookup)
	require.NoError(f, err)
	resolved, ok := registry.Resolve("search")
	require.True(f, ok)
	contract := resolved.Contract()

	f.Fuzz(func(t *testing.T, name, arguments string) {
		request := tool.Request{Name: name, Arguments: arguments}
		validateErr := request.Validate()
		if validateErr != nil {
			require.ErrorIs(t, validateErr, tool.ErrInvalidRequest)
		}

		inv, err := contract.Prepare(request, tool.Admission{})
		if err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			require.Equal(t, tool.Invocation{}, inv, "a refused request yielded an Invocation")
		}
		if name != "search" || validateErr != nil {
			require.Error(t, err, "a request for %q was admitted by the contract of search", name)
		}
		if err == nil {
			require.Equal(t, "search", inv.Definition().Name)
		}

		// Resolving the fuzzed name finds a binding only under its own name,
		// and that binding's contract admits exactly the name it resolved.
		b, found := registry.Resolve(name)
		require.Equal(t, name == "search" || name == "lookup", found)
		if found {
			require.Equal(t, name, b.Contract().Name())
			_, err := b.Contract().Prepare(request, tool.Admission{})
			if err != nil {
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
				if !errors.Is(err, tool.ErrInvalidRequest) {
					requireOneLineRejection(t, err)
				}
			}
		}
	})
}
