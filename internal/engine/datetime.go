package engine

import (
	"errors"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// dateTimeFormat asserts the "date-time" format as the validator does, and
// says so plainly when the one thing missing is the time-zone offset, the
// mistake a model makes most often with this format: the validator's own
// words for it ("less than 20 characters long", "offset must be 6
// characters long") do not say what to add.
var dateTimeFormat = &jsonschema.Format{Name: "date-time", Validate: validateDateTime}

func validateDateTime(v any) error {
	s, ok := v.(string)
	if !ok {
		return nil
	}
	if LacksOffset(s) {
		return ErrMissingOffset
	}
	return stockDateTime()(s)
}

// ErrMissingOffset is the error of a date-time that lacks only its
// time-zone offset.
var ErrMissingOffset = errors.New("the time-zone offset is missing; end the value with Z for UTC or with an offset such as +01:00")

// LacksOffset reports whether s is a date and a time of day, with an
// optional fraction of a second, and nothing after it.
func LacksOffset(s string) bool {
	const layout = "dddd-dd-ddTdd:dd:dd"
	if len(s) < len(layout) {
		return false
	}
	for i := 0; i < len(layout); i++ {
		c := s[i]
		switch layout[i] {
		case 'd':
			if c < '0' || c > '9' {
				return false
			}
		case 'T':
			if c != 'T' && c != 't' {
				return false
			}
		default:
			if c != layout[i] {
				return false
			}
		}
	}
	rest := s[len(layout):]
	if rest == "" {
		return true
	}
	if rest[0] != '.' || len(rest) == 1 {
		return false
	}
	for i := 1; i < len(rest); i++ {
		if rest[i] < '0' || rest[i] > '9' {
			return false
		}
	}
	return true
}

// stockDateTime returns the validator's own date-time check, reached
// through a schema that asserts only that format: the check itself is not
// exported.
var stockDateTime = sync.OnceValue(func() func(string) error {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	var compiled *jsonschema.Schema
	err := c.AddResource(schemaBase, map[string]any{"format": "date-time"})
	if err == nil {
		compiled, err = c.Compile(schemaBase)
	}
	return func(s string) error {
		if compiled == nil {
			return err // never: the document is a constant
		}
		err := compiled.Validate(s)
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return err
		}
		for len(ve.Causes) > 0 {
			ve = ve.Causes[0]
		}
		if f, ok := ve.ErrorKind.(*kind.Format); ok && f.Err != nil {
			return f.Err
		}
		return err
	}
})
