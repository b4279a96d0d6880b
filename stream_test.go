package tool_test

import (
	"fmt"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/strictjson"
)

// instanceOf builds a value that satisfies schema, a document of the kind
// registrySchemas generates: every property present, the first enum
// value, the lowest allowed integer, one item per array.
func instanceOf(schema any) any {
	s := schema.(map[string]any)
	if e, ok := s["enum"].([]any); ok {
		return e[0]
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		for name, prop := range s["properties"].(map[string]any) {
			out[name] = instanceOf(prop)
		}
		return out
	case "array":
		return []any{instanceOf(s["items"])}
	case "integer":
		return 7
	case "number":
		return 0.25
	case "boolean":
		return true
	}
	return "text \"quoted\" é"
}

// TestShownValidForDerivedSchemas requires valid arguments of the
// benchmark's input, of generated catalogue schemas and of derived schemas
// with optional, nested, time and map members to be decided valid without
// a value tree.
func TestShownValidForDerivedSchemas(t *testing.T) {
	input, err := tool.SchemaFor[benchInput]()
	require.NoError(t, err)
	for _, p := range benchPayloads(t) {
		args := []byte(p.args)
		require.True(t, tool.ShownValid(input, args), p.name)
		allocs := testing.AllocsPerRun(100, func() { tool.ShownValid(input, args) })
		if raceEnabled {
			// The race detector makes sync.Pool drop a share of what it
			// is given.
			require.LessOrEqual(t, allocs, 8.0, p.name)
		} else {
			require.Zero(t, allocs, p.name)
		}
	}
	output, err := tool.SchemaFor[benchOutput]()
	require.NoError(t, err)
	require.True(t, tool.ShownValid(output, []byte(`{"hits":3}`)))

	for i, raw := range registrySchemas(50) {
		s, err := tool.ParseSchema(raw)
		require.NoError(t, err)
		tree, err := strictjson.Parse(raw)
		require.NoError(t, err)
		value, err := jsonv2.Marshal(instanceOf(tree))
		require.NoError(t, err)
		require.NoError(t, s.Validate(value), "schema %d", i)
		require.True(t, tool.ShownValid(s, value), "schema %d: %s", i, value)
	}

	type address struct {
		Street string  `json:"street" jsonschema:"minLength=1"`
		Zip    *string `json:"zip,omitempty" jsonschema:"pattern=^[0-9]{5}$"`
		Kind   string  `json:"kind,omitempty" jsonschema:"enum=home,enum=work"`
	}
	type order struct {
		Customer string            `json:"customer" jsonschema:"format=email"`
		When     time.Time         `json:"when"`
		Ship     *address          `json:"ship,omitempty"`
		Bill     address           `json:"bill"`
		Labels   map[string]string `json:"labels,omitempty"`
		Counts   []int             `json:"counts" jsonschema:"maxItems=3"`
		Ratio    float64           `json:"ratio" jsonschema:"minimum=0,maximum=1"`
	}
	s, err := tool.SchemaFor[order]()
	require.NoError(t, err)
	for i, doc := range []string{
		`{"customer":"a@example.com","when":"2026-01-02T03:04:05Z","bill":{"street":"Main 1"},"counts":[],"ratio":0.5}`,
		`{"customer":"a@example.com","when":"2026-01-02T03:04:05+01:00","ship":{"street":"S","zip":"12345","kind":"home"},"bill":{"street":"B","zip":null},"labels":{"a":"b"},"counts":[1,2,3],"ratio":1}`,
	} {
		require.NoError(t, s.Validate([]byte(doc)), "document %d", i)
		require.True(t, tool.ShownValid(s, []byte(doc)), "document %d against %s", i, s.JSON())
	}
}

// TestPrepareSameOnEitherPath checks that arguments decided by reading
// them directly and arguments that need the value tree are admitted and
// refused alike: the refusal messages come from the tree.
func TestPrepareSameOnEitherPath(t *testing.T) {
	contract := benchBinding(t).Contract()
	for i, args := range []string{
		` {"query":"q","mode":"fast","limit":1,"offset":0,"filter":{"field":"f","op":"eq","weight":0},"tags":[],"include_archived":false,"locale":"en","min_score":0} `,
		`{"query":"q","mode":"slow","limit":1,"offset":0,"filter":{"field":"f","op":"eq","weight":0},"tags":[],"include_archived":false,"locale":"en","min_score":0}`,
		`{"query":"q","query":"q"}`,
		`[1]`,
		"\xef\xbb\xbf{}",
	} {
		_, err := contract.Prepare(tool.Request{Name: "search", Arguments: args}, tool.Admission{})
		if i == 0 {
			require.NoError(t, err)
			continue
		}
		require.ErrorIs(t, err, tool.ErrInvalidInvocation, fmt.Sprint(i))
		var rej *tool.InputRejection
		require.ErrorAs(t, err, &rej)
		require.Contains(t, rej.Message(), `arguments of "search"`)
	}
}
