package engine

import (
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// The violations below carry advice for whoever wrote the value, beyond
// what the full validator says.

// NullForOptional is a null given for an optional member whose schema
// does not accept null: the member should be left out instead.
type NullForOptional struct {
	kind.Type
}

// optionalNull checks null, the value of an optional member, against n.
// When n refuses it for its type alone, the violation says to omit the
// member.
func (r *run) optionalNull(n *node) bool {
	previous := r.open(false)
	valid := r.check(n, nil)
	sub := r.sink
	r.sink = previous
	switch {
	case valid:
		return true
	case sub.onlyType && len(sub.kept) == 1:
		mistyped := sub.kept[0].kind.(*kind.Type)
		return r.violated(func() jsonschema.ErrorKind { return &NullForOptional{Type: *mistyped} })
	}
	r.merge(sub)
	return false
}

// Misspelled is an additionalProperties violation some of whose members
// are declared ones written in another case or with one character added,
// dropped or changed.
type Misspelled struct {
	kind.AdditionalProperties
	// Meant maps such members to the declared names they resemble.
	Meant map[string]string
}

// maxSuggested bounds the unknown members a suggestion is sought for.
const maxSuggested = 8

// unknownMembers is the violation of the members in additional, with the
// declared names of n they resemble.
func (r *run) unknownMembers(n *node, additional []string) jsonschema.ErrorKind {
	meant := map[string]string{}
	for _, name := range additional[:min(len(additional), maxSuggested)] {
		r.spend(len(n.properties))
		for _, declared := range slices.Sorted(maps.Keys(n.properties)) {
			if resembles(name, declared) {
				meant[name] = declared
				break
			}
		}
	}
	if len(meant) == 0 {
		return &kind.AdditionalProperties{Properties: additional}
	}
	return &Misspelled{AdditionalProperties: kind.AdditionalProperties{Properties: additional}, Meant: meant}
}

// resembles reports whether a and b differ only in case, or by one
// character added, dropped or changed.
// Names shorter than four characters resemble too many others to say so.
func resembles(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	x, y := []rune(a), []rune(b)
	if len(x) > len(y) {
		x, y = y, x
	}
	if len(y)-len(x) > 1 || len(y) < 4 || len(y) > 64 {
		return false
	}
	i := 0
	for i < len(x) && x[i] == y[i] {
		i++
	}
	if i == len(y) {
		return true
	}
	if len(x) == len(y) {
		return slices.Equal(x[i+1:], y[i+1:])
	}
	return slices.Equal(x[i:], y[i+1:])
}
