// Package x is the adapter of a fixture of two modules.
package x

import "github.com/agentcontract/tool/internal/secret"

// Key returns the core's key.
func Key() string { return secret.Key() }
