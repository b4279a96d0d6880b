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
// its length. Its tokens are read by a Scanner, which enforces every rule
// on strings, numbers and nesting; code that checks a document without
// building its tree reads it with a Scanner too, so the rules live in one
// place.
package strictjson

import (
	"bytes"
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

// Error renders the error on one line of at most a few KiB: a pointer
// longer than maxPointer bytes keeps its start and end.
func (e *Error) Error() string {
	return fmt.Sprintf("at %s (byte %d): %s", Where(Elide(e.Pointer, maxPointer)), e.Offset, e.Reason)
}

// Bounds on what an Error quotes from the document.
const (
	maxPointer = 512 // bytes of the pointer
	maxName    = 64  // bytes of a member name in a reason
)

// Elide shortens s to about n bytes by cutting out its middle, at rune
// boundaries, marking the cut with an ellipsis: the start of a long JSON
// pointer says where a value is, its end what it is.
func Elide(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/4, len(s)-(n-n/4)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "…" + s[tail:]
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
	p.Reset(data)
	p.known = known
	if len(data) > maxPooledScratch*8 {
		// The items of a large document's arrays, collected before each
		// array is made, are at most one more than its commas, and take
		// two bytes each: growing the stack by doubling would copy it
		// over and over.
		if n := min(bytes.Count(data, []byte{','})+1, len(data)/2); cap(p.items) < n {
			p.items = make([]any, 0, n)
		}
	}
	v, err := p.document()
	values = p.values
	// Completed objects and arrays clear their scratch; a refused document
	// may leave some behind.
	clear(p.members)
	clear(p.items)
	*p = parser{members: p.members[:0], items: p.items[:0], text: p.text[:0]}
	if cap(p.members) <= maxPooledScratch && cap(p.items) <= maxPooledScratch && cap(p.text) <= maxPooledText {
		parsers.Put(p)
	}
	return v, values, err
}

// parsers keeps parsers with their scratch stacks between calls.
var parsers = sync.Pool{New: func() any { return new(parser) }}

// maxPooledScratch bounds the scratch stacks a pooled parser keeps, so
// that one huge document does not pin its memory.
const maxPooledScratch = 1 << 12

// maxPooledText bounds the scratch text a pooled parser keeps.
const maxPooledText = 1 << 16

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
	Scanner
	trail []string // reference tokens of a refused value, innermost first

	known  map[string]string // strings to reuse; see ParseInterning
	values int               // values parsed so far

	// Members and items of the objects and arrays being parsed, innermost
	// last. Collecting them here first lets each map and slice be made at
	// its final size.
	members []member
	items   []any
	text    []byte // scratch for strings with escapes
}

type member struct {
	name  string
	value any
}

// linearDuplicateScan is the member count up to which duplicates are found
// by comparing names; larger objects use a set.
const linearDuplicateScan = 16

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
	if err := p.Begin(); err != nil {
		return nil, err
	}
	v, err := p.value()
	if err != nil {
		if e, ok := err.(*Error); ok {
			e.Pointer = p.pointer()
		}
		return nil, err
	}
	if err := p.End(); err != nil {
		return nil, err
	}
	return v, nil
}

func (p *parser) value() (any, error) {
	p.values++
	k, err := p.ValueKind()
	if err != nil {
		return nil, err
	}
	switch k {
	case KindObject:
		return p.object()
	case KindArray:
		return p.array()
	case KindString:
		return p.str()
	case KindTrue:
		return true, p.Literal("true")
	case KindFalse:
		return false, p.Literal("false")
	case KindNull:
		return nil, p.Literal("null")
	}
	token, err := p.Number()
	if err != nil {
		return nil, err
	}
	return json.Number(token), nil
}

// str reads a string value.
func (p *parser) str() (string, error) {
	return p.intern(p.String(p.text[:0]))
}

// intern returns a string the Scanner read, taking it from known when it
// is there; text that was decoded into the scratch space stays there.
func (p *parser) intern(content []byte, inPlace bool, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if !inPlace {
		p.text = content
	} else if s, ok := p.known[string(content)]; ok {
		return s, nil
	}
	return string(content), nil
}

func (p *parser) object() (any, error) {
	empty, err := p.OpenObject()
	if err != nil {
		return nil, err
	}
	if empty {
		return map[string]any{}, nil
	}
	base := len(p.members)
	var seen map[string]struct{}
	for {
		start := p.Pos()
		name, err := p.intern(p.MemberName(p.text[:0]))
		if err != nil {
			return nil, err
		}
		if p.duplicate(base, &seen, name) {
			p.pos = start
			return nil, p.within(p.failf("duplicate member name %q", Elide(name, maxName)), name)
		}
		if err := p.Colon(); err != nil {
			return nil, p.within(err, name)
		}
		v, err := p.value()
		if err != nil {
			return nil, p.within(err, name)
		}
		p.members = append(p.members, member{name, v})
		more, err := p.NextMember()
		if err != nil {
			return nil, err
		}
		if !more {
			members := p.members[base:]
			obj := make(map[string]any, len(members))
			for _, m := range members {
				obj[m.name] = m.value
			}
			clear(members)
			p.members = p.members[:base]
			return obj, nil
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
	empty, err := p.OpenArray()
	if err != nil {
		return nil, err
	}
	if empty {
		return []any{}, nil
	}
	base := len(p.items)
	for {
		// The index before the item is read: an array within it that is
		// refused leaves its own items behind.
		index := len(p.items) - base
		v, err := p.value()
		if err != nil {
			return nil, p.within(err, strconv.Itoa(index))
		}
		p.items = append(p.items, v)
		more, err := p.NextItem()
		if err != nil {
			return nil, err
		}
		if !more {
			arr := make([]any, len(p.items)-base)
			copy(arr, p.items[base:])
			clear(p.items[base:])
			p.items = p.items[:base]
			return arr, nil
		}
	}
}

func quoteByte(c byte) string {
	if c >= 0x20 && c < utf8.RuneSelf {
		return strconv.Quote(string(rune(c)))
	}
	return fmt.Sprintf("byte 0x%02X", c)
}
