package dispatch

import (
	"errors"
	"strings"
)

// Errors returned by this package. Every error wraps exactly one of them,
// so that errors.Is tells them apart.
var (
	// ErrInvalidConfig: New was given a configuration it cannot use.
	ErrInvalidConfig = errors.New("tool: invalid dispatch config")
	// ErrInvalidCheckpoint: a checkpoint that does not decode, whose seal
	// does not verify, or that no longer matches a tool of the registry.
	ErrInvalidCheckpoint = errors.New("tool: invalid checkpoint")
	// ErrInvalidAnswer: an answer to a suspended call that breaks the
	// response schema of its input request.
	ErrInvalidAnswer = errors.New("tool: invalid answer")
)

// quoted shows an error of package tool inside a message of this package
// without a second "tool: " prefix, and keeps it visible to errors.Is and
// errors.As.
type quoted struct{ err error }

func (q quoted) Error() string { return strings.TrimPrefix(q.err.Error(), "tool: ") }
func (q quoted) Unwrap() error { return q.err }
