package schemacost

import (
	"github.com/santhosh-tekuri/jsonschema/v6"

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
func (c *children) add(m *multiset, s *jsonschema.Schema, n int) {
	if s == nil {
		return
	}
	if *m == nil {
		*m = multiset{}
	}
	(*m)[s] = min((*m)[s]+n, c.saturated)
}

// keep records m unless it is empty.
func (c *children) keep(m multiset) {
	if len(m) > 0 {
		c.out = append(c.out, m)
	}
}

// schemaOf returns v when it is a subschema (additionalProperties and
// additionalItems may be booleans too), else nil.
func schemaOf(v any) *jsonschema.Schema {
	s, _ := v.(*jsonschema.Schema)
	return s
}

// namedMembers keeps one multiset per property name any applied
// subschema names: its properties entry, every pattern that matches the
// name, additionalProperties where neither does, and
// unevaluatedProperties.
func (c *children) namedMembers() {
	names := map[string]bool{}
	for s := range c.applied {
		for name := range s.Properties {
			names[name] = true
		}
	}
	for _, name := range sortedKeys(names) {
		var m multiset
		for s, n := range c.applied {
			p, listed := s.Properties[name]
			c.add(&m, p, n)
			matched := false
			for re, ps := range s.PatternProperties {
				switch nameMatches(re, name) {
				case yes:
					c.add(&m, ps, n)
					matched = true
				case maybe:
					// Counted as applying, and additionalProperties too.
					c.add(&m, ps, n)
				}
			}
			if !listed && !matched {
				c.add(&m, schemaOf(s.AdditionalProperties), n)
			}
			c.add(&m, s.UnevaluatedProperties, n)
		}
		c.keep(m)
	}
}

// otherMembers keeps the multisets of a member no subschema names (every
// pattern may match it), of property names themselves, and of decoded
// content.
func (c *children) otherMembers() {
	var other, propertyNames, content multiset
	for s, n := range c.applied {
		for _, ps := range s.PatternProperties {
			c.add(&other, ps, n)
		}
		c.add(&other, schemaOf(s.AdditionalProperties), n)
		c.add(&other, s.UnevaluatedProperties, n)
		c.add(&propertyNames, s.PropertyNames, n)
		c.add(&content, s.ContentSchema, n)
	}
	c.keep(other)
	c.keep(propertyNames)
	c.keep(content)
}

// items keeps one multiset per index of the longest prefix any applied
// subschema declares (prefixItems, or the array form of items), then one
// for any later index.
func (c *children) items() {
	prefix := 0
	for s := range c.applied {
		prefix = max(prefix, len(s.PrefixItems))
		if list, ok := s.Items.([]*jsonschema.Schema); ok {
			prefix = max(prefix, len(list))
		}
	}
	for i := 0; i <= prefix; i++ {
		var m multiset
		for s, n := range c.applied {
			c.addItem(&m, s, i, n)
		}
		c.keep(m)
	}
}

// addItem counts in m the subschemas n applications of s apply to the
// item at index i.
func (c *children) addItem(m *multiset, s *jsonschema.Schema, i, n int) {
	if i < len(s.PrefixItems) {
		c.add(m, s.PrefixItems[i], n)
	} else {
		c.add(m, s.Items2020, n)
	}
	switch items := s.Items.(type) {
	case *jsonschema.Schema:
		c.add(m, items, n)
	case []*jsonschema.Schema:
		if i < len(items) {
			c.add(m, items[i], n)
		} else {
			c.add(m, schemaOf(s.AdditionalItems), n)
		}
	}
	c.add(m, s.Contains, n)
	c.add(m, s.UnevaluatedItems, n)
}

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
func nameMatches(re jsonschema.Regexp, name string) answer {
	r, ok := re.(*regex.Regexp)
	if !ok {
		if re.MatchString(name) {
			return yes
		}
		return no
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
