// This file holds the strict lowering of $ref: to the root, and to the
// root's definitions, each lowered once, on demand.

package strictschema

import (
	"strconv"
	"strings"
)

// definition is one definition of the root, as the lowering meets it: it
// is lowered once, by the first reference to it, and every reference
// after shares what that gave.
type definition struct {
	// schema is the definition as the canonical schema holds it.
	schema any
	// lowered is the definition lowered, once walked is true.
	lowered map[string]any
	// undo is the definition's undo node, allocated before its walk so
	// that a reference to it met during the walk can return it.
	undo *Undo
	// walked: the definition is lowered.
	walked bool
	// walking: the definition is being lowered, so a reference to it now
	// is one from within it.
	walking bool
	// height is the definition's height (object nesting levels), once
	// walked.
	height int
	// recursive: some reference to this definition was met while it was
	// being lowered.
	recursive bool
}

// collectDefinitions records the definitions of obj, the root, for walkRef
// to lower on demand. It blocks a definitions keyword whose value is not
// an object, and a root holding both $defs and definitions.
func (l *lowerer) collectDefinitions(obj map[string]any) {
	for _, key := range []string{"$defs", "definitions"} {
		defs, ok := obj[key]
		if !ok {
			continue
		}
		m, ok := defs.(map[string]any)
		if !ok {
			l.block("/"+key, key+" is not an object")
			continue
		}
		if l.definitionsKeyword != "" {
			l.block("/"+key, "both $defs and definitions are present")
			continue
		}
		l.definitionsKeyword = key
		for name, d := range m {
			l.definitions[name] = &definition{schema: d, undo: &Undo{}}
		}
	}
}

// usedDefinitions returns the lowered definitions some reference led to,
// by name, for the $defs of the lowered root, and counts their names'
// characters; nil when none was used.
func (l *lowerer) usedDefinitions() map[string]any {
	var used map[string]any
	for name, d := range l.definitions {
		if !d.walked {
			continue
		}
		if used == nil {
			used = map[string]any{}
		}
		used[name] = d.lowered
		l.result.StringChars += len(name)
	}
	return used
}

// walkRef lowers a node holding $ref.
func (l *lowerer) walkRef(m map[string]any, ref any, ptr string) (any, *Undo, int) {
	for k := range m {
		if k != "$ref" && k != "description" && k != "default" && !annotations[k] {
			l.block(ptr+"/"+escape(k), "$ref with the sibling keyword "+k+" cannot be strict")
		}
	}
	s, _ := ref.(string)
	if s == "#" {
		if !l.rules.Recursion {
			l.block(ptr+"/$ref", "a recursive schema (a reference to the root) cannot be strict here")
			return nil, &Undo{}, 0
		}
		return map[string]any{"$ref": "#"}, l.rootUndo, 0
	}
	prefix := "#/" + l.definitionsKeyword + "/"
	if l.definitionsKeyword == "" || !strings.HasPrefix(s, prefix) || strings.Contains(s[len(prefix):], "/") {
		l.block(ptr+"/$ref", "only references to the root or to a definition of the root's $defs can be strict; found "+strconv.Quote(s))
		return nil, &Undo{}, 0
	}
	name := unescape(s[len(prefix):])
	d, ok := l.definitions[name]
	if !ok {
		l.block(ptr+"/$ref", "the reference "+strconv.Quote(s)+" names no definition")
		return nil, &Undo{}, 0
	}
	target := "#/$defs/" + escape(name)
	if d.walking {
		d.recursive = true
		if !l.rules.Recursion {
			l.block(ptr+"/$ref", "a recursive schema (through "+strconv.Quote(s)+") cannot be strict here")
			return nil, &Undo{}, 0
		}
		return map[string]any{"$ref": target}, d.undo, 0
	}
	if !d.walked {
		d.walking = true
		out, u, h := l.walk(d.schema, "/"+l.definitionsKeyword+"/"+escape(name), false)
		d.walking = false
		d.walked = true
		*d.undo = *u
		d.height = h
		if o, ok := out.(map[string]any); ok {
			d.lowered = o
		} else {
			d.lowered = map[string]any{}
		}
	}
	desc, hasDesc := m["description"].(string)
	if hasDesc && !d.recursive {
		// Inline, so that the member keeps its own description.
		c := make(map[string]any, len(d.lowered)+1)
		for k, v := range d.lowered {
			c[k] = v
		}
		c["description"] = desc
		return c, d.undo, d.height
	}
	return map[string]any{"$ref": target}, d.undo, d.height
}
