// Package errprefix builds the errors of this project's packages, so that
// every message starts with "tool: " exactly once, however deeply errors of
// the project quote one another.
//
// An error of the project knows its text without the prefix: its body. A
// sentinel from [New] prints Prefix and its text; [Errorf] shows every error
// operand by its body and puts Prefix in front of the whole message once;
// an error type of another package gives its body with an ErrorBody method
// and has [Message] write its Error text (see [Bodied]), or, where its
// exported API may gain no method (the core's types, whose API follows the
// reference), registers a function that finds its body ([RegisterBodies]);
// either way [Message] writes its Error text. This package is
// the only one that writes Prefix. Nothing is ever removed from a message
// after it was written: [Detail] gives what an error says after its
// sentinel from the parts [Errorf] formatted apart.
package errprefix

import (
	"fmt"
	"strings"
)

// Prefix starts every error message of this project.
const Prefix = "tool: "

// Bodied is an error whose message is Prefix followed by its body, the
// text ErrorBody returns. An error type of this project outside this
// package implements it with
//
//	func (e *T) Error() string     { return errprefix.Message(e) }
//	func (e *T) ErrorBody() string { ... the text without Prefix ... }
//
// and [Errorf] and [Body] show it by its body, so that an error quoting it
// prints Prefix once. ErrorBody must be safe to call whenever Error is (on
// a nil receiver, say).
type Bodied interface {
	error
	ErrorBody() string
}

// Message returns the message of err: Prefix followed by its body, found
// as [Body] finds it (its ErrorBody method, or a function given to
// [RegisterBodies]). It is the Error method of every error type of this
// project, which so never writes Prefix itself. An error whose body this
// package cannot find (a type never registered: a mistake of this
// project) says so after Prefix, rather than recur through its Error
// method.
func Message(err error) string {
	if body, ok := knownBody(err); ok {
		return Prefix + body
	}
	return fmt.Sprintf("%san error of type %T whose body errprefix does not know", Prefix, err)
}

// bodies are the functions given to RegisterBodies.
var bodies []func(error) (string, bool)

// RegisterBodies makes [Body] ask f for the body of an error that has no
// ErrorBody method: f returns the body of an error of its package's types
// and true, or false for any other error. A package whose exported error
// types may gain no method calls it once, in an init function; it must
// not be called after init, since Body reads the registered functions
// without a lock.
func RegisterBodies(f func(error) (string, bool)) { bodies = append(bodies, f) }

// New returns a sentinel error whose message is Prefix followed by text.
// Each call returns a distinct error, compared by identity with errors.Is.
func New(text string) error { return &sentinel{text} }

type sentinel struct{ text string }

func (s *sentinel) Error() string     { return Message(s) }
func (s *sentinel) ErrorBody() string { return s.text }

// Errorf formats like [fmt.Errorf], and %w wraps as it does, but every error
// operand is shown by its body (see [Body]), and the message starts with
// Prefix once. An error whose message is not one of this project's (a piece
// of one) is made with [Part]. The format starts with the sentinel the error
// wraps: Errorf("%w: name %q: %w", ErrInvalidRequest, name, cause). The rest
// of such a format is formatted apart and kept, for [Detail].
func Errorf(format string, args ...any) error {
	rest, headed := strings.CutPrefix(format, "%w: ")
	if headed && len(args) > 0 && !strings.Contains(rest, "%[") {
		if head, ok := args[0].(error); ok && head != nil {
			return newHeaded(head, quoting(rest, args[1:]))
		}
	}
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

func (p part) Error() string     { return p.err.Error() }
func (p part) ErrorBody() string { return p.err.Error() }
func (p part) Unwrap() error     { return p.err }

// Body returns the text of err as it reads inside another message of this
// project: what its ErrorBody method returns, for an error made by this
// package or a [Bodied] one, what a function given to [RegisterBodies]
// returns for an error of the types it knows, and the whole text for any
// other error.
// Body(nil) is "".
func Body(err error) string {
	if body, ok := knownBody(err); ok {
		return body
	}
	return err.Error()
}

// knownBody returns the body of err when this package knows it: "" for
// nil, an ErrorBody method's text, or what a function given to
// RegisterBodies returns; false for any other error.
func knownBody(err error) (string, bool) {
	switch e := err.(type) {
	case nil:
		return "", true
	case interface{ ErrorBody() string }:
		return e.ErrorBody(), true
	}
	for _, f := range bodies {
		if body, ok := f(err); ok {
			return body, true
		}
	}
	return "", false
}

// Detail returns what err says after the text of sentinel, without
// cutting any text: for an error made by [Errorf] with a format that starts
// with "%w: " and sentinel as its first operand, the rest of the message,
// as it was formatted apart (Errorf("%w: empty tool name",
// ErrInvalidRequest) gives "empty tool name"); for any other error,
// Body(err). Only err itself is looked at, not the errors it wraps.
func Detail(err, sentinel error) string {
	var h *headParts
	switch e := err.(type) {
	case *headed:
		h = &e.headParts
	case *headedJoin:
		h = &e.headParts
	}
	if h != nil && h.head.err == sentinel {
		return h.tail.Error()
	}
	return Body(err)
}

// quoted shows an operand of Errorf by its body; errors.Is and errors.As
// find the operand through it.
type quoted struct{ err error }

func (q quoted) Error() string { return Body(q.err) }
func (q quoted) Unwrap() error { return q.err }

// wrapped is the result of Errorf for a format that does not start with
// an error operand: err's text is the body.
type wrapped struct{ err error }

func (w *wrapped) Error() string     { return Message(w) }
func (w *wrapped) ErrorBody() string { return w.err.Error() }
func (w *wrapped) Unwrap() error     { return w.err }

// headParts is the result of Errorf for a format "%w: rest": head, the
// error it wraps first, and tail, rest formatted with the other operands.
// The body is head's body, ": " and tail's text, which is what
// fmt.Errorf makes of the whole format.
type headParts struct {
	head quoted
	tail error
}

func (h *headParts) Error() string     { return Message(h) }
func (h *headParts) ErrorBody() string { return Body(h.head.err) + ": " + h.tail.Error() }

// headed and headedJoin unwrap as fmt.Errorf's error of the whole format
// would: to head alone when the rest wraps nothing (headed), and to head
// and the operands the rest wraps when it wraps some (headedJoin).
type (
	headed     struct{ headParts }
	headedJoin struct {
		headParts
		errs []error
	}
)

func (h *headed) Unwrap() error       { return h.head }
func (h *headedJoin) Unwrap() []error { return h.errs }

func newHeaded(head error, tail error) error {
	parts := headParts{head: quoted{head}, tail: tail}
	switch t := tail.(type) {
	case interface{ Unwrap() error }:
		if u := t.Unwrap(); u != nil {
			return &headedJoin{parts, []error{parts.head, u}}
		}
	case interface{ Unwrap() []error }:
		return &headedJoin{parts, append([]error{parts.head}, t.Unwrap()...)}
	}
	return &headed{parts}
}
