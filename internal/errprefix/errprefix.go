// Package errprefix builds the errors of this project's packages, so that
// every message starts with "tool: " exactly once, however deeply errors of
// the project quote one another.
//
// An error made here knows its text without the prefix (its body). A
// sentinel from [New] prints Prefix and its text; [Errorf] shows every error
// operand by its body and puts Prefix in front of the whole message once.
// Nothing is ever removed from a message after it was written.
package errprefix

import "fmt"

// Prefix starts every error message of this project.
const Prefix = "tool: "

// New returns a sentinel error whose message is Prefix followed by text.
// Each call returns a distinct error, compared by identity with errors.Is.
func New(text string) error { return &sentinel{text} }

type sentinel struct{ text string }

func (s *sentinel) Error() string { return Prefix + s.text }
func (s *sentinel) body() string  { return s.text }

// Errorf formats like [fmt.Errorf], and %w wraps as it does, but every error
// operand is shown by its body (see [Body]), and the message starts with
// Prefix once. An error whose message is not one of this project's (a piece
// of one) is made with [Part]. The format starts with the sentinel the error wraps:
// Errorf("%w: name %q: %w", ErrInvalidRequest, name, cause).
func Errorf(format string, args ...any) error {
	return &wrapped{quoting(format, args)}
}

// quoting is fmt.Errorf with every error operand shown by its body.
func quoting(format string, args []any) error {
	shown := make([]any, len(args))
	for i, a := range args {
		if err, ok := a.(error); ok && err != nil {
			a = quoted{err}
		}
		shown[i] = a
	}
	return fmt.Errorf(format, shown...)
}

// Part formats a piece of a message, such as the position of a problem,
// that another error of this project will quote: like Errorf, but without
// Prefix, since the error quoting it supplies that:
// Errorf("%w: %w", ErrInvalidFailure, Part("content[%d]: %w", i, err)).
func Part(format string, args ...any) error {
	return part{quoting(format, args)}
}

// part is the result of Part: err's text is both its message and its body.
type part struct{ err error }

func (p part) Error() string { return p.err.Error() }
func (p part) body() string  { return p.err.Error() }
func (p part) Unwrap() error { return p.err }

// Body returns the text of err as it reads inside another message of this
// project: the text after Prefix for an error made by this package, and the
// whole text for any other error. Body(nil) is "".
func Body(err error) string {
	switch e := err.(type) {
	case nil:
		return ""
	case interface{ body() string }:
		return e.body()
	}
	return err.Error()
}

// quoted shows an operand of Errorf by its body; errors.Is and errors.As
// find the operand through it.
type quoted struct{ err error }

func (q quoted) Error() string { return Body(q.err) }
func (q quoted) Unwrap() error { return q.err }

// wrapped is the result of Errorf: err's text is the body.
type wrapped struct{ err error }

func (w *wrapped) Error() string { return Prefix + w.err.Error() }
func (w *wrapped) body() string  { return w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }
