package engine

import (
	"encoding/json"
	"math/big"
	"net/url"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/keyword"
)

// FromDocument compiles doc, a tree of maps, slices, strings, json.Number,
// booleans and nil as strictjson.Parse builds it, straight into a program,
// as draft 2020-12 under base with "format" asserted: every subschema the
// root reaches, each location once, with the location the validator would
// give it. Patterns are compiled by engine, and format returns the
// validator's *jsonschema.Format for a name (nil for a name it does not
// know), or false to have FromDocument decline the document. The caller
// must already know that doc conforms (Conforms): the draft 2020-12
// meta-schema accepts it, and it has no $id, no $vocabulary and only
// fragment references.
//
// FromDocument declines (nil, false) any document it does not know to
// mean exactly what the validator would make of it: a reference that is
// not a JSON pointer into the same document or that points at no schema,
// $anchor anywhere, a reference to a location not reached from the root
// through subschema keywords only, dynamic and recursive references and
// anchors, the unevaluated keywords, "dependencies", $id and $vocabulary,
// and any pattern engine refuses. The caller then compiles the document
// with the validator, and converts its result (FromValidator).
//
// The program shares doc's enum and const values: doc must not be
// modified afterwards. FromDocument is safe for concurrent use when engine
// and format are.
func FromDocument(doc any, base string, engine jsonschema.RegexpEngine, format func(string) (*jsonschema.Format, bool)) (*Program, bool) {
	anchor, refs := scan(doc)
	if anchor {
		return nil, false
	}
	b := builder{doc: doc, base: base, engine: engine, format: format}
	if refs {
		b.at = map[string]*node{}
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
	return &Program{root: root, nodes: b.nodes}, true
}

// scan reports whether any object of v has an $anchor member (the
// validator collects anchors over every subschema location, reached or
// not, and refuses duplicates, which FromDocument does not reproduce), and
// whether any has a $ref member.
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
	n     *node
	ptr   string // escaped JSON pointer, as the validator keys locations
	value any
}

type builder struct {
	doc      any
	base     string
	engine   jsonschema.RegexpEngine
	format   func(string) (*jsonschema.Format, bool)
	at       map[string]*node // by escaped JSON pointer; nil when the document has no reference
	queue    []pending
	nodes    []*node
	slab     []node // allocated together, handed out one by one
	declined bool
}

// slabSize is how many nodes are allocated at once: one allocation
// instead of one per subschema, the program being kept or dropped whole.
const slabSize = 32

func (b *builder) ok() bool { return !b.declined }

// enqueue returns the node at ptr, of value, creating it on first sight
// and queueing it for compile.
func (b *builder) enqueue(ptr string, value any) *node {
	if n, ok := b.at[ptr]; ok {
		return n
	}
	switch value.(type) {
	case map[string]any, bool:
	default:
		b.declined = true
		return nil
	}
	if len(b.slab) == 0 {
		b.slab = make([]node, slabSize)
	}
	n := &b.slab[0]
	b.slab = b.slab[1:]
	*n = *newNode(b.base + "#" + encode(ptr))
	if b.at != nil {
		b.at[ptr] = n
	}
	b.nodes = append(b.nodes, n)
	b.queue = append(b.queue, pending{n: n, ptr: ptr, value: value})
	return n
}

// declinedKeywords are the keywords whose meaning FromDocument does not
// reproduce.
var declinedKeywords = [...]string{
	"$id", "$vocabulary", "$dynamicRef", "$dynamicAnchor", "$recursiveRef", "$recursiveAnchor",
	"unevaluatedItems", "unevaluatedProperties", "dependencies",
}

// compile fills p.n from p.value, keyword by keyword as the validator
// does for draft 2020-12 with every vocabulary active.
func (b *builder) compile(p pending) {
	n := p.n
	obj, isObject := p.value.(map[string]any)
	if !isObject {
		v := p.value.(bool)
		n.boolean = &v
		return
	}
	if len(obj) == 0 {
		v := true
		n.boolean = &v
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
		n.ref = b.reference(ref)
	}
	o.applicators(n)
	o.validation(n)
	n.linkRequired()
	if name, ok := obj["format"].(string); ok {
		f, known := b.format(name)
		if !known {
			b.declined = true
			return
		}
		n.format = f
	}
}

// object is one schema object being compiled.
type object struct {
	b   *builder
	obj map[string]any
	ptr string
}

func (o object) applicators(n *node) {
	n.allOf = o.list("allOf")
	n.anyOf = o.list("anyOf")
	n.oneOf = o.list("oneOf")
	n.not = o.one("not")
	n.properties = o.named("properties")
	if m := o.named("patternProperties"); m != nil {
		for source, sub := range m {
			re, err := o.b.engine(source)
			if err != nil {
				o.b.declined = true
				return
			}
			n.patternProperties = append(n.patternProperties, pattern{source, regexpOf(n, re), sub})
		}
		sortPatterns(n.patternProperties)
	}
	if v, ok := o.obj["additionalProperties"].(bool); ok {
		n.noAdditional = !v
	} else {
		n.additional = o.one("additionalProperties")
	}
	n.contains = o.one("contains")
	n.propertyNames = o.one("propertyNames")
	n.ifN = o.one("if")
	if n.ifN != nil {
		literal, isBool := o.obj["if"].(bool)
		if !isBool || literal {
			n.thenN = o.one("then")
		}
		if !isBool || !literal {
			n.elseN = o.one("else")
		}
	}
	deps := o.named("dependentSchemas")
	for _, name := range keyword.SortedNames(deps) {
		n.dependentSchemas = append(n.dependentSchemas, named{name, deps[name]})
	}
	n.prefixItems = o.list("prefixItems")
	n.items = o.one("items")
}

func (o object) validation(n *node) {
	if t, ok := o.obj["type"]; ok {
		n.setTypes(types(t))
	}
	if values, ok := o.obj["enum"].([]any); ok {
		n.enum = enumOf(values)
	}
	if v, ok := o.obj["const"]; ok {
		n.constant = &v
	}
	if m := o.number("multipleOf"); m != nil {
		n.multipleOf = &multiple{rat: m, exact: ratDecimal(m)}
	}
	n.maximum = newLimit(o.number("maximum"))
	if o.boolean("exclusiveMaximum") {
		n.exclusiveMaximum, n.maximum = n.maximum, nil
	} else {
		n.exclusiveMaximum = newLimit(o.number("exclusiveMaximum"))
	}
	n.minimum = newLimit(o.number("minimum"))
	if o.boolean("exclusiveMinimum") {
		n.exclusiveMinimum, n.minimum = n.minimum, nil
	} else {
		n.exclusiveMinimum = newLimit(o.number("exclusiveMinimum"))
	}
	setInt(&n.minLength, o.integer("minLength"))
	setInt(&n.maxLength, o.integer("maxLength"))
	if source, ok := o.obj["pattern"].(string); ok {
		re, err := o.b.engine(source)
		if err != nil {
			o.b.declined = true
			return
		}
		n.pattern = regexpOf(n, re)
	}
	setInt(&n.minItems, o.integer("minItems"))
	setInt(&n.maxItems, o.integer("maxItems"))
	n.uniqueItems = o.boolean("uniqueItems")
	setInt(&n.maxProps, o.integer("maxProperties"))
	setInt(&n.minProps, o.integer("minProperties"))
	if list, ok := o.obj["required"].([]any); ok {
		n.required = stringsOf(list)
	}
	if n.contains != nil {
		setInt(&n.minContains, o.integer("minContains"))
		setInt(&n.maxContains, o.integer("maxContains"))
	}
	if m, ok := o.obj["dependentRequired"].(map[string]any); ok {
		for _, name := range keyword.SortedNames(m) {
			if list, ok := m[name].([]any); ok {
				n.dependentRequired = append(n.dependentRequired, namedList{name, stringsOf(list)})
			}
		}
	}
}

func (o object) one(k string) *node {
	v, ok := o.obj[k]
	if !ok {
		return nil
	}
	return o.b.enqueue(o.ptr+"/"+keyword.Escape(k), v)
}

func (o object) list(k string) []*node {
	items, ok := o.obj[k].([]any)
	if !ok {
		return nil
	}
	out := make([]*node, len(items))
	for i, v := range items {
		out[i] = o.b.enqueue(o.ptr+"/"+keyword.Escape(k)+"/"+strconv.Itoa(i), v)
	}
	return out
}

func (o object) named(k string) map[string]*node {
	members, ok := o.obj[k].(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]*node, len(members))
	for name, v := range members {
		out[name] = o.b.enqueue(o.ptr+"/"+keyword.Escape(k)+"/"+keyword.Escape(name), v)
	}
	return out
}

func (o object) boolean(k string) bool {
	v, ok := o.obj[k].(bool)
	return ok && v
}

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

func (o object) integer(k string) *int {
	r := o.number(k)
	if r == nil || !r.IsInt() {
		return nil
	}
	n := int(r.Num().Int64())
	return &n
}

// reference returns the node ref names: a JSON pointer fragment of the
// document, reached through subschema keywords only.
func (b *builder) reference(ref string) *node {
	fragment, err := url.PathUnescape(strings.TrimPrefix(ref, "#"))
	if err != nil || !strings.HasPrefix(ref, "#") || (fragment != "" && fragment[0] != '/') {
		b.declined = true
		return nil
	}
	if n, ok := b.at[fragment]; ok {
		return n
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

// holds reports how keyword k holds subschemas, by the keyword model,
// with the older spellings the validator still takes for subschema
// locations: "items" as an array, "additionalItems".
func holds(k string, member any) (one, container bool) {
	_, isMap := member.(map[string]any)
	_, isList := member.([]any)
	switch keyword.Of(k) {
	case keyword.Schema:
		return !(k == "items" && isList), k == "items" && isList
	case keyword.SchemaList:
		return false, isList
	case keyword.SchemaMap, keyword.PatternMap, keyword.DependencyMap:
		return false, isMap
	}
	return k == "additionalItems", false
}

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
		k, err := keyword.Unescape(tokens[i])
		if err != nil {
			return nil, false
		}
		member, ok := obj[k]
		if !ok {
			return nil, false
		}
		switch one, container := holds(k, member); {
		case container:
			if i++; i == len(tokens) {
				return nil, false
			}
			if member, ok = step(member, tokens[i]); !ok {
				return nil, false
			}
		case !one:
			return nil, false
		}
		v = member
	}
	return v, true
}

// step returns the member or item of v that token, an escaped reference
// token, names.
func step(v any, token string) (any, bool) {
	name, err := keyword.Unescape(token)
	if err != nil {
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
