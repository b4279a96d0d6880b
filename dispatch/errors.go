package dispatch

import "errors"

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
