// This file holds the strict lowering's closing of objects: what a node
// held before its walk, closing it, requiring every member and making the
// optional ones nullable.

package strictschema

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/agentcontract/tool/internal/keyword"
)

// original is what the checks after a node's walk need of the node as it
// was.
type original struct {
	// properties is the node's properties, when it is an object.
	properties map[string]any
	// required is the node's required, as it is.
	required any
	// additionalProperties is the node's additionalProperties, as it is;
	// hasAdditionalProperties says whether the node holds one.
	additionalProperties    any
	hasAdditionalProperties bool
	// hasItems says whether the node holds items; itemsTrue whether that
	// is the schema true, which says nothing of the items.
	hasItems, itemsTrue bool
	// minProperties is minProperties when it is an integer, -1 when it is
	// absent, 1 when it is not an integer.
	minProperties int64
}

// origOf reads what the checks after the walk of node m need of it, before
// the walk lowers m in place.
func origOf(m map[string]any) original {
	o := original{required: m["required"]}
	o.properties, _ = m["properties"].(map[string]any)
	o.additionalProperties, o.hasAdditionalProperties = m["additionalProperties"]
	var items any
	items, o.hasItems = m["items"]
	o.itemsTrue = items == true
	o.minProperties = -1
	if v, ok := m["minProperties"]; ok {
		o.minProperties = 1
		if n, isNum := v.(json.Number); isNum {
			if i, err := n.Int64(); err == nil {
				o.minProperties = i
			}
		}
	}
	return o
}

// closeObject makes the lowered object closed and, under RequireAll, every
// member required, optional ones nullable.
//
// A root that declares no properties and says nothing of others is a tool
// without arguments: it is closed with no members, so the provider sends
// {}, which the canonical schema admits. Below the root such an object is
// free-form data, and closing it would leave the model nothing to say.
func (l *lowerer) closeObject(m original, out map[string]any, u *Undo, ptr string, root bool) {
	props := m.properties
	if len(props) == 0 {
		switch ap, ok := m.additionalProperties, m.hasAdditionalProperties; {
		case ok && ap == false:
		case root && !ok && m.minProperties <= 0:
			out["properties"] = map[string]any{}
			if l.rules.RequireAll {
				out["required"] = []any{}
			}
		case root && !ok:
			l.block(ptr+"/minProperties", "a tool without declared arguments that requires some cannot be strict: the closed object admits only {}")
			return
		default:
			l.block(ptr, "an object that declares no properties and does not forbid others is free-form, which strict mode cannot express")
			return
		}
	}
	out["additionalProperties"] = false
	rs, _ := m.required.([]any)
	for i, r := range rs {
		if name, ok := r.(string); ok && props[name] == nil {
			l.block(ptr+"/required/"+strconv.Itoa(i), "required names the member "+strconv.Quote(name)+", which properties does not declare: a closed strict schema would refuse every call or admit none")
		}
	}
	names := keyword.SortedNames(props)
	lp, _ := out["properties"].(map[string]any)
	isRequired := func(name string) int {
		return slices.IndexFunc(rs, func(r any) bool { s, ok := r.(string); return ok && s == name })
	}
	var optional []string
	for _, name := range names {
		if isRequired(name) < 0 {
			optional = append(optional, name)
		}
	}
	if !l.rules.RequireAll {
		l.result.Optional += len(optional)
		return
	}
	all := make([]any, len(names))
	for i, name := range names {
		// A required name is taken as the required list holds it,
		// already an interface value.
		if j := isRequired(name); j >= 0 {
			all[i] = rs[j]
		} else {
			all[i] = name
		}
	}
	if len(names) > 0 {
		out["required"] = all
	}
	for _, name := range optional {
		if u.Nullable == nil {
			u.Nullable = map[string]bool{}
		}
		u.Nullable[name] = true
		if lp[name] == nil {
			continue
		}
		member := lp[name].(map[string]any)
		if !l.keepRelaxed && admitsNull(member, 0) {
			// The null this lowering adds and the member's own null read
			// the same on the wire; Undo takes both as "not given".
			l.result.Relaxed = append(l.result.Relaxed, Finding{ptr + "/properties/" + escape(name), "an explicit null for this optional member cannot be sent: strict mode requires every member and sends null for one not given, so a null is taken as not given"})
		}
		lp[name] = l.nullable(member)
	}
}

// nullable returns s, lowered, made to admit null as well.
func (l *lowerer) nullable(s map[string]any) map[string]any {
	if admitsNull(s, 0) {
		return s
	}
	_, hasRef := s["$ref"]
	_, hasAnyOf := s["anyOf"]
	_, hasConst := s["const"]
	t, hasType := s["type"]
	enum, hasEnum := s["enum"].([]any)
	if hasRef || hasAnyOf || hasConst || !hasType && !hasEnum {
		l.result.Unions++
		return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}}
	}
	// s is this lowering's own node, held by its parent only (a walked
	// node of the decoded tree, or a map walkRef made): it changes in
	// place.
	c := s
	if hasType {
		switch tt := t.(type) {
		case string:
			c["type"] = []any{tt, "null"}
			l.result.Unions++
		case []any:
			c["type"] = append(slices.Clone(tt), "null")
		}
	}
	if hasEnum {
		c["enum"] = append(slices.Clone(enum), nil)
		l.result.EnumValues++
	}
	return c
}

// admitsNull reports whether the lowered schema s surely admits null.
func admitsNull(s map[string]any, depth int) bool {
	if depth > 32 {
		return false
	}
	if _, ok := s["$ref"]; ok {
		return false
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		return false
	}
	if c, ok := s["const"]; ok && c != nil {
		return false
	}
	if _, ok := s["type"]; ok {
		return hasType(s, "null")
	}
	if b, ok := s["anyOf"].([]any); ok {
		for _, x := range b {
			if xm, ok := x.(map[string]any); ok && admitsNull(xm, depth+1) {
				return true
			}
		}
	}
	return false
}
