package desk

import (
	"encoding/json"
	"math/big"
	"strconv"
	"strings"

	model "github.com/agentcontract/tool/desk/form"
	"github.com/agentcontract/tool/internal/errprefix"
)

// The answer form: a response schema that package form reads as a form
// (MCP's elicitation subset, and the desk's extras: a bare boolean is an
// Approve button, a root value one input, exclusive bounds on numbers)
// is rendered as inputs; any other schema becomes a JSON editor. Either
// way the server checks the answer against the schema before anything
// runs. This file only renders: what is a form, and what answer the
// values make, is package form's.

// readOptions are the extras the desk renders beyond MCP's subset.
var readOptions = model.Options{Approve: true, Value: true, ExclusiveBounds: true}

// form is the answer form of one response schema, as the page shows it.
type form struct {
	// Approve: the schema is a boolean; the form is an Approve button
	// (the answer true) beside Decline.
	Approve bool
	// Root: the schema is one value (not an object), in Fields[0].
	Root bool
	// Fields are the inputs: the members of an object schema, in order.
	Fields []field
	// JSON: the schema is outside the subset; the answer is typed as JSON.
	JSON bool
	// JSONText is the JSON editor's content.
	JSONText string
	// Title and Description are the schema's own.
	Title, Description string
	// read is the form as package form read it.
	read model.Form
}

// field is one input of a form.
type field struct {
	Name        string // the member's name, "" for a root value
	Label       string // what the person reads: its title, its name, or "Your answer"
	Named       string // the member's name, shown beside a title that differs from it
	Input       string // the form field's name
	Kind        string // boolean, select, multiselect, string, number, integer
	Type        string // a string's input type: text, email, url or date
	Hint        string // a string's placeholder: how a date-time is written
	Required    bool
	Description string
	Options     []option // a select's or a multi-select's
	Min, Max    string   // inclusive bounds, as the schema writes them
	MinLength   string
	MaxLength   string
	Step        string
	Value       string // what the person entered, kept on refusal; at first the default
}

// option is one choice of a select or a multi-select.
type option struct {
	Value, Label string
	Input        string // a multi-select's checkbox name
	Checked      bool   // a multi-select's checkbox is checked
}

// Checked reports whether the boolean field holds v ("true" or "false").
func (f field) Checked(v string) bool { return f.Value == v }

// inputTypes are the input types of the string formats.
var inputTypes = map[string]string{"": "text", "email": "email", "uri": "url", "date": "date", "date-time": "text"}

// newForm returns the form of schema, an answer schema in JSON.
func newForm(schema []byte) form {
	m, err := model.Read(schema, readOptions)
	if err != nil {
		return form{JSON: true, Description: describe(schema)}
	}
	f := form{Approve: m.Shape == model.ShapeApprove, Root: m.Shape == model.ShapeValue, Title: m.Title, Description: m.Description, read: m}
	for _, mf := range m.Fields {
		input := "m." + mf.Name
		if f.Root {
			input = "answer"
		}
		f.Fields = append(f.Fields, newField(mf, input))
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

// newField returns the input of mf, named input.
func newField(mf model.Field, input string) field {
	fd := field{
		Name: mf.Name, Label: mf.Title, Input: input, Kind: string(mf.Kind), Required: mf.Required, Description: mf.Description,
		Min: string(mf.Minimum), Max: string(mf.Maximum), MinLength: string(mf.MinLength), MaxLength: string(mf.MaxLength),
	}
	switch {
	case input == "answer":
		fd.Label = "Your answer"
	case fd.Label == "":
		fd.Label = mf.Name
	case fd.Label != mf.Name:
		fd.Named = mf.Name
	}
	switch mf.Kind {
	case model.KindString:
		fd.Type = inputTypes[mf.Format]
		if mf.Format == "date-time" {
			fd.Hint = "2006-01-02T15:04:05Z"
		}
	case model.KindNumber:
		fd.Step = "any"
	case model.KindInteger:
		fd.Step = "1"
		// An exclusive bound of an integer is the next integer in.
		if mf.ExclusiveMinimum != "" {
			fd.Min = tighter(fd.Min, nextInteger(string(mf.ExclusiveMinimum), 1), 1)
		}
		if mf.ExclusiveMaximum != "" {
			fd.Max = tighter(fd.Max, nextInteger(string(mf.ExclusiveMaximum), -1), -1)
		}
	}
	var chosen []string
	for i, o := range mf.Options {
		fd.Options = append(fd.Options, option{Value: o.Value, Label: o.Label(), Input: "c." + strconv.Itoa(i) + "." + input})
	}
	switch {
	case mf.Default == nil:
	case mf.Kind == model.KindMultiSelect:
		_ = json.Unmarshal(mf.Default, &chosen)
		set := make(map[string]bool, len(chosen))
		for _, c := range chosen {
			set[c] = true
		}
		for i := range fd.Options {
			fd.Options[i].Checked = set[fd.Options[i].Value]
		}
	case mf.Kind == model.KindString || mf.Kind == model.KindSelect:
		_ = json.Unmarshal(mf.Default, &fd.Value)
	default: // a boolean or a number: its JSON is what the input holds
		fd.Value = string(mf.Default)
	}
	return fd
}

// formError is a value the person typed that is not of its field's
// kind; its text says which and why.
type formError struct{ msg string }

func (e *formError) Error() string { return e.msg }

// answer builds the answer document from the values the person posted,
// and keeps them in the form's fields so that a refused answer shows
// them again.
func (f *form) answer(get func(string) string) ([]byte, error) {
	if f.JSON {
		f.JSONText = get("json")
		if strings.TrimSpace(f.JSONText) == "" {
			return nil, &formError{"the answer is empty: type a JSON value"}
		}
		return []byte(f.JSONText), nil
	}
	values := make(map[string][]string, len(f.Fields))
	for i := range f.Fields {
		fd := &f.Fields[i]
		if fd.Kind != string(model.KindMultiSelect) {
			fd.Value = get(fd.Input)
			values[fd.Name] = []string{fd.Value}
			continue
		}
		var chosen []string
		for j := range fd.Options {
			o := &fd.Options[j]
			v := get(o.Input)
			o.Checked = v != ""
			if o.Checked {
				chosen = append(chosen, v)
			}
		}
		values[fd.Name] = chosen
	}
	doc, err := f.read.Answer(values)
	if err != nil {
		return nil, &formError{errprefix.Detail(err, model.ErrInvalidValues)}
	}
	return doc, nil
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
