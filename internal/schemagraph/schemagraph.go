// Package schemagraph builds the graph of *jsonschema.Schema values that
// the validator's compiler would build of a self-contained draft 2020-12
// document, without that compiler: no resource collection, no queue, no
// map allocated per keyword looked for. Only the exported fields the fast
// check and the cost analysis read are filled, and they are filled as the
// compiler fills them; the graph is never handed to the validator.
//
// Build declines (returns nil, false) any document it does not know to
// mean exactly what the compiler would make of it: a reference that is not
// a JSON pointer into the same document or that points at no schema,
// $anchor anywhere, a reference to a location that is not reached from
// the root through subschema keywords only, dynamic and recursive references and anchors, the
// unevaluated keywords, "dependencies", $id and $vocabulary, and any
// pattern the regular-expression engine refuses. The caller then compiles
// the document the ordinary way.
package schemagraph

import (
	"encoding/json"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Build returns the graph of doc, a tree of maps, slices, strings,
// json.Number, booleans and nil as strictjson.Parse builds it, compiled as
// draft 2020-12 under base with "format" asserted: every subschema the
// root reaches, each location once, with its Location written as the
// compiler writes it. Patterns are compiled by engine, and format returns
// the validator's own *Format for a name (nil for a name it does not
// know), or false to have Build decline the document. The caller must
// already know that the draft 2020-12 meta-schema accepts doc and that doc
// has no $id, no $vocabulary and only fragment references (package
// metacheck).
//
// The graph shares doc's enum and const values: doc must not be
// modified afterwards. Build declines with nil, false what it does not
// handle (see the package documentation). It is safe for concurrent use
// when engine and format are.
func Build(doc any, base string, engine jsonschema.RegexpEngine, format func(string) (*jsonschema.Format, bool)) (*jsonschema.Schema, bool) {
	anchor, refs := scan(doc)
	if anchor {
		return nil, false
	}
	b := builder{doc: doc, base: base, engine: engine, format: format}
	if refs {
		b.at = map[string]*jsonschema.Schema{}
	}
	root := b.enqueue("", doc)
	for len(b.queue) > 0 && b.ok() {
		next := b.queue[len(b.queue)-1]
		b.queue = b.queue[:len(b.queue)-1]
		b.compile(next)
	}
	if !b.ok() {
		return nil, false
	}
	return root, true
}

// scan reports whether any object of v has an $anchor member (the
// compiler collects anchors over every subschema location, reached or not,
// and refuses duplicates, which Build does not reproduce), and whether any
// has a $ref member.
func scan(v any) (anchor, refs bool) {
	switch v := v.(type) {
	case map[string]any:
		_, anchor = v["$anchor"]
		_, refs = v["$ref"]
		for _, m := range v {
			a, r := scan(m)
			anchor, refs = anchor || a, refs || r
			if anchor {
				return true, refs
			}
		}
	case []any:
		for _, m := range v {
			a, r := scan(m)
			anchor, refs = anchor || a, refs || r
			if anchor {
				return true, refs
			}
		}
	}
	return anchor, refs
}

type pending struct {
	s     *jsonschema.Schema
	ptr   string // escaped JSON pointer, as the compiler keys locations
	value any
}

type builder struct {
	doc      any
	base     string
	engine   jsonschema.RegexpEngine
	format   func(string) (*jsonschema.Format, bool)
	at       map[string]*jsonschema.Schema // by escaped JSON pointer; nil when the document has no reference
	queue    []pending
	slab     []jsonschema.Schema // allocated together, handed out one by one
	declined bool
}

// slabSize is how many subschemas are allocated at once: one allocation
// instead of one per subschema, the graph being kept or dropped whole.
const slabSize = 32

func (b *builder) ok() bool { return !b.declined }

// enqueue returns the subschema at ptr, of value, creating it on first
// sight and queueing it for compile.
func (b *builder) enqueue(ptr string, value any) *jsonschema.Schema {
	if s, ok := b.at[ptr]; ok {
		return s
	}
	switch value.(type) {
	case map[string]any, bool:
	default:
		b.declined = true
		return nil
	}
	if len(b.slab) == 0 {
		b.slab = make([]jsonschema.Schema, slabSize)
	}
	s := &b.slab[0]
	b.slab = b.slab[1:]
	s.DraftVersion, s.Location = 2020, b.base+"#"+encode(ptr)
	if b.at != nil {
		b.at[ptr] = s
	}
	b.queue = append(b.queue, pending{s: s, ptr: ptr, value: value})
	return s
}

// declinedKeywords are the keywords whose meaning Build does not
// reproduce.
var declinedKeywords = [...]string{
	"$id", "$vocabulary", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
	"unevaluatedItems", "unevaluatedProperties", "dependencies",
}

// compile fills p.s from p.value, keyword by keyword as the compiler does
// for draft 2020-12 with every vocabulary active.
func (b *builder) compile(p pending) {
	s := p.s
	obj, isObject := p.value.(map[string]any)
	if !isObject {
		v := p.value.(bool)
		s.Bool = &v
		return
	}
	if len(obj) == 0 {
		v := true
		s.Bool = &v
		return
	}
	for _, k := range declinedKeywords {
		if _, ok := obj[k]; ok {
			b.declined = true
			return
		}
	}
	o := object{b: b, obj: obj, ptr: p.ptr}
	if ref, ok := obj["$ref"].(string); ok {
		s.Ref = b.reference(ref)
	}
	o.applicators(s)
	o.validation(s)
	if name, ok := obj["format"].(string); ok {
		f, known := b.format(name)
		if !known {
			b.declined = true
			return
		}
		s.Format = f
	}
}

// object is one schema object being compiled.
type object struct {
	b   *builder
	obj map[string]any
	ptr string
}

func (o object) applicators(s *jsonschema.Schema) {
	s.AllOf = o.list("allOf")
	s.AnyOf = o.list("anyOf")
	s.OneOf = o.list("oneOf")
	s.Not = o.one("not")
	s.Properties = o.named("properties")
	if m := o.named("patternProperties"); m != nil {
		s.PatternProperties = make(map[jsonschema.Regexp]*jsonschema.Schema, len(m))
		for source, sub := range m {
			re, err := o.b.engine(source)
			if err != nil {
				o.b.declined = true
				return
			}
			s.PatternProperties[re] = sub
		}
	}
	if v, ok := o.obj["additionalProperties"].(bool); ok {
		s.AdditionalProperties = v
	} else if sub := o.one("additionalProperties"); sub != nil {
		s.AdditionalProperties = sub
	}
	s.Contains = o.one("contains")
	s.PropertyNames = o.one("propertyNames")
	s.If = o.one("if")
	if s.If != nil {
		literal, isBool := o.obj["if"].(bool)
		if !isBool || literal {
			s.Then = o.one("then")
		}
		if !isBool || !literal {
			s.Else = o.one("else")
		}
	}
	s.DependentSchemas = o.named("dependentSchemas")
	s.PrefixItems = o.list("prefixItems")
	s.Items2020 = o.one("items")
}

func (o object) validation(s *jsonschema.Schema) {
	if t, ok := o.obj["type"]; ok {
		s.Types = types(t)
	}
	if values, ok := o.obj["enum"].([]any); ok {
		s.Enum = &jsonschema.Enum{Values: values}
	}
	if v, ok := o.obj["const"]; ok {
		s.Const = &v
	}
	s.MultipleOf = o.number("multipleOf")
	s.Maximum = o.number("maximum")
	if o.boolean("exclusiveMaximum") {
		s.ExclusiveMaximum, s.Maximum = s.Maximum, nil
	} else {
		s.ExclusiveMaximum = o.number("exclusiveMaximum")
	}
	s.Minimum = o.number("minimum")
	if o.boolean("exclusiveMinimum") {
		s.ExclusiveMinimum, s.Minimum = s.Minimum, nil
	} else {
		s.ExclusiveMinimum = o.number("exclusiveMinimum")
	}
	s.MinLength, s.MaxLength = o.integer("minLength"), o.integer("maxLength")
	if pattern, ok := o.obj["pattern"].(string); ok {
		re, err := o.b.engine(pattern)
		if err != nil {
			o.b.declined = true
			return
		}
		s.Pattern = re
	}
	s.MinItems, s.MaxItems = o.integer("minItems"), o.integer("maxItems")
	s.UniqueItems = o.boolean("uniqueItems")
	s.MaxProperties, s.MinProperties = o.integer("maxProperties"), o.integer("minProperties")
	if list, ok := o.obj["required"].([]any); ok {
		s.Required = stringsOf(list)
	}
	if s.Contains != nil {
		s.MinContains, s.MaxContains = o.integer("minContains"), o.integer("maxContains")
	}
	if m, ok := o.obj["dependentRequired"].(map[string]any); ok {
		s.DependentRequired = make(map[string][]string, len(m))
		for name, v := range m {
			if list, ok := v.([]any); ok {
				s.DependentRequired[name] = stringsOf(list)
			}
		}
	}
}

// one is the subschema of keyword k, nil when the object has none.
func (o object) one(k string) *jsonschema.Schema {
	v, ok := o.obj[k]
	if !ok {
		return nil
	}
	return o.b.enqueue(o.ptr+"/"+escape(k), v)
}

// list is the subschemas of an array keyword k; nil when the object has
// none, empty (not nil) when the array is.
func (o object) list(k string) []*jsonschema.Schema {
	items, ok := o.obj[k].([]any)
	if !ok {
		return nil
	}
	out := make([]*jsonschema.Schema, len(items))
	for i, v := range items {
		out[i] = o.b.enqueue(o.ptr+"/"+escape(k)+"/"+strconv.Itoa(i), v)
	}
	return out
}

// named is the subschemas of an object keyword k by name; nil when the
// object has none, empty (not nil) when the keyword's object is.
func (o object) named(k string) map[string]*jsonschema.Schema {
	members, ok := o.obj[k].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]*jsonschema.Schema, len(members))
	for name, v := range members {
		out[name] = o.b.enqueue(o.ptr+"/"+escape(k)+"/"+escape(name), v)
	}
	return out
}

func (o object) boolean(k string) bool {
	v, ok := o.obj[k].(bool)
	return ok && v
}

// number is keyword k as an exact rational, nil when it is not a number.
func (o object) number(k string) *big.Rat {
	n, ok := o.obj[k].(json.Number)
	if !ok {
		return nil
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return nil
	}
	return r
}

// integer is keyword k as an int, nil when it is not an integral number;
// like the compiler, it keeps the low 64 bits of a larger one.
func (o object) integer(k string) *int {
	r := o.number(k)
	if r == nil || !r.IsInt() {
		return nil
	}
	n := int(r.Num().Int64())
	return &n
}

// reference resolves ref, a fragment of the same document, to the
// subschema it names; it declines anything but a JSON pointer to an
// object or boolean.
func (b *builder) reference(ref string) *jsonschema.Schema {
	fragment, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil || !strings.HasPrefix(ref, "#") || (fragment != "" && fragment[0] != '/') {
		b.declined = true
		return nil
	}
	if s, ok := b.at[fragment]; ok {
		return s
	}
	v, ok := b.doc, true
	if fragment != "" {
		v, ok = subschemaAt(v, strings.Split(fragment[1:], "/"))
	}
	if !ok {
		b.declined = true
		return nil
	}
	return b.enqueue(fragment, v)
}

// Where a keyword of a schema object holds subschemas, for draft 2020-12
// and the older keywords the compiler still takes for subschema
// locations: itself, each member of its object, or each item of its
// array ("items" either).
var (
	subschemaKeywords = map[string]bool{
		"not": true, "additionalProperties": true, "items": true, "additionalItems": true,
		"propertyNames": true, "contains": true, "if": true, "then": true, "else": true,
		"unevaluatedProperties": true, "unevaluatedItems": true, "contentSchema": true,
	}
	subschemaMaps = map[string]bool{
		"definitions": true, "properties": true, "patternProperties": true, "dependencies": true,
		"$defs": true, "dependentSchemas": true,
	}
	subschemaLists = map[string]bool{"allOf": true, "anyOf": true, "oneOf": true, "prefixItems": true, "items": true}
)

// subschemaAt returns the value tokens, escaped reference tokens, name in
// doc, when that value is at a location the compiler takes for a
// subschema without validating it against the meta-schema: reached from
// the root through subschema keywords only.
func subschemaAt(doc any, tokens []string) (any, bool) {
	v := doc
	for i := 0; i < len(tokens); i++ {
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		k, ok := unescape(tokens[i])
		if !ok {
			return nil, false
		}
		member, ok := obj[k]
		if !ok {
			return nil, false
		}
		_, isMap := member.(map[string]any)
		_, isList := member.([]any)
		switch {
		case subschemaLists[k] && isList, subschemaMaps[k] && isMap:
			if i++; i == len(tokens) {
				return nil, false
			}
			if member, ok = step(member, tokens[i]); !ok {
				return nil, false
			}
		case !subschemaKeywords[k]:
			return nil, false
		}
		v = member
	}
	return v, true
}

// step returns the member or item of v that token, an escaped reference
// token, names.
func step(v any, token string) (any, bool) {
	name, ok := unescape(token)
	if !ok {
		return nil, false
	}
	switch v := v.(type) {
	case map[string]any:
		m, ok := v[name]
		return m, ok
	case []any:
		i, err := strconv.Atoi(name)
		if err != nil || i < 0 || i >= len(v) || strconv.Itoa(i) != name {
			return nil, false
		}
		return v[i], true
	}
	return nil, false
}

func unescape(token string) (string, bool) {
	if !strings.Contains(token, "~") {
		return token, true
	}
	var sb strings.Builder
	for i := 0; i < len(token); i++ {
		if token[i] != '~' {
			sb.WriteByte(token[i])
			continue
		}
		if i+1 == len(token) {
			return "", false
		}
		switch token[i+1] {
		case '0':
			sb.WriteByte('~')
		case '1':
			sb.WriteByte('/')
		default:
			return "", false
		}
		i++
	}
	return sb.String(), true
}

// escape escapes one reference token.
func escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// encode renders an escaped JSON pointer as the fragment of a Location:
// each token path-escaped, the slashes kept.
func encode(ptr string) string {
	if !needsEscape(ptr) {
		return ptr
	}
	tokens := strings.Split(ptr, "/")
	for i, t := range tokens {
		tokens[i] = url.PathEscape(t)
	}
	return strings.Join(tokens, "/")
}

// types is the type keyword's value as a set; nil when it names no type.
func types(v any) *jsonschema.Types {
	var t jsonschema.Types
	switch v := v.(type) {
	case string:
		t.Add(v)
	case []any:
		for _, item := range v {
			if name, ok := item.(string); ok {
				t.Add(name)
			}
		}
	}
	if t.IsEmpty() {
		return nil
	}
	return &t
}

// stringsOf is the strings of list, in order; nil when there are none.
func stringsOf(list []any) []string {
	var out []string
	for _, v := range list {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// needsEscape reports whether url.PathEscape would change any token of
// ptr: whether ptr holds a byte other than a letter, a digit, a slash or
// one of -._~$&+:=@ (the bytes PathEscape keeps in a path segment).
func needsEscape(ptr string) bool {
	for i := 0; i < len(ptr); i++ {
		switch c := ptr[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("/-._~$&+:=@", c) >= 0:
		default:
			return true
		}
	}
	return false
}
