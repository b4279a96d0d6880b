package strictjson

import (
	"fmt"
	"unicode/utf8"
)

// Handler is told by a [Push] what it reads, token by token, as the pieces
// of a document arrive. Every method may refuse the document by returning
// an error, which Push then returns from Write and End, unchanged, for
// every later piece: the document can no longer be accepted. The byte
// slices it is given are valid only during the call.
type Handler interface {
	// Value announces a value, by its kind (a Kind constant), before any
	// of it is read: Pos is the offset of its first byte.
	Value(kind byte) error
	// Name gives a member name, decoded: the whole name, or when whole is
	// false its first bytes only (see NewPush). Start is the offset of its
	// opening quote.
	Name(name []byte, whole bool) error
	// String gives a string value at its end, decoded, as Name does, and
	// its length in characters.
	String(content []byte, whole bool, runes int) error
	// Growing gives the length in characters of the string value being
	// read, at the end of every piece that ends inside it.
	Growing(runes int) error
	// Number gives a number token at its end, as Scanner.Number returns
	// it.
	Number(token []byte) error
	// Literal says that true, false or null (by its kind) was read.
	Literal(kind byte) error
	// Close says that the array or object (by its kind) just ended.
	Close(kind byte) error
}

// Push reads one I-JSON document given in pieces of any size, and
// enforces every rule Scanner and Parse enforce, in the same words: a
// document split anywhere is refused by Write or End exactly when Parse
// refuses it whole, with the same offset and reason, except that a number
// token is refused as too long at its 101st byte, where Parse may first
// meet a syntax error further on. A piece is refused as soon as no text
// that begins with the pieces read so far can be a document.
//
// Push keeps no piece: only the state of the token being read, a string's
// first bytes (as many as NewPush allows) and a number token. Its memory
// does not grow with the document.
//
// The zero Push is not usable; NewPush makes one. A Push is not safe for
// concurrent use.
type Push struct {
	h       Handler
	state   uint8
	pos     int // offset of the next byte
	start   int // offset of the token being read
	depth   int
	objects [MaxDepth/8 + 1]byte // bit d: the container at depth d+1 is an object
	err     error

	// Strings.
	name    bool   // the string being read is a member name
	text    []byte // its decoded content, at most limit bytes
	limit   int
	whole   bool // text holds all of the content
	runes   int
	grew    bool // runes changed during the current piece
	escape  int  // offset of the backslash of the escape being read
	hex     rune // digits of a \u escape read so far
	hexN    int
	high    rune // a high surrogate waiting for its low half
	lead    int  // offset of the first byte of the UTF-8 sequence being read
	utf     [utf8.UTFMax]byte
	utfN    int
	utfNeed int

	// Numbers and literals.
	num  [MaxNumberLen]byte
	numN int
	nums uint8  // where in a number
	lit  string // the literal being read
	litN int
}

// States of a Push. Those from pBegin to pEnd are between tokens, where
// white space is skipped; the others are inside a token.
const (
	pBegin     = iota // before the document
	pValue            // a value is expected
	pFirstItem        // after '[': a value or ']'
	pFirstName        // after '{': a member name or '}'
	pName             // after ',' in an object: a member name
	pColon            // after a member name
	pAfter            // after a value
	pEnd              // after the document
	pBOM              // after a first byte 0xEF: a byte-order mark or not
	pString           // inside a string
	pEscape           // after a backslash in a string
	pHex              // inside the digits of a \u escape
	pLowSlash         // after a high surrogate: the backslash of its low half
	pLowU             // the u of its low half
	pLowHex           // the digits of its low half
	pUTF8             // inside a multi-byte UTF-8 sequence
	pNumber           // inside a number
	pLiteral          // inside true, false or null
)

// Where a number is.
const (
	nMinus  = iota // after '-'
	nZero          // after a leading 0
	nInt           // in the integer digits
	nDot           // after '.'
	nFrac          // in the fraction digits
	nExp           // after 'e' or 'E'
	nSign          // after the exponent's sign
	nExpDig        // in the exponent digits
)

// NewPush returns a Push that reports to h. It keeps at most limit bytes
// of a string's decoded content: a longer one is given to h cut, with
// whole false.
func NewPush(h Handler, limit int) *Push {
	p := new(Push)
	p.Reset(h, limit)
	return p
}

// Reset makes p read a new document, reporting to h and keeping limit
// bytes of a string, as NewPush does, with the scratch space it has.
func (p *Push) Reset(h Handler, limit int) {
	*p = Push{h: h, limit: max(limit, 0), text: p.text[:0]}
}

// Pos returns the number of bytes read: the offset of the next byte. In a
// call of the Handler it is the offset of the byte that made the call.
func (p *Push) Pos() int { return p.pos }

// Start returns the offset of the first byte of the token last reported
// to the Handler (the opening quote of a string or name).
func (p *Push) Start() int { return p.start }

// Within reports whether the position is inside a member or item of the
// innermost open array or object, where Parse names it in the pointer of
// an error: from a member's name, or from the '[' or ',' before an item,
// to the end of its value. Awaiting reports whether that value has yet to
// begin.
func (p *Push) Within() (within, awaiting bool) {
	switch p.state {
	case pColon:
		return true, false
	case pValue, pFirstItem:
		return true, true
	case pString, pEscape, pHex, pLowSlash, pLowU, pLowHex, pUTF8:
		return !p.name, false
	case pNumber, pLiteral:
		return true, false
	}
	return false, false
}

// Depth returns the number of arrays and objects open.
func (p *Push) Depth() int { return p.depth }

// Err returns the error that refused the document, or nil.
func (p *Push) Err() error { return p.err }

// Write reads the next piece of the document. It returns the error that
// refuses the document, if any: then, and for every later call, the same
// error.
func (p *Push) Write(data []byte) error {
	if p.err != nil {
		return p.err
	}
	p.grew = false
	for i := 0; i < len(data); {
		n, err := p.step(data[i:])
		i += n
		p.pos += n
		if err != nil {
			p.err = err
			return err
		}
	}
	if p.grew && !p.name && p.state >= pString && p.state <= pUTF8 {
		if err := p.h.Growing(p.runes); err != nil {
			p.err = err
			return err
		}
	}
	return nil
}

// End says that the document has no more bytes, and returns the error
// that refuses it, if any, as Parse would: an incomplete document is
// refused there. It must be called once, after the last Write.
func (p *Push) End() error {
	if p.err == nil {
		p.err = p.end()
	}
	return p.err
}

func (p *Push) end() error {
	switch p.state {
	case pBegin, pValue, pFirstItem:
		return p.fail("unexpected end of input, expected a value")
	case pBOM:
		return p.failAt(0, "invalid character byte 0xEF, expected a value")
	case pFirstName, pName:
		return p.fail("unexpected end of input, expected a member name")
	case pColon:
		return p.fail("expected ':' after the member name")
	case pString:
		return p.fail("unexpected end of input inside a string")
	case pEscape:
		return p.failAt(p.escape, "unexpected end of input inside an escape sequence")
	case pHex:
		return p.failAt(p.escape, `invalid \u escape, expected four hexadecimal digits`)
	case pLowSlash, pLowU, pLowHex:
		return p.failfAt(p.escape, `lone high surrogate \u%04X`, p.high)
	case pUTF8:
		return p.failAt(p.lead, "invalid UTF-8 in a string")
	case pLiteral:
		return p.failfAt(p.start, "invalid literal, expected %s", p.lit)
	case pNumber:
		switch p.nums {
		case nMinus:
			return p.fail("invalid number, expected a digit")
		case nDot:
			return p.fail("invalid number, expected a digit after the decimal point")
		case nExp, nSign:
			return p.fail("invalid number, expected a digit in the exponent")
		}
		if err := p.number(); err != nil {
			return err
		}
		return p.end()
	case pAfter:
		if p.depth > 0 {
			return p.failf("unexpected end of input, expected ',' or '%c'", p.closer())
		}
	}
	return nil // pEnd, or after the document's value
}

func (p *Push) fail(reason string) error { return p.failAt(p.pos, reason) }

func (p *Push) failAt(offset int, reason string) error {
	return &Error{Offset: offset, Reason: reason}
}

func (p *Push) failf(format string, args ...any) error {
	return p.failfAt(p.pos, format, args...)
}

func (p *Push) failfAt(offset int, format string, args ...any) error {
	return &Error{Offset: offset, Reason: fmt.Sprintf(format, args...)}
}

// inObject reports whether the innermost open container is an object.
func (p *Push) inObject() bool {
	d := p.depth - 1
	return p.objects[d/8]&(1<<(d%8)) != 0
}

// closer is the byte that closes the innermost open container.
func (p *Push) closer() byte {
	if p.inObject() {
		return '}'
	}
	return ']'
}

// step reads from the start of data, which is not empty, and returns how
// many bytes it consumed: at least one unless it fails. White space
// between tokens is skipped first; the other bytes between tokens are read
// here, those of the document's start by beginDocument, and those of a
// token by the reader of its kind.
func (p *Push) step(data []byte) (int, error) {
	c := data[0]
	if p.state <= pEnd && IsSpace(c) {
		return 1, nil
	}
	switch p.state {
	case pBegin, pBOM:
		return p.beginDocument(c)
	case pValue:
		return p.value(c)
	case pFirstItem:
		if c == ']' {
			return 1, p.close()
		}
		return p.value(c)
	case pFirstName, pName:
		if c == '}' && p.state == pFirstName {
			return 1, p.close()
		}
		if c != '"' {
			return 0, p.failf("invalid character %s, expected a member name", quoteByte(c))
		}
		p.openString(true)
		return 1, nil
	case pColon:
		if c != ':' {
			return 0, p.fail("expected ':' after the member name")
		}
		p.state = pValue
		return 1, nil
	case pAfter:
		if p.depth == 0 {
			p.state = pEnd
			return 0, nil
		}
		end := p.closer()
		switch c {
		case ',':
			if end == '}' {
				p.state = pName
			} else {
				p.state = pValue
			}
			return 1, nil
		case end:
			return 1, p.close()
		}
		return 0, p.failf("invalid character %s, expected ',' or '%c'", quoteByte(c), end)
	case pEnd:
		return 0, p.fail("unexpected data after the JSON value")
	case pString:
		return p.stringBytes(data)
	case pEscape, pHex, pLowSlash, pLowU, pLowHex:
		return 1, p.escapeByte(c)
	case pUTF8:
		return 1, p.utf8Byte(c)
	case pNumber:
		return p.numberByte(c)
	case pLiteral:
		if c != p.lit[p.litN] {
			return 0, p.failfAt(p.start, "invalid literal, expected %s", p.lit)
		}
		if p.litN++; p.litN < len(p.lit) {
			return 1, nil
		}
		p.state = pAfter
		p.pos++ // the Handler sees the offset after the literal
		err := p.h.Literal(p.lit[0])
		p.pos--
		return 1, err
	}
	return 0, p.fail("internal error: unknown state")
}

// beginDocument reads byte c, not white space, before the document's
// value: the value's first byte, or a byte of a byte-order mark, which is
// refused once whole (a first 0xEF that no mark follows is an invalid
// character).
func (p *Push) beginDocument(c byte) (int, error) {
	if p.state == pBOM {
		want := [3]byte{0xEF, 0xBB, 0xBF}
		if c != want[p.utfN] {
			return 0, p.failAt(0, "invalid character byte 0xEF, expected a value")
		}
		if p.utfN++; p.utfN == 3 {
			return 0, p.failAt(0, "a byte-order mark is not allowed")
		}
		return 1, nil
	}
	if c == 0xEF && p.pos == 0 {
		p.state = pBOM
		p.utfN = 1
		return 1, nil
	}
	return p.value(c)
}

// value starts the value whose first byte is c.
func (p *Push) value(c byte) (int, error) {
	var kind byte
	switch c {
	case '{', '[', '"', 't', 'f', 'n':
		kind = c
	default:
		if c != '-' && (c < '0' || c > '9') {
			return 0, p.failf("invalid character %s, expected a value", quoteByte(c))
		}
		kind = KindNumber
	}
	p.start = p.pos
	if err := p.h.Value(kind); err != nil {
		return 0, err
	}
	switch kind {
	case '{', '[':
		if p.depth >= MaxDepth {
			return 0, p.failf("nesting is deeper than %d levels", MaxDepth)
		}
		d := p.depth
		if kind == '{' {
			p.objects[d/8] |= 1 << (d % 8)
			p.state = pFirstName
		} else {
			p.objects[d/8] &^= 1 << (d % 8)
			p.state = pFirstItem
		}
		p.depth++
	case '"':
		p.openString(false)
	case 't':
		p.state, p.lit, p.litN = pLiteral, "true", 1
	case 'f':
		p.state, p.lit, p.litN = pLiteral, "false", 1
	case 'n':
		p.state, p.lit, p.litN = pLiteral, "null", 1
	default:
		p.state, p.numN = pNumber, 1
		p.num[0] = c
		switch c {
		case '-':
			p.nums = nMinus
		case '0':
			p.nums = nZero
		default:
			p.nums = nInt
		}
	}
	return 1, nil
}

// close ends the innermost container, whose closing byte is at the
// position.
func (p *Push) close() error {
	kind := byte(KindArray)
	if p.inObject() {
		kind = KindObject
	}
	p.depth--
	p.state = pAfter
	p.pos++ // the Handler sees the offset after the bracket
	err := p.h.Close(kind)
	p.pos--
	return err
}
