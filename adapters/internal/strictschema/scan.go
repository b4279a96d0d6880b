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
	s string
	i int
	// The spans to cut: the first few in place (a slice of them would
	// leave the stack), the others in more.
	first [8]span
	n     int
	more  []span
	// names are where the member names of the objects being read are
	// written, the innermost object's last; nn of them are in use.
	names [2 * fewNames]span
	nn    int
}

// cut records a span to cut, after those recorded before.
func (sc *scanner) cut(from, to int) {
	if sc.n < len(sc.first) {
		sc.first[sc.n] = span{from, to}
	} else {
		sc.more = append(sc.more, span{from, to})
	}
	sc.n++
}

// result is the text with the recorded spans cut out.
func (sc *scanner) result() string {
	var b strings.Builder
	b.Grow(len(sc.s))
	last := 0
	for i := range sc.n {
		var sp span
		if i < len(sc.first) {
			sp = sc.first[i]
		} else {
			sp = sc.more[i-len(sc.first)]
		}
		b.WriteString(sc.s[last:sp.from])
		last = sp.to
	}
	b.WriteString(sc.s[last:])
	return b.String()
}

func (sc *scanner) space() {
	for sc.i < len(sc.s) {
		switch sc.s[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// end reports whether only white space is left.
func (sc *scanner) end() bool {
	sc.space()
	return sc.i == len(sc.s)
}

// peek returns the next byte after white space, 0 at the end.
func (sc *scanner) peek() byte {
	sc.space()
	if sc.i == len(sc.s) {
		return 0
	}
	return sc.s[sc.i]
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

func (sc *scanner) literal(lit string) bool {
	if !strings.HasPrefix(sc.s[sc.i:], lit) {
		return false
	}
	sc.i += len(lit)
	return true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (sc *scanner) number() bool {
	if sc.i < len(sc.s) && sc.s[sc.i] == '-' {
		sc.i++
	}
	switch {
	case sc.i < len(sc.s) && sc.s[sc.i] == '0':
		sc.i++
	case !sc.digits():
		return false
	}
	if sc.i < len(sc.s) && sc.s[sc.i] == '.' {
		sc.i++
		if !sc.digits() {
			return false
		}
	}
	if sc.i < len(sc.s) && (sc.s[sc.i] == 'e' || sc.s[sc.i] == 'E') {
		sc.i++
		if sc.i < len(sc.s) && (sc.s[sc.i] == '+' || sc.s[sc.i] == '-') {
			sc.i++
		}
		if !sc.digits() {
			return false
		}
	}
	return true
}

// digits reads one or more decimal digits.
func (sc *scanner) digits() bool {
	start := sc.i
	for sc.i < len(sc.s) && sc.s[sc.i] >= '0' && sc.s[sc.i] <= '9' {
		sc.i++
	}
	return sc.i > start
}

// str reads a string and returns its text between the quotes, as written,
// and whether it holds an escape.
func (sc *scanner) str() (raw string, escaped, ok bool) {
	sc.i++ // the opening quote
	start := sc.i
	for sc.i < len(sc.s) {
		c := sc.s[sc.i]
		switch {
		case c == '"':
			raw = sc.s[start:sc.i]
			sc.i++
			return raw, escaped, true
		case c == '\\':
			escaped = true
			if !sc.escape() {
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		case c < utf8.RuneSelf:
			sc.i++
		default:
			r, size := utf8.DecodeRuneInString(sc.s[sc.i:])
			if r == utf8.RuneError && size == 1 {
				return "", false, false
			}
			sc.i += size
		}
	}
	return "", false, false
}

// escape reads one escape sequence; a \u escape of a surrogate must be
// the first half of a pair whose second half follows as a \u escape.
func (sc *scanner) escape() bool {
	if sc.i+1 >= len(sc.s) {
		return false
	}
	if _, ok := strictjson.Unescape(sc.s[sc.i+1]); ok {
		sc.i += 2
		return true
	}
	if sc.s[sc.i+1] != 'u' {
		return false
	}
	r, ok := strictjson.Hex4(sc.s[sc.i+2:])
	if !ok {
		return false
	}
	sc.i += 6
	if !utf16.IsSurrogate(r) {
		return true
	}
	if r >= 0xdc00 || !strings.HasPrefix(sc.s[sc.i:], `\u`) {
		return false
	}
	r2, ok := strictjson.Hex4(sc.s[sc.i+2:])
	if !ok || utf16.DecodeRune(r, r2) == utf8.RuneError {
		return false
	}
	sc.i += 6
	return true
}

// unquote decodes the text of a string that str accepted.
func unquote(raw string) string {
	var b strings.Builder
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			b.WriteByte(raw[i])
			i++
			continue
		}
		if c := raw[i+1]; c != 'u' {
			u, _ := strictjson.Unescape(c)
			b.WriteByte(u)
			i += 2
			continue
		}
		r, _ := strictjson.Hex4(raw[i+2:])
		i += 6
		if utf16.IsSurrogate(r) {
			r2, _ := strictjson.Hex4(raw[i+2:])
			r = utf16.DecodeRune(r, r2)
			i += 6
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fewNames is the most member names of one object compared one by one
// to find a name given twice; an object with more puts them in a set, as
// does one with a name that holds an escape.
const fewNames = 12

// objectNames are the names of one object's members: at first on the
// scanner's stack of names, from base on; in set once there are many, the
// stack is full, or one holds an escape.
type objectNames struct {
	base int
	set  map[string]bool
}

// add records the name of a member of an object, written between its
// quotes at sc.s[at:at+len(raw)]; false when the object already has it.
func (sc *scanner) add(on *objectNames, at int, raw string, escaped bool) bool {
	if on.set == nil && !escaped && sc.nn < len(sc.names) && sc.nn-on.base < fewNames {
		for _, prev := range sc.names[on.base:sc.nn] {
			if sc.s[prev.from:prev.to] == raw {
				return false
			}
		}
		sc.names[sc.nn] = span{at, at + len(raw)}
		sc.nn++
		return true
	}
	if on.set == nil {
		// The names so far hold no escape: as written, they are decoded.
		on.set = make(map[string]bool, 2*fewNames)
		for _, prev := range sc.names[on.base:sc.nn] {
			on.set[sc.s[prev.from:prev.to]] = true
		}
		sc.nn = on.base
	}
	name := raw
	if escaped {
		name = unquote(raw)
	}
	if on.set[name] {
		return false
	}
	on.set[name] = true
	return true
}

// object reads an object. Under a u that can remove members, a member
// whose null stands for absence is cut with the comma that separated it
// from a kept member.
func (sc *scanner) object(u *Undo, depth int) bool {
	if depth > maxDepth {
		return false
	}
	sc.i++ // {
	// lead is where the member starts, right after the value before it
	// (or the brace), so that a cut takes the comma before it along.
	lead := sc.i
	if sc.peek() == '}' {
		sc.i++
		return true
	}
	cutting := u != nil && u.need
	names := objectNames{base: sc.nn}
	kept, pendingComma := false, false
	for {
		if sc.peek() != '"' {
			return false
		}
		at := sc.i + 1
		raw, escaped, ok := sc.str()
		if !ok || !sc.add(&names, at, raw, escaped) || sc.peek() != ':' {
			return false
		}
		sc.i++
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
			sc.cut(lead, sc.i)
			pendingComma = pendingComma || !kept
		} else {
			if pendingComma {
				// The first kept member after removed leading ones loses
				// the comma before it.
				comma := strings.IndexByte(sc.s[lead:], ',')
				sc.cut(lead, lead+comma+1)
				pendingComma = false
			}
			kept = true
			if !sc.value(below, depth) {
				return false
			}
		}
		lead = sc.i
		switch sc.peek() {
		case ',':
			sc.i++
		case '}':
			sc.i++
			sc.nn = names.base
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
	sc.i++ // [
	if sc.peek() == ']' {
		sc.i++
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
			sc.i++
		case ']':
			sc.i++
			return true
		default:
			return false
		}
	}
}
