// Package strictjson parses RFC 7493 (I-JSON) documents in one pass and builds
// the value tree a JSON Schema validator consumes.
//
// The parser is deliberately stricter than RFC 8259: it refuses duplicate
// member names, invalid UTF-8, a byte-order mark, lone or inverted surrogate
// escapes, Unicode noncharacters, numbers a float64 cannot express (overflow,
// or a nonzero value that underflows to zero), number tokens longer than
// MaxNumberLen bytes and nesting deeper than MaxDepth. Numbers are kept as
// exact decimal text (json.Number) and are never rounded.
//
// The parser is recursive descent; MaxDepth bounds its recursion, so a hostile
// document can neither exhaust the stack nor make the work grow faster than
// its length.
package strictjson

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

const (
	// MaxDepth is the deepest nesting of arrays and objects accepted. The
	// outermost array or object is at depth 1.
	MaxDepth = 1000
	// MaxNumberLen is the longest number token accepted, in bytes.
	MaxNumberLen = 100
)

// Error describes where and why a document was refused. Its text speaks JSON
// only, so it may be shown to whoever wrote the document.
type Error struct {
	// Offset is the byte offset of the offending input.
	Offset int
	// Pointer is the RFC 6901 JSON pointer of the value being parsed when
	// the problem was found; empty for the root.
	Pointer string
	// Reason says what is wrong, in plain words.
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("at %s (byte %d): %s", Where(e.Pointer), e.Offset, e.Reason)
}

// Where names a location for a message: the JSON pointer, or "the root" for
// the empty pointer, which is easy to misread as the pointer "/" (the
// member named "").
func Where(pointer string) string {
	if pointer == "" {
		return "the root"
	}
	return pointer
}

// Parse parses data as exactly one I-JSON document and returns its value
// tree: map[string]any, []any, string, json.Number, bool or nil. The tree
// shares no memory with data.
func Parse(data []byte) (any, error) {
	v, _, err := ParseInterning(data, nil)
	return v, err
}

// ParseInterning is Parse that takes the strings of the tree (member names
// and string values) from known when they are there, instead of allocating
// them. Known maps each string to itself and is only read. It also returns
// the number of values in the tree, containers included.
func ParseInterning(data []byte, known map[string]string) (tree any, values int, err error) {
	p := parsers.Get().(*parser)
	p.data = data
	p.known = known
	v, err := p.document()
	values = p.values
	// Completed objects and arrays clear their scratch; a refused document
	// may leave some behind.
	clear(p.members)
	clear(p.items)
	*p = parser{members: p.members[:0], items: p.items[:0]}
	if cap(p.members) <= maxPooledScratch && cap(p.items) <= maxPooledScratch {
		parsers.Put(p)
	}
	return v, values, err
}

// parsers keeps parsers with their scratch stacks between calls.
var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooledScratch bounds the scratch stacks a pooled parser keeps, so
// that one huge document does not pin its memory.
const maxPooledScratch = 1 << 12

// Valid reports whether data is exactly one I-JSON document.
func Valid(data []byte) bool {
	_, err := Parse(data)
	return err == nil
}

// IsSpace reports whether c is JSON whitespace.
func IsSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// IsBlank reports whether data holds nothing but JSON whitespace.
func IsBlank(data []byte) bool {
	for _, c := range data {
		if !IsSpace(c) {
			return false
		}
	}
	return true
}

// Compact appends data without the whitespace outside strings to dst. Data
// must already be valid JSON; member order, escapes and number text are
// kept exactly.
func Compact(dst, data []byte) []byte {
	inString, escaped := false, false
	for _, c := range data {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case IsSpace(c):
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

type parser struct {
	data  []byte
	pos   int
	depth int
	trail []string // reference tokens of a refused value, innermost first

	known  map[string]string // strings to reuse; see ParseInterning
	values int               // values parsed so far

	// Members and items of the objects and arrays being parsed, innermost
	// last. Collecting them here first lets each map and slice be made at
	// its final size.
	members []member
	items   []any
}

type member struct {
	name  string
	value any
}

// linearDuplicateScan is the member count up to which duplicates are found
// by comparing names; larger objects use a set.
const linearDuplicateScan = 16

func (p *parser) fail(reason string) error {
	return &Error{Offset: p.pos, Reason: reason}
}

func (p *parser) failf(format string, args ...any) error {
	return &Error{Offset: p.pos, Reason: fmt.Sprintf(format, args...)}
}

// within records that err arose inside the member or element named token.
// Tokens are collected innermost first while the recursion unwinds, and
// the pointer is built once at the top: prefixing a string at every level
// would copy a long member name once per level of nesting.
func (p *parser) within(err error, token string) error {
	if _, ok := err.(*Error); ok {
		p.trail = append(p.trail, token)
	}
	return err
}

// pointer renders the recorded trail as an RFC 6901 JSON pointer.
func (p *parser) pointer() string {
	var b strings.Builder
	for i := len(p.trail) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(strings.ReplaceAll(strings.ReplaceAll(p.trail[i], "~", "~0"), "/", "~1"))
	}
	return b.String()
}

func (p *parser) document() (any, error) {
	if len(p.data) >= 3 && p.data[0] == 0xEF && p.data[1] == 0xBB && p.data[2] == 0xBF {
		return nil, p.fail("a byte-order mark is not allowed")
	}
	p.skipSpace()
	v, err := p.value()
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Pointer = p.pointer()
		}
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.data) {
		return nil, p.fail("unexpected data after the JSON value")
	}
	return v, nil
}

func (p *parser) skipSpace() {
	for p.pos < len(p.data) && IsSpace(p.data[p.pos]) {
		p.pos++
	}
}

func (p *parser) value() (any, error) {
	p.values++
	if p.pos >= len(p.data) {
		return nil, p.fail("unexpected end of input, expected a value")
	}
	switch c := p.data[p.pos]; c {
	case '{':
		return p.object()
	case '[':
		return p.array()
	case '"':
		return p.str()
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		if c == '-' || ('0' <= c && c <= '9') {
			return p.number()
		}
		return nil, p.failf("invalid character %s, expected a value", quoteByte(c))
	}
}

func (p *parser) literal(word string) error {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		return p.failf("invalid literal, expected %s", word)
	}
	p.pos += len(word)
	return nil
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > MaxDepth {
		return p.failf("nesting is deeper than %d levels", MaxDepth)
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '{'
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return map[string]any{}, nil
	}
	base := len(p.members)
	var seen map[string]struct{}
	for {
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input, expected a member name")
		}
		if p.data[p.pos] != '"' {
			return nil, p.failf("invalid character %s, expected a member name", quoteByte(p.data[p.pos]))
		}
		start := p.pos
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if p.duplicate(base, &seen, name) {
			p.pos = start
			return nil, p.within(p.failf("duplicate member name %q", name), name)
		}
		p.skipSpace()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return nil, p.within(p.fail("expected ':' after the member name"), name)
		}
		p.pos++
		p.skipSpace()
		v, err := p.value()
		if err != nil {
			return nil, p.within(err, name)
		}
		p.members = append(p.members, member{name, v})
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input, expected ',' or '}'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case '}':
			p.pos++
			p.depth--
			members := p.members[base:]
			obj := make(map[string]any, len(members))
			for _, m := range members {
				obj[m.name] = m.value
			}
			clear(members)
			p.members = p.members[:base]
			return obj, nil
		default:
			return nil, p.failf("invalid character %s, expected ',' or '}'", quoteByte(p.data[p.pos]))
		}
	}
}

// duplicate reports whether name is already a member of the object whose
// members start at base, and records it when not.
func (p *parser) duplicate(base int, seen *map[string]struct{}, name string) bool {
	if *seen != nil {
		if _, dup := (*seen)[name]; dup {
			return true
		}
		(*seen)[name] = struct{}{}
		return false
	}
	members := p.members[base:]
	for _, m := range members {
		if m.name == name {
			return true
		}
	}
	if len(members) >= linearDuplicateScan {
		*seen = make(map[string]struct{}, 2*len(members))
		for _, m := range members {
			(*seen)[m.name] = struct{}{}
		}
		(*seen)[name] = struct{}{}
	}
	return false
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++ // '['
	p.skipSpace()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return []any{}, nil
	}
	base := len(p.items)
	for {
		v, err := p.value()
		if err != nil {
			return nil, p.within(err, strconv.Itoa(len(p.items)-base))
		}
		p.items = append(p.items, v)
		p.skipSpace()
		if p.pos >= len(p.data) {
			return nil, p.fail("unexpected end of input, expected ',' or ']'")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
			p.skipSpace()
		case ']':
			p.pos++
			p.depth--
			arr := make([]any, len(p.items)-base)
			copy(arr, p.items[base:])
			clear(p.items[base:])
			p.items = p.items[:base]
			return arr, nil
		default:
			return nil, p.failf("invalid character %s, expected ',' or ']'", quoteByte(p.data[p.pos]))
		}
	}
}

// str parses a string token starting at the opening quote.
func (p *parser) str() (string, error) {
	p.pos++ // '"'
	start := p.pos
	// Fast path: printable ASCII without escapes.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			raw := p.data[start:p.pos]
			p.pos++
			if s, ok := p.known[string(raw)]; ok {
				return s, nil
			}
			return string(raw), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		p.pos++
	}
	buf := make([]byte, 0, p.pos-start+16)
	buf = append(buf, p.data[start:p.pos]...)
	for {
		if p.pos >= len(p.data) {
			return "", p.fail("unexpected end of input inside a string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(buf), nil
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
		case c < 0x20:
			return "", p.failf("control character %s must be escaped in a string", quoteByte(c))
		case c < utf8.RuneSelf:
			buf = append(buf, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail("invalid UTF-8 in a string")
			}
			if IsNoncharacter(r) {
				return "", p.failf("the Unicode noncharacter U+%04X is not allowed", r)
			}
			buf = append(buf, p.data[p.pos:p.pos+size]...)
			p.pos += size
		}
	}
}

// escape decodes one escape sequence starting at the backslash.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, p.fail("unexpected end of input inside an escape sequence")
	}
	c := p.data[p.pos+1]
	switch c {
	case '"', '\\', '/':
		p.pos += 2
		return rune(c), nil
	case 'b':
		p.pos += 2
		return '\b', nil
	case 'f':
		p.pos += 2
		return '\f', nil
	case 'n':
		p.pos += 2
		return '\n', nil
	case 'r':
		p.pos += 2
		return '\r', nil
	case 't':
		p.pos += 2
		return '\t', nil
	case 'u':
	default:
		if c <= 0x20 || c >= 0x7F {
			return 0, p.failf("invalid escape sequence: a backslash followed by %s", quoteByte(c))
		}
		return 0, p.failf("invalid escape sequence \\%c", c)
	}
	r, ok := hex4(p.data[p.pos+2:])
	if !ok {
		return 0, p.fail(`invalid \u escape, expected four hexadecimal digits`)
	}
	switch {
	case 0xDC00 <= r && r <= 0xDFFF:
		return 0, p.failf(`lone low surrogate \u%04X`, r)
	case 0xD800 <= r && r <= 0xDBFF:
		rest := p.data[p.pos+6:]
		if len(rest) < 2 || rest[0] != '\\' || rest[1] != 'u' {
			return 0, p.failf(`lone high surrogate \u%04X`, r)
		}
		lo, ok := hex4(rest[2:])
		if !ok || lo < 0xDC00 || lo > 0xDFFF {
			return 0, p.failf(`lone high surrogate \u%04X`, r)
		}
		r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
		if IsNoncharacter(r) {
			return 0, p.failf("the Unicode noncharacter U+%04X is not allowed", r)
		}
		p.pos += 12
		return r, nil
	}
	if IsNoncharacter(r) {
		return 0, p.failf("the Unicode noncharacter U+%04X is not allowed", r)
	}
	p.pos += 6
	return r, nil
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
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

func (p *parser) number() (any, error) {
	start := p.pos
	d := p.data
	i := p.pos
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
		p.pos = i
		return nil, p.fail("invalid number, expected a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return nil, p.fail("invalid number, expected a digit after the decimal point")
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
			p.pos = i
			return nil, p.fail("invalid number, expected a digit in the exponent")
		}
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
	}
	token := d[start:i]
	if len(token) > MaxNumberLen {
		return nil, p.failf("number is longer than %d characters", MaxNumberLen)
	}
	p.pos = i
	if !exponent {
		// At most MaxNumberLen digits: always within float64 range.
		return json.Number(token), nil
	}
	if !nonzero {
		// A zero with any exponent is zero; keep the validator's exact
		// arithmetic away from the exponent.
		return json.Number("0"), nil
	}
	switch floatRange(token) {
	case overflows:
		p.pos = start
		return nil, p.failf("number %s is too large for a 64-bit float", token)
	case underflows:
		p.pos = start
		return nil, p.failf("number %s is too small for a 64-bit float (it would round to zero)", token)
	}
	return json.Number(token), nil
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < utf8.RuneSelf {
		return strconv.Quote(string(rune(c)))
	}
	return fmt.Sprintf("byte 0x%02X", c)
}
