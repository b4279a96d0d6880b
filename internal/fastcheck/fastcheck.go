// Package fastcheck answers one question about a compiled JSON Schema
// quickly: is this value valid? It covers the draft 2020-12 keywords tool
// schemas use and declines schemas with anything else, so that callers fall
// back to the full validator, which also explains what is wrong.
//
// A Checker never allocates on the common path (integers compared with
// integer limits, strings, objects, arrays); numbers that need exact
// rational arithmetic use math/big as the full validator does. Its answers
// must equal the full validator's for every schema it accepts: the tests
// check this against the JSON Schema conformance suite and by fuzzing.
package fastcheck

import (
	"encoding/json"
	"hash/maphash"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Checker is an immutable, concurrency-safe validity check.
type Checker struct {
	root *node
}

// node mirrors one compiled subschema with what the check needs. It holds
// data only: regular expressions, format checks and constants are read
// from the compiled subschema it points to.
type node struct {
	src     *jsonschema.Schema
	boolean *bool
	types   jsonschema.Types // 0: any
	integer bool             // types holds "integer" but not "number"
	number  bool             // types holds "number"
	hasType bool

	hasEnum bool

	ref                *node
	not                *node
	allOf, anyOf       []*node
	oneOf              []*node
	ifN, thenN, elseN  *node
	dependentSchemas   map[string]*node
	dependentRequired  map[string][]string
	properties         map[string]*node
	patternProperties  map[string]*node // by the pattern's source text
	additional         *node            // additionalProperties schema
	noAdditional       bool             // additionalProperties: false
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

	minimum, maximum, exclusiveMinimum, exclusiveMaximum limit
	multipleOf                                           *big.Rat
}

// limit is a numeric bound; small integer bounds are also kept as int64.
type limit struct {
	rat   *big.Rat
	small bool
	n     int64
}

func newLimit(r *big.Rat) limit {
	if r == nil {
		return limit{}
	}
	l := limit{rat: r}
	if r.IsInt() && r.Num().IsInt64() {
		l.small, l.n = true, r.Num().Int64()
	}
	return l
}

// Compile returns a Checker for root, or nil when root (or any subschema it
// reaches) uses something the Checker does not cover: another draft than
// 2020-12, $dynamicRef, $recursiveRef, unevaluatedProperties,
// unevaluatedItems, content keywords, the regex format, vocabulary
// extensions, or a reference cycle that does not descend into the value.
func Compile(root *jsonschema.Schema) *Checker {
	c := compiler{nodes: map[*jsonschema.Schema]*node{}}
	n := c.node(root)
	if c.unsupported || c.sameLocationCycle(root) {
		return nil
	}
	return &Checker{root: n}
}

type compiler struct {
	nodes       map[*jsonschema.Schema]*node
	unsupported bool
}

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
	if s.DraftVersion != 2020 || s.RecursiveRef != nil || s.DynamicRef != nil ||
		s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil || len(s.Extensions) > 0 ||
		len(s.Dependencies) > 0 || s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		(s.Format != nil && s.Format.Name == "regex") {
		c.unsupported = true
		return n
	}
	if s.Types != nil && !s.Types.IsEmpty() {
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
	n.hasEnum = s.Enum != nil
	n.ref = c.node(s.Ref)
	n.not = c.node(s.Not)
	n.allOf = c.list(s.AllOf)
	n.anyOf = c.list(s.AnyOf)
	n.oneOf = c.list(s.OneOf)
	n.ifN, n.thenN, n.elseN = c.node(s.If), c.node(s.Then), c.node(s.Else)
	if len(s.DependentSchemas) > 0 {
		n.dependentSchemas = map[string]*node{}
		for k, v := range s.DependentSchemas {
			n.dependentSchemas[k] = c.node(v)
		}
	}
	n.dependentRequired = s.DependentRequired
	if len(s.Properties) > 0 {
		n.properties = make(map[string]*node, len(s.Properties))
		for k, v := range s.Properties {
			n.properties[k] = c.node(v)
		}
	}
	if len(s.PatternProperties) > 0 {
		n.patternProperties = make(map[string]*node, len(s.PatternProperties))
		for re, v := range s.PatternProperties {
			n.patternProperties[re.String()] = c.node(v)
		}
	}
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
	n.prefixItems = c.list(s.PrefixItems)
	n.items = c.node(s.Items2020)
	n.contains = c.node(s.Contains)
	setInt(&n.minContains, s.MinContains)
	setInt(&n.maxContains, s.MaxContains)
	setInt(&n.minItems, s.MinItems)
	setInt(&n.maxItems, s.MaxItems)
	n.uniqueItems = s.UniqueItems
	setInt(&n.minLength, s.MinLength)
	setInt(&n.maxLength, s.MaxLength)
	n.minimum, n.maximum = newLimit(s.Minimum), newLimit(s.Maximum)
	n.exclusiveMinimum, n.exclusiveMaximum = newLimit(s.ExclusiveMinimum), newLimit(s.ExclusiveMaximum)
	n.multipleOf = s.MultipleOf
	return n
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
func (c *compiler) sameLocationCycle(root *jsonschema.Schema) bool {
	const (
		visiting = 1
		done     = 2
	)
	state := map[*node]int{}
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
		for _, m := range n.sameLocation() {
			if visit(m) {
				return true
			}
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

func (n *node) sameLocation() []*node {
	out := []*node{n.ref, n.not, n.ifN, n.thenN, n.elseN}
	out = append(out, n.allOf...)
	out = append(out, n.anyOf...)
	out = append(out, n.oneOf...)
	for _, m := range n.dependentSchemas {
		out = append(out, m)
	}
	return out
}

// Valid reports whether v, a tree of map[string]any, []any, string,
// json.Number, bool and nil, satisfies the schema.
func (c *Checker) Valid(v any) bool {
	return c.root.valid(v)
}

func (n *node) valid(v any) bool {
	if n.boolean != nil {
		return *n.boolean
	}
	if n.hasType && !n.typeMatches(v) {
		return false
	}
	if n.src.Const != nil && !equal(v, *n.src.Const) {
		return false
	}
	if n.hasEnum {
		found := false
		for _, e := range n.src.Enum.Values {
			if equal(v, e) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if n.src.Format != nil && n.src.Format.Validate(v) != nil {
		return false
	}
	if n.ref != nil && !n.ref.valid(v) {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		if !n.validObject(v) {
			return false
		}
	case []any:
		if !n.validArray(v) {
			return false
		}
	case string:
		if !n.validString(v) {
			return false
		}
	case json.Number:
		if !n.validNumber(v) {
			return false
		}
	}
	return n.validApplicators(v)
}

func (n *node) typeMatches(v any) bool {
	var t string
	switch v := v.(type) {
	case nil:
		t = "null"
	case bool:
		t = "boolean"
	case string:
		t = "string"
	case []any:
		t = "array"
	case map[string]any:
		t = "object"
	case json.Number:
		if n.number {
			return true
		}
		return n.integer && isInteger(v)
	default:
		return false
	}
	var probe jsonschema.Types
	probe.Add(t)
	return n.types&probe != 0
}

func (n *node) validObject(obj map[string]any) bool {
	if n.minProps >= 0 && len(obj) < n.minProps {
		return false
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		return false
	}
	for _, r := range n.required {
		if _, ok := obj[r]; !ok {
			return false
		}
	}
	for name, value := range obj {
		evaluated := false
		if s, ok := n.properties[name]; ok {
			evaluated = true
			if !s.valid(value) {
				return false
			}
		}
		for re := range n.src.PatternProperties {
			if re.MatchString(name) {
				evaluated = true
				if !n.patternProperties[re.String()].valid(value) {
					return false
				}
			}
		}
		if !evaluated {
			if n.noAdditional {
				return false
			}
			if n.additional != nil && !n.additional.valid(value) {
				return false
			}
		}
		if n.propertyNames != nil && !n.propertyNames.valid(name) {
			return false
		}
	}
	for name, s := range n.dependentSchemas {
		if _, ok := obj[name]; ok && !s.valid(obj) {
			return false
		}
	}
	for name, reqs := range n.dependentRequired {
		if _, ok := obj[name]; ok {
			for _, r := range reqs {
				if _, ok := obj[r]; !ok {
					return false
				}
			}
		}
	}
	return true
}

func (n *node) validArray(arr []any) bool {
	if n.minItems >= 0 && len(arr) < n.minItems {
		return false
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		return false
	}
	if n.uniqueItems && hasDuplicates(arr) {
		return false
	}
	prefix := min(len(n.prefixItems), len(arr))
	for i := 0; i < prefix; i++ {
		if !n.prefixItems[i].valid(arr[i]) {
			return false
		}
	}
	if n.items != nil {
		for _, item := range arr[prefix:] {
			if !n.items.valid(item) {
				return false
			}
		}
	}
	if n.contains != nil {
		matched := 0
		for _, item := range arr {
			if n.contains.valid(item) {
				matched++
			}
		}
		if n.minContains >= 0 {
			if matched < n.minContains {
				return false
			}
		} else if matched == 0 {
			return false
		}
		if n.maxContains >= 0 && matched > n.maxContains {
			return false
		}
	}
	return true
}

func (n *node) validString(s string) bool {
	if n.minLength >= 0 || n.maxLength >= 0 {
		length := utf8.RuneCountInString(s)
		if n.minLength >= 0 && length < n.minLength {
			return false
		}
		if n.maxLength >= 0 && length > n.maxLength {
			return false
		}
	}
	if n.src.Pattern != nil && !n.src.Pattern.MatchString(s) {
		return false
	}
	return true
}

func (n *node) validNumber(v json.Number) bool {
	num := number{text: string(v)}
	if n.minimum.rat != nil && num.cmp(n.minimum) < 0 {
		return false
	}
	if n.maximum.rat != nil && num.cmp(n.maximum) > 0 {
		return false
	}
	if n.exclusiveMinimum.rat != nil && num.cmp(n.exclusiveMinimum) <= 0 {
		return false
	}
	if n.exclusiveMaximum.rat != nil && num.cmp(n.exclusiveMaximum) >= 0 {
		return false
	}
	if n.multipleOf != nil {
		r := num.rational()
		if r == nil || !new(big.Rat).Quo(r, n.multipleOf).IsInt() {
			return false
		}
	}
	return true
}

func (n *node) validApplicators(v any) bool {
	if n.not != nil && n.not.valid(v) {
		return false
	}
	for _, s := range n.allOf {
		if !s.valid(v) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		ok := false
		for _, s := range n.anyOf {
			if s.valid(v) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		matched := 0
		for _, s := range n.oneOf {
			if s.valid(v) {
				matched++
				if matched > 1 {
					return false
				}
			}
		}
		if matched != 1 {
			return false
		}
	}
	if n.ifN != nil {
		if n.ifN.valid(v) {
			if n.thenN != nil && !n.thenN.valid(v) {
				return false
			}
		} else if n.elseN != nil && !n.elseN.valid(v) {
			return false
		}
	}
	return true
}

// number is a JSON number token, compared exactly.
type number struct {
	text string
	rat  *big.Rat
}

// small parses a plain integer token of at most 18 digits.
func (x *number) small() (int64, bool) {
	s := x.text
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || (i == 0 && c == '-' && len(s) > 1)) {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

func (x *number) rational() *big.Rat {
	if x.rat == nil {
		x.rat, _ = new(big.Rat).SetString(x.text)
	}
	return x.rat
}

// cmp compares x with l like big.Rat.Cmp.
func (x *number) cmp(l limit) int {
	if l.small {
		if n, ok := x.small(); ok {
			switch {
			case n < l.n:
				return -1
			case n > l.n:
				return 1
			}
			return 0
		}
	}
	r := x.rational()
	if r == nil {
		return 0
	}
	return r.Cmp(l.rat)
}

func isInteger(v json.Number) bool {
	x := number{text: string(v)}
	if _, ok := x.small(); ok {
		return true
	}
	r := x.rational()
	return r != nil && r.IsInt()
}

// hasDuplicates reports whether two items of arr are equal. Beyond a few
// items it compares only items of equal hash, so that the work grows with
// the length of arr, not its square.
func hasDuplicates(arr []any) bool {
	if len(arr) <= 16 {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if equal(arr[i], arr[j]) {
					return true
				}
			}
		}
		return false
	}
	seed := maphash.MakeSeed()
	seen := make(map[uint64][]int, len(arr))
	var h maphash.Hash
	for i, item := range arr {
		h.SetSeed(seed)
		hashValue(&h, item)
		sum := h.Sum64()
		for _, j := range seen[sum] {
			if equal(item, arr[j]) {
				return true
			}
		}
		seen[sum] = append(seen[sum], i)
	}
	return false
}

// hashValue writes v to h so that values equal by equal hash alike:
// numbers by their exact value, objects whatever the order of members.
func hashValue(h *maphash.Hash, v any) {
	switch v := v.(type) {
	case nil:
		h.WriteByte('n')
	case bool:
		if v {
			h.WriteByte('t')
		} else {
			h.WriteByte('f')
		}
	case string:
		h.WriteByte('s')
		h.WriteString(strconv.Itoa(len(v)))
		h.WriteString(v)
	case json.Number:
		h.WriteByte('#')
		x := number{text: string(v)}
		if small, ok := x.small(); ok {
			h.WriteString(strconv.FormatInt(small, 10))
		} else if r := x.rational(); r != nil {
			h.WriteString(r.RatString()) // an integer's is its decimal digits
		} else {
			h.WriteString(string(v))
		}
	case []any:
		h.WriteByte('[')
		for _, item := range v {
			hashValue(h, item)
		}
		h.WriteByte(']')
	case map[string]any:
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		slices.Sort(names)
		h.WriteByte('{')
		for _, name := range names {
			hashValue(h, name)
			hashValue(h, v[name])
		}
		h.WriteByte('}')
	}
}

// equal is JSON equality: numbers by value, objects by members, arrays by
// items in order.
func equal(a, b any) bool {
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		return ok && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == bn {
			return true
		}
		x, y := number{text: string(a)}, number{text: string(bn)}
		ra, rb := x.rational(), y.rational()
		return ra != nil && rb != nil && ra.Cmp(rb) == 0
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !equal(a[i], ba[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !equal(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}
