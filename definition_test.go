package tool_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestDefinitionValidate(t *testing.T) {
	base := tool.Definition{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`)}
	with := func(change func(*tool.Definition)) tool.Definition {
		d := base.Clone()
		change(&d)
		return d
	}
	tests := []struct {
		name   string
		def    tool.Definition
		valid  bool
		schema bool // the error also wraps ErrInvalidSchema
	}{
		{"minimal", base, true, false},
		{"64-character name", with(func(d *tool.Definition) { d.Name = strings.Repeat("x", 64) }), true, false},
		{"all name characters", with(func(d *tool.Definition) { d.Name = "Az09_-" }), true, false},
		{"safe", with(func(d *tool.Definition) { d.Effect = tool.EffectSafe }), true, false},
		{"idempotent", with(func(d *tool.Definition) { d.Effect = tool.EffectIdempotent }), true, false},
		{"output schema", with(func(d *tool.Definition) { d.OutputSchema = json.RawMessage(`{"type":"integer"}`) }), true, false},
		{"boolean output schema", with(func(d *tool.Definition) { d.OutputSchema = json.RawMessage(`true`) }), true, false},
		{"input schema with whitespace", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(" {\n\"type\" : \"object\" } ") }), true, false},
		{"zero", tool.Definition{}, false, false},
		{"65-character name", with(func(d *tool.Definition) { d.Name = strings.Repeat("x", 65) }), false, false},
		{"slash in name", with(func(d *tool.Definition) { d.Name = "a/b" }), false, false},
		{"NUL in name", with(func(d *tool.Definition) { d.Name = "a\x00" }), false, false},
		{"type not exactly object", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":"object "}`) }), false, false},
		{"type as a list", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":["object","null"]}`) }), false, false},
		{"type object only inside allOf", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"allOf":[{"type":"object"}]}`) }), false, false},
		{"input schema with duplicate members", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":"object","type":"object"}`) }), false, true},
		{"input schema with trailing data", with(func(d *tool.Definition) { d.InputSchema = json.RawMessage(`{"type":"object"} {}`) }), false, true},
		{"input schema over MaxInputBytes", with(func(d *tool.Definition) {
			d.InputSchema = json.RawMessage(`{"type":"object","description":"` + strings.Repeat("x", tool.MaxInputBytes) + `"}`)
		}), false, true},
		{"input schema that explodes", with(func(d *tool.Definition) {
			d.InputSchema = json.RawMessage(`{"type":"object","properties":{"p":{"$ref":"#/$defs/d0"}},"$defs":` + chainedDefs(20) + `}`)
		}), false, true},
		{"output schema not a schema", with(func(d *tool.Definition) { d.OutputSchema = json.RawMessage(`"object"`) }), false, true},
		{"unknown effect", with(func(d *tool.Definition) { d.Effect = "pure" }), false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.def.Validate()
			if tt.valid {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidDefinition)
			require.Equal(t, tt.schema, errorsIs(err, tool.ErrInvalidSchema), "%v", err)
		})
	}
}

func TestDefinitionValidateMessages(t *testing.T) {
	tests := []struct {
		def tool.Definition
		msg string
	}{
		{tool.Definition{Name: ""}, `tool: invalid definition: name "" must be 1 to 64 characters`},
		{tool.Definition{Name: "a b"}, `tool: invalid definition: name "a b" may hold only A-Z, a-z, 0-9, '_' and '-'`},
		{tool.Definition{Name: "t", Effect: "pure"}, `tool: invalid definition: unknown effect "pure"`},
		{tool.Definition{Name: "t"}, `tool: invalid definition: tool "t" has no input schema`},
		{tool.Definition{Name: "t", InputSchema: json.RawMessage(`{"type":"string"}`)}, `tool: invalid definition: input schema of tool "t" must be a JSON object with "type":"object"`},
	}
	for _, tt := range tests {
		require.EqualError(t, tt.def.Validate(), tt.msg)
	}
}

func TestDefinitionClone(t *testing.T) {
	d := tool.Definition{
		Name:         "t",
		Description:  "d",
		InputSchema:  json.RawMessage(`{"type":"object"}`),
		OutputSchema: json.RawMessage(`{"type":"string"}`),
		Effect:       tool.EffectSafe,
	}
	c := d.Clone()
	require.Equal(t, d, c)
	c.InputSchema[0] = 'X'
	c.OutputSchema[0] = 'X'
	require.Equal(t, `{"type":"object"}`, string(d.InputSchema))
	require.Equal(t, `{"type":"string"}`, string(d.OutputSchema))

	var zero tool.Definition
	require.Equal(t, zero, zero.Clone(), "nil schemas stay nil")
}

func TestDefinitionMarshalJSON(t *testing.T) {
	tests := []struct {
		name string
		def  tool.Definition
		want string
	}{
		{
			name: "minimal, empty members omitted",
			def:  tool.Definition{Name: "t", InputSchema: json.RawMessage(` { "type" : "object" } `)},
			want: `{"name":"t","input_schema":{"type":"object"}}`,
		},
		{
			name: "every member, in wire order, schemas compact as given",
			def: tool.Definition{
				Effect:       tool.EffectIdempotent,
				OutputSchema: json.RawMessage(`{ "maximum" : 1.0E+2 , "type":"number" }`),
				InputSchema:  json.RawMessage(`{"required":["b","a"], "type":"object"}`),
				Description:  "adds <numbers> & more",
				Name:         "add",
			},
			want: `{"name":"add","description":"adds <numbers> & more","input_schema":{"required":["b","a"],"type":"object"},"output_schema":{"maximum":1.0E+2,"type":"number"},"effect":"idempotent"}`,
		},
		{
			// The wire form carries the bytes the schemas were compiled
			// from; escapes used to be rewritten ("\u0041" became "A").
			name: "schema escapes kept",
			def:  tool.Definition{Name: "t", InputSchema: json.RawMessage(`{"type":"object","description":"\u0041 \/ \u00e9"}`)},
			want: `{"name":"t","input_schema":{"type":"object","description":"\u0041 \/ \u00e9"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, err := tt.def.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tt.want, string(first))
			for range 5 {
				again, err := tt.def.MarshalJSON()
				require.NoError(t, err)
				require.Equal(t, tt.want, string(again), "deterministic")
			}
			// encoding/json escapes <, > and & in what MarshalJSON
			// returns; the document is the same.
			viaJSON, err := json.Marshal(tt.def)
			require.NoError(t, err)
			var a, b any
			require.NoError(t, json.Unmarshal(first, &a))
			require.NoError(t, json.Unmarshal(viaJSON, &b))
			require.Equal(t, a, b)
		})
	}
	_, err := tool.Definition{Name: "bad name"}.MarshalJSON()
	require.ErrorIs(t, err, tool.ErrInvalidDefinition)
	_, err = json.Marshal(tool.Definition{})
	require.ErrorIs(t, err, tool.ErrInvalidDefinition)
}

func TestDefinitionUnmarshalJSON(t *testing.T) {
	valid := `{"name":"add","description":"d","input_schema":{ "type" : "object" },"effect":"safe"}`
	var d tool.Definition
	require.NoError(t, json.Unmarshal([]byte(valid), &d))
	require.Equal(t, tool.Definition{Name: "add", Description: "d", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectSafe}, d)
	round, err := json.Marshal(d)
	require.NoError(t, err)
	require.Equal(t, `{"name":"add","description":"d","input_schema":{"type":"object"},"effect":"safe"}`, string(round))

	// Decoding and encoding again gives the same bytes.
	wire := `{"name":"add","input_schema":{"type":"object","title":"\u0041\n"},"output_schema":{"const":1.0E+2}}`
	var e tool.Definition
	require.NoError(t, e.UnmarshalJSON([]byte(wire)))
	again, err := e.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, wire, string(again))

	tests := []struct {
		name, in string
	}{
		{"unknown member", `{"name":"add","input_schema":{"type":"object"},"title":"x"}`},
		{"duplicate member", `{"name":"add","name":"sub","input_schema":{"type":"object"}}`},
		{"wrong-case member", `{"Name":"add","input_schema":{"type":"object"}}`},
		{"wrong-case schema member", `{"name":"add","Input_Schema":{"type":"object"}}`},
		{"missing input schema", `{"name":"add"}`},
		{"invalid name", `{"name":"a b","input_schema":{"type":"object"}}`},
		{"input schema of strings", `{"name":"add","input_schema":{"type":"string"}}`},
		{"output schema not compiling", `{"name":"add","input_schema":{"type":"object"},"output_schema":{"type":1}}`},
		{"unknown effect", `{"name":"add","input_schema":{"type":"object"},"effect":"pure"}`},
		{"name of the wrong type", `{"name":1,"input_schema":{"type":"object"}}`},
		{"not an object", `[]`},
		{"null", `null`},
		{"trailing data", valid + ` {}`},
		{"invalid UTF-8", "{\"name\":\"add\",\"description\":\"\xff\",\"input_schema\":{\"type\":\"object\"}}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kept := d.Clone()
			err := kept.UnmarshalJSON([]byte(tt.in))
			require.ErrorIs(t, err, tool.ErrInvalidDefinition)
			require.Equal(t, d, kept, "left unchanged")
		})
	}
}

func TestDefinitionUnmarshalOwnsItsBytes(t *testing.T) {
	data := []byte(`{"name":"add","input_schema":{"type":"object"}}`)
	var d tool.Definition
	require.NoError(t, d.UnmarshalJSON(data))
	for i := range data {
		data[i] = ' '
	}
	require.Equal(t, `{"type":"object"}`, string(d.InputSchema))
}

func TestEffect(t *testing.T) {
	tests := []struct {
		effect     tool.Effect
		replayable bool
		valid      bool
	}{
		{"", false, true},
		{tool.EffectSafe, true, true},
		{tool.EffectIdempotent, true, true},
		{"SAFE", false, false},
		{"mutating", false, false},
	}
	for _, tt := range tests {
		require.Equal(t, tt.replayable, tt.effect.Replayable(), "%q", tt.effect)
		def := tool.Definition{Name: "t", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tt.effect}
		require.Equal(t, tt.valid, def.Validate() == nil, "%q", tt.effect)
	}
	require.Equal(t, tool.Effect("safe"), tool.EffectSafe)
	require.Equal(t, tool.Effect("idempotent"), tool.EffectIdempotent)
}

func TestRequestValidate(t *testing.T) {
	require.NoError(t, tool.Request{Name: "t"}.Validate())
	require.NoError(t, tool.Request{Name: "t", Arguments: strings.Repeat(" ", tool.MaxInputBytes)}.Validate())
	require.ErrorIs(t, tool.Request{}.Validate(), tool.ErrInvalidRequest)
	require.ErrorIs(t, tool.Request{Name: "t", Arguments: strings.Repeat(" ", tool.MaxInputBytes+1)}.Validate(), tool.ErrInvalidRequest)
	data, err := json.Marshal(tool.Request{Name: "t", Arguments: `{"a":1}`})
	require.NoError(t, err)
	require.Equal(t, `{"name":"t","arguments":"{\"a\":1}"}`, string(data))
}

// errorsIs is errors.Is, for table cases that expect either answer.
func errorsIs(err, target error) bool { return errors.Is(err, target) }

// TestDefinitionWireFormFitsItsOwnLimit: whatever MarshalJSON writes,
// UnmarshalJSON reads back, even with both schemas and the description at
// their limits.
func TestDefinitionWireFormFitsItsOwnLimit(t *testing.T) {
	big := func(prefix string) json.RawMessage {
		head := `{"type":"object","description":"`
		tail := `"}`
		return json.RawMessage(head + strings.Repeat(prefix, (tool.MaxInputBytes-len(head)-len(tail))/len(prefix)) + tail)
	}
	def := tool.Definition{
		Name:         "large",
		Description:  strings.Repeat("\x01", tool.MaxInputBytes), // escaped to six times its size
		InputSchema:  big("i"),
		OutputSchema: big("o"),
	}
	require.NoError(t, def.Validate())
	data, err := json.Marshal(def)
	require.NoError(t, err)
	require.Greater(t, len(data), 3*tool.MaxInputBytes)
	var back tool.Definition
	require.NoError(t, json.Unmarshal(data, &back))
	require.Equal(t, def.Description, back.Description)

	def.Description += "x"
	require.ErrorIs(t, def.Validate(), tool.ErrInvalidDefinition, "a description over MaxInputBytes")
	def.Description = "\xff"
	require.ErrorIs(t, def.Validate(), tool.ErrInvalidDefinition, "a description that is not UTF-8")
}
