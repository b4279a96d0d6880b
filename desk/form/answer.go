package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Answer builds the answer document from values, what a person entered
// in f: values[name] holds the entries of the field of that Name ("" for
// the field of a ShapeValue form). A ShapeApprove form's answer is true,
// whatever values holds.
//
// A field other than a multi-select takes at most one entry; none, or
// "", leaves it empty. An empty field is left out of an object; a
// required one is refused, except a required string, whose answer is "".
// A boolean takes "true" or "false"; a number or an integer a JSON number
// (spaces around it ignored); a select the Value of one of its Options. A
// multi-select takes the Values of the options chosen, each at most once
// counted, and lists them in the options' order; none chosen leaves it
// empty, and a required one is then [].
//
// Answer checks only what makes the entries a JSON value of each field's
// kind: lengths, bounds, formats and counts are the schema's to check
// (a dispatch.Checkpoint's CheckAnswer does), before the answer is used.
//
// Answer only reads f and values, and is safe for concurrent use. When an entry does not do, the error wraps
// ErrInvalidValues and names every such field, by its name quoted ("the
// answer" for a ShapeValue form), in the order of f.Fields, separated by
// "; ". The zero Form, or a ShapeValue form without exactly one field,
// has no answer: the error wraps ErrNotForm.
func (f Form) Answer(values map[string][]string) ([]byte, error) {
	switch f.Shape {
	case ShapeApprove:
		return []byte("true"), nil
	case ShapeObject:
	case ShapeValue:
		if len(f.Fields) != 1 {
			return nil, errprefix.Errorf("%w: a form of shape %q has %d fields, want 1", ErrNotForm, f.Shape, len(f.Fields))
		}
	default:
		return nil, errprefix.Errorf("%w: the form has no shape %q (the zero Form is none)", ErrNotForm, f.Shape)
	}
	root := f.Shape == ShapeValue
	var problems []string
	var b bytes.Buffer
	if !root {
		b.WriteByte('{')
	}
	n := 0
	for _, fd := range f.Fields {
		v, problem := fd.value(values[fd.Name], root)
		switch {
		case problem != "":
			problems = append(problems, problem)
			continue
		case v == nil:
			continue
		case root:
			b.Write(v)
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		name, _ := marshal(fd.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
		n++
	}
	if len(problems) > 0 {
		return nil, errprefix.Errorf("%w: %s", ErrInvalidValues, strings.Join(problems, "; "))
	}
	if !root {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// value returns the JSON of the field's entries, nil when the field is
// left out, or the problem that refuses them.
func (fd Field) value(entries []string, root bool) (json.RawMessage, string) {
	label := strconv.Quote(fd.Name)
	if root {
		label = "the answer"
	}
	if fd.Kind == KindMultiSelect {
		return fd.chosen(entries, label)
	}
	if len(entries) > 1 {
		return nil, fmt.Sprintf("%s takes one value, not %d", label, len(entries))
	}
	v := ""
	if len(entries) == 1 {
		v = entries[0]
	}
	if v == "" {
		switch {
		case fd.Required && fd.Kind == KindString:
			return json.RawMessage(`""`), ""
		case fd.Required:
			return nil, label + " is required"
		}
		return nil, ""
	}
	switch fd.Kind {
	case KindBoolean:
		if v != "true" && v != "false" {
			return nil, label + " must be yes or no"
		}
		return json.RawMessage(v), ""
	case KindNumber, KindInteger:
		t := strings.TrimSpace(v)
		if !json.Valid([]byte(t)) || !isNumber(t) {
			return nil, fmt.Sprintf("%s must be a number, not %s", label, strconv.Quote(shorten(v, 40)))
		}
		return json.RawMessage(t), ""
	case KindSelect:
		if !fd.optionSet()[v] {
			return nil, label + " must be one of the choices"
		}
	case KindString:
	default:
		return nil, fmt.Sprintf("%s is of kind %q, which no form holds", label, fd.Kind)
	}
	s, _ := marshal(v)
	return s, ""
}

// chosen returns the JSON array of the options entries choose, in the
// options' order.
func (fd Field) chosen(entries []string, label string) (json.RawMessage, string) {
	options := fd.optionSet()
	picked := make(map[string]bool, len(entries))
	for _, e := range entries {
		if !options[e] {
			return nil, label + " must be one of the choices"
		}
		picked[e] = true
	}
	if len(picked) == 0 && !fd.Required {
		return nil, ""
	}
	list := make([]string, 0, len(picked))
	for _, o := range fd.Options {
		if picked[o.Value] {
			list = append(list, o.Value)
			delete(picked, o.Value)
		}
	}
	s, _ := marshal(list)
	return s, ""
}

// isNumber reports whether v, valid JSON, is a number.
func isNumber(v string) bool {
	return v != "" && (v[0] == '-' || '0' <= v[0] && v[0] <= '9')
}

// shorten cuts s to at most n runes, marking the cut.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
