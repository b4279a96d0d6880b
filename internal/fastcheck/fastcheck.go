// Package fastcheck validates values against a compiled JSON Schema within
// a budget of work, and explains what is wrong with an invalid value. It
// covers the draft 2020-12 keywords tool schemas use and declines schemas
// with anything else, so that callers fall back to the full validator.
//
// Every keyword is charged for what it costs: a subschema applied to a
// value, a string matched against a pattern (length times the size of the
// pattern's program), a value compared with an enum, a violation recorded
// with its location. A check that would spend more than its budget stops
// and says so, so the time and memory of one check are bounded whatever
// the schema and the value.
//
// Its verdicts must equal the full validator's for every schema it
// accepts, and an explanation lists violations exactly when the value is
// invalid: the tests check both against the JSON Schema conformance suite
// and by fuzzing. Explanations follow the full validator's grouping of
// violations, with two deliberate differences: a string of the wrong
// length is not also matched against its pattern, and some violations
// carry advice (Misspelled, NullForOptional).
package fastcheck

import (
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// Checker is an immutable, concurrency-safe validity check.
type Checker struct {
	root *node
}

// node mirrors one compiled subschema with what the check needs. It holds
// data only: regular expressions and format checks are read from the
// compiled subschema it points to.
type node struct {
	src     *jsonschema.Schema
	boolean *bool
	types   jsonschema.Types // 0: any
	integer bool             // types holds "integer" but not "number"
	number  bool             // types holds "number"
	hasType bool

	enum *enum

	ref                *node
	not                *node
	allOf, anyOf       []*node
	oneOf              []*node
	ifN, thenN, elseN  *node
	dependentSchemas   []named // sorted by name
	dependentRequired  []namedList
	properties         map[string]*node
	patternProperties  []pattern // sorted by source text
	additional         *node     // additionalProperties schema
	noAdditional       bool      // additionalProperties: false
	propertyNames      *node
	required           []string
	minProps, maxProps int // -1: unset

	prefixItems          []*node
	items                *node
	contains             *node
	minContains          int // -1: unset
	maxContains          int // -1: unset
	minItems, maxItems   int // -1: unset
	uniqueItems          bool
	minLength, maxLength int // -1: unset
	pattern              *regex.Regexp

	minimum, maximum, exclusiveMinimum, exclusiveMaximum *limit
	multipleOf                                           *multiple
}

type named struct {
	name string
	node *node
}

type namedList struct {
	name string
	list []string
}

type pattern struct {
	re   *regex.Regexp
	node *node
}

// enum holds the values of an enum keyword, the strings among them in a
// set, so that a string is looked up once instead of compared with every
// value.
type enum struct {
	strings map[string]bool
	others  []int // indexes of the values that are not strings
}

// limit is a numeric bound, exactly and rounded.
type limit struct {
	rat   *big.Rat
	exact strictjson.Decimal
	float float64
}

// multiple is a multipleOf divisor.
type multiple struct {
	rat   *big.Rat
	exact strictjson.Decimal
}

func newLimit(r *big.Rat) *limit {
	if r == nil {
		return nil
	}
	f, _ := r.Float64()
	return &limit{rat: r, exact: ratDecimal(r), float: f}
}

// ratDecimal returns the Decimal of r, which came from a JSON number and
// so has a finite decimal expansion of at most as many fractional digits
// as its denominator has bits.
func ratDecimal(r *big.Rat) strictjson.Decimal {
	if r.IsInt() {
		return strictjson.ParseDecimal(r.Num().String())
	}
	text := r.FloatString(r.Denom().BitLen())
	if strings.Contains(text, ".") {
		text = strings.TrimRight(strings.TrimRight(text, "0"), ".")
	}
	return strictjson.ParseDecimal(text)
}

// Compile returns a Checker for root, or nil when root (or any subschema it
// reaches) uses something the Checker does not cover: another draft than
// 2020-12, $dynamicRef, $recursiveRef, unevaluatedProperties,
// unevaluatedItems, content keywords, vocabulary extensions, regular
// expressions not compiled by package regex, or a reference cycle that
// does not descend into the value.
func Compile(root *jsonschema.Schema) *Checker {
	c := compiler{nodes: map[*jsonschema.Schema]*node{}}
	n := c.node(root)
	if c.unsupported || c.sameLocationCycle() {
		return nil
	}
	return &Checker{root: n}
}

type compiler struct {
	nodes       map[*jsonschema.Schema]*node
	unsupported bool
}

// node returns the node of s, compiling it (and what it reaches) on first
// use; nil for no subschema. A subschema the Checker does not cover marks
// the compiler unsupported.
func (c *compiler) node(s *jsonschema.Schema) *node {
	if s == nil {
		return nil
	}
	if n, ok := c.nodes[s]; ok {
		return n
	}
	n := &node{src: s, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1, minContains: -1, maxContains: -1}
	c.nodes[s] = n
	if s.Bool != nil {
		n.boolean = s.Bool
		return n
	}
	if !covered(s) {
		c.unsupported = true
		return n
	}
	n.setTypes(s)
	n.enum = enumOf(s)
	c.applicators(n, s)
	c.objectKeywords(n, s)
	c.arrayKeywords(n, s)
	n.setScalarKeywords(s)
	return n
}

// covered reports whether the keywords of s are among those the Checker
// covers; what s reaches is checked as it is compiled.
func covered(s *jsonschema.Schema) bool {
	return s.DraftVersion == 2020 && s.RecursiveRef == nil && s.DynamicRef == nil &&
		s.UnevaluatedProperties == nil && s.UnevaluatedItems == nil && len(s.Extensions) == 0 &&
		len(s.Dependencies) == 0 && s.ContentEncoding == nil && s.ContentMediaType == nil && s.ContentSchema == nil
}

// setTypes records the type keyword of s.
func (n *node) setTypes(s *jsonschema.Schema) {
	if s.Types == nil || s.Types.IsEmpty() {
		return
	}
	n.hasType = true
	n.types = *s.Types
	for _, t := range s.Types.ToStrings() {
		switch t {
		case "number":
			n.number = true
		case "integer":
			n.integer = true
		}
	}
}

// enumOf returns the enum keyword of s, its strings in a set; nil when s
// has none.
func enumOf(s *jsonschema.Schema) *enum {
	if s.Enum == nil {
		return nil
	}
	e := &enum{strings: map[string]bool{}}
	for i, v := range s.Enum.Values {
		if str, ok := v.(string); ok {
			e.strings[str] = true
		} else {
			e.others = append(e.others, i)
		}
	}
	return e
}

// applicators compiles the keywords of s that apply subschemas to the
// value itself: references, combinations, conditionals and dependencies.
func (c *compiler) applicators(n *node, s *jsonschema.Schema) {
	n.ref = c.node(s.Ref)
	n.not = c.node(s.Not)
	n.allOf = c.list(s.AllOf)
	n.anyOf = c.list(s.AnyOf)
	n.oneOf = c.list(s.OneOf)
	n.ifN, n.thenN, n.elseN = c.node(s.If), c.node(s.Then), c.node(s.Else)
	for _, k := range slices.Sorted(maps.Keys(s.DependentSchemas)) {
		n.dependentSchemas = append(n.dependentSchemas, named{k, c.node(s.DependentSchemas[k])})
	}
	for _, k := range slices.Sorted(maps.Keys(s.DependentRequired)) {
		n.dependentRequired = append(n.dependentRequired, namedList{k, s.DependentRequired[k]})
	}
}

// objectKeywords compiles the keywords of s about objects, and its
// pattern, compiled with the patterns of patternProperties.
func (c *compiler) objectKeywords(n *node, s *jsonschema.Schema) {
	if len(s.Properties) > 0 {
		n.properties = make(map[string]*node, len(s.Properties))
		for k, v := range s.Properties {
			n.properties[k] = c.node(v)
		}
	}
	for re, v := range s.PatternProperties {
		n.patternProperties = append(n.patternProperties, pattern{c.regexp(re), c.node(v)})
	}
	if s.Pattern != nil {
		n.pattern = c.regexp(s.Pattern)
	}
	slices.SortFunc(n.patternProperties, func(a, b pattern) int { return strings.Compare(a.re.String(), b.re.String()) })
	switch ap := s.AdditionalProperties.(type) {
	case bool:
		n.noAdditional = !ap
	case *jsonschema.Schema:
		n.additional = c.node(ap)
	}
	n.propertyNames = c.node(s.PropertyNames)
	n.required = s.Required
	setInt(&n.minProps, s.MinProperties)
	setInt(&n.maxProps, s.MaxProperties)
}

// arrayKeywords compiles the keywords of s about arrays.
func (c *compiler) arrayKeywords(n *node, s *jsonschema.Schema) {
	n.prefixItems = c.list(s.PrefixItems)
	n.items = c.node(s.Items2020)
	n.contains = c.node(s.Contains)
	setInt(&n.minContains, s.MinContains)
	setInt(&n.maxContains, s.MaxContains)
	setInt(&n.minItems, s.MinItems)
	setInt(&n.maxItems, s.MaxItems)
	n.uniqueItems = s.UniqueItems
}

// setScalarKeywords records the keywords of s about strings and numbers
// (pattern aside, see objectKeywords).
func (n *node) setScalarKeywords(s *jsonschema.Schema) {
	setInt(&n.minLength, s.MinLength)
	setInt(&n.maxLength, s.MaxLength)
	n.minimum, n.maximum = newLimit(s.Minimum), newLimit(s.Maximum)
	n.exclusiveMinimum, n.exclusiveMaximum = newLimit(s.ExclusiveMinimum), newLimit(s.ExclusiveMaximum)
	if s.MultipleOf != nil {
		n.multipleOf = &multiple{rat: s.MultipleOf, exact: ratDecimal(s.MultipleOf)}
	}
}

// regexp returns re as this package's regular expression, which knows
// what matching costs; a schema compiled with another engine is not
// covered.
func (c *compiler) regexp(re jsonschema.Regexp) *regex.Regexp {
	r, ok := re.(*regex.Regexp)
	if !ok {
		c.unsupported = true
	}
	return r
}

func (c *compiler) list(in []*jsonschema.Schema) []*node {
	if len(in) == 0 {
		return nil
	}
	out := make([]*node, len(in))
	for i, s := range in {
		out[i] = c.node(s)
	}
	return out
}

func setInt(dst *int, src *int) {
	if src != nil {
		*dst = *src
	}
}

// sameLocationCycle reports whether applicators and references that stay
// on one value form a cycle, which would never end here; the full
// validator reports such a cycle as an error.
func (c *compiler) sameLocationCycle() bool {
	const (
		visiting = 1
		done     = 2
	)
	state := make(map[*node]int8, len(c.nodes))
	var visit func(n *node) bool
	visit = func(n *node) bool {
		if n == nil {
			return false
		}
		switch state[n] {
		case visiting:
			return true
		case done:
			return false
		}
		state[n] = visiting
		if n.anySameLocation(visit) {
			return true
		}
		state[n] = done
		return false
	}
	for _, n := range c.nodes {
		if visit(n) {
			return true
		}
	}
	return false
}

// anySameLocation reports whether f is true of any node n applies to the
// value it is applied to: references, combinations, conditionals and
// dependent schemas. It allocates nothing.
func (n *node) anySameLocation(f func(*node) bool) bool {
	for _, m := range [...]*node{n.ref, n.not, n.ifN, n.thenN, n.elseN} {
		if f(m) {
			return true
		}
	}
	for _, list := range [...][]*node{n.allOf, n.anyOf, n.oneOf} {
		for _, m := range list {
			if f(m) {
				return true
			}
		}
	}
	for _, m := range n.dependentSchemas {
		if f(m.node) {
			return true
		}
	}
	return false
}
