package engine

import (
	"encoding/json"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// Checker is an immutable, concurrency-safe validity check: a Program
// that covers its schema.
type Checker struct {
	root *node
}

// node is one subschema of a program: its keywords, compiled, and the
// subschemas they apply, as nodes of the same program.
type node struct {
	location string // where the subschema is: a JSON pointer into its document, or a URL
	boolean  *bool
	types    jsonschema.Types // 0: any
	integer  bool             // types holds "integer" but not "number"
	number   bool             // types holds "number"
	hasType  bool

	constant *any
	enum     *enum
	format   *jsonschema.Format

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
	requiredProperties []*node // the property schema of each required name; nil for one without
	minProps, maxProps int     // -1: unset

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

	// uncovered holds what the check does not cover; nil when it covers
	// every keyword of the subschema.
	uncovered *uncovered
}

// uncovered is what a subschema holds beyond the check: keywords only the
// validator applies. The cost analysis reads the subschemas among them.
type uncovered struct {
	recursiveRef          *node
	dynamicRef            *node  // the static target of $dynamicRef, if any
	dynamicRefAnchor      string // the anchor $dynamicRef names, if dynamic
	dynamicAnchor         string
	unevaluatedProperties *node
	unevaluatedItems      *node
	contentSchema         *node
}

// newNode returns a node at location with every bound unset.
func newNode(location string) *node {
	return &node{location: location, minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1, minContains: -1, maxContains: -1}
}

// beyond returns n's uncovered part, creating it.
func (n *node) beyond() *uncovered {
	if n.uncovered == nil {
		n.uncovered = &uncovered{}
	}
	return n.uncovered
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
	source string
	re     *regex.Regexp // nil only in a node the check does not cover
	node   *node
}

// enum holds the values of an enum keyword, the strings among them in a
// set, so that a string is looked up once instead of compared with every
// value.
type enum struct {
	values  []any
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

// Program is a compiled schema: its nodes, the root first.
type Program struct {
	root  *node
	nodes []*node
}

// Checker returns the check of p, or nil when p holds something the check
// does not cover (see the package documentation) or a cycle of
// references that stays on one value, which the validator reports as an
// error.
func (p *Program) Checker() *Checker {
	for _, n := range p.nodes {
		if n.uncovered != nil {
			return nil
		}
	}
	if sameLocationCycle(p.nodes) {
		return nil
	}
	return &Checker{root: p.root}
}

// FromValidator converts root, a schema the validator compiled with
// package regex as its regular-expression engine, into a program: every
// draft's keywords, those the check does not cover kept for the cost
// analysis. Draft 4 to 2019-09 items and additionalItems become
// prefixItems and items, dependencies dependentSchemas and
// dependentRequired: the same work on the same values.
func FromValidator(root *jsonschema.Schema) *Program {
	c := converter{nodes: map[*jsonschema.Schema]*node{}}
	return &Program{root: c.node(root), nodes: c.order}
}

type converter struct {
	nodes map[*jsonschema.Schema]*node
	order []*node
}

// node returns the node of s, converting it (and what it reaches) on first
// use; nil for no subschema.
func (c *converter) node(s *jsonschema.Schema) *node {
	if s == nil {
		return nil
	}
	if n, ok := c.nodes[s]; ok {
		return n
	}
	n := newNode(s.Location)
	c.nodes[s] = n
	c.order = append(c.order, n)
	if s.Bool != nil {
		n.boolean = s.Bool
		return n
	}
	n.setTypes(s.Types)
	n.constant = s.Const
	if s.Enum != nil {
		n.enum = enumOf(s.Enum.Values)
	}
	n.format = s.Format
	c.applicators(n, s)
	c.objectKeywords(n, s)
	c.arrayKeywords(n, s)
	n.setScalarKeywords(s)
	c.uncovered(n, s)
	return n
}

// uncovered records what of s the check does not cover.
func (c *converter) uncovered(n *node, s *jsonschema.Schema) {
	if s.DraftVersion != 2020 || len(s.Extensions) > 0 || len(s.Dependencies) > 0 ||
		s.ContentEncoding != nil || s.ContentMediaType != nil || s.Items != nil || s.AdditionalItems != nil {
		n.beyond()
	}
	if s.RecursiveRef != nil {
		n.beyond().recursiveRef = c.node(s.RecursiveRef)
	}
	if s.DynamicRef != nil {
		n.beyond().dynamicRef = c.node(s.DynamicRef.Ref)
		n.uncovered.dynamicRefAnchor = s.DynamicRef.Anchor
	}
	if s.DynamicAnchor != "" {
		n.beyond().dynamicAnchor = s.DynamicAnchor
	}
	if s.UnevaluatedProperties != nil {
		n.beyond().unevaluatedProperties = c.node(s.UnevaluatedProperties)
	}
	if s.UnevaluatedItems != nil {
		n.beyond().unevaluatedItems = c.node(s.UnevaluatedItems)
	}
	if s.ContentSchema != nil {
		n.beyond().contentSchema = c.node(s.ContentSchema)
	}
}

// setTypes records a type keyword.
func (n *node) setTypes(t *jsonschema.Types) {
	if t == nil || t.IsEmpty() {
		return
	}
	n.hasType = true
	n.types = *t
	for _, name := range t.ToStrings() {
		switch name {
		case "number":
			n.number = true
		case "integer":
			n.integer = true
		}
	}
}

// enumOf returns the enum of values, its strings in a set.
func enumOf(values []any) *enum {
	e := &enum{values: values, strings: map[string]bool{}}
	for i, v := range values {
		if str, ok := v.(string); ok {
			e.strings[str] = true
		} else {
			e.others = append(e.others, i)
		}
	}
	return e
}

// applicators converts the keywords of s that apply subschemas to the
// value itself: references, combinations, conditionals and dependencies.
func (c *converter) applicators(n *node, s *jsonschema.Schema) {
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
	for _, k := range slices.Sorted(maps.Keys(s.Dependencies)) {
		switch d := s.Dependencies[k].(type) {
		case *jsonschema.Schema:
			n.dependentSchemas = append(n.dependentSchemas, named{k, c.node(d)})
		case []string:
			n.dependentRequired = append(n.dependentRequired, namedList{k, d})
		}
	}
}

// objectKeywords converts the keywords of s about objects, and its
// pattern, converted with the patterns of patternProperties.
func (c *converter) objectKeywords(n *node, s *jsonschema.Schema) {
	if len(s.Properties) > 0 {
		n.properties = make(map[string]*node, len(s.Properties))
		for k, v := range s.Properties {
			n.properties[k] = c.node(v)
		}
	}
	for re, v := range s.PatternProperties {
		n.patternProperties = append(n.patternProperties, pattern{re.String(), regexpOf(n, re), c.node(v)})
	}
	if s.Pattern != nil {
		n.pattern = regexpOf(n, s.Pattern)
	}
	sortPatterns(n.patternProperties)
	switch ap := s.AdditionalProperties.(type) {
	case bool:
		n.noAdditional = !ap
	case *jsonschema.Schema:
		n.additional = c.node(ap)
	}
	n.propertyNames = c.node(s.PropertyNames)
	n.required = s.Required
	n.linkRequired()
	setInt(&n.minProps, s.MinProperties)
	setInt(&n.maxProps, s.MaxProperties)
}

// linkRequired sets requiredProperties, once properties and required are
// set, so that a member found by its place in required needs no lookup by
// name.
func (n *node) linkRequired() {
	if len(n.required) == 0 || len(n.properties) == 0 {
		return
	}
	n.requiredProperties = make([]*node, len(n.required))
	for i, name := range n.required {
		n.requiredProperties[i] = n.properties[name]
	}
}

// sortPatterns orders patternProperties by source text.
func sortPatterns(list []pattern) {
	slices.SortFunc(list, func(a, b pattern) int { return strings.Compare(a.source, b.source) })
}

// arrayKeywords converts the keywords of s about arrays, those of earlier
// drafts included.
func (c *converter) arrayKeywords(n *node, s *jsonschema.Schema) {
	n.prefixItems = c.list(s.PrefixItems)
	n.items = c.node(s.Items2020)
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		n.items = c.node(items)
	case []*jsonschema.Schema:
		n.prefixItems = c.list(items)
		if additional, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
			n.items = c.node(additional)
		}
	}
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

// regexpOf returns re as package regex's regular expression, which knows
// what matching costs. Every schema here compiles with package regex; one
// compiled with another engine is not covered, and its patterns are nil.
func regexpOf(n *node, re jsonschema.Regexp) *regex.Regexp {
	r, ok := re.(*regex.Regexp)
	if !ok {
		n.beyond()
	}
	return r
}

func (c *converter) list(in []*jsonschema.Schema) []*node {
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
func sameLocationCycle(nodes []*node) bool {
	const (
		visiting = 1
		done     = 2
	)
	state := make(map[*node]int8, len(nodes))
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
	for _, n := range nodes {
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

// onlyRef reports whether n is a reference and nothing else, the form a
// derived schema gives a member of a named type. Every field of node must
// be considered here (TestOnlyRefConsidersEveryField).
func (n *node) onlyRef() bool {
	return n.ref != nil && n.boolean == nil && !n.hasType && n.enum == nil &&
		n.constant == nil && n.format == nil &&
		n.not == nil && len(n.allOf)+len(n.anyOf)+len(n.oneOf) == 0 &&
		n.ifN == nil && n.thenN == nil && n.elseN == nil &&
		len(n.dependentSchemas)+len(n.dependentRequired) == 0 &&
		len(n.properties)+len(n.patternProperties)+len(n.required)+len(n.requiredProperties)+len(n.prefixItems) == 0 &&
		n.additional == nil && !n.noAdditional && n.propertyNames == nil &&
		n.minProps < 0 && n.maxProps < 0 &&
		n.items == nil && n.contains == nil && n.minContains < 0 && n.maxContains < 0 &&
		n.minItems < 0 && n.maxItems < 0 && !n.uniqueItems &&
		n.minLength < 0 && n.maxLength < 0 && n.pattern == nil &&
		n.minimum == nil && n.maximum == nil && n.exclusiveMinimum == nil && n.exclusiveMaximum == nil &&
		n.multipleOf == nil && n.uncovered == nil
}

// kindMatches is the type keyword of n on t.
func (n *node) kindMatches(t *target) bool {
	if t.kind == strictjson.KindNumber {
		return n.number || (n.integer && isInteger(json.Number(t.text)))
	}
	return n.types&kindTypes[t.kind] != 0
}

// kindTypes is the type of a value of each strictjson kind but numbers,
// as the type keyword names it.
var kindTypes = func() (types [256]jsonschema.Types) {
	for kind, name := range map[byte]string{
		strictjson.KindObject: "object",
		strictjson.KindArray:  "array",
		strictjson.KindString: "string",
		strictjson.KindNull:   "null",
		strictjson.KindTrue:   "boolean",
		strictjson.KindFalse:  "boolean",
	} {
		types[kind].Add(name)
	}
	return types
}()
