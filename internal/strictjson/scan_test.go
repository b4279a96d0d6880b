package strictjson_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/internal/strictjson"
)

// TestScannerStrings checks that a string without escapes is returned in
// place and one with escapes is decoded after what dst already holds.
func TestScannerStrings(t *testing.T) {
	tests := []struct {
		token, want string
		inPlace     bool
	}{
		{`"plain"`, "plain", true},
		{`""`, "", true},
		{`"é and \"q\""`, `é and "q"`, false},
		{`"\ud83d\ude00\n"`, "😀\n", false},
	}
	for _, tc := range tests {
		var s strictjson.Scanner
		s.Reset([]byte(tc.token))
		got, inPlace, err := s.String([]byte("kept"))
		require.NoError(t, err, tc.token)
		require.Equal(t, tc.inPlace, inPlace, tc.token)
		if !inPlace {
			require.Equal(t, "kept"+tc.want, string(got), tc.token)
		} else {
			require.Equal(t, tc.want, string(got), tc.token)
		}
		require.Equal(t, len(tc.token), s.Pos(), tc.token)
	}
}

// TestScannerRereads checks that Seek reads a value again at the depth it
// was first read at.
func TestScannerRereads(t *testing.T) {
	var s strictjson.Scanner
	s.Reset([]byte(` [ {"a" : 0e5} ] `))
	require.NoError(t, s.Begin())
	empty, err := s.OpenArray()
	require.NoError(t, err)
	require.False(t, empty)
	start, depth := s.Pos(), s.Depth()
	for range 2 {
		s.Seek(start, depth)
		k, err := s.ValueKind()
		require.NoError(t, err)
		require.Equal(t, byte(strictjson.KindObject), k)
		empty, err = s.OpenObject()
		require.NoError(t, err)
		require.False(t, empty)
		name, inPlace, err := s.MemberName(nil)
		require.NoError(t, err)
		require.True(t, inPlace)
		require.Equal(t, "a", string(name))
		require.NoError(t, s.Colon())
		number, err := s.Number()
		require.NoError(t, err)
		require.Equal(t, "0", string(number), "a zero with an exponent is 0")
		more, err := s.NextMember()
		require.NoError(t, err)
		require.False(t, more)
		require.Equal(t, depth, s.Depth())
	}
	more, err := s.NextItem()
	require.NoError(t, err)
	require.False(t, more)
	require.NoError(t, s.End())
}
