package desk

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
)

// The answer form: a response schema inside the subset the desk renders
// as inputs becomes a form; any other schema becomes a JSON editor. Either
// way the server checks the answer against the schema before anything
// runs.

// form is the answer form of one response schema.
type form struct {
	// Approve: the schema is a boolean; the form is an Approve button
	// (the answer true) beside Decline.
	Approve bool
	// Root: the schema is one string, number or integer, in Fields[0].
	Root bool
	// Fields are the inputs: the members of an object schema, in order.
	Fields []field
	// JSON: the schema is outside the subset; the answer is typed as JSON.
	JSON bool
	// JSONText is the JSON editor's content.
	JSONText string
	// Description is the schema's own description.
	Description string
}

// field is one input of a form.
type field struct {
	Name        string // the member's name, "" for a root value
	Input       string // the form field's name
	Kind        string // boolean, enum, string, number, integer
	Required    bool
	Description string
	Enum        []string
	Min, Max    string // inclusive bounds, as the schema writes them
	MinLength   string
	MaxLength   string
	Step        string
	Value       string // what the person entered, kept on refusal
}

// Checked reports whether the boolean field holds v ("true" or "false").
func (f field) Checked(v string) bool { return f.Value == v }

// simpleKeys are the keywords of a member the form renders; a member with
// any other keyword goes to the JSON editor.
var simpleKeys = map[string]bool{
	"type": true, "description": true, "title": true, "enum": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true,
}

// objectKeys are the keywords of an object schema the form renders.
var objectKeys = map[string]bool{
	"type": true, "properties": true, "required": true, "additionalProperties": true,
	"description": true, "title": true, "$schema": true,
}

// newForm returns the form of schema, an answer schema in JSON.
func newForm(schema []byte) form {
	f, ok := subsetForm(schema)
	if !ok {
		return form{JSON: true, Description: describe(schema)}
	}
	return f
}

// describe returns the description of schema, if it has one.
func describe(schema []byte) string {
	var s struct {
		Description string `json:"description"`
	}
	_ = json.Unmarshal(schema, &s)
	return s.Description
}

func subsetForm(schema []byte) (form, bool) {
	var root map[string]json.RawMessage
	if json.Unmarshal(schema, &root) != nil {
		return form{}, false
	}
	var typ string
	if json.Unmarshal(root["type"], &typ) != nil {
		return form{}, false
	}
	description := describe(schema)
	switch typ {
	case "boolean":
		if len(root) == 1 || len(root) == 2 && root["description"] != nil {
			return form{Approve: true, Description: description}, true
		}
		return form{}, false
	case "string", "number", "integer":
		fd, ok := newField("", "answer", schema, true)
		if !ok {
			return form{}, false
		}
		fd.Description = ""
		return form{Root: true, Fields: []field{fd}, Description: description}, true
	case "object":
	default:
		return form{}, false
	}
	for k := range root {
		if !objectKeys[k] {
			return form{}, false
		}
	}
	if ap, ok := root["additionalProperties"]; ok && string(bytes.TrimSpace(ap)) != "false" {
		return form{}, false
	}
	var required []string
	if r, ok := root["required"]; ok && json.Unmarshal(r, &required) != nil {
		return form{}, false
	}
	names, values, ok := members(root["properties"])
	if !ok || len(names) == 0 {
		return form{}, false
	}
	for _, r := range required {
		if !slices.Contains(names, r) {
			return form{}, false // a required member the form cannot show
		}
	}
	f := form{Description: description}
	for i, name := range names {
		fd, ok := newField(name, "m."+name, values[i], slices.Contains(required, name))
		if !ok {
			return form{}, false
		}
		f.Fields = append(f.Fields, fd)
	}
	return f, true
}

// members returns the members of a JSON object in the order written.
func members(object []byte) ([]string, []json.RawMessage, bool) {
	if len(object) == 0 {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(object))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	var names []string
	var values []json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok || slices.Contains(names, name) {
			return nil, nil, false
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return nil, nil, false
		}
		names, values = append(names, name), append(values, v)
	}
	return names, values, true
}

// newField returns the input of a member (or of the root value) whose
// schema is s, when it is in the subset.
func newField(name, input string, s []byte, required bool) (field, bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(s, &m) != nil {
		return field{}, false
	}
	for k := range m {
		if !simpleKeys[k] && !(name == "" && objectKeys[k]) {
			return field{}, false
		}
	}
	var typ string
	if json.Unmarshal(m["type"], &typ) != nil {
		return field{}, false
	}
	fd := field{Name: name, Input: input, Kind: typ, Required: required}
	_ = json.Unmarshal(m["description"], &fd.Description)
	number := func(k string) (string, bool) {
		raw, ok := m[k]
		if !ok {
			return "", true
		}
		var n json.Number
		if json.Unmarshal(raw, &n) != nil {
			return "", false
		}
		return n.String(), true
	}
	var ok bool
	switch typ {
	case "boolean":
		return fd, len(m) <= 3 && m["enum"] == nil && m["minimum"] == nil && m["maxLength"] == nil && m["minLength"] == nil && m["maximum"] == nil
	case "string":
		if e, has := m["enum"]; has {
			if json.Unmarshal(e, &fd.Enum) != nil || len(fd.Enum) == 0 {
				return field{}, false
			}
			fd.Kind = "enum"
		}
		if fd.MinLength, ok = number("minLength"); !ok {
			return field{}, false
		}
		if fd.MaxLength, ok = number("maxLength"); !ok {
			return field{}, false
		}
		return fd, m["minimum"] == nil && m["maximum"] == nil && m["exclusiveMinimum"] == nil && m["exclusiveMaximum"] == nil
	case "number", "integer":
		if m["enum"] != nil || m["minLength"] != nil || m["maxLength"] != nil {
			return field{}, false
		}
		if fd.Min, ok = number("minimum"); !ok {
			return field{}, false
		}
		if fd.Max, ok = number("maximum"); !ok {
			return field{}, false
		}
		exMin, ok1 := number("exclusiveMinimum")
		exMax, ok2 := number("exclusiveMaximum")
		if !ok1 || !ok2 {
			return field{}, false
		}
		fd.Step = "any"
		if typ == "integer" {
			fd.Step = "1"
			// An exclusive bound of an integer is the next integer in.
			if exMin != "" {
				fd.Min = tighter(fd.Min, nextInteger(exMin, 1), 1)
			}
			if exMax != "" {
				fd.Max = tighter(fd.Max, nextInteger(exMax, -1), -1)
			}
		}
		return fd, true
	}
	return field{}, false
}

// nextInteger returns the first integer beyond n in direction dir.
func nextInteger(n string, dir int) string {
	r, ok := new(big.Rat).SetString(n)
	if !ok {
		return ""
	}
	q := new(big.Int).Quo(r.Num(), r.Denom()) // truncated toward zero
	next := new(big.Rat).SetInt(q)
	if dir > 0 && next.Cmp(r) <= 0 {
		q.Add(q, big.NewInt(1))
	}
	if dir < 0 && next.Cmp(r) >= 0 {
		q.Sub(q, big.NewInt(1))
	}
	return q.String()
}

// tighter returns the tighter of two bounds in direction dir (1 for a
// minimum, -1 for a maximum); "" is no bound.
func tighter(a, b string, dir int) string {
	if a == "" || b == "" {
		return a + b
	}
	ra, _ := new(big.Rat).SetString(a)
	rb, _ := new(big.Rat).SetString(b)
	if ra == nil || rb == nil {
		return a
	}
	if ra.Cmp(rb)*dir >= 0 {
		return a
	}
	return b
}

// formError is a value the person typed that is not of its field's
// kind; its text says which and why.
type formError struct{ msg string }

func (e *formError) Error() string { return e.msg }

// answer builds the answer document from the values the person posted,
// and keeps them in the form's fields so that a refused answer shows
// them again.
func (f *form) answer(get func(string) string) ([]byte, error) {
	switch {
	case f.Approve:
		return []byte("true"), nil
	case f.JSON:
		f.JSONText = get("json")
		if strings.TrimSpace(f.JSONText) == "" {
			return nil, &formError{"the answer is empty: type a JSON value"}
		}
		return []byte(f.JSONText), nil
	}
	var problems []string
	var b bytes.Buffer
	if !f.Root {
		b.WriteByte('{')
	}
	n := 0
	for i := range f.Fields {
		fd := &f.Fields[i]
		fd.Value = get(fd.Input)
		if fd.Value == "" && (!fd.Required || fd.Kind != "string") {
			if fd.Required {
				problems = append(problems, fmt.Sprintf("%s is required", fd.label()))
			}
			continue
		}
		v, err := fd.encode()
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if f.Root {
			b.Write(v)
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		name, _ := jsonString(fd.Name)
		b.Write(name)
		b.WriteByte(':')
		b.Write(v)
		n++
	}
	if len(problems) > 0 {
		return nil, &formError{strings.Join(problems, "; ")}
	}
	if !f.Root {
		b.WriteByte('}')
	}
	return b.Bytes(), nil
}

// label names a field in a message.
func (fd field) label() string {
	if fd.Name == "" {
		return "the answer"
	}
	return strconv.Quote(fd.Name)
}

// encode returns the JSON of the field's value.
func (fd field) encode() ([]byte, error) {
	switch fd.Kind {
	case "boolean":
		if fd.Value != "true" && fd.Value != "false" {
			return nil, fmt.Errorf("%s must be yes or no", fd.label())
		}
		return []byte(fd.Value), nil
	case "number", "integer":
		v := strings.TrimSpace(fd.Value)
		if !json.Valid([]byte(v)) || !isNumber(v) {
			return nil, fmt.Errorf("%s must be a number, not %s", fd.label(), strconv.Quote(shorten(fd.Value, 40)))
		}
		return []byte(v), nil
	case "enum":
		if !slices.Contains(fd.Enum, fd.Value) {
			return nil, fmt.Errorf("%s must be one of the choices", fd.label())
		}
	}
	return jsonString(fd.Value)
}

// jsonString returns s as a JSON string, with <, > and & as they are (the
// answer is data, not HTML).
func jsonString(s string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
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
