// Package json is an internal package of the fixture whose name is also a
// package of the standard library's.
package json

// Valid reports whether data is not empty.
func Valid(data []byte) bool { return len(data) > 0 }
