package toolgemini

import (
	"strconv"
	"strings"
)

// checkCycles refuses a schema in which a value could recurse forever through
// required members: Gemini unrolls recursive schemas only through members the
// model may leave out. A cycle passes that test exactly when one of its steps
// is an optional property (or a map value): so the schema is refused when the
// graph of the other steps (required properties, items, anyOf branches and
// $ref) has a cycle.
func checkCycles(l *lowering, root any) {
	c := cycles{l: l, root: root, state: map[string]int{}}
	c.visit("#", root, "")
	// A subschema reached only through optional members may still recurse
	// through required ones: walk every $ref target too.
	var refs []string
	collectRefs(root, &refs)
	for _, ref := range refs {
		if target, at, ok := resolve(root, ref); ok && c.state[ref] == 0 {
			c.visit(ref, target, at)
		}
	}
}

func collectRefs(node any, refs *[]string) {
	switch n := node.(type) {
	case map[string]any:
		if ref, ok := n["$ref"].(string); ok {
			*refs = append(*refs, ref)
		}
		for _, k := range sortedKeys(n) {
			collectRefs(n[k], refs)
		}
	case []any:
		for _, v := range n {
			collectRefs(v, refs)
		}
	}
}

type cycles struct {
	l     *lowering
	root  any
	state map[string]int // by resolved $ref: 1 while being walked, 2 when done
}

const (
	walking = 1
	done    = 2
)

// visit walks the node reached through a $ref to target (or the root).
func (c *cycles) visit(target string, node any, ptr string) {
	c.state[target] = walking
	c.walk(node, ptr)
	c.state[target] = done
}

func (c *cycles) walk(node any, ptr string) {
	obj, ok := node.(map[string]any)
	if !ok {
		return
	}
	if ref, ok := obj["$ref"].(string); ok {
		target, at, found := resolve(c.root, ref)
		switch {
		case !found:
			c.l.refuse(child(ptr, "$ref"), "$ref %q does not point into this schema", ref)
		case c.state[ref] == walking:
			c.l.refuse(child(ptr, "$ref"), "$ref %q recurses through required members only; Gemini unrolls recursion only through optional properties", ref)
		case c.state[ref] == 0:
			c.visit(ref, target, at)
		}
	}
	required := map[string]bool{}
	if req, ok := obj["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				required[s] = true
			}
		}
	}
	if props, ok := obj["properties"].(map[string]any); ok {
		for _, k := range sortedKeys(props) {
			if required[k] {
				c.walk(props[k], child(child(ptr, "properties"), k))
			}
		}
	}
	c.walk(obj["items"], child(ptr, "items"))
	for _, k := range []string{"prefixItems", "anyOf"} {
		if list, ok := obj[k].([]any); ok {
			for i, s := range list {
				c.walk(s, index(child(ptr, k), i))
			}
		}
	}
}

// resolve finds the node a local $ref points to: "#", "#/json/pointer" or
// "#anchor" (a $anchor anywhere in the document), and its JSON pointer.
func resolve(root any, ref string) (any, string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	if frag == "" {
		return root, "", true
	}
	if !strings.HasPrefix(frag, "/") {
		return findAnchor(root, frag, "")
	}
	node := root
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch n := node.(type) {
		case map[string]any:
			next, ok := n[tok]
			if !ok {
				return nil, "", false
			}
			node = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) {
				return nil, "", false
			}
			node = n[i]
		default:
			return nil, "", false
		}
	}
	return node, frag, true
}

func findAnchor(node any, name, ptr string) (any, string, bool) {
	switch n := node.(type) {
	case map[string]any:
		if n["$anchor"] == name {
			return n, ptr, true
		}
		for _, k := range sortedKeys(n) {
			if found, at, ok := findAnchor(n[k], name, child(ptr, k)); ok {
				return found, at, true
			}
		}
	case []any:
		for i, v := range n {
			if found, at, ok := findAnchor(v, name, index(ptr, i)); ok {
				return found, at, true
			}
		}
	}
	return nil, "", false
}
