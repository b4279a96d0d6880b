// Package errprefix lets one package of this module quote another's error
// inside its own message without a second "tool: " prefix.
package errprefix

import "strings"

// Prefix starts every error message of this module.
const Prefix = "tool: "

// Quote returns err as it reads inside another message of this module:
// its text without the leading Prefix. errors.Is and errors.As still find
// err through it. Quote(nil) is nil.
func Quote(err error) error {
	if err == nil {
		return nil
	}
	return quoted{err}
}

type quoted struct{ err error }

func (q quoted) Error() string { return strings.TrimPrefix(q.err.Error(), Prefix) }
func (q quoted) Unwrap() error { return q.err }
