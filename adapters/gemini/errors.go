package toolgemini

import "github.com/agentcontract/tool/internal/errprefix"

// Errors returned by this package. Every error wraps exactly one of them, so
// that [errors.Is] tells them apart. The other provider adapters
// (toolopenai, toolanthropic) use the same names for the same meanings.
var (
	// ErrInvalidConfig: [New] was given a [Config] Gemini would refuse:
	// both a Registry and Definitions, a definition that does not
	// validate, a name Gemini refuses, a name given twice, or a schema
	// that needs something Gemini has no way to express (recursion
	// through required members, a parameter name the OpenAPI path
	// refuses, …). The message names every such tool and JSON pointer.
	ErrInvalidConfig = errprefix.New("invalid config for Gemini")
	// ErrInvalidReply: a model response that holds no candidate content,
	// or a streamed function call this package does not assemble.
	ErrInvalidReply = errprefix.New("invalid reply from Gemini")
	// ErrInvalidOutcome: outcomes that cannot answer the calls: one is
	// the zero Outcome or suspended and has no result yet, or, for
	// [Turn.Reply], one is missing or does not match a call.
	ErrInvalidOutcome = errprefix.New("invalid outcome for Gemini")
)
