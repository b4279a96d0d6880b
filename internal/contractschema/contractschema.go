// Package contractschema hands package dispatch what it needs of a
// tool.Contract that package tool keeps private, without an exported name
// in tool: the compiled input schema (for streaming admission) and the
// contract's digest (for the call records of exactly-once runs). When
// package tool is initialised it registers the functions that read them
// (see the init in tool's contract.go), and nothing else of a Contract is
// reachable from here. A package that imports dispatch imports tool, so
// the functions are registered before any code of dispatch runs.
package contractschema

import "github.com/agentcontract/tool/internal/engine"

var (
	input  func(contract any) *engine.Schema
	digest func(contract any) ([32]byte, bool)
)

// Register installs the function Input calls. Package tool calls it once,
// while it is initialised; nothing else may.
func Register(f func(contract any) *engine.Schema) { input = f }

// RegisterDigest installs the function Digest calls. Package tool calls
// it once, while it is initialised; nothing else may.
func RegisterDigest(f func(contract any) ([32]byte, bool)) { digest = f }

// Input returns the compiled input schema of contract, a tool.Contract, or
// nil for the zero Contract and for any other value.
func Input(contract any) *engine.Schema {
	if input == nil {
		return nil
	}
	return input(contract)
}

// Digest returns the SHA-256 of contract's canonical definition without
// its description — the digest a call stamp carries as the contract's
// identity — and false for the zero Contract and for any other value.
func Digest(contract any) ([32]byte, bool) {
	if digest == nil {
		return [32]byte{}, false
	}
	return digest(contract)
}
