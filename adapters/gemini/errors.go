package toolgemini

import "github.com/agentcontract/tool/internal/errprefix"

// Errors returned by this package. Every error wraps exactly one of them, so
// that [errors.Is] tells them apart.
var (
	// ErrProjection: a Definition cannot be offered to Gemini at all: its
	// name is one Gemini refuses, its schema does not parse, or its schema
	// needs something Gemini has no way to express (recursion through
	// required members, a parameter name the OpenAPI path refuses, …).
	// The message names every such tool and JSON pointer.
	ErrProjection = errprefix.New("cannot project for gemini")
	// ErrResponse: a model response that holds no candidate content.
	ErrResponse = errprefix.New("unusable gemini response")
	// ErrReply: outcomes that cannot answer the calls of a turn: one is
	// missing, does not match a call, or is suspended and has no result yet.
	ErrReply = errprefix.New("cannot reply to gemini")
)
