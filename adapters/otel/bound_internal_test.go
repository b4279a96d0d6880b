package toolotel

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// bounded: a valid value within the bound is kept whole; anything else is
// valid UTF-8 within the bound, cut only at a rune boundary, and marked
// when cut.
func TestBounded(t *testing.T) {
	tests := []struct {
		name, in string
		max      int
		want     string
	}{
		{"empty", "", 8, ""},
		{"within", "abc", 8, "abc"},
		{"at the bound", "abcdefgh", 8, "abcdefgh"},
		{"one over", "abcdefghi", 8, "abcde…"},
		{"a 2-byte rune at the cut", "abcdéfgh", 8, "abcd…"},
		{"a 4-byte rune at the cut", "ab😀cdefgh", 8, "ab…"},
		{"invalid, mended within", "a\xffb", 8, "a\uFFFDb"},
		{"invalid, mended past the bound", "ab\xffc\xffd\xff", 8, "ab\uFFFD…"},
		{"a long run of continuation bytes", strings.Repeat("\x80", 100), 8, "\uFFFD…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := bounded(tt.in, tt.max)
			require.Equal(t, tt.want, got)
			require.LessOrEqual(t, len(got), tt.max)
			require.True(t, utf8.ValidString(got))
		})
	}
	// Every cut of a text of 1- to 4-byte runes.
	text := strings.Repeat("a€é😀", 10)
	for max := len(cutMarker); max <= len(text)+1; max++ {
		got := bounded(text, max)
		require.LessOrEqual(t, len(got), max)
		require.True(t, utf8.ValidString(got))
		if max >= len(text) {
			require.Equal(t, text, got)
			continue
		}
		prefix, ok := strings.CutSuffix(got, cutMarker)
		require.True(t, ok, max)
		require.True(t, strings.HasPrefix(text, prefix))
		require.Greater(t, len(prefix), max-len(cutMarker)-utf8.UTFMax, "cut at the last boundary before the bound")
	}
}
