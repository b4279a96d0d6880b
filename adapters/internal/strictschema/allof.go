// This file holds the merge of allOf branches that describe objects into
// their node, for rules that take allOf.

package strictschema

import (
	"slices"
	"strconv"
)

// mergeAllOf returns a copy of node m, which holds allOf (all), prepared
// for rules that take allOf; m itself is not changed. A branch that
// describes an object (properties, required, additionalProperties or
// "type":"object") is merged into the copy: its properties and required
// names join m's, which is what the conjunction
// means as long as no member is declared twice and no branch closes the
// object on its own. The other branches stay in allOf. It blocks, and
// returns false, when a branch holds $ref, is not an object schema, or
// cannot be merged so.
func (l *lowerer) mergeAllOf(m map[string]any, all any, ptr string) (map[string]any, bool) {
	at := ptr + "/allOf"
	branches, ok := all.([]any)
	if !ok || len(branches) == 0 {
		l.block(at, "allOf is not a non-empty array")
		return nil, false
	}
	mg, ok := l.startMerge(m, ptr)
	if !ok {
		return nil, false
	}
	for i, b := range branches {
		bp := at + "/" + strconv.Itoa(i)
		bm, ok := b.(map[string]any)
		if !ok {
			l.block(bp, "a branch of allOf is not a JSON object")
			return nil, false
		}
		if _, ok := bm["$ref"]; ok {
			l.block(bp+"/$ref", "allOf with $ref is not supported in strict mode")
			return nil, false
		}
		if !describesObject(bm) {
			mg.rest = append(mg.rest, bm)
			continue
		}
		if !l.mergeBranch(&mg, bm, bp) {
			return nil, false
		}
	}
	return mg.end(), true
}

// allOfMerge is a node while mergeAllOf merges the object branches of its
// allOf into it.
type allOfMerge struct {
	// node is a copy of the node without allOf.
	node map[string]any
	// pointer is the node's JSON pointer.
	pointer string
	// properties and required are the node's, joined by the branches'.
	properties map[string]any
	required   []any
	// rest are the branches that describe no object, left in allOf.
	rest []any
}

// startMerge copies m without its allOf; it blocks, and returns false,
// when m's properties is not an object.
func (l *lowerer) startMerge(m map[string]any, ptr string) (allOfMerge, bool) {
	mg := allOfMerge{node: make(map[string]any, len(m)+2), pointer: ptr}
	for k, v := range m {
		if k != "allOf" {
			mg.node[k] = v
		}
	}
	mg.properties, _ = mg.node["properties"].(map[string]any)
	if _, ok := mg.node["properties"]; ok && mg.properties == nil {
		l.block(ptr+"/properties", "properties is not an object")
		return allOfMerge{}, false
	}
	mg.required, _ = mg.node["required"].([]any)
	return mg, true
}

// mergeBranch merges bm, the object branch at bp, into mg: its type,
// properties and required names; its annotations are dropped. Any other
// keyword keeps it from being merged: it blocks, and returns false.
func (l *lowerer) mergeBranch(mg *allOfMerge, bm map[string]any, bp string) bool {
	for k, v := range bm {
		var ok bool
		switch k {
		case "type":
			ok = l.mergeType(mg, v, bp)
		case "properties":
			ok = l.mergeProperties(mg, v, bp)
		case "required":
			ok = l.mergeRequired(mg, v, bp)
		case "description", "title", "$comment", "examples":
			ok = true
		default:
			l.block(bp+"/"+escape(k), "an allOf branch that describes an object is merged only when it holds type, properties, required and annotations; "+k+" keeps it from being merged")
		}
		if !ok {
			return false
		}
	}
	return true
}

// mergeType merges the type t of the object branch at bp: it must be
// object, and so must the node's, if it has one.
func (l *lowerer) mergeType(mg *allOfMerge, t any, bp string) bool {
	if t != "object" {
		l.block(bp+"/type", "an allOf branch that describes an object must have type object to be merged")
		return false
	}
	if nt, ok := mg.node["type"]; ok && nt != "object" {
		l.block(mg.pointer+"/type", "allOf merges object branches into a node of another type")
		return false
	}
	mg.node["type"] = "object"
	return true
}

// mergeProperties adds the properties v of the object branch at bp to the
// node's; a member declared twice blocks.
func (l *lowerer) mergeProperties(mg *allOfMerge, v any, bp string) bool {
	bprops, ok := v.(map[string]any)
	if !ok {
		l.block(bp+"/properties", "properties is not an object")
		return false
	}
	if mg.properties == nil {
		mg.properties = make(map[string]any, len(bprops))
	}
	for name, s := range bprops {
		if _, dup := mg.properties[name]; dup {
			l.block(bp+"/properties/"+escape(name), "allOf declares the member "+strconv.Quote(name)+" twice; the merged object could hold only one of its schemas")
			return false
		}
		mg.properties[name] = s
	}
	return true
}

// mergeRequired adds the required names v of the object branch at bp to
// the node's, each once.
func (l *lowerer) mergeRequired(mg *allOfMerge, v any, bp string) bool {
	names, ok := v.([]any)
	if !ok {
		l.block(bp+"/required", "required is not an array")
		return false
	}
	for _, n := range names {
		if !slices.Contains(mg.required, n) {
			mg.required = append(mg.required, n)
		}
	}
	return true
}

// end returns the merged node: the joined properties and required names,
// and in allOf the branches left.
func (mg *allOfMerge) end() map[string]any {
	if mg.properties != nil {
		mg.node["properties"] = mg.properties
	}
	if mg.required != nil {
		mg.node["required"] = mg.required
	}
	if len(mg.rest) > 0 {
		mg.node["allOf"] = mg.rest
	}
	return mg.node
}
