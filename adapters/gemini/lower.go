package toolgemini

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentcontract/tool/adapters/internal/strictschema"
	"github.com/agentcontract/tool/internal/keyword"
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

// rules is the JSON path's rule set for the lowering shared with the
// strict adapters (strictschema.LowerOpen): that lowering walks every
// subschema; this file decides, keyword by keyword, what Gemini is sent.
var rules = strictschema.Open{
	Action: func(k string) strictschema.Action {
		switch {
		case refused[k]:
			return strictschema.Block
		case lossy[k]:
			return strictschema.Relax
		case k == "const" || k == "enum" || k == "oneOf":
			return strictschema.Rewrite
		case kept[k]:
			return strictschema.Keep
		}
		// Anything else is an annotation or an unknown keyword, which
		// never decides validity: dropped.
		return strictschema.Drop
	},
	Rewrite: func(n *strictschema.Node, k string, v any) {
		switch k {
		case "const":
			lowerConst(n, v)
		case "enum":
			lowerEnum(n, v)
		case "oneOf":
			if _, both := n.In["anyOf"]; both {
				n.Relax(k, "oneOf beside anyOf is not supported; dropped")
				n.Notes = append(n.Notes, "one of several alternatives")
				return
			}
			n.Relax(k, "oneOf is read as anyOf: a value may match several branches")
			n.Out["anyOf"] = n.Lower(k, v)
		}
	},
	Finish:  refSiblings,
	Note:    note,
	Relaxed: func(k string) string { return k + " is not supported; dropped and written into the description" },
	Blocked: func(k string) string { return k + " depends on dynamic scope, which Gemini cannot express" },
}

// lowering is the state of lowering one schema of one tool.
type lowering struct {
	tool, schema string
	losses       []Lint
	refusals     []Lint
}

func (l *lowering) lint(f strictschema.Finding) Lint {
	return Lint{Tool: l.tool, Schema: l.schema, Pointer: f.Pointer, Rule: f.Rule}
}

func (l *lowering) loss(ptr, rule string, args ...any) {
	l.losses = append(l.losses, l.lint(strictschema.Finding{Pointer: ptr, Rule: fmt.Sprintf(rule, args...)}))
}

func (l *lowering) refuse(ptr, rule string, args ...any) {
	l.refusals = append(l.refusals, l.lint(strictschema.Finding{Pointer: ptr, Rule: fmt.Sprintf(rule, args...)}))
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
	res := strictschema.LowerOpen(doc, rules)
	for _, f := range res.Relaxed {
		l.losses = append(l.losses, l.lint(f))
	}
	for _, f := range res.Blocked {
		l.refusals = append(l.refusals, l.lint(f))
	}
	normalizeDefinitions(res.Tree)
	checkCycles(l, res.Tree)
	return res.Tree
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
	keyword.Walk(v, "", func(_ string, s any) bool {
		node, _ := s.(map[string]any)
		if ref, ok := node["$ref"].(string); ok {
			if rest, ok := strings.CutPrefix(ref, "#/definitions"); ok && (rest == "" || rest[0] == '/') {
				node["$ref"] = "#/$defs" + rest
			}
		}
		return true
	})
}

// refSiblings sends a $ref that has siblings (or notes, which become a
// description beside it) as a one-branch anyOf beside them: Gemini takes
// nothing but $-keywords beside a $ref.
func refSiblings(n *strictschema.Node) {
	ref, ok := n.Out["$ref"]
	if !ok || !hasSiblings(n.Out) && len(n.Notes) == 0 {
		return
	}
	if _, both := n.Out["anyOf"]; both {
		n.Relax("$ref", "$ref beside anyOf is not supported; the $ref is dropped")
		n.Notes = append(n.Notes, "see "+fmt.Sprint(ref))
	} else {
		n.Out["anyOf"] = []any{map[string]any{"$ref": ref}}
	}
	delete(n.Out, "$ref")
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

// enumerable reports whether Gemini takes v as an enum value.
func enumerable(v any) bool {
	switch v.(type) {
	case string, json.Number:
		return true
	}
	return false
}

func lowerConst(n *strictschema.Node, v any) {
	switch {
	case enumerable(v):
		n.Out["enum"] = []any{v}
	case v == nil && n.In["type"] == nil:
		n.Out["type"] = "null"
	default:
		n.Relax("const", "this const is not supported here; dropped and written into the description")
		n.Notes = append(n.Notes, note("const", v))
	}
}

func lowerEnum(n *strictschema.Node, v any) {
	obj, out := n.In, n.Out
	if _, has := obj["const"]; has {
		// The const is at least as narrow as the enum and was kept.
		n.Relax("enum", "enum beside const; only the const is kept")
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
			n.Relax("enum", "enum values other than strings, numbers and null are not supported; the enum is dropped and written into the description")
			n.Notes = append(n.Notes, note("enum", v))
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
		n.Relax("enum", "an enum with null beside anyOf is not supported; dropped and written into the description")
		n.Notes = append(n.Notes, note("enum", v))
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
