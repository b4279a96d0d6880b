// This file holds the scanner that Undo.Apply reads the arguments with:
// one pass over the text, checking it is one JSON value and recording
// the spans to cut.

package strictschema

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentcontract/tool/internal/strictjson"
)

// maxDepth is the deepest nesting of arrays and objects Apply reads: the
// core's reader's, so that text deeper than Prepare reads is returned
// unchanged, for Prepare to refuse.
const maxDepth = strictjson.MaxDepth

// scanner reads argument text for Undo.Apply: it checks that the text is
// one JSON value (RFC 8259, valid UTF-8, unique member names in every
// object, nesting within the core reader's bound, escapes by the core
// reader's rules) and collects, in order, the spans to cut out of it. It
// works on the bytes of the text and keeps no decoded value. It is not a
// second reader of arguments: Prepare reads the result with the core's
// reader, whose stricter rules (RFC 7493) still apply to every value the
// cut keeps, and a cut removes only a member whose value is null.
type scanner struct {
	// text is the argument text; pos is the offset of the next byte to
	// read.
	text string
	pos  int
	// The spans to cut, cutCount of them: the first few in place (a slice
	// of them would leave the stack), the others in more.
	first    [8]span
	cutCount int
	more     []span
	// names are where the member names of the objects being read are
	// written, the innermost object's last; namesInUse of them are in use.
	names      [2 * fewNames]span
	namesInUse int
}

// cut records a span to cut, after those recorded before.
func (sc *scanner) cut(from, to int) {
	if sc.cutCount < len(sc.first) {
		sc.first[sc.cutCount] = span{from, to}
	} else {
		sc.more = append(sc.more, span{from, to})
	}
	sc.cutCount++
}

// result is the text with the recorded spans cut out.
func (sc *scanner) result() string {
	var b strings.Builder
	b.Grow(len(sc.text))
	last := 0
	for i := range sc.cutCount {
		var sp span
		if i < len(sc.first) {
			sp = sc.first[i]
		} else {
			sp = sc.more[i-len(sc.first)]
		}
		b.WriteString(sc.text[last:sp.from])
		last = sp.to
	}
	b.WriteString(sc.text[last:])
	return b.String()
}

// space skips white space.
func (sc *scanner) space() {
	for sc.pos < len(sc.text) {
		switch sc.text[sc.pos] {
		case ' ', '\t', '\n', '\r':
			sc.pos++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (sc *scanner) end() bool {
	sc.space()
	return sc.pos == len(sc.text)
}

// peek returns the next byte after white space, 0 at the end.
func (sc *scanner) peek() byte {
	sc.space()
	if sc.pos == len(sc.text) {
		return 0
	}
	return sc.text[sc.pos]
}

// value reads one value, undoing u on it; false when the text is not JSON
// there.
func (sc *scanner) value(u *Undo, depth int) bool {
	c := sc.peek()
	for u != nil && len(u.Branches) > 0 {
		u = u.pick(kindOf(c))
	}
	switch c {
	case '{':
		return sc.object(u, depth+1)
	case '[':
		return sc.array(u, depth+1)
	case '"':
		_, _, ok := sc.str()
		return ok
	case 't':
		return sc.literal("true")
	case 'f':
		return sc.literal("false")
	case 'n':
		return sc.literal("null")
	}
	return sc.number()
}

// literal reads lit (true, false or null) at the position.
func (sc *scanner) literal(lit string) bool {
	if !strings.HasPrefix(sc.text[sc.pos:], lit) {
		return false
	}
	sc.pos += len(lit)
	return true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (sc *scanner) number() bool {
	if sc.pos < len(sc.text) && sc.text[sc.pos] == '-' {
		sc.pos++
	}
	switch {
	case sc.pos < len(sc.text) && sc.text[sc.pos] == '0':
		sc.pos++
	case !sc.digits():
		return false
	}
	if sc.pos < len(sc.text) && sc.text[sc.pos] == '.' {
		sc.pos++
		if !sc.digits() {
			return false
		}
	}
	if sc.pos < len(sc.text) && (sc.text[sc.pos] == 'e' || sc.text[sc.pos] == 'E') {
		sc.pos++
		if sc.pos < len(sc.text) && (sc.text[sc.pos] == '+' || sc.text[sc.pos] == '-') {
			sc.pos++
		}
		if !sc.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (sc *scanner) digits() bool {
	start := sc.pos
	for sc.pos < len(sc.text) && sc.text[sc.pos] >= '0' && sc.text[sc.pos] <= '9' {
		sc.pos++
	}
	return sc.pos > start
}

// str reads a string and returns its text between the quotes, as written,
// and whether it holds an escape.
func (sc *scanner) str() (raw string, escaped, ok bool) {
	sc.pos++ // the opening quote
	start := sc.pos
	for sc.pos < len(sc.text) {
		c := sc.text[sc.pos]
		switch {
		case c == '"':
			raw = sc.text[start:sc.pos]
			sc.pos++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if !sc.escape() {
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		case c < utf8.RuneSelf:
			sc.pos++
		default:
			r, size := utf8.DecodeRuneInString(sc.text[sc.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", false, false
			}
			sc.pos += size
		}
	}
	return "", false, false
}

// escape reads one escape sequence; a \u escape of a surrogate must be
// the first half of a pair whose second half follows as a \u escape.
func (sc *scanner) escape() bool {
	if sc.pos+1 >= len(sc.text) {
		return false
	}
	if _, ok := strictjson.Unescape(sc.text[sc.pos+1]); ok {
		sc.pos += 2
		return true
	}
	if sc.text[sc.pos+1] != 'u' {
		return false
	}
	r, ok := strictjson.Hex4(sc.text[sc.pos+2:])
	if !ok {
		return false
	}
	sc.pos += 6
	if !utf16.IsSurrogate(r) {
		return true
	}
	if r >= 0xdc00 || !strings.HasPrefix(sc.text[sc.pos:], `\u`) {
		return false
	}
	r2, ok := strictjson.Hex4(sc.text[sc.pos+2:])
	if !ok || utf16.DecodeRune(r, r2) == utf8.RuneError {
		return false
	}
	sc.pos += 6
	return true
}

// object reads an object. Under a u that can remove members, a member
// whose null stands for absence is cut with the comma that separated it
// from a kept member.
func (sc *scanner) object(u *Undo, depth int) bool {
	if depth > maxDepth {
		return false
	}
	sc.pos++ // {
	// lead is where the member starts, right after the value before it
	// (or the brace), so that a cut takes the comma before it along.
	lead := sc.pos
	if sc.peek() == '}' {
		sc.pos++
		return true
	}
	cutting := u != nil && u.need
	names := objectNames{base: sc.namesInUse}
	kept, pendingComma := false, false
	for {
		if sc.peek() != '"' {
			return false
		}
		at := sc.pos + 1
		raw, escaped, ok := sc.str()
		if !ok || !sc.add(&names, at, raw, escaped) || sc.peek() != ':' {
			return false
		}
		sc.pos++
		var nullable bool
		var below *Undo
		if cutting {
			key := raw
			if escaped {
				key = unquote(raw)
			}
			nullable, below = u.member(key)
		}
		if nullable && sc.peek() == 'n' {
			if !sc.literal("null") {
				return false
			}
			sc.cut(lead, sc.pos)
			pendingComma = pendingComma || !kept
		} else {
			if pendingComma {
				// The first kept member after removed leading ones loses
				// the comma before it.
				comma := strings.IndexByte(sc.text[lead:], ',')
				sc.cut(lead, lead+comma+1)
				pendingComma = false
			}
			kept = true
			if !sc.value(below, depth) {
				return false
			}
		}
		lead = sc.pos
		switch sc.peek() {
		case ',':
			sc.pos++
		case '}':
			sc.pos++
			sc.namesInUse = names.base
			return true
		default:
			return false
		}
	}
}

// array reads an array, undoing u.Items on each item.
func (sc *scanner) array(u *Undo, depth int) bool {
	if depth > maxDepth {
		return false
	}
	sc.pos++ // [
	if sc.peek() == ']' {
		sc.pos++
		return true
	}
	var items *Undo
	if u != nil && u.need {
		items = u.Items
	}
	for {
		if !sc.value(items, depth) {
			return false
		}
		switch sc.peek() {
		case ',':
			sc.pos++
		case ']':
			sc.pos++
			return true
		default:
			return false
		}
	}
}
