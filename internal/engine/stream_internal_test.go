package engine

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOnlyRefConsidersEveryField fails when node gains a field, so that
// whoever adds a keyword also teaches onlyRef about it (a keyword onlyRef
// overlooked would be skipped by CheckJSON), and Diff, which must compare
// every field.
func TestOnlyRefConsidersEveryField(t *testing.T) {
	var fields []string
	for f := range reflect.TypeFor[node]().Fields() {
		fields = append(fields, f.Name)
	}
	require.Equal(t, []string{
		"location", "boolean", "types", "integer", "number", "hasType", "constant", "enum", "format", "ref", "not", "allOf", "anyOf",
		"oneOf", "ifN", "thenN", "elseN", "dependentSchemas", "dependentRequired", "properties",
		"patternProperties", "additional", "noAdditional", "propertyNames", "required", "requiredProperties", "minProps",
		"maxProps", "prefixItems", "items", "contains", "minContains", "maxContains", "minItems",
		"maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "minimum", "maximum",
		"exclusiveMinimum", "exclusiveMaximum", "multipleOf", "uncovered",
	}, fields)
}
