package engine

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/keyword"
	"github.com/agentcontract/tool/internal/strictjson"
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

// Clip shortens s to at most n bytes, at a rune boundary, marking the cut.
func Clip(s string, n int) string {
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
	return strictjson.Elide(pointer(clipped), maxPointer)
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
		return &kind.Format{Got: shortValue(k.Got), Want: k.Want, Err: fmt.Errorf("%s", Clip(fmt.Sprint(k.Err), maxViolationText/2))}
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
	case *Misspelled:
		return &suggestion{ErrorKind: shortened(&k.AdditionalProperties), meant: k.Meant, names: k.Properties}
	case *NullForOptional:
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

// Rejection is Check's verdict on a value that is not valid: a message fit
// to show to whoever wrote the value, one line, and what else the caller
// needs to word its own error.
type Rejection struct {
	// Message says what is wrong and where, in a single line.
	Message string
	// Detail, when not empty, lists every violation found, for logs.
	Detail string
	// Costly reports that the value was refused as too costly to check,
	// not as breaking the schema: it may well be valid.
	Costly bool
	// Syntax, when not nil, says why the value is not one I-JSON document
	// of at most MaxInputBytes; the schema was not applied.
	Syntax error
}

func (r *Rejection) Error() string { return r.Message }

// reject returns a rejection of a message formatted as fmt.Sprintf does.
func reject(format string, args ...any) *Rejection {
	return &Rejection{Message: OneLine(fmt.Sprintf(format, args...))}
}

// leafViolations lists the violations verr reports, as collectViolations
// groups them.
func leafViolations(verr *jsonschema.ValidationError) []Violation {
	var leaves []*jsonschema.ValidationError
	collectViolations(verr, &leaves)
	if len(leaves) == 0 {
		leaves = append(leaves, verr)
	}
	// Ordered by instance location, then by schema location: the
	// validator walks some keywords (patternProperties) in map order, and
	// the message must not depend on it, so that the same value always
	// gets the same message (a workflow replaying Prepare relies on it).
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return cmp.Or(slices.Compare(a.InstanceLocation, b.InstanceLocation), strings.Compare(a.SchemaURL, b.SchemaURL))
	})
	violations := make([]Violation, len(leaves))
	for i, l := range leaves {
		violations[i] = Violation{Location: l.InstanceLocation, Kind: l.ErrorKind}
	}
	return violations
}

// rejectViolations is the rejection of a value that breaks the schema in
// total ways, of which violations are the first found.
func rejectViolations(violations []Violation, total int) *Rejection {
	message := OneLine(violationMessage(violations, total))
	var all strings.Builder
	for i, v := range violations {
		if i > 0 {
			all.WriteString("; ")
		}
		all.WriteString(describeLocated(v))
	}
	return &Rejection{Message: message, Detail: countOf(total, "violation") + ": " + all.String()}
}

// countOf writes n and noun, with the noun in the plural unless n is 1.
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

var englishPrinter = message.NewPrinter(language.English)

// maxListedViolations is the most violations a public message lists; the
// package documentation states it.
const maxListedViolations = 5

// maxMessage bounds the violations part of a public message, in bytes.
const maxMessage = 4096

// violationMessage renders violations, total in all, as a single line: up
// to maxListedViolations of them, sorted by location, each with the JSON
// pointer of the offending value and the rule it breaks, then how many
// other problems were found.
func violationMessage(violations []Violation, total int) string {
	sorted := slices.Clone(violations)
	slices.SortStableFunc(sorted, func(a, b Violation) int {
		return compareLocations(a.Location, b.Location)
	})
	var b strings.Builder
	listed := 0
	for _, v := range sorted[:min(len(sorted), maxListedViolations)] {
		text := describeLocated(v)
		if listed > 0 && b.Len()+len("; ")+len(text) > maxMessage {
			break
		}
		if listed > 0 {
			b.WriteString("; ")
		}
		b.WriteString(text)
		listed++
	}
	if more := total - listed; more == 1 {
		b.WriteString(" (and 1 more problem)")
	} else if more > 1 {
		fmt.Fprintf(&b, " (and %d more problems)", more)
	}
	return b.String()
}

// compareLocations orders locations member by member, array indexes by
// number.
func compareLocations(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if c := compareTokens(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

func compareTokens(a, b string) int {
	if x, err := strconv.Atoi(a); err == nil && strconv.Itoa(x) == a {
		if y, err := strconv.Atoi(b); err == nil && strconv.Itoa(y) == b {
			return x - y
		}
	}
	return strings.Compare(a, b)
}

// describeLocated renders one violation with its location, both clipped
// so that a message stays short whatever the value holds.
func describeLocated(v Violation) string {
	return Clip(fmt.Sprintf("at %s: %s", clippedPointer(v.Location), describeViolation(v.Kind)), maxViolationText)
}

// describeViolation renders one broken rule. The validator's own text
// prints numeric bounds through float64 in scientific notation with
// superscripts ("9.007199254740992 × 10¹⁵" for a maximum of
// 9007199254740993), which is both wrong and hard to act on; numeric
// rules are rendered here with exact decimals instead.
func describeViolation(k jsonschema.ErrorKind) string {
	var rule string
	var got, want *big.Rat
	switch k := k.(type) {
	case *kind.Minimum:
		rule, got, want = "minimum", k.Got, k.Want
	case *kind.Maximum:
		rule, got, want = "maximum", k.Got, k.Want
	case *kind.ExclusiveMinimum:
		rule, got, want = "exclusiveMinimum", k.Got, k.Want
	case *kind.ExclusiveMaximum:
		rule, got, want = "exclusiveMaximum", k.Got, k.Want
	case *kind.MultipleOf:
		rule, got, want = "multipleOf", k.Got, k.Want
	default:
		return shortened(k).LocalizedString(englishPrinter)
	}
	if got == nil || want == nil {
		return k.LocalizedString(englishPrinter)
	}
	return fmt.Sprintf("%s: got %s, want %s", rule, exactDecimal(got), exactDecimal(want))
}

// exactDecimal renders r, which came from a JSON number and so has a
// finite decimal expansion, exactly: plain digits for ordinary magnitudes
// and d.ddde±x beyond them. The digits are those of the number's own
// significand, so the text stays short.
func exactDecimal(r *big.Rat) string {
	num := new(big.Int).Abs(r.Num())
	den := new(big.Int).Set(r.Denom())
	two, five, ten := big.NewInt(2), big.NewInt(5), big.NewInt(10)
	var mod big.Int
	scale := 0 // r = ±num × 10^-scale once den is 1
	for den.Cmp(big.NewInt(1)) != 0 {
		switch {
		case mod.Mod(den, ten).Sign() == 0:
			den.Quo(den, ten)
		case mod.Mod(den, two).Sign() == 0:
			den.Quo(den, two)
			num.Mul(num, five)
		case mod.Mod(den, five).Sign() == 0:
			den.Quo(den, five)
			num.Mul(num, two)
		default:
			return r.FloatString(20) // not a decimal fraction; cannot come from JSON
		}
		scale++
	}
	if num.Sign() == 0 {
		return "0"
	}
	digits := num.String()
	trimmed := strings.TrimRight(digits, "0")
	exp := len(digits) - len(trimmed) - scale // r = ±trimmed × 10^exp
	point := len(trimmed) + exp               // digits before the decimal point
	var out string
	switch {
	case exp >= 0 && point <= 21:
		out = trimmed + strings.Repeat("0", exp)
	case exp < 0 && point > 0:
		out = trimmed[:point] + "." + trimmed[point:]
	case exp < 0 && point > -6:
		out = "0." + strings.Repeat("0", -point) + trimmed
	default:
		out = trimmed[:1]
		if len(trimmed) > 1 {
			out += "." + trimmed[1:]
		}
		out += fmt.Sprintf("e%+d", point-1)
	}
	if r.Sign() < 0 {
		out = "-" + out
	}
	return out
}

// collectViolations gathers the errors that say what is wrong, looking
// through the ones that only group others. It stops at anyOf and oneOf: the
// causes of a failed alternative are guesses, the alternative is the fact.
func collectViolations(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			collectViolations(c, out)
		}
		return
	case *kind.AnyOf, *kind.OneOf:
		// When all alternatives but one failed on the type of the value
		// alone (a nullable field that is not null, say), the one that
		// matched the type says what is wrong.
		// Each cause is walked once: walking the chosen one again would
		// double the work at every nested anyOf, 2^depth in all.
		var candidate []*jsonschema.ValidationError
		matches := 0
		for _, c := range e.Causes {
			var leaves []*jsonschema.ValidationError
			collectViolations(c, &leaves)
			if !onlyTypeMismatch(leaves, e.InstanceLocation) {
				candidate = leaves
				matches++
			}
		}
		if matches == 1 {
			*out = append(*out, candidate...)
			return
		}
	}
	*out = append(*out, e)
}

// onlyTypeMismatch reports whether leaves are just a wrong type at loc.
func onlyTypeMismatch(leaves []*jsonschema.ValidationError, loc []string) bool {
	if len(leaves) == 0 {
		return false
	}
	for _, l := range leaves {
		if _, ok := l.ErrorKind.(*kind.Type); !ok || !slices.Equal(l.InstanceLocation, loc) {
			return false
		}
	}
	return true
}

// pointer renders reference tokens as an RFC 6901 JSON pointer for a
// message; see strictjson.Where.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return strictjson.Where("")
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(keyword.Escape(t))
	}
	return b.String()
}

// OneLine escapes the control characters and line separators of a
// message, which may quote member names from a value in JSON pointers, so
// that a public message is always a single line of text.
func OneLine(s string) string {
	if !strings.ContainsFunc(s, breaksLine) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if breaksLine(r) {
			q := strconv.QuoteRune(r) // '\n', '\u2028', …
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func breaksLine(r rune) bool {
	return unicode.IsControl(r) || r == '\u2028' || r == '\u2029'
}
