package toolgemini

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// argumentText encodes args, as the SDK decoded them, into the argument text
// for [tool.Contract.Prepare]: members sorted by name (the order
// encoding/json writes a map in, so that the same arguments always make the
// same bytes, which the call's identity depends on), numbers as encoding/json
// writes a float64, strings escaped as encoding/json escapes them without
// HTML escaping. Missing args are {}.
//
// The SDK decodes only maps, slices, strings, float64, bool and nil; any
// other value, put there by a caller, and NaN or an infinity make the text
// "null", which Prepare rejects, so that bad input reaches no tool.
func argumentText(args map[string]any) string {
	if len(args) == 0 {
		return "{}"
	}
	var buf [256]byte
	b, err := appendValue(buf[:0], args)
	if err != nil {
		return "null" // not an object: Prepare rejects it
	}
	return string(b)
}

var errUnencodable = errors.New("unencodable argument value")

func appendValue(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return appendString(b, v), nil
	case float64:
		return appendFloat(b, v)
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = appendValue(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		// One pass over the map collects its members, which are then
		// sorted by name: no lookups, and no allocation for up to 16.
		var small [16]member
		members := small[:0]
		for k, e := range v {
			members = append(members, member{k, e})
		}
		sortMembers(members)
		b = append(b, '{')
		for i := range members {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, members[i].name)
			b = append(b, ':')
			var err error
			if b, err = appendValue(b, members[i].value); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, errUnencodable
}

// member is one member of a decoded object.
type member struct {
	name  string
	value any
}

// sortMembers sorts members by name: by insertion for the few members of
// a call's arguments, which beats the general sort there.
func sortMembers(members []member) {
	if len(members) > 12 {
		slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.name, b.name) })
		return
	}
	for i := 1; i < len(members); i++ {
		for j := i; j > 0 && members[j].name < members[j-1].name; j-- {
			members[j], members[j-1] = members[j-1], members[j]
		}
	}
}

// appendFloat writes f as encoding/json does: the shortest text that reads
// back as f, in exponent form below 1e-6 and from 1e21 on.
func appendFloat(b []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil, errUnencodable
	}
	abs := math.Abs(f)
	if abs < 1e15 && f == math.Trunc(f) && (f != 0 || !math.Signbit(f)) {
		// An integer: its digits, as the shortest form writes them.
		return strconv.AppendInt(b, int64(f), 10), nil
	}
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		n := len(b)
		b = strconv.AppendFloat(b, f, 'e', -1, 64)
		// e-07 → e-7, as encoding/json writes it.
		if m := len(b) - n; m >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
		return b, nil
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64), nil
}

const hex = "0123456789abcdef"

// plain reports the bytes a JSON string holds as they are: printable ASCII
// but the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as a JSON string as encoding/json does with HTML
// escaping off: invalid UTF-8 becomes U+FFFD, and U+2028 and U+2029 are
// escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		// The run of bytes that need no escape goes in whole.
		j := i
		for j < len(s) && plain[s[j]] {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			default: // another control character
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
