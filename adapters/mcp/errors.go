package toolmcp

import (
	"github.com/agentcontract/tool/internal/errprefix"
)

// Errors returned by this package. Every error it returns wraps exactly one
// of them, so that [errors.Is] tells them apart.
var (
	// ErrInvalidConfig: AddTools or Import was given a configuration it
	// cannot use, or a tool it cannot serve as configured.
	ErrInvalidConfig = errprefix.New("invalid mcp config")
	// ErrRemoteCall: an imported tool's call did not reach a definite
	// outcome — the transport failed, the server answered with a protocol
	// error, or its result breaks the tool's advertised contract. The
	// outcome is unknown: the remote call may or may not have had effects.
	ErrRemoteCall = errprefix.New("remote mcp call failed")
	// ErrRemoteTool: a remote tool that Import cannot admit as a tool.Tool
	// (reported per tool in ImportResult.Refused).
	ErrRemoteTool = errprefix.New("remote mcp tool refused")
	// ErrInvalidKey: a tools/call request carried a key under
	// IdempotencyMetaKey that is not a string of the documented bounds.
	// The request is refused before anything runs.
	ErrInvalidKey = errprefix.New("invalid mcp idempotency key")
)

// wrap returns sentinel caused by cause, an error of another package of
// this module: its message carries one "tool: " prefix, and [errors.Is] finds
// both.
func wrap(sentinel, cause error) error {
	return errprefix.Errorf("%w: %w", sentinel, cause)
}
