package form

import (
	"encoding/json"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Errors returned by this package. Every error it returns wraps exactly
// one of them, so that [errors.Is] tells them apart.
var (
	// ErrNotForm: Read was given a schema outside the subset it reads as
	// a form, or Answer the zero Form. The message says where (the
	// root, or which property) and what is wrong.
	ErrNotForm = errprefix.New("not a form")
	// ErrInvalidValues: Answer was given values that do not make an
	// answer: a required field left empty, a number that is not one, a
	// choice that is not an option. The message names each such field.
	ErrInvalidValues = errprefix.New("invalid form values")
)

// Options are what Read accepts beyond MCP's elicitation subset. The zero
// Options accept exactly that subset; each field adds one thing, for a
// renderer that can show it (the approval desk sets them all).
type Options struct {
	// Approve reads a schema of type boolean, with at most a "title", a
	// "description" and "$schema", as an approval: a Form of shape
	// ShapeApprove, with no fields, whose answer is true.
	Approve bool
	// Value reads a root schema of type string (a select included),
	// number, integer, boolean or array (a multi-select) as a Form of
	// shape ShapeValue: one required field named "", holding the
	// schema's constraints, whose value is the answer itself. The
	// schema's title and description are the Form's. A boolean that
	// Approve reads is an approval.
	Value bool
	// ExclusiveBounds admits "exclusiveMinimum" and "exclusiveMaximum"
	// on numbers and integers.
	ExclusiveBounds bool
}

// Shape says what the answer of a Form is.
type Shape string

// The shapes of a Form.
const (
	// ShapeObject: the answer is an object of the fields' values, each
	// under its field's name.
	ShapeObject Shape = "object"
	// ShapeApprove: the form has no fields; its answer is true
	// (Options.Approve).
	ShapeApprove Shape = "approve"
	// ShapeValue: the form has one field, named ""; its answer is that
	// field's value (Options.Value).
	ShapeValue Shape = "value"
)

// Kind is what a Field holds.
type Kind string

// The kinds of a Field.
const (
	KindBoolean Kind = "boolean" // true or false
	KindString  Kind = "string"  // text, with Format, MinLength, MaxLength
	KindNumber  Kind = "number"  // a number, with its bounds
	KindInteger Kind = "integer" // an integer, with its bounds
	// KindSelect is one of Options, a string.
	KindSelect Kind = "select"
	// KindMultiSelect is an array of Options' values, with MinItems and
	// MaxItems.
	KindMultiSelect Kind = "multiselect"
)

// Form is a response schema read as the fields a person fills.
//
// The zero Form is not a form: its Answer fails with ErrNotForm. A Form
// Read returns shares nothing with the schema or with another Form; it
// is a plain value, safe for concurrent use while no one changes it.
type Form struct {
	// Shape says what the answer is.
	Shape Shape
	// Title and Description are the schema's own, "" when it has none.
	Title, Description string
	// Fields are the fields, in the order the schema's "properties"
	// names them; none for ShapeApprove, one for ShapeValue.
	Fields []Field
}

// Field is one thing a person fills. Its bounds are JSON numbers as
// text, "" when the schema sets none; a field has only the bounds of
// its Kind. Read fills in Fields; Answer refuses a value entered in a
// Field whose Kind is none of the kinds above, such as the zero Field.
type Field struct {
	// Name is the member's name in the answer object; "" for the field
	// of a ShapeValue form.
	Name string
	Kind Kind
	// Required: the answer must hold the field.
	Required bool
	// Title and Description are the property's own, "" when it has
	// none.
	Title, Description string
	// Format is a KindString field's format: "", "email", "uri",
	// "date" or "date-time".
	Format string
	// MinLength and MaxLength bound a KindString field's length, in
	// characters; each is a non-negative integer.
	MinLength, MaxLength json.Number
	// Minimum and Maximum are a number's inclusive bounds, as the schema
	// writes them.
	Minimum, Maximum json.Number
	// ExclusiveMinimum and ExclusiveMaximum are a number's exclusive
	// bounds (Options.ExclusiveBounds only).
	ExclusiveMinimum, ExclusiveMaximum json.Number
	// MinItems and MaxItems bound how many options a KindMultiSelect
	// field holds; each is a non-negative integer.
	MinItems, MaxItems json.Number
	// Options are the choices of a KindSelect or KindMultiSelect field,
	// in the schema's order.
	Options []Option
	// Default is the property's "default", a JSON value of the field's
	// kind (one option's value for a select, an array of them for a
	// multi-select), nil when it has none.
	Default json.RawMessage
}

// Option is one choice of a select.
type Option struct {
	// Value is what the answer holds when the option is chosen.
	Value string
	// Title is what a person reads: the option's "title", or its
	// "enumNames" entry; "" when the schema names none (show Value).
	Title string
}

// Label is what a person reads for the option: its Title, or its Value
// when it has none.
func (o Option) Label() string {
	if o.Title != "" {
		return o.Title
	}
	return o.Value
}
