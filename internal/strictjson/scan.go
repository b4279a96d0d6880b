package strictjson

import (
	"fmt"
	"unicode/utf8"
)

// Scanner reads the tokens of one I-JSON document in place, enforcing every
// rule of the package on the strings and numbers it reads and on the
// nesting it is told about. Both the tree builder (Parse) and checks that
// read the bytes directly use it, so the rules live in one place.
//
// The zero Scanner reads an empty document; Reset gives it one. A Scanner
// is not safe for concurrent use. It retains the document until the next
// Reset, and slices it returns alias the document.
type Scanner struct {
	data  []byte
	pos   int
	depth int
}

// Kinds of value ValueKind reports, by their first byte; KindNumber stands
// for every number.
const (
	KindObject = '{'
	KindArray  = '['
	KindString = '"'
	KindTrue   = 't'
	KindFalse  = 'f'
	KindNull   = 'n'
	KindNumber = '0'
)

// Reset makes s read data from its start, at depth zero.
func (s *Scanner) Reset(data []byte) {
	*s = Scanner{data: data}
}

// Pos returns the offset of the next byte to read.
func (s *Scanner) Pos() int { return s.pos }

// Seek moves s to offset pos of its document, at the given depth of
// nesting, to read again a value read before.
func (s *Scanner) Seek(pos, depth int) {
	s.pos, s.depth = pos, depth
}

// Depth returns the number of arrays and objects open at the position.
func (s *Scanner) Depth() int { return s.depth }

// Slice returns the bytes of the document from start to the position.
func (s *Scanner) Slice(start int) []byte { return s.data[start:s.pos] }

// Begin refuses a byte-order mark and skips the whitespace before the
// document's value.
func (s *Scanner) Begin() error {
	if len(s.data) >= 3 && s.data[0] == 0xEF && s.data[1] == 0xBB && s.data[2] == 0xBF {
		return s.fail("a byte-order mark is not allowed")
	}
	s.SkipSpace()
	return nil
}

// End refuses anything but whitespace after the document's value.
func (s *Scanner) End() error {
	s.SkipSpace()
	if s.pos < len(s.data) {
		return s.fail("unexpected data after the JSON value")
	}
	return nil
}

// SkipSpace moves past JSON whitespace.
func (s *Scanner) SkipSpace() {
	for s.pos < len(s.data) && IsSpace(s.data[s.pos]) {
		s.pos++
	}
}

// ValueKind returns the kind of the value at the position (a Kind
// constant), without moving; an error when no value starts there.
func (s *Scanner) ValueKind() (byte, error) {
	if s.pos >= len(s.data) {
		return 0, s.fail("unexpected end of input, expected a value")
	}
	switch c := s.data[s.pos]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c, nil
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return KindNumber, nil
		}
		return 0, s.failf("invalid character %s, expected a value", quoteByte(c))
	}
}

// Literal reads true, false or null (word), which ValueKind announced.
func (s *Scanner) Literal(word string) error {
	if len(s.data)-s.pos < len(word) || string(s.data[s.pos:s.pos+len(word)]) != word {
		return s.failf("invalid literal, expected %s", word)
	}
	s.pos += len(word)
	return nil
}

// enter opens an array or object at the position, refusing one nested
// deeper than MaxDepth.
func (s *Scanner) enter() error {
	s.depth++
	if s.depth > MaxDepth {
		return s.failf("nesting is deeper than %d levels", MaxDepth)
	}
	s.pos++ // '{' or '['
	s.SkipSpace()
	return nil
}

// closes reports whether the byte at the position is c, and if so closes
// the array or object it ends.
func (s *Scanner) closes(c byte) bool {
	if s.pos < len(s.data) && s.data[s.pos] == c {
		s.pos++
		s.depth--
		return true
	}
	return false
}

// OpenObject reads the opening brace of the object ValueKind announced, and
// reports whether the object is empty (its closing brace then read too).
func (s *Scanner) OpenObject() (empty bool, err error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	return s.closes('}'), nil
}

// OpenArray is OpenObject for an array.
func (s *Scanner) OpenArray() (empty bool, err error) {
	if err := s.enter(); err != nil {
		return false, err
	}
	return s.closes(']'), nil
}

// MemberName reads a member name at the position, like String.
func (s *Scanner) MemberName(dst []byte) (name []byte, inPlace bool, err error) {
	if s.pos >= len(s.data) {
		return nil, false, s.fail("unexpected end of input, expected a member name")
	}
	if s.data[s.pos] != '"' {
		return nil, false, s.failf("invalid character %s, expected a member name", quoteByte(s.data[s.pos]))
	}
	return s.String(dst)
}

// Colon reads the colon after a member name and the whitespace around it.
func (s *Scanner) Colon() error {
	s.SkipSpace()
	if s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return s.fail("expected ':' after the member name")
	}
	s.pos++
	s.SkipSpace()
	return nil
}

// NextMember reads what follows a member's value: a comma, when more
// follows, or the closing brace.
func (s *Scanner) NextMember() (more bool, err error) {
	return s.next('}')
}

// NextItem is NextMember for an array.
func (s *Scanner) NextItem() (more bool, err error) {
	return s.next(']')
}

func (s *Scanner) next(end byte) (more bool, err error) {
	s.SkipSpace()
	if s.pos >= len(s.data) {
		return false, s.failf("unexpected end of input, expected ',' or '%c'", end)
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		s.SkipSpace()
		return true, nil
	case end:
		s.pos++
		s.depth--
		return false, nil
	}
	return false, s.failf("invalid character %s, expected ',' or '%c'", quoteByte(s.data[s.pos]), end)
}

func (s *Scanner) fail(reason string) error {
	return &Error{Offset: s.pos, Reason: reason}
}

func (s *Scanner) failf(format string, args ...any) error {
	return &Error{Offset: s.pos, Reason: fmt.Sprintf(format, args...)}
}

// String reads the string token at the position (its opening quote). When
// the token holds no escape, content is its text inside the document and
// inPlace is true; otherwise content is dst with the decoded text appended,
// and dst's own bytes are kept. Invalid UTF-8, control characters, bad
// escapes, lone surrogates and noncharacters are refused.
func (s *Scanner) String(dst []byte) (content []byte, inPlace bool, err error) {
	s.pos++ // '"'
	start := s.pos
	// Fast path: printable ASCII without escapes, in a local index.
	data, i := s.data, s.pos
	for i < len(data) && plainInString[data[i]] {
		i++
	}
	if i < len(data) && data[i] == '"' {
		s.pos = i + 1
		return data[start:i], true, nil
	}
	s.pos = i
	buf := append(dst, s.data[start:s.pos]...)
	for {
		if s.pos >= len(s.data) {
			return nil, false, s.fail("unexpected end of input inside a string")
		}
		c := s.data[s.pos]
		switch {
		case c == '"':
			s.pos++
			return buf, false, nil
		case c == '\\':
			r, err := s.escape()
			if err != nil {
				return nil, false, err
			}
			buf = utf8.AppendRune(buf, r)
		case c < 0x20:
			return nil, false, s.failf("control character %s must be escaped in a string", quoteByte(c))
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			s.pos++
		default:
			r, size := utf8.DecodeRune(s.data[s.pos:])
			if r == utf8.RuneError && size <= 1 {
				return nil, false, s.fail("invalid UTF-8 in a string")
			}
			if IsNoncharacter(r) {
				return nil, false, s.failf("the Unicode noncharacter U+%04X is not allowed", r)
			}
			buf = append(buf, s.data[s.pos:s.pos+size]...)
			s.pos += size
		}
	}
}

// plainInString marks the bytes a string holds as they are: printable
// ASCII but the quote and the backslash.
var plainInString = func() (plain [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		plain[c] = c != '"' && c != '\\'
	}
	return plain
}()

// escape decodes one escape sequence starting at the backslash.
func (s *Scanner) escape() (rune, error) {
	if s.pos+1 >= len(s.data) {
		return 0, s.fail("unexpected end of input inside an escape sequence")
	}
	c := s.data[s.pos+1]
	if b, ok := Unescape(c); ok {
		s.pos += 2
		return rune(b), nil
	}
	if c != 'u' {
		if c <= 0x20 || c >= 0x7F {
			return 0, s.failf("invalid escape sequence: a backslash followed by %s", quoteByte(c))
		}
		return 0, s.failf("invalid escape sequence \\%c", c)
	}
	r, ok := Hex4(s.data[s.pos+2:])
	if !ok {
		return 0, s.fail(`invalid \u escape, expected four hexadecimal digits`)
	}
	switch {
	case 0xDC00 <= r && r <= 0xDFFF:
		return 0, s.failf(`lone low surrogate \u%04X`, r)
	case 0xD800 <= r && r <= 0xDBFF:
		rest := s.data[s.pos+6:]
		if len(rest) < 2 || rest[0] != '\\' || rest[1] != 'u' {
			return 0, s.failf(`lone high surrogate \u%04X`, r)
		}
		lo, ok := Hex4(rest[2:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, s.failf(`lone high surrogate \u%04X`, r)
		}
		r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
		if IsNoncharacter(r) {
			return 0, s.failf("the Unicode noncharacter U+%04X is not allowed", r)
		}
		s.pos += 12
		return r, nil
	}
	if IsNoncharacter(r) {
		return 0, s.failf("the Unicode noncharacter U+%04X is not allowed", r)
	}
	s.pos += 6
	return r, nil
}

// Unescape returns the byte the one-character escape \c stands for; ok is
// false when c begins no such escape (u begins a \u escape, read by Hex4).
func Unescape(c byte) (b byte, ok bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// Hex4 reads the four hexadecimal digits, of either case, that begin s, as
// a \u escape writes them; ok is false when s begins otherwise.
func Hex4[T ~string | ~[]byte](s T) (r rune, ok bool) {
	if len(s) < 4 {
		return 0, false
	}
	for i := range 4 {
		c := s[i]
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// IsNoncharacter reports whether r is one of the 66 Unicode noncharacters
// (U+FDD0..U+FDEF and the last two code points of every plane), which
// RFC 7493 section 2.1 excludes.
func IsNoncharacter(r rune) bool {
	return (0xFDD0 <= r && r <= 0xFDEF) || r&0xFFFE == 0xFFFE
}

// zero is the token Number returns for a zero written with an exponent.
var zero = []byte("0")

// Number reads the number token at the position and returns it: its text
// in the document, or "0" for a zero written with an exponent (which keeps
// exact arithmetic away from the exponent). Tokens longer than
// MaxNumberLen and numbers a float64 cannot hold (overflow, or a nonzero
// value that rounds to zero) are refused.
func (s *Scanner) Number() ([]byte, error) {
	start := s.pos
	d := s.data
	i := s.pos
	if d[i] == '-' {
		i++
	}
	nonzero := false
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && '1' <= d[i] && d[i] <= '9':
		nonzero = true
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	default:
		s.pos = i
		return nil, s.fail("invalid number, expected a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return nil, s.fail("invalid number, expected a digit after the decimal point")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			if d[i] != '0' {
				nonzero = true
			}
			i++
		}
	}
	exponent := false
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		exponent = true
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			s.pos = i
			return nil, s.fail("invalid number, expected a digit in the exponent")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	token := d[start:i]
	if len(token) > MaxNumberLen {
		return nil, s.failf("number is longer than %d characters", MaxNumberLen)
	}
	s.pos = i
	if !exponent {
		// At most MaxNumberLen digits: always within float64 range.
		return token, nil
	}
	if !nonzero {
		return zero, nil
	}
	switch floatRange(token) {
	case overflows:
		s.pos = start
		return nil, s.failf("number %s is too large for a 64-bit float", token)
	case underflows:
		s.pos = start
		return nil, s.failf("number %s is too small for a 64-bit float (it would round to zero)", token)
	}
	return token, nil
}
