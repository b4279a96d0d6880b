// This file holds the dialects the strict lowering reads: 2020-12, and
// draft-07 where it means the same.

package strictschema

import (
	"slices"
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/keyword"
)

// dialect2020 is the name of JSON Schema 2020-12, the dialect of the
// lowered schema, without the empty fragment.
const dialect2020 = "https://json-schema.org/draft/2020-12/schema"

// draft07 are the names of draft-07, without the empty fragment.
var draft07 = map[string]bool{
	"http://json-schema.org/draft-07/schema":  true,
	"https://json-schema.org/draft-07/schema": true,
}

// readDialect reads the $schema of obj, the root. A schema of 2020-12, or
// that declares none, is lowered as it is; one of draft-07 too, unless
// one of its differences appears: those are then the findings, and
// readDialect returns false, for the pass to end. Any other dialect
// blocks.
func (l *lowerer) readDialect(obj map[string]any) bool {
	s, ok := obj["$schema"].(string)
	if !ok {
		return true
	}
	switch d := strings.TrimSuffix(s, "#"); {
	case d == dialect2020:
	case draft07[d]:
		draft07Differences(obj, "", &l.result.Blocked)
		if len(l.result.Blocked) > 0 {
			slices.SortStableFunc(l.result.Blocked, func(a, b Finding) int { return strings.Compare(a.Pointer, b.Pointer) })
			return false
		}
	default:
		l.block("/$schema", "only JSON Schema 2020-12 and draft-07 are lowered; the schema declares "+strconv.Quote(s))
	}
	return true
}

// draft07Differences appends to out a finding for each place of node, a
// schema declaring draft-07, whose meaning differs under 2020-12, the
// dialect of the lowered schema: a keyword beside $ref (ignored in
// draft-07, applied in 2020-12; annotations and definitions aside, which
// mean the same in both), items as an array (a tuple), additionalItems and
// dependencies. A draft-07 schema with none of them means the same under
// 2020-12 once definitions is read as $defs, which the lowering does.
func draft07Differences(node any, ptr string, out *[]Finding) {
	add := func(at, rule string) { *out = append(*out, Finding{at, rule}) }
	keyword.Walk(node, ptr, func(ptr string, node any) bool {
		m, ok := node.(map[string]any)
		if !ok {
			return true
		}
		if _, ok := m["$ref"]; ok {
			for _, k := range keyword.SortedNames(m) {
				switch {
				case k == "$ref", k == "description", k == "default", k == "$defs", k == "definitions", annotations[k]:
				default:
					add(keyword.Append(ptr, k), "draft-07 ignores "+k+" beside $ref, 2020-12 applies it: the draft-07 schema is not lowered")
				}
			}
		}
		if _, isArr := m["items"].([]any); isArr {
			add(ptr+"/items", "items as an array is a tuple in draft-07 (prefixItems in 2020-12): the draft-07 schema is not lowered")
		}
		if _, ok := m["additionalItems"]; ok {
			add(ptr+"/additionalItems", "additionalItems is the rest of a draft-07 tuple (items in 2020-12): the draft-07 schema is not lowered")
		}
		if _, ok := m["dependencies"]; ok {
			add(ptr+"/dependencies", "dependencies is draft-07's dependentRequired and dependentSchemas in one: the draft-07 schema is not lowered")
		}
		return true
	})
}
