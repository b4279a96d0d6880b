// Package schemacost bounds the work a compiled JSON Schema can cause: how
// many subschemas validating one value may apply to a single location of
// that value. It walks the subschemas a schema reaches once, and reports
// them with the bounds so that callers need no walk of their own.
//
// Counts saturate just above the limit the caller gives: past it the
// answer is only "too many", and saturating keeps the arithmetic and the
// analysis itself small whatever the schema.
package schemacost

import (
	"maps"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Analysis is what Analyze found out about a schema. Its zero value
// describes a schema that reaches nothing.
type Analysis struct {
	// Schemas lists every subschema the root reaches, the root first, each
	// once, in a fixed order for a given compiled schema. It is owned by
	// the caller.
	Schemas []*jsonschema.Schema

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

// Analyze walks the subschemas root reaches once and counts the
// subschemas validating one value may apply, saturating at limit+1, and
// following values down at most maxDepth levels of arrays and objects.
// Root must be non-nil and is only read; Analyze is safe for concurrent use
// on the same schema.
func Analyze(root *jsonschema.Schema, limit, maxDepth int) Analysis {
	return analyze(root, limit, maxDepth, true)
}

// analyze is Analyze; without shortcut it walks even a schema oneEach
// accepts, for tests to compare.
func analyze(root *jsonschema.Schema, limit, maxDepth int, shortcut bool) Analysis {
	all, anchors := reachable(root)
	a := Analysis{Schemas: all, Bounded: true}
	if shortcut && limit >= 1 && oneEach(all) {
		a.Visits, a.Located = 1, 1
		return a
	}
	a.Visits = maxVisits(all, anchors, limit)
	if a.Visits > limit {
		return a
	}
	a.Located, a.Bounded = newLocationWalk(anchors, limit).run(root, maxDepth)
	return a
}

// oneEach reports whether every location of every value meets at most
// one of the subschemas all: none of them applies a subschema to the value
// it is applied to (no reference, combination or conditional), and no two
// of its keywords reach the same member or item (no patternProperties,
// contains, unevaluated keywords or items of the older drafts). Derived
// schemas without shared definitions are of this kind; for them both
// counts are 1, and there is nothing to walk.
func oneEach(all []*jsonschema.Schema) bool {
	for _, s := range all {
		if s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil || s.Not != nil ||
			s.If != nil || s.Then != nil || s.Else != nil ||
			len(s.AllOf) > 0 || len(s.AnyOf) > 0 || len(s.OneOf) > 0 ||
			len(s.DependentSchemas) > 0 || len(s.Dependencies) > 0 ||
			len(s.PatternProperties) > 0 || s.Contains != nil ||
			s.UnevaluatedProperties != nil || s.UnevaluatedItems != nil ||
			s.Items != nil || s.AdditionalItems != nil {
			return false
		}
	}
	return true
}

// maxVisits returns the largest number of subschemas applying one
// subschema of all can apply to the same value. Edges that stay on the
// same instance location (applicators and references) add up; edges that
// descend into children (properties, items, ...) start a new location and
// are not counted here. A reference cycle that stays on one location is
// counted once, as the validator stops it.
func maxVisits(all []*jsonschema.Schema, anchors map[string][]*jsonschema.Schema, limit int) int {
	const inProgress = -1
	memo := make(map[*jsonschema.Schema]int, len(all))
	var visits func(*jsonschema.Schema) int
	visits = func(s *jsonschema.Schema) int {
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

// reachable lists every subschema reachable from root, and maps every
// dynamic anchor name among them to the subschemas that declare it.
func reachable(root *jsonschema.Schema) (all []*jsonschema.Schema, anchors map[string][]*jsonschema.Schema) {
	seen := map[*jsonschema.Schema]bool{}
	anchors = map[string][]*jsonschema.Schema{}
	var collect func(*jsonschema.Schema)
	collect = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		all = append(all, s)
		if s.DynamicAnchor != "" {
			anchors[s.DynamicAnchor] = append(anchors[s.DynamicAnchor], s)
		}
		for _, c := range sameLocation(s, nil) {
			collect(c)
		}
		for _, c := range childLocations(s) {
			collect(c)
		}
	}
	collect(root)
	return all, anchors
}

// sameLocation lists the subschemas s applies to the value it is applied
// to. With anchors, a dynamic reference counts every subschema its anchor
// could resolve to.
func sameLocation(s *jsonschema.Schema, anchors map[string][]*jsonschema.Schema) []*jsonschema.Schema {
	return append(staticSameLocation(s), dynamicTargets(s, anchors)...)
}

// dynamicTargets lists the subschemas a dynamic reference of s could
// resolve to: its static target and, with anchors, every subschema that
// declares its anchor. Exactly one of them applies.
func dynamicTargets(s *jsonschema.Schema, anchors map[string][]*jsonschema.Schema) []*jsonschema.Schema {
	if s.DynamicRef == nil {
		return nil
	}
	var out []*jsonschema.Schema
	if s.DynamicRef.Ref != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	if s.DynamicRef.Anchor != "" {
		out = append(out, anchors[s.DynamicRef.Anchor]...)
	}
	return out
}

// schemaList collects subschemas, skipping the absent ones.
type schemaList []*jsonschema.Schema

func (l *schemaList) add(c ...*jsonschema.Schema) {
	for _, x := range c {
		if x != nil {
			*l = append(*l, x)
		}
	}
}

// addAny adds v when it holds one subschema or a list of them, as the
// keywords that changed shape between drafts do.
func (l *schemaList) addAny(v any) {
	switch v := v.(type) {
	case *jsonschema.Schema:
		l.add(v)
	case []*jsonschema.Schema:
		l.add(v...)
	}
}

// staticSameLocation is sameLocation without dynamic references.
func staticSameLocation(s *jsonschema.Schema) []*jsonschema.Schema {
	var out schemaList
	out.add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	out.add(s.AllOf...)
	out.add(s.AnyOf...)
	out.add(s.OneOf...)
	for _, k := range sortedKeys(s.DependentSchemas) {
		out.add(s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if c, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			out.add(c)
		}
	}
	return out
}

// childLocations lists the subschemas s applies to members, items or
// decoded content of the value.
func childLocations(s *jsonschema.Schema) []*jsonschema.Schema {
	var out schemaList
	out.add(s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	for _, k := range sortedKeys(s.Properties) {
		out.add(s.Properties[k])
	}
	if len(s.PatternProperties) > 0 {
		// In the order of the patterns' text: a map's order would change
		// the order of Schemas from one analysis to the next.
		patterns := slices.AppendSeq(make([]jsonschema.Regexp, 0, len(s.PatternProperties)), maps.Keys(s.PatternProperties))
		slices.SortFunc(patterns, func(a, b jsonschema.Regexp) int { return strings.Compare(a.String(), b.String()) })
		for _, re := range patterns {
			out.add(s.PatternProperties[re])
		}
	}
	out.addAny(s.AdditionalProperties)
	out.addAny(s.Items)
	out.addAny(s.AdditionalItems)
	out.add(s.PrefixItems...)
	return out
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}
