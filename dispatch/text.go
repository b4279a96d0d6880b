package dispatch

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"reflect"
	"unicode/utf8"
)

// The helpers of this file check and shorten text for every layer above:
// they know no call, store or dispatcher.

// maxPrincipalBytes bounds Call.Principal and Answer.Principal.
const maxPrincipalBytes = 1024

// checkPrincipal reports whether p is a usable principal.
func checkPrincipal(p string) error {
	if len(p) > maxPrincipalBytes {
		return fmt.Errorf("principal of %d bytes, more than %d", len(p), maxPrincipalBytes)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("principal %q is not valid UTF-8", truncate(p, 80))
	}
	return nil
}

// isTypedNil reports whether v is an interface holding a nil pointer, map,
// slice, channel or function.
func isTypedNil(v any) bool {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Chan, reflect.Func:
		return rv.IsNil()
	}
	return false
}

// newCheckpointID returns 128 random bits in lowercase hex.
func newCheckpointID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// quoteName quotes a tool name the model wrote, shortened: it is echoed to
// the model and to logs, and a name has no length bound.
func quoteName(name string) string {
	return fmt.Sprintf("%q", truncate(name, 128))
}

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// maxRecordText bounds the text fields of a Claim and a Turn's ID.
const maxRecordText = 1024

// validHex reports whether s is n lowercase hex digits.
func validHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// validID reports whether id is 32 lowercase hex digits.
func validID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if !('0' <= id[i] && id[i] <= '9' || 'a' <= id[i] && id[i] <= 'f') {
			return false
		}
	}
	return true
}
