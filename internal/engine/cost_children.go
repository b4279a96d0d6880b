package engine

import (
	"github.com/agentcontract/tool/internal/keyword"
	"github.com/agentcontract/tool/internal/regex"
)

// childMultisets returns, for each kind of member or item a value could
// have, the multiset of subschemas applied reaches it with: one per
// property name any applied subschema names, one for every other name, one
// for property names themselves, one for decoded content, one per prefix
// index, and one for the items after every prefix. Where it is not known
// which keyword applies (a name that no schema lists could match any
// pattern), every candidate is counted. Counts saturate at saturated;
// empty multisets are left out.
func childMultisets(applied multiset, saturated int) []multiset {
	c := children{applied: applied, saturated: saturated}
	c.namedMembers()
	c.otherMembers()
	c.items()
	return c.out
}

// children collects the multisets of childMultisets.
type children struct {
	applied   multiset
	saturated int
	out       []multiset
}

// add counts n more applications of s in *m, making the multiset on its
// first subschema: most are left empty. A nil s is no subschema.
func (c *children) add(m *multiset, s *node, n int) {
	if s == nil {
		return
	}
	if *m == nil {
		*m = multiset{}
	}
	(*m)[s] = min((*m)[s]+n, c.saturated)
}

// keep keeps m, unless it is empty.
func (c *children) keep(m multiset) {
	if len(m) > 0 {
		c.out = append(c.out, m)
	}
}

// unevaluated returns the unevaluatedProperties (items false) or
// unevaluatedItems (items true) subschema of s, if any.
func unevaluated(s *node, items bool) *node {
	switch {
	case s.uncovered == nil:
		return nil
	case items:
		return s.uncovered.unevaluatedItems
	}
	return s.uncovered.unevaluatedProperties
}

// namedMembers adds a multiset for each member name a properties keyword
// of the applied subschemas lists: its properties, the patternProperties
// its name matches (or may match) and, where neither applies,
// additionalProperties; unevaluatedProperties may apply to any member.
func (c *children) namedMembers() {
	names := map[string]bool{}
	for s := range c.applied {
		for name := range s.properties {
			names[name] = true
		}
	}
	for _, name := range keyword.SortedNames(names) {
		var m multiset
		for s, n := range c.applied {
			p, listed := s.properties[name]
			c.add(&m, p, n)
			matched := false
			for _, pp := range s.patternProperties {
				switch nameMatches(pp.re, name) {
				case yes:
					c.add(&m, pp.node, n)
					matched = true
				case maybe:
					c.add(&m, pp.node, n)
				}
			}
			if !listed && !matched {
				c.add(&m, s.additional, n)
			}
			c.add(&m, unevaluated(s, false), n)
		}
		c.keep(m)
	}
}

// otherMembers adds the multiset of a member no properties keyword
// lists, which every pattern may match, and those of the member names
// themselves and of decoded content.
func (c *children) otherMembers() {
	var other, propertyNames, content multiset
	for s, n := range c.applied {
		for _, pp := range s.patternProperties {
			c.add(&other, pp.node, n)
		}
		c.add(&other, s.additional, n)
		c.add(&other, unevaluated(s, false), n)
		c.add(&propertyNames, s.propertyNames, n)
		if s.uncovered != nil {
			c.add(&content, s.uncovered.contentSchema, n)
		}
	}
	c.keep(other)
	c.keep(propertyNames)
	c.keep(content)
}

// items adds a multiset for each index below the longest prefix, and one
// for the items after every prefix.
func (c *children) items() {
	prefix := 0
	for s := range c.applied {
		prefix = max(prefix, len(s.prefixItems))
	}
	for i := 0; i <= prefix; i++ {
		var m multiset
		for s, n := range c.applied {
			if i < len(s.prefixItems) {
				c.add(&m, s.prefixItems[i], n)
			} else {
				c.add(&m, s.items, n)
			}
			c.add(&m, s.contains, n)
			c.add(&m, unevaluated(s, true), n)
		}
		c.keep(m)
	}
}

// answer is what is known of whether a name matches a pattern.
type answer int

const (
	no answer = iota
	yes
	maybe
)

// maxNameMatch bounds the steps of matching one property name against
// one pattern of the backtracking engine, by the pattern's static cost.
const maxNameMatch = 1 << 16

// nameMatches reports whether name matches re: maybe when a match of
// the backtracking engine would cost more than maxNameMatch, or had no
// verdict. Names and patterns both come from the schema.
func nameMatches(r *regex.Regexp, name string) answer {
	if r == nil {
		return maybe
	}
	if r.Backtracking() && r.MatchCost(len(name)) > maxNameMatch {
		return maybe
	}
	switch matched, err := r.Match(name); {
	case err != nil:
		return maybe
	case matched:
		return yes
	}
	return no
}
