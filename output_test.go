package tool_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestOutputText(t *testing.T) {
	tests := []struct {
		name   string
		output tool.Output
		text   string
		ok     bool
	}{
		{"zero", tool.Output{}, "", true},
		{"one text block", tool.NewTextOutput("sunny"), "sunny", true},
		{"text blocks concatenated", tool.Output{Content: []tool.Block{tool.NewTextBlock("a, "), tool.NewTextBlock("b")}}, "a, b", true},
		{"details when content is empty", tool.Output{Details: json.RawMessage(`{"t": 21}`)}, `{"t": 21}`, true},
		{"details ignored beside content", tool.Output{Content: []tool.Block{tool.NewTextBlock("21 degrees")}, Details: json.RawMessage(`{"t":21}`)}, "21 degrees", true},
		{"media block", tool.Output{Content: []tool.Block{tool.NewMediaBlock("image/png", []byte{1})}}, "", false},
		{"media after text", tool.Output{Content: []tool.Block{tool.NewTextBlock("see "), tool.NewMediaURIBlock("image/png", "https://example.test/a.png")}}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, ok := tt.output.Text()
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.text, text)
		})
	}
}

func TestNewTextOutput(t *testing.T) {
	require.Zero(t, tool.NewTextOutput(""))
	out := tool.NewTextOutput("hi")
	require.Equal(t, tool.Output{Content: []tool.Block{{Kind: tool.BlockText, Text: "hi"}}}, out)
	require.NoError(t, out.Validate())
}

func TestNewJSONOutput(t *testing.T) {
	value := json.RawMessage(` { "b" : 1.0E+2, "a" : [ ] } `)
	out, err := tool.NewJSONOutput(value)
	require.NoError(t, err)
	require.Equal(t, string(value), string(out.Details), "exact bytes kept")
	require.Empty(t, out.Content)
	value[1] = 'X'
	require.Equal(t, byte('{'), out.Details[1], "a copy")

	for _, bad := range []string{``, `{`, `{"a":1,"a":2}`, `{} {}`, "\"\xff\"", `1e400`, `"` + strings.Repeat("x", tool.MaxInputBytes) + `"`} {
		out, err := tool.NewJSONOutput(json.RawMessage(bad))
		require.ErrorIs(t, err, tool.ErrInvalidOutput, "%.40q", bad)
		require.Zero(t, out)
	}
}

func TestBlockValidate(t *testing.T) {
	tests := []struct {
		name  string
		block tool.Block
		msg   string // "" when valid
	}{
		{"text", tool.NewTextBlock("hello"), ""},
		{"inline media", tool.NewMediaBlock("image/png", []byte{0x89}), ""},
		{"media by URI", tool.NewMediaURIBlock("application/pdf", "https://example.test/a.pdf"), ""},
		{"media by data URI", tool.NewMediaURIBlock("image/png", "data:image/png;base64,iVBO"), ""},
		{"media type with symbols", tool.NewMediaBlock("application/vnd.api+json", []byte("{}")), ""},
		{"zero block", tool.Block{}, `tool: invalid output: unknown block kind ""`},
		{"unknown kind", tool.Block{Kind: "video", Text: "x"}, `tool: invalid output: unknown block kind "video"`},
		{"empty text", tool.NewTextBlock(""), "tool: invalid output: text block with empty text"},
		{"invalid UTF-8 text", tool.NewTextBlock("\xff"), "tool: invalid output: text block is not valid UTF-8"},
		{"text with a media type", tool.Block{Kind: tool.BlockText, Text: "x", MediaType: "text/plain"}, "tool: invalid output: text block with media fields"},
		{"text with data", tool.Block{Kind: tool.BlockText, Text: "x", Data: []byte{}}, "tool: invalid output: text block with media fields"},
		{"text with a URI", tool.Block{Kind: tool.BlockText, Text: "x", URI: "https://example.test"}, "tool: invalid output: text block with media fields"},
		{"media with text", tool.Block{Kind: tool.BlockMedia, Text: "x", MediaType: "image/png", Data: []byte{1}}, "tool: invalid output: media block with text"},
		{"media with both", tool.Block{Kind: tool.BlockMedia, MediaType: "image/png", Data: []byte{1}, URI: "https://example.test/a.png"}, "tool: invalid output: media block has both data and a URI"},
		{"media with neither", tool.Block{Kind: tool.BlockMedia, MediaType: "image/png"}, "tool: invalid output: media block has neither data nor a URI"},
		{"media with empty data", tool.NewMediaBlock("image/png", []byte{}), "tool: invalid output: media block has neither data nor a URI"},
		{"no media type", tool.NewMediaBlock("", []byte{1}), `tool: invalid output: media block has invalid media type ""`},
		{"type without subtype", tool.NewMediaBlock("image", []byte{1}), `tool: invalid output: media block has invalid media type "image"`},
		{"empty subtype", tool.NewMediaBlock("image/", []byte{1}), `tool: invalid output: media block has invalid media type "image/"`},
		{"empty type", tool.NewMediaBlock("/png", []byte{1}), `tool: invalid output: media block has invalid media type "/png"`},
		{"parameters", tool.NewMediaBlock("text/plain; charset=utf-8", []byte{1}), `tool: invalid output: media block has invalid media type "text/plain; charset=utf-8"`},
		{"space in type", tool.NewMediaBlock("ima ge/png", []byte{1}), `tool: invalid output: media block has invalid media type "ima ge/png"`},
		{"two slashes", tool.NewMediaBlock("image/png/x", []byte{1}), `tool: invalid output: media block has invalid media type "image/png/x"`},
		{"relative URI", tool.NewMediaURIBlock("image/png", "/img/a.png"), `tool: invalid output: media block URI "/img/a.png" is not an absolute URI`},
		{"bare file name", tool.NewMediaURIBlock("image/png", "a.png"), `tool: invalid output: media block URI "a.png" is not an absolute URI`},
		{"URI with a space", tool.NewMediaURIBlock("image/png", "https://example.test/a b.png"), `tool: invalid output: media block URI "https://example.test/a b.png" is not an absolute URI`},
		{"URI that does not parse", tool.NewMediaURIBlock("image/png", "https://[::1"), `tool: invalid output: media block URI "https://[::1" is not an absolute URI`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.block.Validate()
			if tt.msg == "" {
				require.NoError(t, err)
				require.NoError(t, tool.Output{Content: []tool.Block{tt.block}}.Validate())
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidOutput)
			require.EqualError(t, err, tt.msg)
			err = tool.Output{Content: []tool.Block{tool.NewTextBlock("ok"), tt.block}}.Validate()
			require.ErrorIs(t, err, tool.ErrInvalidOutput)
			require.True(t, strings.HasPrefix(err.Error(), "content[1]: "), err.Error())
			_, err = tt.block.MarshalJSON()
			require.ErrorIs(t, err, tool.ErrInvalidOutput, "MarshalJSON validates")
		})
	}
}

func TestNewMediaBlockCopiesData(t *testing.T) {
	data := []byte{1, 2, 3}
	b := tool.NewMediaBlock("image/png", data)
	data[0] = 9
	require.Equal(t, []byte{1, 2, 3}, b.Data)
}

func TestOutputValidateDetails(t *testing.T) {
	require.NoError(t, tool.Output{Details: json.RawMessage(`null`)}.Validate())
	require.ErrorIs(t, tool.Output{Details: json.RawMessage(`{"a":1,"a":2}`)}.Validate(), tool.ErrInvalidOutput)
	require.ErrorIs(t, tool.Output{Details: json.RawMessage(`nope`)}.Validate(), tool.ErrInvalidOutput)
}

func TestOutputClone(t *testing.T) {
	o := tool.Output{
		Content: []tool.Block{tool.NewTextBlock("a"), tool.NewMediaBlock("image/png", []byte{1, 2})},
		Details: json.RawMessage(`{"n":1}`),
	}
	c := o.Clone()
	require.Equal(t, o, c)
	c.Content[0].Text = "changed"
	c.Content[1].Data[0] = 9
	c.Details[2] = 'X'
	require.Equal(t, "a", o.Content[0].Text)
	require.Equal(t, []byte{1, 2}, o.Content[1].Data)
	require.Equal(t, `{"n":1}`, string(o.Details))
	require.Equal(t, tool.Output{}, tool.Output{}.Clone(), "nil stays nil")
}

func TestOutputMarshalJSON(t *testing.T) {
	tests := []struct {
		name   string
		output tool.Output
		want   string
	}{
		{"zero", tool.Output{}, `{}`},
		{"text", tool.NewTextOutput("hi"), `{"content":[{"kind":"text","text":"hi"}]}`},
		{"inline media", tool.Output{Content: []tool.Block{tool.NewMediaBlock("image/png", []byte("png"))}}, `{"content":[{"kind":"media","media_type":"image/png","data":"cG5n"}]}`},
		{"media by URI", tool.Output{Content: []tool.Block{tool.NewMediaURIBlock("image/png", "https://example.test/a.png")}}, `{"content":[{"kind":"media","media_type":"image/png","uri":"https://example.test/a.png"}]}`},
		{"details", tool.Output{Details: json.RawMessage(`{"n":1.0E+2}`)}, `{"details":{"n":1.0E+2}}`},
		{"details escapes kept", tool.Output{Details: json.RawMessage(`{"s":"\u0041\/"}`)}, `{"details":{"s":"\u0041\/"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := tt.output.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tt.want, string(data))

			var back tool.Output
			require.NoError(t, back.UnmarshalJSON(data))
			require.Equal(t, tt.output, back, "round trip")
		})
	}
	_, err := tool.Output{Content: []tool.Block{{Kind: tool.BlockText}}}.MarshalJSON()
	require.ErrorIs(t, err, tool.ErrInvalidOutput)

	// Whitespace in Details is dropped; nothing else changes.
	data, err := tool.Output{Details: json.RawMessage(" { \"b\" : [ 1 , \"\\u00e9\" ] } ")}.MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"details":{"b":[1,"\u00e9"]}}`, string(data))
}

func TestOutputUnmarshalJSONStrict(t *testing.T) {
	before := tool.NewTextOutput("kept")
	tests := []struct {
		name, in string
	}{
		{"unknown member", `{"content":[],"extra":1}`},
		{"duplicate member", `{"details":1,"details":2}`},
		{"wrong-case member", `{"Content":[{"kind":"text","text":"x"}]}`},
		{"unknown block member", `{"content":[{"kind":"text","text":"x","lang":"en"}]}`},
		{"wrong-case block member", `{"content":[{"kind":"text","Text":"x"}]}`},
		{"duplicate block member", `{"content":[{"kind":"text","text":"x","text":"y"}]}`},
		{"invalid block", `{"content":[{"kind":"text","text":""}]}`},
		{"media with both", `{"content":[{"kind":"media","media_type":"image/png","data":"AA==","uri":"https://example.test/a"}]}`},
		{"bad base64", `{"content":[{"kind":"media","media_type":"image/png","data":"***"}]}`},
		{"not an object", `[]`},
		{"trailing data", `{} {}`},
		{"noncharacter in text", `{"content":[{"kind":"text","text":"\ufffe"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := before.Clone()
			err := o.UnmarshalJSON([]byte(tt.in))
			require.ErrorIs(t, err, tool.ErrInvalidOutput)
			require.Equal(t, before, o, "left unchanged")
		})
	}
}

func TestBlockJSON(t *testing.T) {
	data, err := json.Marshal(tool.NewTextBlock("hi"))
	require.NoError(t, err)
	require.Equal(t, `{"kind":"text","text":"hi"}`, string(data))
	var b tool.Block
	require.NoError(t, json.Unmarshal(data, &b))
	require.Equal(t, tool.NewTextBlock("hi"), b)
	require.ErrorIs(t, b.UnmarshalJSON([]byte(`{"kind":"text"}`)), tool.ErrInvalidOutput)
	require.ErrorIs(t, b.UnmarshalJSON([]byte(`{"kind":"text","text":"x","extra":1}`)), tool.ErrInvalidOutput)
	require.Equal(t, tool.NewTextBlock("hi"), b, "left unchanged")
}
