package desk

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, text, json string }{
		{"plain text\nand a tab\t", "plain text\nand a tab\t", "plain text\nand a tab\t"},
		{"\u202e6666-LIVE-TCCA\u202c", "⟨U+202E⟩6666-LIVE-TCCA⟨U+202C⟩", `\u202e6666-LIVE-TCCA\u202c`},
		{"pay\u200bpal", "pay⟨U+200B⟩pal", `pay\u200bpal`},
		{"\u2066isolate\u2069", "⟨U+2066⟩isolate⟨U+2069⟩", `\u2066isolate\u2069`},
		{"bell\x07", "bell⟨U+0007⟩", `bell\u0007`},
		{"\ufeffbom", "⟨U+FEFF⟩bom", `\ufeffbom`},
		{"tag\U000E0041", "tag⟨U+E0041⟩", `tag\udb40\udc41`},
		{"filler\u3164", "filler⟨U+3164⟩", `filler\u3164`},
		{"bad \xff byte", "bad ⟨invalid byte⟩ byte", "bad \xff byte"},
	} {
		require.Equal(t, tc.text, visible(tc.in), "%q", tc.in)
		require.Equal(t, tc.json, visibleJSON(tc.in), "%q", tc.in)
	}
	// In a JSON text, the escapes keep the value.
	doc := `{"account":"` + "\u202e6666-LIVE-TCCA\u202c" + `","tag":"x` + "\U000E0041" + `"}`
	var before, after map[string]string
	require.NoError(t, json.Unmarshal([]byte(doc), &before))
	require.NoError(t, json.Unmarshal([]byte(visibleJSON(doc)), &after))
	require.Equal(t, before, after)
}
