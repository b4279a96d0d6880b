package keyword

import (
	"errors"
	"iter"
	"slices"
	"strconv"
	"strings"
)

// The walk: every piece of code that visits the subschemas of a schema
// document asks this file which members of a node are subschemas, instead
// of naming the applicator keywords itself. The answer comes from the
// table of shapes (keyword.go), so a keyword added there is walked
// everywhere.
//
// A document here is the tree strictjson (or encoding/json with UseNumber)
// decodes: map[string]any for objects, []any for arrays, and scalars. The
// walk reads the tree and never changes it; it follows no $ref, so it ends
// on every tree, and visits each node of a tree once.
//
// Order is deterministic: the keywords of a node by name, the members of a
// map keyword by name, the items of a list keyword by position.

// A Child is one subschema held directly by a schema node.
type Child struct {
	// Keyword is the keyword whose value holds the subschema.
	Keyword string
	// Shape is Keyword's shape: Schema, SchemaList, SchemaMap,
	// PatternMap or DependencyMap.
	Shape Shape
	// Name is the member name under a map keyword; "" otherwise (and
	// possibly "" under a map keyword, where it is a valid name).
	Name string
	// Index is the position under SchemaList (or in the array form of
	// items); -1 otherwise.
	Index int
	// Schema is the subschema: normally a bool or a map[string]any, but
	// the value as the document has it, whatever its type (the walk does
	// not validate; Fits does).
	Schema any
}

// Pointer returns the JSON pointer of c, given parent, the pointer of the
// node holding it.
func (c Child) Pointer(parent string) string {
	p := Append(parent, c.Keyword)
	switch {
	case c.Index >= 0:
		return p + "/" + strconv.Itoa(c.Index)
	case c.Shape != Schema:
		return Append(p, c.Name)
	}
	return p
}

// Each returns the subschemas held by value, the value of keyword name,
// in order. A keyword that holds no subschema, or a value of the wrong JSON
// type for its shape (a map keyword whose value is not an object), yields
// nothing.
// Under DependencyMap only the members that are not arrays (names) are
// subschemas; "items" given an array (the tuple form of the drafts before
// 2020-12) holds a list of them.
func Each(name string, value any) iter.Seq[Child] {
	shape := Of(name)
	return func(yield func(Child) bool) {
		switch list, isList := value.([]any); shape {
		case Schema:
			if !isList || name != "items" {
				yield(Child{Keyword: name, Shape: shape, Index: -1, Schema: value})
				return
			}
			// items as an array: the tuple of the drafts before
			// 2020-12 (prefixItems since), a list of subschemas.
			for i, s := range list {
				if !yield(Child{Keyword: name, Shape: shape, Index: i, Schema: s}) {
					return
				}
			}
		case SchemaList:
			for i, s := range list {
				if !yield(Child{Keyword: name, Shape: shape, Index: i, Schema: s}) {
					return
				}
			}
		case SchemaMap, PatternMap, DependencyMap:
			m, _ := value.(map[string]any)
			for _, member := range SortedNames(m) {
				s := m[member]
				if _, names := s.([]any); names && shape == DependencyMap {
					continue
				}
				if !yield(Child{Keyword: name, Shape: shape, Name: member, Index: -1, Schema: s}) {
					return
				}
			}
		}
	}
}

// Children returns the subschemas held directly by schema, keyword by
// keyword in name order (see Each). A schema that is not an object (true,
// false or a malformed node) has none.
func Children(schema any) iter.Seq[Child] {
	return func(yield func(Child) bool) {
		m, _ := schema.(map[string]any)
		for _, k := range SortedNames(m) {
			if !Subschemas(Of(k)) {
				continue
			}
			for c := range Each(k, m[k]) {
				if !yield(c) {
					return
				}
			}
		}
	}
}

// Subschemas reports whether a value of shape holds subschemas.
func Subschemas(shape Shape) bool {
	switch shape {
	case Schema, SchemaList, SchemaMap, PatternMap, DependencyMap:
		return true
	}
	return false
}

// Walk visits schema, at pointer ptr, and every subschema below it, depth
// first, a node before its children, in the order of Children. When visit
// returns false the children of that node are skipped. It follows no $ref.
func Walk(schema any, ptr string, visit func(ptr string, schema any) bool) {
	if !visit(ptr, schema) {
		return
	}
	for c := range Children(schema) {
		Walk(c.Schema, c.Pointer(ptr), visit)
	}
}

// SortedNames returns the member names of m in increasing order: the order
// in which everything that reports on a schema visits it, so that reports
// do not depend on Go's map order. A nil map has none.
func SortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Escape returns token escaped as one reference token of a JSON pointer
// (RFC 6901): "~" becomes "~0" and "/" becomes "~1".
func Escape(token string) string {
	if !strings.ContainsAny(token, "~/") {
		return token
	}
	return strings.ReplaceAll(strings.ReplaceAll(token, "~", "~0"), "/", "~1")
}

// Append returns the JSON pointer ptr extended by token, escaped.
func Append(ptr, token string) string { return ptr + "/" + Escape(token) }

// ErrPointer is the error of Unescape and Split for text that is not a
// JSON pointer.
var ErrPointer = errors.New("not a JSON pointer")

// Unescape returns the reference token escaped, unescaped; an error for a
// "~" not followed by "0" or "1".
func Unescape(escaped string) (string, error) {
	if !strings.Contains(escaped, "~") {
		return escaped, nil
	}
	var b strings.Builder
	b.Grow(len(escaped))
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		if c != '~' {
			b.WriteByte(c)
			continue
		}
		if i+1 == len(escaped) || escaped[i+1] != '0' && escaped[i+1] != '1' {
			return "", ErrPointer
		}
		if escaped[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), nil
}

// Split returns the unescaped reference tokens of the JSON pointer ptr:
// none for "", an error for text that does not start with "/" or holds a
// bad escape.
func Split(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, ErrPointer
	}
	tokens := strings.Split(ptr[1:], "/")
	for i, t := range tokens {
		u, err := Unescape(t)
		if err != nil {
			return nil, err
		}
		tokens[i] = u
	}
	return tokens, nil
}

// Resolve returns the value at the JSON pointer ptr in doc, a decoded
// document: members of objects by name, items of arrays by a decimal index
// without leading zeros. False when ptr is not a pointer or leads nowhere.
func Resolve(doc any, ptr string) (any, bool) {
	tokens, err := Split(ptr)
	if err != nil {
		return nil, false
	}
	node := doc
	for _, tok := range tokens {
		switch n := node.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return nil, false
			}
			node = next
		case []any:
			i, ok := arrayIndex(tok)
			if !ok || i >= len(n) {
				return nil, false
			}
			node = n[i]
		default:
			return nil, false
		}
	}
	return node, true
}

// arrayIndex parses an array index token: "0", or digits not starting
// with 0 (RFC 6901).
func arrayIndex(tok string) (int, bool) {
	if tok == "" || len(tok) > 1 && tok[0] == '0' || len(tok) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, false
		}
		n = n*10 + int(tok[i]-'0')
	}
	return n, true
}
