// This file holds the rule sets of the strict modes: Action, what Rules
// decide keyword by keyword, and the rules of OpenAI and Anthropic.

package strictschema

import (
	"encoding/json"
	"slices"
	"strings"
)

// Action is what a lowering does with one keyword of a schema node, as a
// rule set decides it. The zero Action is Drop.
type Action uint8

// The actions of a rule set.
const (
	// Drop leaves the keyword out without a finding: an annotation or an
	// unknown keyword, which decides no value's validity.
	Drop Action = iota
	// Keep sends the keyword; the subschemas it holds are lowered.
	Keep
	// Relax leaves the keyword out and writes it into the node's
	// description, with a Relaxed finding: the provider does not enforce
	// it, Prepare still does.
	Relax
	// Block is a Blocked finding: the provider cannot be told the keyword,
	// and dropping it would admit what the canonical schema refuses.
	Block
	// Rewrite hands the keyword to the rule set's own code (see
	// Open.Rewrite): the provider takes it in another form.
	Rewrite
)

// Action says what the strict lowering does with keyword k, of value v,
// when the lowering has no handling of its own for k (the applicators,
// type, enum, const and additionalProperties it lowers itself): Keep for
// what the provider enforces, Relax for a constraint it does not, Block
// for a keyword no strict mode takes, Drop for the rest.
func (r Rules) Action(k string, v any) Action {
	switch k {
	case "description", "required":
		return Keep
	case "default":
		return keepIf(r.Default, Drop)
	case "minItems":
		if n, ok := v.(json.Number); ok && r.MinItemsUpTo >= 0 {
			if i, err := n.Int64(); err != nil || i > int64(r.MinItemsUpTo) {
				return Relax
			}
		}
		return Keep
	case "maxItems":
		return keepIf(r.MaxItems, Relax)
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		return keepIf(r.NumberBounds, Relax)
	case "pattern":
		p, _ := v.(string)
		return keepIf(r.PatternProblem == nil || r.PatternProblem(p) == "", Relax)
	case "format":
		f, _ := v.(string)
		return keepIf(slices.Contains(r.Formats, f), Relax)
	case "minLength", "maxLength", "uniqueItems", "minProperties", "maxProperties",
		"contentEncoding", "contentMediaType":
		return Relax
	}
	if unsupported(k) {
		return Block
	}
	// Annotations and unknown keywords constrain nothing in 2020-12.
	return Drop
}

// keepIf is Keep when the provider enforces the keyword, otherwise not.
func keepIf(enforced bool, not Action) Action {
	if enforced {
		return Keep
	}
	return not
}

// OpenAI is the strict subset of OpenAI's Structured Outputs, shared by
// Chat Completions and Responses: every member required (optional ones
// nullable), recursion allowed, number and item-count bounds enforced,
// lengths and default not.
var OpenAI = Rules{
	RequireAll:   true,
	Recursion:    true,
	NumberBounds: true,
	MaxItems:     true,
	MinItemsUpTo: -1,
	Formats:      []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"},
}

// Anthropic is the strict subset of Anthropic's strict tool use: optional
// members allowed, allOf without $ref, no recursion, no number, length or maxItems bounds,
// minItems 0 or 1 only, patterns without backreferences, lookaround or
// word boundaries.
var Anthropic = Rules{
	AllOf:          true,
	MinItemsUpTo:   1,
	Default:        true,
	Formats:        []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
	PatternProblem: anthropicPattern,
}

// anthropicPattern says why pattern uses a regular expression feature
// Anthropic's strict mode refuses.
func anthropicPattern(pattern string) string {
	for _, look := range []string{"(?=", "(?!", "(?<=", "(?<!"} {
		if strings.Contains(pattern, look) {
			return "lookaround"
		}
	}
	for i := 0; i+1 < len(pattern); i++ {
		if pattern[i] != '\\' {
			continue
		}
		switch c := pattern[i+1]; {
		case c >= '1' && c <= '9', c == 'k':
			return "backreference"
		case c == 'b', c == 'B':
			return "word boundary"
		}
		i++ // the escaped character is not a metacharacter
	}
	return ""
}
