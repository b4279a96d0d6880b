package toolgemini

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/keyword"
	"google.golang.org/genai"
)

// The OpenAPI path ([Config].OpenAPI): the canonical schema as a
// [*genai.Schema], the proto Schema of the Gemini API (an OpenAPI 3.0
// subset).
//
// Exact rewrites: $refs are inlined (their siblings merged in), allOf
// branches are merged when they do not set the same keyword, a null branch of
// anyOf and "null" in a type list or an enum become nullable, a one-branch
// anyOf is merged into its node, a string const becomes a one-value enum, and
// annotations are dropped. Losses (each a [Lint], the constraint written into
// the description): the keywords the proto Schema lacks
// (additionalProperties, including false: the proto Schema has no way to
// close an object; exclusive bounds, multipleOf, uniqueItems, prefixItems,
// not, if, …), enums and consts that are not strings, and oneOf (read as
// anyOf). Refusals: recursion (inlining would not end), a parameter name
// outside ^[A-Za-z_][A-Za-z0-9_]{0,63}$, and a schema that inlining makes
// larger than maxInlined nodes.

// maxInlined bounds the nodes of one inlined schema: $refs to $refs can grow
// a small document exponentially.
const maxInlined = 10000

var parameterName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

// openAPIKeeps are the keywords the JSON path loses and the proto Schema
// has (allOf is merged by flatten).
var openAPIKeeps = map[string]bool{
	"pattern": true, "minLength": true, "maxLength": true,
	"minProperties": true, "maxProperties": true, "allOf": true,
}

// openAPIFormats are the formats the proto Schema documents; others are
// annotations and dropped.
var openAPIFormats = map[string]bool{"date-time": true, "int32": true, "int64": true, "float": true, "double": true}

type openapi struct {
	*lowering
	root  any
	nodes int
}

func (l *lowering) lowerOpenAPIDoc(raw json.RawMessage, params bool) *genai.Schema {
	doc, err := decodeSchema(raw)
	if err != nil {
		l.refuse("", "schema does not decode: %v", err)
		return nil
	}
	o := &openapi{lowering: l, root: doc}
	s := o.convert(doc, "", nil)
	if params && s != nil {
		for _, name := range keyword.SortedNames(s.Properties) {
			if !parameterName.MatchString(name) {
				l.refuse(keyword.Append("/properties", name), "parameter name %q is not one Gemini takes in parameters (^[A-Za-z_][A-Za-z0-9_]{0,63}$); use the JSON path", name)
			}
		}
	}
	if o.nodes > maxInlined {
		l.refuse("", "inlining every $ref makes more than %d schema nodes", maxInlined)
		return nil
	}
	return s
}

// convert converts one node; stack holds the $refs being inlined.
func (o *openapi) convert(v any, ptr string, stack []string) *genai.Schema {
	o.nodes++
	if o.nodes > maxInlined {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if v == false {
			o.loss(ptr, "the false schema cannot be expressed; dropped")
		}
		return &genai.Schema{}
	}
	obj = o.flatten(obj, ptr, stack, &stack)
	s := &genai.Schema{}
	var notes []string
	for _, k := range keyword.SortedNames(obj) {
		val := obj[k]
		switch {
		case refused[k]:
			o.refuse(keyword.Append(ptr, k), "%s depends on dynamic scope, which Gemini cannot express", k)
		case k == "additionalProperties":
			if val == true {
				continue
			}
			o.loss(keyword.Append(ptr, k), "additionalProperties cannot be expressed in parameters; dropped (Prepare still refuses extra members)")
			if val == false {
				notes = append(notes, "no other members")
			}
		case (lossy[k] && !openAPIKeeps[k]) || k == "prefixItems":
			o.loss(keyword.Append(ptr, k), "%s is not supported in parameters; dropped and written into the description", k)
			notes = append(notes, note(k, val))
		}
		// Other keywords are converted below, or are annotations,
		// $defs, $schema, $id and $anchor, which never decide validity.
	}
	o.setType(s, obj)
	if obj[nullableMark] == true {
		s.Nullable = genai.Ptr(true)
	}
	s.Title, _ = obj["title"].(string)
	s.Description, _ = obj["description"].(string)
	if f, _ := obj["format"].(string); openAPIFormats[f] {
		s.Format = f
	}
	s.Pattern, _ = obj["pattern"].(string)
	s.MinItems, s.MaxItems = count(obj["minItems"]), count(obj["maxItems"])
	s.MinLength, s.MaxLength = count(obj["minLength"]), count(obj["maxLength"])
	s.MinProperties, s.MaxProperties = count(obj["minProperties"]), count(obj["maxProperties"])
	s.Minimum, s.Maximum = number(obj["minimum"]), number(obj["maximum"])
	o.setEnum(s, obj, ptr, &notes)
	if props, ok := obj["properties"].(map[string]any); ok {
		s.Properties = make(map[string]*genai.Schema, len(props))
		for _, name := range keyword.SortedNames(props) {
			s.Properties[name] = o.convert(props[name], keyword.Append(keyword.Append(ptr, "properties"), name), stack)
		}
	}
	for _, r := range asList(obj["required"]) {
		if name, ok := r.(string); ok {
			s.Required = append(s.Required, name)
		}
	}
	for _, r := range asList(obj["propertyOrdering"]) {
		if name, ok := r.(string); ok {
			s.PropertyOrdering = append(s.PropertyOrdering, name)
		}
	}
	if items, ok := obj["items"]; ok {
		s.Items = o.convert(items, keyword.Append(ptr, "items"), stack)
	}
	o.setAnyOf(s, obj, ptr, stack)
	if len(notes) > 0 {
		if s.Description != "" {
			s.Description += " "
		}
		s.Description += "(" + strings.Join(notes, "; ") + ")"
	}
	return s
}

// flatten inlines $ref and merges allOf branches and a one-branch anyOf
// into obj, as long as no keyword is set twice, so that the rest of convert
// sees one node. It returns a new map; *inlined gains the $refs inlined.
func (o *openapi) flatten(obj map[string]any, ptr string, stack []string, inlined *[]string) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		out[k] = v
	}
	for range 64 { // each round removes one $ref, allOf or anyOf; bounded for safety
		switch {
		case out["$ref"] != nil:
			ref, _ := out["$ref"].(string)
			delete(out, "$ref")
			if slices.Contains(stack, ref) {
				o.refuse(keyword.Append(ptr, "$ref"), "$ref %q is recursive; parameters cannot express recursion (use the JSON path)", ref)
				return out
			}
			target, _, ok := resolve(o.root, ref)
			t, isObj := target.(map[string]any)
			if !ok || (!isObj && target != true) {
				o.refuse(keyword.Append(ptr, "$ref"), "$ref %q does not point to a schema object in this document", ref)
				return out
			}
			stack = append(stack, ref)
			*inlined = stack
			o.merge(out, t, keyword.Append(ptr, "$ref"))
		case out["allOf"] != nil:
			branches := asList(out["allOf"])
			delete(out, "allOf")
			for i, b := range branches {
				if bm, ok := b.(map[string]any); ok {
					o.merge(out, bm, keyword.Append(keyword.Append(ptr, "allOf"), strconv.Itoa(i)))
				} else if b == false {
					o.loss(keyword.Append(keyword.Append(ptr, "allOf"), strconv.Itoa(i)), "the false schema cannot be expressed; dropped")
				}
			}
		case len(asList(out["anyOf"])) > 1 && slices.ContainsFunc(asList(out["anyOf"]), isNull):
			// anyOf [X, null]: X, nullable.
			out["anyOf"] = slices.DeleteFunc(slices.Clone(asList(out["anyOf"])), isNull)
			out[nullableMark] = true
		case len(asList(out["anyOf"])) == 1:
			b, _ := asList(out["anyOf"])[0].(map[string]any)
			delete(out, "anyOf")
			o.merge(out, b, keyword.Append(ptr, "anyOf/0"))
		default:
			return out
		}
	}
	o.refuse(ptr, "more than 64 nested $ref, allOf and one-branch anyOf to inline at one place")
	return out
}

// merge adds the keywords of from to into, as allOf would; a keyword set in
// both with different values keeps into's (a loss).
func (o *openapi) merge(into, from map[string]any, ptr string) {
	for _, k := range keyword.SortedNames(from) {
		v := from[k]
		if old, ok := into[k]; ok && !jsonEqual(old, v) {
			if k == "description" || k == "title" || k == "$defs" || k == "$id" || k == "$schema" {
				continue
			}
			o.loss(keyword.Append(ptr, k), "%s is set on both sides of a $ref or allOf; only one is kept", k)
			continue
		}
		into[k] = v
	}
}

// nullableMark marks, in a flattened node, a null branch removed from anyOf.
// It cannot collide with a keyword: those never hold a NUL.
const nullableMark = "\x00nullable"

func isNull(branch any) bool {
	m, ok := branch.(map[string]any)
	return ok && len(m) == 1 && m["type"] == "null"
}

func jsonEqual(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

func (o *openapi) setType(s *genai.Schema, obj map[string]any) {
	var types []string
	switch t := obj["type"].(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			if name, ok := e.(string); ok {
				types = append(types, name)
			}
		}
	}
	if i := slices.Index(types, "null"); i >= 0 && len(types) > 1 {
		s.Nullable = genai.Ptr(true)
		types = slices.Delete(types, i, i+1)
	}
	switch len(types) {
	case 0:
	case 1:
		s.Type = genai.Type(strings.ToUpper(types[0]))
	default:
		// Several types: one anyOf branch per type, the other keywords
		// beside them.
		for _, t := range types {
			s.AnyOf = append(s.AnyOf, &genai.Schema{Type: genai.Type(strings.ToUpper(t))})
		}
	}
}

func (o *openapi) setEnum(s *genai.Schema, obj map[string]any, ptr string, notes *[]string) {
	values := asList(obj["enum"])
	key := "enum"
	if c, ok := obj["const"]; ok {
		values, key = []any{c}, "const"
	}
	if values == nil {
		return
	}
	var strs []string
	for _, v := range values {
		switch v := v.(type) {
		case string:
			strs = append(strs, v)
		case nil:
			s.Nullable = genai.Ptr(true)
		default:
			o.loss(keyword.Append(ptr, key), "parameters take string enums only; dropped and written into the description")
			*notes = append(*notes, note(key, obj[key]))
			s.Nullable = nil
			return
		}
	}
	if strs == nil {
		s.Type = genai.TypeNULL
		s.Nullable = nil
		return
	}
	s.Enum = strs
}

func (o *openapi) setAnyOf(s *genai.Schema, obj map[string]any, ptr string, stack []string) {
	key := "anyOf"
	branches := asList(obj["anyOf"])
	if one := asList(obj["oneOf"]); one != nil {
		if branches != nil {
			o.loss(keyword.Append(ptr, "oneOf"), "oneOf beside anyOf cannot be expressed; dropped")
		} else {
			o.loss(keyword.Append(ptr, "oneOf"), "oneOf is read as anyOf: a value may match several branches")
			branches, key = one, "oneOf"
		}
	}
	var kept []*genai.Schema
	for i, b := range branches {
		if isNull(b) {
			s.Nullable = genai.Ptr(true)
			continue
		}
		kept = append(kept, o.convert(b, keyword.Append(keyword.Append(ptr, key), strconv.Itoa(i)), stack))
	}
	s.AnyOf = append(s.AnyOf, kept...)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// count is v as an integer, when it is a JSON number that is one.
func count(v any) *int64 { return numberAs(v, json.Number.Int64) }

// number is v as a float64, when it is a JSON number.
func number(v any) *float64 { return numberAs(v, json.Number.Float64) }

// numberAs converts v with conv when v is a JSON number conv accepts, and
// is nil otherwise.
func numberAs[T any](v any, conv func(json.Number) (T, error)) *T {
	n, ok := v.(json.Number)
	if !ok {
		return nil
	}
	x, err := conv(n)
	if err != nil {
		return nil
	}
	return &x
}
