package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// Bounds on the number tokens Read takes. No tool.Schema holds a longer
// token or a larger exponent (its numbers fit a float64); refusing them
// keeps reading a hostile schema cheap.
const (
	maxNumberLen = 100
	maxExponent  = 1000
)

// exact returns the exact value of n, a JSON number token, when it is
// within the bounds above.
func exact(n json.Number) (*big.Rat, bool) {
	s := string(n)
	if s == "" || len(s) > maxNumberLen {
		return nil, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e > maxExponent || e < -maxExponent {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// number reads the number schema[key], "" when it is absent.
func number(schema map[string]any, key string) (json.Number, error) {
	n, _, err := numberValue(schema, key)
	return n, err
}

func numberValue(schema map[string]any, key string) (json.Number, *big.Rat, error) {
	v, ok := schema[key]
	if !ok {
		return "", nil, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		return "", nil, fmt.Errorf("%q must be a number", key)
	}
	r, ok := exact(n)
	if !ok {
		return "", nil, fmt.Errorf("%q must be a number of at most %d characters, its exponent within ±%d", key, maxNumberLen, maxExponent)
	}
	return n, r, nil
}

// numberBounds reads the bounds lo and hi of a number, and refuses a lo
// above hi: no value would do.
func numberBounds(schema map[string]any, lo, hi string) (json.Number, json.Number, error) {
	l, lr, err := numberValue(schema, lo)
	if err != nil {
		return "", "", err
	}
	h, hr, err := numberValue(schema, hi)
	if err != nil {
		return "", "", err
	}
	if lr != nil && hr != nil && lr.Cmp(hr) > 0 {
		return "", "", fmt.Errorf("%q (%s) is more than %q (%s)", lo, l, hi, h)
	}
	return l, h, nil
}

// countBounds reads the bounds lo and hi of a length or a count, each a
// non-negative integer, written as an integer whatever form the schema
// gave it (5.0 is 5), and refuses a lo above hi.
func countBounds(schema map[string]any, lo, hi string) (json.Number, json.Number, error) {
	count := func(key string) (json.Number, *big.Rat, error) {
		n, r, err := numberValue(schema, key)
		if err != nil || r == nil {
			return n, r, err
		}
		if !r.IsInt() || r.Sign() < 0 {
			return "", nil, fmt.Errorf("%q must be a non-negative integer", key)
		}
		return json.Number(r.Num().String()), r, nil
	}
	l, lr, err := count(lo)
	if err != nil {
		return "", "", err
	}
	h, hr, err := count(hi)
	if err != nil {
		return "", "", err
	}
	if lr != nil && hr != nil && lr.Cmp(hr) > 0 {
		return "", "", fmt.Errorf("%q (%s) is more than %q (%s)", lo, l, hi, h)
	}
	return l, h, nil
}

// readDefault checks that d, a property's "default", is a value of the
// field's kind, and returns its JSON.
func (fd Field) readDefault(d any) (json.RawMessage, error) {
	ok := false
	var want string
	switch fd.Kind {
	case KindBoolean:
		_, ok = d.(bool)
		want = "true or false"
	case KindString:
		_, ok = d.(string)
		want = "a string"
	case KindNumber, KindInteger:
		n, isNumber := d.(json.Number)
		r, fits := exact(n)
		ok = isNumber && fits && (fd.Kind == KindNumber || r.IsInt())
		want = "a number"
		if fd.Kind == KindInteger {
			want = "an integer"
		}
	case KindSelect:
		s, isString := d.(string)
		ok = isString && fd.optionSet()[s]
		want = "one of the options"
	case KindMultiSelect:
		list, isList := d.([]any)
		options := fd.optionSet()
		ok = isList && !slices.ContainsFunc(list, func(v any) bool {
			s, isString := v.(string)
			return !isString || !options[s]
		})
		want = "an array of the options"
	}
	if !ok {
		return nil, fmt.Errorf("\"default\" must be %s", want)
	}
	return marshal(d)
}

// optionSet returns the values of the field's options.
func (fd Field) optionSet() map[string]bool {
	set := make(map[string]bool, len(fd.Options))
	for _, o := range fd.Options {
		set[o.Value] = true
	}
	return set
}

// marshal returns the JSON of v, with <, > and & as they are (the answer
// and the default are data, not HTML).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
