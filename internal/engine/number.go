package engine

import (
	"math/big"
	"math/bits"
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/strictjson"
)

// number is a JSON number token, compared exactly.
type number struct {
	text    string
	decimal strictjson.Decimal
	parsed  bool // decimal holds the value of text
}

// cost is the steps one exact comparison of the number takes.
func (x *number) cost() int {
	return costNumber + len(x.text)/bytesPerStep
}

func (x *number) exact() strictjson.Decimal {
	if !x.parsed {
		x.decimal, x.parsed = strictjson.ParseDecimal(x.text), true
	}
	return x.decimal
}

// rat returns the number as the full validator holds it, for a message.
func (x *number) rat() *big.Rat {
	r, _ := new(big.Rat).SetString(x.text)
	return r
}

// small parses a plain integer token of at most 18 digits.
func (x *number) small() (int64, bool) {
	s := x.text
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || (i == 0 && c == '-' && len(s) > 1)) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// float returns the number rounded to a float64 when that is quick: a
// short token whose exponent is far from the subnormal range, where
// strconv.ParseFloat takes microseconds.
func (x *number) float() (float64, bool) {
	if len(x.text) > 24 {
		return 0, false
	}
	if i := strings.IndexAny(x.text, "eE"); i >= 0 {
		exp, err := strconv.Atoi(strings.TrimPrefix(x.text[i+1:], "+"))
		if err != nil || exp < -280 || exp > 308 {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(x.text, 64)
	return f, err == nil
}

// cmp compares x with l like big.Rat.Cmp. Rounding to float64 keeps order,
// so floats that differ decide; equal floats are compared exactly.
func (x *number) cmp(l *limit) int {
	if l.rat.IsInt() && l.rat.Num().IsInt64() {
		if n, ok := x.small(); ok {
			return cmpInt(n, l.rat.Num().Int64())
		}
	}
	if f, ok := x.float(); ok {
		switch {
		case f < l.float:
			return -1
		case f > l.float:
			return 1
		}
	}
	return x.exact().Cmp(l.exact)
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// divisionCost is the steps multipleOf takes: arithmetic on integers of
// as many digits as the two numbers have.
func (x *number) divisionCost(m *multiple) int {
	digits := len(x.text) + len(m.exact.Digits)
	return x.cost() + digits*digits/64
}

// multipleOf reports whether x divided by m is an integer. With x =
// X × 10^a and m = M × 10^b for integers X and M, that is whether M
// divides X × 10^(a-b) when a ≥ b, computed modulo M so that a large
// exponent costs nothing; and whether M × 10^(b-a) divides X otherwise,
// which needs X to have more digits than that divisor.
func (x *number) multipleOf(m *multiple) bool {
	if n, ok := x.small(); ok && m.rat.IsInt() && m.rat.Num().IsInt64() {
		return n%m.rat.Num().Int64() == 0
	}
	d := x.exact()
	if d.IsZero() {
		return true
	}
	a := d.Exp - len(d.Digits)
	b := m.exact.Exp - len(m.exact.Digits)
	if a >= b && len(d.Digits) <= 18 && len(m.exact.Digits) <= 18 {
		x, _ := strconv.ParseUint(d.Digits, 10, 64)
		m, _ := strconv.ParseUint(m.exact.Digits, 10, 64)
		return mulMod(x%m, powMod(10, a-b, m), m) == 0
	}
	xi, _ := new(big.Int).SetString(d.Digits, 10)
	mi, _ := new(big.Int).SetString(m.exact.Digits, 10)
	ten := big.NewInt(10)
	if a >= b {
		power := new(big.Int).Exp(ten, big.NewInt(int64(a-b)), mi)
		return power.Mul(power, xi).Rem(power, mi).Sign() == 0
	}
	if b-a+len(m.exact.Digits)-1 > len(d.Digits) {
		return false // the divisor is larger than X
	}
	mi.Mul(mi, new(big.Int).Exp(ten, big.NewInt(int64(b-a)), nil))
	return new(big.Int).Rem(xi, mi).Sign() == 0
}

// mulMod returns a × b mod m without overflow.
func mulMod(a, b, m uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	_, rem := bits.Div64(hi%m, lo, m)
	return rem
}

// powMod returns base^exp mod m by squaring.
func powMod(base uint64, exp int, m uint64) uint64 {
	result, base := 1%m, base%m
	for ; exp > 0; exp >>= 1 {
		if exp&1 == 1 {
			result = mulMod(result, base, m)
		}
		base = mulMod(base, base, m)
	}
	return result
}
