package toolmcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

// sdkElicits returns a function that sends an elicitation form of a
// schema to a client of the SDK, which checks the schema before it asks
// anyone: nil means the client took the form.
func sdkElicits(t *testing.T) func(schema string) error {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := server.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	decline := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}
	// Server-initiated elicitation is the 2025-11-25 form; the client
	// checks the schema the same way in both.
	cs, err := toolmcp.Connect(t.Context(), toolmcp.ConnectConfig{
		Implementation:  &mcp.Implementation{Name: "client", Version: "v0"},
		Options:         &mcp.ClientOptions{ElicitationHandler: decline},
		Transport:       ct,
		Session:         &mcp.ClientSessionOptions{ProtocolVersion: legacy},
		MaxMessageBytes: toolmcp.NoLimit,
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return func(schema string) error {
		_, err := ss.Elicit(t.Context(), &mcp.ElicitParams{Message: "Which?", RequestedSchema: json.RawMessage(schema)})
		return err
	}
}

// Every form the check accepts is one the SDK's client takes.
func TestElicitationFormsTheSDKTakes(t *testing.T) {
	elicit := sdkElicits(t)
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"string","format":"email","minLength":3,"maxLength":30,"default":"x@y.z"},"b":{"type":"integer","minimum":1,"maximum":9,"default":2},"c":{"type":"boolean","default":false},"d":{"type":"number","default":1.5}},"required":["a"]}`,
		`{"type":"object","additionalProperties":false,"properties":{"pick":{"type":"string","enum":["x","y"],"enumNames":["X","Y"],"default":"y"},"one":{"type":"string","title":"One","oneOf":[{"const":"x","title":"X"}],"default":"x"},"many":{"type":"array","items":{"type":"string","enum":["p","q"]},"minItems":1,"maxItems":2,"default":["q"]}}}`,
		`{"type":"object","properties":{"many":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"}]},"default":["p"]}}}`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"T","description":"D","properties":{}}`,
	} {
		require.NoError(t, toolmcp.CheckElicitationForm([]byte(schema)), schema)
		require.NoError(t, elicit(schema), schema)
	}
}

// What the check refuses that it once let through. Each case says why;
// where the SDK's client refuses the form too, a form the server sent
// would have failed the call at the client.
func TestElicitationFormsRefused(t *testing.T) {
	elicit := sdkElicits(t)
	for _, tc := range []struct {
		why, schema, err string
		sdkRefuses       bool
	}{
		{"an option needs its title (the spec's type requires it)",
			`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x"}]}}}`,
			`property "a": option "x" needs a "title", a non-empty string`, true},
		{"an empty const would read as nothing chosen",
			`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"","title":"None"}]}}}`,
			`property "a": an option's "const" must be a non-empty string`, true},
		{"enumNames is one title a value",
			`{"type":"object","properties":{"a":{"type":"string","enum":["x","y"],"enumNames":["X"]}}}`,
			`property "a": "enumNames" must hold one string for each value of "enum"`, true},
		{"enumNames is an array",
			`{"type":"object","properties":{"a":{"type":"string","enum":["x"],"enumNames":"X"}}}`,
			`property "a": "enumNames" must hold one string for each value of "enum"`, true},
		{"the untitled multi-select's items have \"type\":\"string\"",
			`{"type":"object","properties":{"a":{"type":"array","items":{"enum":["x"]}}}}`,
			`property "a": the items of an array with "enum" need "type":"string"`, true},
		{"the titled multi-select's items have no type",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","anyOf":[{"const":"x","title":"X"}]}}}}`,
			`property "a": the items of an array with "anyOf" take no "type"`, true},
		{"no string fits a minLength above the maxLength",
			`{"type":"object","properties":{"a":{"type":"string","minLength":5,"maxLength":2}}}`,
			`property "a": "minLength" (5) is more than "maxLength" (2)`, true},
		{"no number fits a minimum above the maximum",
			`{"type":"object","properties":{"a":{"type":"number","minimum":2,"maximum":1}}}`,
			`property "a": "minimum" (2) is more than "maximum" (1)`, true},
		{"a boolean's default is true or false",
			`{"type":"object","properties":{"a":{"type":"boolean","default":"yes"}}}`,
			`property "a": "default" must be true or false`, true},
		{"a string's default is a string",
			`{"type":"object","properties":{"a":{"type":"string","default":5}}}`,
			`property "a": "default" must be a string`, true},
		{"a number's default is a number",
			`{"type":"object","properties":{"a":{"type":"number","default":"5"}}}`,
			`property "a": "default" must be a number`, true},
		{"one list of options: the spec's single-selects have enum or oneOf",
			`{"type":"object","properties":{"a":{"type":"string","enum":["x"],"oneOf":[{"const":"x","title":"X"}]}}}`,
			`property "a": a single-select has "enum" or "oneOf", not both`, false},
		{"a select shows options, not a length or a format: an option the constraint refuses would be offered",
			`{"type":"object","properties":{"a":{"type":"string","enum":["x","yy"],"maxLength":1}}}`,
			`property "a": keyword "maxLength" is not allowed on a single-select in an elicitation form`, false},
		{"enumNames titles the values of enum",
			`{"type":"object","properties":{"a":{"type":"string","oneOf":[{"const":"x","title":"X"}],"enumNames":["X"]}}}`,
			`property "a": "enumNames" needs "enum"`, false},
		{"a select starts on one of its options",
			`{"type":"object","properties":{"a":{"type":"string","enum":["x"],"default":"y"}}}`,
			`property "a": "default" must be one of the options`, false},
		{"a multi-select starts on some of its options",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]},"default":"x"}}}`,
			`property "a": "default" must be an array of the options`, false},
		{"an integer's default is an integer",
			`{"type":"object","properties":{"a":{"type":"integer","default":1.5}}}`,
			`property "a": "default" must be an integer`, false},
		{"no choice fits a minItems above the maxItems",
			`{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","enum":["x"]},"minItems":2,"maxItems":1}}}`,
			`property "a": "minItems" (2) is more than "maxItems" (1)`, false},
	} {
		t.Run(tc.why, func(t *testing.T) {
			require.EqualError(t, toolmcp.CheckElicitationForm([]byte(tc.schema)), tc.err)
			if tc.sdkRefuses {
				require.ErrorContains(t, elicit(tc.schema), "elicit schema", "the SDK's client refuses it too")
			}
		})
	}
}
