// Package contractschema hands package dispatch the compiled input schema
// of a tool.Contract, which package tool keeps private, without an exported
// name in tool: when package tool is initialised it registers the one
// function that reads it (see the init in tool's contract.go), and nothing
// else of a Contract is reachable from here. A package that imports
// dispatch imports tool, so the function is registered before any code of
// dispatch runs.
package contractschema

import "github.com/agentcontract/tool/internal/engine"

var input func(contract any) *engine.Schema

// Register installs the function Input calls. Package tool calls it once,
// while it is initialised; nothing else may.
func Register(f func(contract any) *engine.Schema) { input = f }

// Input returns the compiled input schema of contract, a tool.Contract, or
// nil for the zero Contract and for any other value.
func Input(contract any) *engine.Schema {
	if input == nil {
		return nil
	}
	return input(contract)
}
