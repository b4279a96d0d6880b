package strictschema

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"
)

// Decode parses one JSON document into a tree of map[string]any, []any,
// string, json.Number (the literal as written), bool and nil. Duplicate
// member names, invalid UTF-8 and trailing data are errors. The strings of
// the tree share one copy of raw's bytes.
func Decode(raw []byte) (any, error) {
	d := decoder{scanner: scanner{s: string(raw)}}
	v, ok := d.value(0)
	if !ok {
		return nil, syntaxError(d.i)
	}
	if !d.end() {
		return nil, syntaxError(d.i)
	}
	return v, nil
}

// syntaxError is the offset of the first byte that does not continue one
// JSON value: a syntax error, a member name given twice, invalid UTF-8 or
// data after the value.
type syntaxError int

func (e syntaxError) Error() string {
	return "invalid JSON at byte offset " + strconv.Itoa(int(e))
}

// decoder builds a tree from text read by the scanner's rules.
type decoder struct{ scanner }

func (d *decoder) value(depth int) (any, bool) {
	switch d.peek() {
	case '{':
		return d.object(depth + 1)
	case '[':
		return d.array(depth + 1)
	case '"':
		s, ok := d.text()
		return boxed(s), ok
	case 't':
		return true, d.literal("true")
	case 'f':
		return false, d.literal("false")
	case 'n':
		return nil, d.literal("null")
	}
	start := d.i
	if !d.number() {
		return nil, false
	}
	return json.Number(d.s[start:d.i]), true
}

// typeNames are the type names as interface values made once: a schema
// names types often, and an interface value of a string costs an
// allocation.
var typeNames = [...]any{"string", "object", "array", "integer", "number", "boolean", "null"}

// boxed returns s as an interface value, one of typeNames for a type name.
func boxed(s string) any {
	for _, t := range typeNames {
		if t.(string) == s {
			return t
		}
	}
	return s
}

// text reads a string: a part of the text when it holds no escape.
func (d *decoder) text() (string, bool) {
	raw, escaped, ok := d.str()
	if escaped {
		raw = unquote(raw)
	}
	return raw, ok
}

func (d *decoder) object(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++ // {
	if d.peek() == '}' {
		d.i++
		return map[string]any{}, true
	}
	// The first members are gathered in a list, so that the map of a
	// schema node, which has a few, is made at its size; past fewMembers
	// they go into the map directly, so that a duplicate is found by
	// lookup, not by a scan.
	type entry struct {
		name  string
		value any
	}
	var small [fewMembers]entry
	members := small[:0]
	var m map[string]any
	for {
		if d.peek() != '"' {
			return nil, false
		}
		start := d.i
		name, ok := d.text()
		if !ok {
			return nil, false
		}
		dup := false
		if m != nil {
			_, dup = m[name]
		} else {
			dup = slices.ContainsFunc(members, func(e entry) bool { return e.name == name })
		}
		if dup {
			d.i = start
			return nil, false
		}
		if d.peek() != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		switch {
		case m != nil:
			m[name] = v
		case len(members) < fewMembers:
			members = append(members, entry{name, v})
		default:
			m = make(map[string]any, 2*fewMembers)
			for _, e := range members {
				m[e.name] = e.value
			}
			m[name] = v
		}
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			if m == nil {
				m = make(map[string]any, len(members))
				for _, e := range members {
					m[e.name] = e.value
				}
			}
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *decoder) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++ // [
	var small [16]any
	items := small[:0]
	if d.peek() == ']' {
		d.i++
		return []any{}, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		items = append(items, v)
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return slices.Clone(items), true
		default:
			return nil, false
		}
	}
}

// Encode writes a tree made by Decode (or built of the same types) as
// compact JSON, object members sorted by name.
func Encode(v any) []byte {
	return appendValue(nil, v)
}

func appendValue(b []byte, v any) []byte {
	switch x := v.(type) {
	case map[string]any:
		b = append(b, '{')
		for i, k := range sortedKeys(x) {
			if i > 0 {
				b = append(b, ',')
			}
			b, _ = jsontext.AppendQuote(b, k)
			b = append(b, ':')
			b = appendValue(b, x[k])
		}
		return append(b, '}')
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case string:
		b, _ = jsontext.AppendQuote(b, x)
		return b
	case json.Number:
		return append(b, x...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case nil:
		return append(b, "null"...)
	}
	// Only the types above are built by this package.
	raw, _ := json.Marshal(v)
	return append(b, raw...)
}
