// The cost analysis bounds the work a program can cause: how many
// subschemas validating one value may apply to a single location of that
// value. It walks the nodes of a program once.
//
// Counts saturate just above the limit the caller gives: past it the
// answer is only "too many", and saturating keeps the arithmetic and the
// analysis itself small whatever the schema.

package engine

import "github.com/agentcontract/tool/internal/regex"

// Analysis is what Analyze found out about a program. Its zero value
// describes a program that reaches nothing.
type Analysis struct {
	// Patterns lists the regular expressions of the program, pattern and
	// patternProperties, subschema by subschema in a fixed order. It is
	// owned by the caller.
	Patterns []Pattern

	// LargestEnum is the most values of any enum of the program.
	LargestEnum int

	// Visits is the largest number of subschemas applying one subschema
	// can apply to the same value, itself included, over every reachable
	// subschema (see [Analysis.Located] for the count across subschemas).
	// It saturates at limit+1.
	Visits int

	// Located is the largest number of subschemas validating one value
	// could apply to a single location of the value, at any depth: the
	// members and items of a value receive subschemas from every subschema
	// applied to the value itself, so counts multiply level after level.
	// It saturates at limit+1, and is zero when Visits already exceeds the
	// limit (it is not computed then).
	Located int

	// Bounded is false when counting Located would take more than MaxWork
	// steps; Located is then what was counted so far.
	Bounded bool
}

// MaxWork bounds the steps the count of [Analysis.Located] may take, so
// that the analysis itself stays small next to compiling the schema.
// Ordinary schemas, even documents of the largest size a schema may have,
// take a small fraction of it.
const MaxWork = 1 << 21

// Pattern is a regular expression of a program and the location of its
// subschema.
type Pattern struct {
	*regex.Regexp
	Location string
}

// Analyze walks the subschemas of p once and counts the subschemas
// validating one value may apply, saturating at limit+1, and following
// values down at most maxDepth levels of arrays and objects. P is only
// read; Analyze is safe for concurrent use on the same program.
func (p *Program) Analyze(limit, maxDepth int) Analysis {
	return p.analyze(limit, maxDepth, true)
}

// analyze is Analyze, with the shortcut for programs in which every
// subschema applies only itself on or off.
func (p *Program) analyze(limit, maxDepth int, shortcut bool) Analysis {
	anchors := dynamicAnchors(p.nodes)
	a := Analysis{Bounded: true}
	for _, n := range p.nodes {
		a.Patterns = n.appendPatterns(a.Patterns)
		if n.enum != nil {
			a.LargestEnum = max(a.LargestEnum, len(n.enum.values))
		}
	}
	if shortcut && limit >= 1 && oneEach(p.nodes) {
		a.Visits, a.Located = 1, 1
		return a
	}
	a.Visits = maxVisits(p.nodes, anchors, limit)
	if a.Visits > limit {
		return a
	}
	a.Located, a.Bounded = newLocationWalk(anchors, limit).run(p.root, maxDepth)
	return a
}

// appendPatterns appends the regular expressions of n: its pattern, then
// those of patternProperties by source text.
func (n *node) appendPatterns(out []Pattern) []Pattern {
	if n.pattern != nil {
		out = append(out, Pattern{n.pattern, n.location})
	}
	for _, p := range n.patternProperties {
		if p.re != nil {
			out = append(out, Pattern{p.re, n.location})
		}
	}
	return out
}

// oneEach reports whether no subschema of all applies another to the
// value it is applied to, nor more than one subschema to a member or
// item: every location then meets exactly one subschema.
func oneEach(all []*node) bool {
	for _, n := range all {
		if n.uncovered != nil || n.ref != nil || n.not != nil ||
			n.ifN != nil || n.thenN != nil || n.elseN != nil ||
			len(n.allOf) > 0 || len(n.anyOf) > 0 || len(n.oneOf) > 0 ||
			len(n.dependentSchemas) > 0 || len(n.patternProperties) > 0 || n.contains != nil {
			return false
		}
	}
	return true
}

// maxVisits returns the largest number of subschemas one subschema
// applies to the value it is applied to, itself included, saturated at
// limit+1. A cycle counts once: the check refuses it, or the value ends
// it.
func maxVisits(all []*node, anchors map[string][]*node, limit int) int {
	const inProgress = -1
	memo := make(map[*node]int, len(all))
	var visits func(*node) int
	visits = func(s *node) int {
		switch n, ok := memo[s]; {
		case ok && n == inProgress:
			return 1
		case ok:
			return n
		}
		memo[s] = inProgress
		total := 1
		for _, c := range sameLocation(s, anchors) {
			total += visits(c)
			if total > limit {
				total = limit + 1 // saturate: the answer is already "too many"
			}
		}
		memo[s] = total
		return total
	}
	highest := 0
	for _, s := range all {
		highest = max(highest, visits(s))
	}
	return highest
}

// dynamicAnchors maps each $dynamicAnchor name to the subschemas that
// declare it.
func dynamicAnchors(all []*node) map[string][]*node {
	anchors := map[string][]*node{}
	for _, n := range all {
		if n.uncovered != nil && n.uncovered.dynamicAnchor != "" {
			anchors[n.uncovered.dynamicAnchor] = append(anchors[n.uncovered.dynamicAnchor], n)
		}
	}
	return anchors
}

// sameLocation lists the subschemas s applies to the value it is applied
// to, dynamic references resolved to every anchor of their name.
func sameLocation(s *node, anchors map[string][]*node) []*node {
	return append(staticSameLocation(s), dynamicTargets(s, anchors)...)
}

// dynamicTargets lists what a $dynamicRef of s may resolve to.
func dynamicTargets(s *node, anchors map[string][]*node) []*node {
	u := s.uncovered
	if u == nil || (u.dynamicRef == nil && u.dynamicRefAnchor == "") {
		return nil
	}
	var out []*node
	if u.dynamicRef != nil {
		out = append(out, u.dynamicRef)
	}
	if u.dynamicRefAnchor != "" {
		out = append(out, anchors[u.dynamicRefAnchor]...)
	}
	return out
}

// staticSameLocation lists the subschemas s applies to the value it is
// applied to, but for dynamic references.
func staticSameLocation(s *node) []*node {
	var out []*node
	s.anySameLocation(func(m *node) bool {
		if m != nil {
			out = append(out, m)
		}
		return false
	})
	if s.uncovered != nil && s.uncovered.recursiveRef != nil {
		out = append(out, s.uncovered.recursiveRef)
	}
	return out
}
