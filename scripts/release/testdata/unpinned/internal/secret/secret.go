// Package secret is an internal package of the core that the adapter's
// code imports.
package secret

// Key returns a key.
func Key() string { return "k" }
