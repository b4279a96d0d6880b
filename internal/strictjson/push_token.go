package strictjson

import "unicode/utf8"

// The tokens of a Push that span pieces: strings, with their escapes and
// UTF-8 sequences, and numbers.

// openString starts a string or member name at its opening quote.
func (p *Push) openString(name bool) {
	p.start = p.pos
	p.name = name
	p.state = pString
	p.text = p.text[:0]
	p.whole = true
	p.runes = 0
}

// keep appends decoded content to the kept text, up to the limit.
func (p *Push) keep(b []byte) {
	room := p.limit - len(p.text)
	if len(b) > room {
		p.whole = false
		b = b[:max(room, 0)]
	}
	p.text = append(p.text, b...)
}

// stringBytes reads the content of a string from data, up to the next
// byte that needs a state of its own.
func (p *Push) stringBytes(data []byte) (int, error) {
	i := 0
	for i < len(data) {
		c := data[i]
		if c == '"' || c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	if i > 0 {
		p.keep(data[:i])
		p.runes += i
		p.grew = true
		return i, nil
	}
	c := data[0]
	switch {
	case c == '"':
		p.state = p.afterString()
		p.pos++ // the Handler sees the offset after the quote
		var err error
		if p.name {
			err = p.h.Name(p.text, p.whole)
		} else {
			err = p.h.String(p.text, p.whole, p.runes)
		}
		p.pos--
		return 1, err
	case c == '\\':
		p.escape = p.pos
		p.state = pEscape
		return 1, nil
	case c < 0x20:
		return 0, p.failf("control character %s must be escaped in a string", quoteByte(c))
	}
	need := 0
	switch {
	case 0xC2 <= c && c <= 0xDF:
		need = 2
	case 0xE0 <= c && c <= 0xEF:
		need = 3
	case 0xF0 <= c && c <= 0xF4:
		need = 4
	default:
		return 0, p.fail("invalid UTF-8 in a string")
	}
	p.utf[0], p.utfN, p.utfNeed = c, 1, need
	p.lead = p.pos
	p.state = pUTF8
	return 1, nil
}

// afterString is the state after a string ends.
func (p *Push) afterString() uint8 {
	if p.name {
		return pColon
	}
	return pAfter
}

// utf8Byte reads a continuation byte of a multi-byte UTF-8 sequence,
// refusing exactly the sequences utf8.DecodeRune refuses.
func (p *Push) utf8Byte(c byte) error {
	lo, hi := byte(0x80), byte(0xBF)
	if p.utfN == 1 {
		switch p.utf[0] {
		case 0xE0:
			lo = 0xA0
		case 0xED:
			hi = 0x9F
		case 0xF0:
			lo = 0x90
		case 0xF4:
			hi = 0x8F
		}
	}
	if c < lo || c > hi {
		return p.failAt(p.lead, "invalid UTF-8 in a string")
	}
	p.utf[p.utfN] = c
	if p.utfN++; p.utfN < p.utfNeed {
		return nil
	}
	r, _ := utf8.DecodeRune(p.utf[:p.utfN])
	if IsNoncharacter(r) {
		return p.failfAt(p.lead, "the Unicode noncharacter U+%04X is not allowed", r)
	}
	p.keep(p.utf[:p.utfN])
	p.runes++
	p.grew = true
	p.state = pString
	return nil
}

// escapeByte reads one byte of an escape sequence.
func (p *Push) escapeByte(c byte) error {
	switch p.state {
	case pEscape:
		if b, ok := Unescape(c); ok {
			p.appendRune(rune(b))
			return nil
		}
		if c != 'u' {
			if c <= 0x20 || c >= 0x7F {
				return p.failfAt(p.escape, "invalid escape sequence: a backslash followed by %s", quoteByte(c))
			}
			return p.failfAt(p.escape, "invalid escape sequence \\%c", c)
		}
		p.state, p.hex, p.hexN = pHex, 0, 0
		return nil
	case pLowSlash:
		if c != '\\' {
			return p.failfAt(p.escape, `lone high surrogate \u%04X`, p.high)
		}
		p.state = pLowU
		return nil
	case pLowU:
		if c != 'u' {
			return p.failfAt(p.escape, `lone high surrogate \u%04X`, p.high)
		}
		p.state, p.hex, p.hexN = pLowHex, 0, 0
		return nil
	}
	d, ok := hexDigit(c)
	if !ok {
		if p.state == pLowHex {
			return p.failfAt(p.escape, `lone high surrogate \u%04X`, p.high)
		}
		return p.failAt(p.escape, `invalid \u escape, expected four hexadecimal digits`)
	}
	p.hex = p.hex<<4 | d
	if p.hexN++; p.hexN < 4 {
		return nil
	}
	r := p.hex
	if p.state == pLowHex {
		if r < 0xDC00 || r > 0xDFFF {
			return p.failfAt(p.escape, `lone high surrogate \u%04X`, p.high)
		}
		r = 0x10000 + (p.high-0xD800)<<10 + (r - 0xDC00)
	} else {
		switch {
		case 0xDC00 <= r && r <= 0xDFFF:
			return p.failfAt(p.escape, `lone low surrogate \u%04X`, r)
		case 0xD800 <= r && r <= 0xDBFF:
			p.high, p.state = r, pLowSlash
			return nil
		}
	}
	if IsNoncharacter(r) {
		return p.failfAt(p.escape, "the Unicode noncharacter U+%04X is not allowed", r)
	}
	p.appendRune(r)
	return nil
}

// appendRune keeps the rune an escape stands for and returns to the
// string.
func (p *Push) appendRune(r rune) {
	var b [utf8.UTFMax]byte
	p.keep(utf8.AppendRune(b[:0], r))
	p.runes++
	p.grew = true
	p.state = pString
}

func hexDigit(c byte) (rune, bool) {
	switch {
	case '0' <= c && c <= '9':
		return rune(c - '0'), true
	case 'a' <= c && c <= 'f':
		return rune(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return rune(c-'A') + 10, true
	}
	return 0, false
}

// numberByte reads the next byte of a number, or ends the number before
// a byte that cannot continue it (consuming nothing then).
func (p *Push) numberByte(c byte) (int, error) {
	digit := '0' <= c && c <= '9'
	next := p.nums
	switch p.nums {
	case nMinus:
		switch {
		case c == '0':
			next = nZero
		case digit:
			next = nInt
		default:
			return 0, p.fail("invalid number, expected a digit")
		}
	case nZero, nInt, nFrac:
		switch {
		case digit && p.nums != nZero:
		case c == '.' && p.nums != nFrac:
			next = nDot
		case c == 'e' || c == 'E':
			next = nExp
		default:
			return 0, p.number()
		}
	case nDot:
		if !digit {
			return 0, p.fail("invalid number, expected a digit after the decimal point")
		}
		next = nFrac
	case nExp:
		switch {
		case c == '+' || c == '-':
			next = nSign
		case digit:
			next = nExpDig
		default:
			return 0, p.fail("invalid number, expected a digit in the exponent")
		}
	case nSign:
		if !digit {
			return 0, p.fail("invalid number, expected a digit in the exponent")
		}
		next = nExpDig
	case nExpDig:
		if !digit {
			return 0, p.number()
		}
	}
	if p.numN == MaxNumberLen {
		return 0, p.failfAt(p.start, "number is longer than %d characters", MaxNumberLen)
	}
	p.num[p.numN] = c
	p.numN++
	p.nums = next
	return 1, nil
}

// number ends the number token read, checks it as Scanner.Number does,
// and gives it to the Handler.
func (p *Push) number() error {
	var s Scanner
	s.Reset(p.num[:p.numN])
	token, err := s.Number()
	if err != nil {
		e := err.(*Error)
		e.Offset += p.start
		return e
	}
	p.state = pAfter
	return p.h.Number(token)
}
