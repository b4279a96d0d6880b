package tool

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/fastcheck"
)

// Bounds on what a message quotes from a value or a schema, so that a
// public message stays a few KiB whatever they hold.
const (
	maxQuoted        = 64   // runes of a string quoted from a value or schema
	maxListed        = 8    // items of a list (enum values, member names)
	maxToken         = 64   // runes of one reference token of a location
	maxPointer       = 512  // bytes of a location, elided in the middle beyond
	maxViolationText = 1024 // bytes of one violation's text
)

// clip shortens s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// clipRunes shortens s to at most n runes, marking the cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// clippedPointer renders a location as pointer does, each token clipped,
// and the middle of a long one elided: its start says where the value
// is, its end what it is.
func clippedPointer(tokens []string) string {
	clipped := make([]string, len(tokens))
	for i, t := range tokens {
		clipped[i] = clipRunes(t, maxToken)
	}
	p := pointer(clipped)
	if len(p) <= maxPointer {
		return p
	}
	head, tail := maxPointer/4, maxPointer-maxPointer/4-len("…")
	for !utf8.RuneStart(p[head]) {
		head--
	}
	start := len(p) - tail
	for !utf8.RuneStart(p[start]) {
		start++
	}
	return p[:head] + "…" + p[start:]
}

// shortValue clips a string value; other values are rendered by the
// validator as their type or a number, which is short.
func shortValue(v any) any {
	if s, ok := v.(string); ok {
		return clipRunes(s, maxQuoted)
	}
	return v
}

// shortList keeps the first maxListed items of list, each shortened, and
// says how many it left out.
func shortList[T any](list []T, short func(T) T) (kept []T, left int) {
	n := min(len(list), maxListed)
	kept = make([]T, n)
	for i := range n {
		kept[i] = short(list[i])
	}
	return kept, len(list) - n
}

func shortString(s string) string { return clipRunes(s, maxQuoted) }

// more is an error kind rendered with how many items it left out.
type more struct {
	jsonschema.ErrorKind
	left int
	noun string
}

func withMore(k jsonschema.ErrorKind, left int, noun string) jsonschema.ErrorKind {
	if left == 0 {
		return k
	}
	return more{ErrorKind: k, left: left, noun: noun}
}

func (k more) LocalizedString(p *message.Printer) string {
	return fmt.Sprintf("%s (and %d more %s)", k.ErrorKind.LocalizedString(p), k.left, k.noun)
}

// suggestion is an unknown-members violation with the declared names its
// members resemble.
type suggestion struct {
	jsonschema.ErrorKind
	meant map[string]string
	names []string
}

func (k *suggestion) LocalizedString(p *message.Printer) string {
	text := k.ErrorKind.LocalizedString(p)
	if len(k.names) == 1 {
		return fmt.Sprintf("%s (did you mean '%s'?)", text, shortString(k.meant[k.names[0]]))
	}
	var pairs []string
	for _, name := range k.names {
		if declared, ok := k.meant[name]; ok {
			pairs = append(pairs, fmt.Sprintf("'%s' for '%s'", shortString(declared), shortString(name)))
		}
	}
	return fmt.Sprintf("%s (did you mean %s?)", text, strings.Join(pairs, ", "))
}

// omitNull is a null given for an optional member that does not accept
// it.
type omitNull struct {
	want []string
}

func (*omitNull) KeywordPath() []string { return []string{"type"} }

func (k *omitNull) LocalizedString(p *message.Printer) string {
	return p.Sprintf("got null, want %s; this member is optional: leave it out instead of sending null", strings.Join(k.want, " or "))
}

// containsCount renders minContains and maxContains with the number of
// matching items, not their indexes.
type containsCount struct {
	bound     string // "min" or "max"
	got, want int
}

func (k *containsCount) KeywordPath() []string { return []string{k.bound + "Contains"} }

func (k *containsCount) LocalizedString(p *message.Printer) string {
	return p.Sprintf("%s %d items required to match contains schema, but matched %d", k.bound, k.want, k.got)
}

// shortened returns a copy of k whose quoted values and lists are short
// enough for a public message. The validator's own text quotes every enum
// value and the whole offending string: 889 KB for an enum of 100,000
// values, a megabyte for a long string that breaks a format.
func shortened(k jsonschema.ErrorKind) jsonschema.ErrorKind {
	switch k := k.(type) {
	case *kind.Enum:
		want, left := shortList(k.Want, shortValue)
		return withMore(&kind.Enum{Got: shortValue(k.Got), Want: want}, left, "values")
	case *kind.Const:
		return &kind.Const{Got: shortValue(k.Got), Want: shortValue(k.Want)}
	case *kind.Format:
		return &kind.Format{Got: shortValue(k.Got), Want: k.Want, Err: fmt.Errorf("%s", clip(fmt.Sprint(k.Err), maxViolationText/2))}
	case *kind.Pattern:
		return &kind.Pattern{Got: shortString(k.Got), Want: shortString(k.Want)}
	case *kind.Required:
		missing, left := shortList(k.Missing, shortString)
		return withMore(&kind.Required{Missing: missing}, left, "properties")
	case *kind.DependentRequired:
		missing, left := shortList(k.Missing, shortString)
		return withMore(&kind.DependentRequired{Prop: shortString(k.Prop), Missing: missing}, left, "properties")
	case *kind.AdditionalProperties:
		names, left := shortList(k.Properties, shortString)
		return withMore(&kind.AdditionalProperties{Properties: names}, left, "properties")
	case *fastcheck.Misspelled:
		return &suggestion{ErrorKind: shortened(&k.AdditionalProperties), meant: k.Meant, names: k.Properties}
	case *fastcheck.NullForOptional:
		return &omitNull{want: k.Want}
	case *kind.PropertyNames:
		return &kind.PropertyNames{Property: shortString(k.Property)}
	case *kind.MinContains:
		return &containsCount{bound: "min", got: len(k.Got), want: k.Want}
	case *kind.MaxContains:
		return &containsCount{bound: "max", got: len(k.Got), want: k.Want}
	}
	return k
}
