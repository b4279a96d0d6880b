package toolgemini

import (
	"strconv"
	"strings"

	"github.com/agentcontract/tool/internal/keyword"
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

// collectRefs appends the $ref of every subschema of node, in the order
// of the walk.
func collectRefs(node any, refs *[]string) {
	keyword.Walk(node, "", func(_ string, s any) bool {
		if m, ok := s.(map[string]any); ok {
			if ref, ok := m["$ref"].(string); ok {
				*refs = append(*refs, ref)
			}
		}
		return true
	})
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
			c.l.refuse(keyword.Append(ptr, "$ref"), "$ref %q does not point into this schema", ref)
		case c.state[ref] == walking:
			c.l.refuse(keyword.Append(ptr, "$ref"), "$ref %q recurses through required members only; Gemini unrolls recursion only through optional properties", ref)
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
		for _, k := range keyword.SortedNames(props) {
			if required[k] {
				c.walk(props[k], keyword.Append(keyword.Append(ptr, "properties"), k))
			}
		}
	}
	c.walk(obj["items"], keyword.Append(ptr, "items"))
	for _, k := range []string{"prefixItems", "anyOf"} {
		if list, ok := obj[k].([]any); ok {
			for i, s := range list {
				c.walk(s, keyword.Append(keyword.Append(ptr, k), strconv.Itoa(i)))
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
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return findAnchor(root, frag)
	}
	node, ok := keyword.Resolve(root, frag)
	return node, frag, ok
}

// findAnchor finds the first subschema, in the order of the walk, whose
// $anchor is name.
func findAnchor(root any, name string) (found any, at string, ok bool) {
	keyword.Walk(root, "", func(ptr string, s any) bool {
		if m, isObj := s.(map[string]any); !ok && isObj && m["$anchor"] == name {
			found, at, ok = m, ptr, true
		}
		return !ok
	})
	return found, at, ok
}
