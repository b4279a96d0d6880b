package strictschema

import "strings"

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
