package desk

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// unseen reports whether r changes how text reads without being seen: a
// format character (the bidi controls that reorder what follows, zero
// widths, the byte-order mark, tags), a control character other than
// tab, newline and carriage return, a line or paragraph separator, and
// the fillers that render as blanks.
func unseen(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	case '\u115f', '\u1160', '\u3164', '\uffa0', '\u2800':
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Cc, unicode.Zl, unicode.Zp)
}

// visible returns s, text a model or a tool wrote, with each unseen
// character replaced by a mark that names it (⟨U+202E⟩), and each byte
// that is not UTF-8 by ⟨invalid byte⟩: what the person reads is what
// the tool gets, in the order the tool gets it.
func visible(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return unseen(r) || r == utf8.RuneError })
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		switch {
		case unseen(r):
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		case r == utf8.RuneError:
			b.WriteString("⟨invalid byte⟩")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// visibleJSON returns doc, a JSON text, with each unseen character
// written as its JSON escape (\u202e): the same JSON value, shown as it
// reads. Outside strings, JSON allows no such character, so every one
// it replaces is inside a string.
func visibleJSON(doc string) string {
	if !strings.ContainsFunc(doc, unseen) {
		return doc
	}
	var b strings.Builder
	b.Grow(len(doc) + 16)
	for _, r := range doc {
		switch {
		case !unseen(r):
			b.WriteRune(r)
		case r > 0xffff:
			hi, lo := utf16Pair(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// utf16Pair returns the UTF-16 surrogate pair of r, above U+FFFF.
func utf16Pair(r rune) (hi, lo rune) {
	r -= 0x10000
	return 0xd800 + r>>10, 0xdc00 + r&0x3ff
}
