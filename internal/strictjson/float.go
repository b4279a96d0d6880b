package strictjson

import (
	"math/big"
	"strings"
)

// magnitude says whether a nonzero number token rounds to a finite,
// nonzero float64.
type magnitude int

const (
	fits magnitude = iota
	overflows
	underflows
)

// decimal is the exact value 0.digits × 10^exp of a nonzero number: digits
// has no leading or trailing zeros.
type decimal struct {
	digits string
	exp    int
}

// Decimal is the exact value of a JSON number token in a canonical form:
// zero is the zero Decimal; any other value is ±0.Digits × 10^Exp, where
// Digits holds no leading or trailing zeros. Two tokens denote the same
// number exactly when their Decimals are equal.
type Decimal struct {
	Negative bool
	Digits   string
	Exp      int
}

// ParseDecimal returns the Decimal of a valid JSON number token, as the
// parser admits them. Exponents beyond a million saturate.
func ParseDecimal(token string) Decimal {
	d, nonzero := parseDecimal(token)
	if !nonzero {
		return Decimal{}
	}
	return Decimal{Negative: token[0] == '-', Digits: d.digits, Exp: d.exp}
}

// IsZero reports whether d is zero.
func (d Decimal) IsZero() bool { return d.Digits == "" }

// IsInteger reports whether d has no fractional part.
func (d Decimal) IsInteger() bool { return d.IsZero() || len(d.Digits) <= d.Exp }

// Cmp compares d and e by value like strings.Compare.
func (d Decimal) Cmp(e Decimal) int {
	sign := func(x Decimal) int {
		switch {
		case x.IsZero():
			return 0
		case x.Negative:
			return -1
		}
		return 1
	}
	if sd, se := sign(d), sign(e); sd != se || sd == 0 {
		return max(-1, min(1, sd-se))
	}
	c := compareDecimal(decimal{d.Digits, d.Exp}, decimal{e.Digits, e.Exp})
	if d.Negative {
		return -c
	}
	return c
}

// The limits of a float64, exactly. A value at or above overflowAt rounds
// to infinity (the halfway point between the largest float64 and 2^1024
// rounds to the even neighbour, 2^1024); a value at or below underflowAt,
// half the smallest subnormal, rounds to zero.
var overflowAt, underflowAt = limitDecimals()

func limitDecimals() (over, under decimal) {
	// 2^1024 - 2^970 = 2^970 × (2^54 - 1).
	o := new(big.Int).Lsh(big.NewInt(1<<54-1), 970).String()
	over = decimal{digits: strings.TrimRight(o, "0"), exp: len(o)}
	// 2^-1075 = 5^1075 × 10^-1075.
	u := new(big.Int).Exp(big.NewInt(5), big.NewInt(1075), nil).String()
	under = decimal{digits: strings.TrimRight(u, "0"), exp: len(u) - 1075}
	return over, under
}

// floatRange classifies a valid, nonzero JSON number token with an
// exponent by exact decimal comparison with the limits of a float64. It
// never converts the token: strconv.ParseFloat takes about 14 µs for a
// subnormal such as 3e-324, and a megabyte of them would take seconds.
func floatRange(token []byte) magnitude {
	d, ok := parseDecimal(token)
	switch {
	case !ok:
		return fits // zero; callers handle it before
	case d.exp > -300 && d.exp < 300:
		return fits
	case compareDecimal(d, overflowAt) >= 0:
		return overflows
	case compareDecimal(d, underflowAt) <= 0:
		return underflows
	}
	return fits
}

// parseDecimal reads a valid JSON number token as 0.digits × 10^exp,
// ignoring its sign. It reports false for a zero. Exponents beyond a
// million saturate: every such value is out of range either way. The
// digits share the token's memory unless it has a fraction.
func parseDecimal[T string | []byte](token T) (decimal, bool) {
	i := 0
	if token[0] == '-' {
		i++
	}
	start := i
	for i < len(token) && token[i] != 'e' && token[i] != 'E' {
		i++
	}
	mantissa := string(token[start:i]) // no copy for a string token
	exp := 0
	if i < len(token) {
		i++ // 'e' or 'E'
		negative := false
		if token[i] == '+' || token[i] == '-' {
			negative = token[i] == '-'
			i++
		}
		for ; i < len(token); i++ {
			if exp < 1_000_000 {
				exp = exp*10 + int(token[i]-'0')
			}
		}
		if negative {
			exp = -exp
		}
	}
	point := len(mantissa) // digits before the decimal point
	if dot := strings.IndexByte(mantissa, '.'); dot >= 0 {
		point = dot
		mantissa = mantissa[:dot] + mantissa[dot+1:]
	}
	digits := strings.TrimLeft(mantissa, "0")
	if digits == "" {
		return decimal{}, false
	}
	lead := len(mantissa) - len(digits)
	return decimal{digits: strings.TrimRight(digits, "0"), exp: point - lead + exp}, true
}

// compareDecimal compares two nonzero decimals like strings.Compare.
func compareDecimal(a, b decimal) int {
	if a.exp != b.exp {
		if a.exp < b.exp {
			return -1
		}
		return 1
	}
	// Neither has trailing zeros, so when one is a prefix of the other the
	// longer one is larger.
	return strings.Compare(a.digits, b.digits)
}
