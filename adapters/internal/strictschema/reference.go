// This file holds the strict lowering of $ref: to the root, and to the
// root's definitions, each lowered once, on demand.

package strictschema

import (
	"strconv"
	"strings"
)

// walkRef lowers a node holding $ref.
func (l *lowerer) walkRef(m map[string]any, ref any, ptr string) (any, *Undo, int) {
	for k := range m {
		if k != "$ref" && k != "description" && k != "default" && !annotations[k] {
			l.block(ptr+"/"+escape(k), "$ref with the sibling keyword "+k+" cannot be strict")
		}
	}
	s, _ := ref.(string)
	if s == "#" {
		l.rootRec = true
		if !l.rules.Recursion {
			l.block(ptr+"/$ref", "a recursive schema (a reference to the root) cannot be strict here")
			return nil, &Undo{}, 0
		}
		return map[string]any{"$ref": "#"}, l.rootU, 0
	}
	prefix := "#/" + l.defKey + "/"
	if l.defKey == "" || !strings.HasPrefix(s, prefix) || strings.Contains(s[len(prefix):], "/") {
		l.block(ptr+"/$ref", "only references to the root or to a definition of the root's $defs can be strict; found "+strconv.Quote(s))
		return nil, &Undo{}, 0
	}
	name := unescape(s[len(prefix):])
	d, ok := l.defs[name]
	if !ok {
		l.block(ptr+"/$ref", "the reference "+strconv.Quote(s)+" names no definition")
		return nil, &Undo{}, 0
	}
	target := "#/$defs/" + escape(name)
	if d.active {
		d.recursive = true
		if !l.rules.Recursion {
			l.block(ptr+"/$ref", "a recursive schema (through "+strconv.Quote(s)+") cannot be strict here")
			return nil, &Undo{}, 0
		}
		return map[string]any{"$ref": target}, d.undo, 0
	}
	if !d.done {
		d.active = true
		out, u, h := l.walk(d.raw, "/"+l.defKey+"/"+escape(name), false)
		d.active = false
		d.done = true
		*d.undo = *u
		d.height = h
		if o, ok := out.(map[string]any); ok {
			d.out = o
		} else {
			d.out = map[string]any{}
		}
	}
	desc, hasDesc := m["description"].(string)
	if hasDesc && !d.recursive {
		// Inline, so that the member keeps its own description.
		c := make(map[string]any, len(d.out)+1)
		for k, v := range d.out {
			c[k] = v
		}
		c["description"] = desc
		return c, d.undo, d.height
	}
	return map[string]any{"$ref": target}, d.undo, d.height
}
