package engine

import (
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestEncode requires encode to write every byte as the validator's
// compiler does, url.PathEscape of each token, with or without its fast
// path.
func TestEncode(t *testing.T) {
	for c := range 256 {
		if c == '/' {
			continue // an escaped token holds none
		}
		token := "a" + string(rune(c)) + "b"
		if c >= 0x80 {
			token = "a" + string([]byte{byte(c)}) + "b"
		}
		ptr := "/properties/" + token
		require.Equal(t, "/properties/"+url.PathEscape(token), encode(ptr), "byte %#x", c)
		require.Equal(t, url.PathEscape(token) != token, needsEscape(ptr), "byte %#x", c)
	}
	require.Equal(t, "", encode(""))
	require.Equal(t, "/a%20b/c", encode("/a b/c"))
	require.Equal(t, strings.Repeat("/x", 3), encode(strings.Repeat("/x", 3)))
}
