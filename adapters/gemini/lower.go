package toolgemini

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

// The JSON path (the zero [Config]): the canonical schema lowered to the
// keywords Gemini documents for parametersJsonSchema and responseJsonSchema
// ([genai.FunctionDeclaration].ParametersJsonSchema and ResponseJsonSchema).
//
// Every rewrite below either keeps the meaning of the schema exactly or is
// recorded as a [Lint] (a loss). The exact rewrites:
//   - "const": v becomes "enum": [v] (v a string or a number), or "type":
//     "null" for a null constant;
//   - annotations ("default", "examples", "$comment", "$schema", "deprecated",
//     "readOnly", "writeOnly", content* and unknown keywords) are dropped:
//     they never decide whether a value is valid;
//   - a "$ref" with sibling keywords becomes "anyOf": [{"$ref": …}] beside
//     them: in JSON Schema 2020-12 siblings of $ref apply together with it,
//     and a one-branch anyOf means exactly its branch.
// The losses: validation keywords Gemini does not document (pattern,
// lengths, multipleOf, exclusive bounds, uniqueItems, allOf, not, if, …) are
// dropped and written into the description; "oneOf" becomes "anyOf" (Gemini
// treats it so); enums with values other than strings, numbers and null are
// dropped.

// kept are the keywords Gemini documents, kept as they are (their subschemas
// are lowered too).
var kept = map[string]bool{
	"$id": true, "$anchor": true, "$defs": true, "definitions": true, "$ref": true,
	"type": true, "format": true, "title": true, "description": true,
	"enum": true, "items": true, "prefixItems": true, "minItems": true, "maxItems": true,
	"minimum": true, "maximum": true, "anyOf": true, "oneOf": true,
	"properties": true, "additionalProperties": true, "required": true,
	"propertyOrdering": true, "const": true,
}

// lossy are the validation keywords of JSON Schema 2020-12 that Gemini does
// not document: dropped, with a [Lint] and a note in the description.
var lossy = map[string]bool{
	"pattern": true, "minLength": true, "maxLength": true, "multipleOf": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true, "patternProperties": true,
	"propertyNames": true, "dependentRequired": true, "dependentSchemas": true,
	"allOf": true, "not": true, "if": true, "then": true, "else": true,
	"contains": true, "minContains": true, "maxContains": true,
	"unevaluatedProperties": true, "unevaluatedItems": true,
}

// refused are keywords whose meaning depends on dynamic scope: there is no
// way to keep or loosen them safely.
var refused = map[string]bool{
	"$dynamicRef": true, "$dynamicAnchor": true, "$recursiveRef": true,
	"$recursiveAnchor": true, "$vocabulary": true,
}

// lowering is the state of lowering one schema of one tool.
type lowering struct {
	tool, schema string
	losses       []Lint
	refusals     []Lint
}

func (l *lowering) loss(ptr, rule string, args ...any) {
	l.losses = append(l.losses, Lint{Tool: l.tool, Schema: l.schema, Pointer: ptr, Rule: fmt.Sprintf(rule, args...)})
}

func (l *lowering) refuse(ptr, rule string, args ...any) {
	l.refusals = append(l.refusals, Lint{Tool: l.tool, Schema: l.schema, Pointer: ptr, Rule: fmt.Sprintf(rule, args...)})
}

// decodeSchema decodes a schema document keeping number text exact (as
// json.Number), with the byte-level decoder the other adapters use: a
// member name given twice, which [tool.Definition.Validate] refuses, is an
// error.
func decodeSchema(raw []byte) (any, error) {
	return strictschema.Decode(raw)
}

// lowerJSON lowers one schema document for the JSON path.
func (l *lowering) lowerJSON(doc any) any {
	out := l.node(doc, "")
	normalizeDefinitions(out)
	checkCycles(l, out)
	return out
}

// normalizeDefinitions moves the members of the root's "definitions"
// (draft-07's name) into "$defs", the only one Gemini documents, and
// rewrites every $ref that points into them ("#/definitions/x…" becomes
// "#/$defs/x…"). The meaning is unchanged: only where the subschemas live
// and how they are named. When the root has both and a name is in both,
// nothing is moved (the $refs could not all be kept apart). Definitions
// below the root are left where they are.
func normalizeDefinitions(root any) {
	obj, ok := root.(map[string]any)
	if !ok {
		return
	}
	old, ok := obj["definitions"].(map[string]any)
	if !ok {
		return
	}
	defs, ok := obj["$defs"].(map[string]any)
	if _, present := obj["$defs"]; present && !ok {
		return
	}
	if defs == nil {
		defs = make(map[string]any, len(old))
	}
	for name := range old {
		if _, clash := defs[name]; clash {
			return
		}
	}
	for name, d := range old {
		defs[name] = d
	}
	obj["$defs"] = defs
	delete(obj, "definitions")
	rewriteRefs(obj)
}

// rewriteRefs rewrites, in place, each $ref of v that points into the
// root's definitions to the same place under $defs.
func rewriteRefs(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if ref, ok := e.(string); ok && k == "$ref" {
				if rest, ok := strings.CutPrefix(ref, "#/definitions"); ok && (rest == "" || rest[0] == '/') {
					x[k] = "#/$defs" + rest
				}
				continue
			}
			rewriteRefs(e)
		}
	case []any:
		for _, e := range x {
			rewriteRefs(e)
		}
	}
}

func (l *lowering) node(v any, ptr string) any {
	obj, ok := v.(map[string]any)
	if !ok {
		return v // true or false
	}
	out := make(map[string]any, len(obj))
	var notes []string
	for _, k := range sortedKeys(obj) {
		val := obj[k]
		switch {
		case refused[k]:
			l.refuse(child(ptr, k), "%s depends on dynamic scope, which Gemini cannot express", k)
		case lossy[k]:
			l.loss(child(ptr, k), "%s is not supported; dropped and written into the description", k)
			notes = append(notes, note(k, val))
		case k == "const":
			l.lowerConst(obj, out, val, ptr, &notes)
		case k == "enum":
			l.lowerEnum(obj, out, val, ptr, &notes)
		case k == "oneOf":
			if _, both := obj["anyOf"]; both {
				l.loss(child(ptr, k), "oneOf beside anyOf is not supported; dropped")
				notes = append(notes, "one of several alternatives")
				continue
			}
			l.loss(child(ptr, k), "oneOf is read as anyOf: a value may match several branches")
			out["anyOf"] = l.list(val, child(ptr, k))
		case k == "items" || k == "additionalProperties":
			out[k] = l.node(val, child(ptr, k))
		case k == "prefixItems" || k == "anyOf":
			out[k] = l.list(val, child(ptr, k))
		case k == "properties" || k == "$defs" || k == "definitions":
			out[k] = l.members(val, child(ptr, k))
		case kept[k]:
			out[k] = val
		}
		// Anything else is an annotation or an unknown keyword, which
		// never decides validity: dropped.
	}
	if ref, ok := out["$ref"]; ok && (hasSiblings(out) || len(notes) > 0) {
		// The notes become a description beside the $ref below.
		if _, both := out["anyOf"]; both {
			l.loss(child(ptr, "$ref"), "$ref beside anyOf is not supported; the $ref is dropped")
			notes = append(notes, "see "+fmt.Sprint(ref))
		} else {
			out["anyOf"] = []any{map[string]any{"$ref": ref}}
		}
		delete(out, "$ref")
	}
	if len(notes) > 0 {
		d, _ := out["description"].(string)
		if d != "" {
			d += " "
		}
		out["description"] = d + "(" + strings.Join(notes, "; ") + ")"
	}
	return out
}

// hasSiblings reports whether a node with $ref has keywords Gemini does not
// allow beside it: anything not starting with "$".
func hasSiblings(obj map[string]any) bool {
	for k := range obj {
		if !strings.HasPrefix(k, "$") {
			return true
		}
	}
	return false
}

func (l *lowering) list(v any, ptr string) any {
	items, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = l.node(it, index(ptr, i))
	}
	return out
}

func (l *lowering) members(v any, ptr string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := make(map[string]any, len(m))
	for k, s := range m {
		out[k] = l.node(s, child(ptr, k))
	}
	return out
}

// enumerable reports whether Gemini takes v as an enum value.
func enumerable(v any) bool {
	switch v.(type) {
	case string, json.Number:
		return true
	}
	return false
}

func (l *lowering) lowerConst(obj, out map[string]any, v any, ptr string, notes *[]string) {
	switch {
	case enumerable(v):
		out["enum"] = []any{v}
	case v == nil && obj["type"] == nil:
		out["type"] = "null"
	default:
		l.loss(child(ptr, "const"), "this const is not supported here; dropped and written into the description")
		*notes = append(*notes, note("const", v))
	}
}

func (l *lowering) lowerEnum(obj, out map[string]any, v any, ptr string, notes *[]string) {
	if _, has := obj["const"]; has {
		// The const is at least as narrow as the enum and was kept.
		l.loss(child(ptr, "enum"), "enum beside const; only the const is kept")
		return
	}
	vals, _ := v.([]any)
	var keep []any
	null := false
	for _, e := range vals {
		switch {
		case enumerable(e):
			keep = append(keep, e)
		case e == nil:
			null = true
		default:
			l.loss(child(ptr, "enum"), "enum values other than strings, numbers and null are not supported; the enum is dropped and written into the description")
			*notes = append(*notes, note("enum", v))
			return
		}
	}
	_, anyOf := obj["anyOf"]
	_, oneOf := obj["oneOf"]
	switch {
	case !null:
		out["enum"] = keep
	case len(keep) == 0 && obj["type"] == nil:
		out["type"] = "null"
	case !anyOf && !oneOf:
		// [a, b, null] is exactly anyOf [{enum: [a, b]}, {type: null}].
		out["anyOf"] = []any{map[string]any{"enum": keep}, map[string]any{"type": "null"}}
	default:
		l.loss(child(ptr, "enum"), "an enum with null beside anyOf is not supported; dropped and written into the description")
		*notes = append(*notes, note("enum", v))
	}
}

// note renders a dropped keyword and its value for the description.
func note(k string, v any) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) > 200 {
		return k
	}
	return k + ": " + string(b)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
