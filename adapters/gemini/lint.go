package toolgemini

import (
	"fmt"
	"strconv"
	"strings"
)

// Lint is one thing Gemini cannot express in a tool's schema, found when the
// tool is projected ([Project], [Tools]). Pointer locates it in the canonical
// schema (RFC 6901), so that the author can find the keyword that caused it.
//
// A Lint from a successful projection describes a loss: the schema Gemini
// receives is looser than the canonical one at that place (the constraint is
// then written into the description there, so the model still reads it).
// [tool.Contract.Prepare], which checks the canonical schema, stays the
// authority: an argument that breaks the dropped constraint is rejected there
// and the model is told why. Losses are listed in [Projection].Lints; the
// same type, in a [ProjectionError], describes a refusal.
type Lint struct {
	// Tool is the name of the Definition.
	Tool string
	// Schema is "input" or "output"; empty for a problem with the name.
	Schema string
	// Pointer is the JSON pointer of the keyword in the canonical schema;
	// "" is the root. On the OpenAPI path, which inlines every $ref, it is
	// the path as if the $refs were inlined: /properties/a/x where
	// /properties/a holds a $ref to a schema with keyword x.
	Pointer string
	// Rule says what Gemini cannot express there and what was done.
	Rule string
}

// String renders the lint on one line: tool, schema, pointer and rule, or,
// for a problem with the tool's name (Schema empty), the tool and the rule.
func (l Lint) String() string {
	if l.Schema == "" {
		return fmt.Sprintf("tool %q: %s", l.Tool, l.Rule)
	}
	p := l.Pointer
	if p == "" {
		p = "(root)"
	}
	return fmt.Sprintf("%s %s schema at %s: %s", l.Tool, l.Schema, p, l.Rule)
}

// child extends a JSON pointer by one reference token, escaped per RFC 6901.
func child(ptr, token string) string {
	token = strings.ReplaceAll(token, "~", "~0")
	token = strings.ReplaceAll(token, "/", "~1")
	return ptr + "/" + token
}

func index(ptr string, i int) string { return ptr + "/" + strconv.Itoa(i) }
