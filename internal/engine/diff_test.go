package engine

import (
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/agentcontract/tool/internal/strictjson"
)

// Diff walks the programs a and b in step and describes the first
// difference it meets, or returns "" when they are equal: the same shape
// of nodes (shared where the other shares), the same keywords and values.
// Formats are compared by name and function. Diff proves two ways of
// compiling one schema equal; it only reads a and b, and either may be nil.
func Diff(a, b *Program) string {
	if a == nil || b == nil {
		if a == b {
			return ""
		}
		return fmt.Sprintf("one program is nil: %v, %v", a == nil, b == nil)
	}
	d := differ{pairs: map[*node]*node{}, back: map[*node]*node{}}
	d.node("#", a.root, b.root)
	return d.first
}

type differ struct {
	pairs, back map[*node]*node // a's node to b's, and b's to a's
	first       string
}

func (d *differ) fail(at, format string, args ...any) {
	if d.first == "" {
		d.first = at + ": " + fmt.Sprintf(format, args...)
	}
}

// node compares a and b, reached at at, and what they reach.
func (d *differ) node(at string, a, b *node) {
	if d.first != "" {
		return
	}
	if a == nil || b == nil {
		if a != b {
			d.fail(at, "one subschema is absent")
		}
		return
	}
	if seen, ok := d.pairs[a]; ok || d.back[b] != nil {
		if seen != b {
			d.fail(at, "shared differently")
		}
		return
	}
	d.pairs[a], d.back[b] = b, a
	d.source(at, a, b)
	d.uncovered(at, a.uncovered, b.uncovered)
	if !equalPointers(a.boolean, b.boolean) {
		d.fail(at, "boolean schema %v, %v", a.boolean, b.boolean)
	}
	if a.types != b.types || a.integer != b.integer || a.number != b.number || a.hasType != b.hasType {
		d.fail(at, "types differ")
	}
	if !reflect.DeepEqual(a.enum, b.enum) {
		d.fail(at, "enum differs")
	}
	d.applicators(at, a, b)
	d.objectKeywords(at, a, b)
	d.arrayKeywords(at, a, b)
	d.scalarKeywords(at, a, b)
}

// source compares what the check reads of the compiled subschemas.
func (d *differ) source(at string, a, b *node) {
	switch {
	case a.location != b.location:
		d.fail(at, "location %q, %q", a.location, b.location)
	case (a.constant == nil) != (b.constant == nil) || a.constant != nil && !reflect.DeepEqual(*a.constant, *b.constant):
		d.fail(at, "const differs")
	case (a.format == nil) != (b.format == nil):
		d.fail(at, "format %v, %v", a.format, b.format)
	case a.format != nil && (a.format.Name != b.format.Name || reflect.ValueOf(a.format.Validate).Pointer() != reflect.ValueOf(b.format.Validate).Pointer()):
		d.fail(at, "format %q, %q", a.format.Name, b.format.Name)
	}
}

// uncovered compares what the check does not cover.
func (d *differ) uncovered(at string, a, b *uncovered) {
	if a == nil || b == nil {
		if a != b {
			d.fail(at, "one is covered, the other not")
		}
		return
	}
	if a.dynamicAnchor != b.dynamicAnchor || a.dynamicRefAnchor != b.dynamicRefAnchor {
		d.fail(at, "dynamic anchors differ")
	}
	d.node(at+"/$recursiveRef", a.recursiveRef, b.recursiveRef)
	d.node(at+"/$dynamicRef", a.dynamicRef, b.dynamicRef)
	d.node(at+"/unevaluatedProperties", a.unevaluatedProperties, b.unevaluatedProperties)
	d.node(at+"/unevaluatedItems", a.unevaluatedItems, b.unevaluatedItems)
	d.node(at+"/contentSchema", a.contentSchema, b.contentSchema)
}

func (d *differ) applicators(at string, a, b *node) {
	d.node(at+"/$ref", a.ref, b.ref)
	d.node(at+"/not", a.not, b.not)
	d.list(at+"/allOf", a.allOf, b.allOf)
	d.list(at+"/anyOf", a.anyOf, b.anyOf)
	d.list(at+"/oneOf", a.oneOf, b.oneOf)
	d.node(at+"/if", a.ifN, b.ifN)
	d.node(at+"/then", a.thenN, b.thenN)
	d.node(at+"/else", a.elseN, b.elseN)
	if len(a.dependentSchemas) != len(b.dependentSchemas) {
		d.fail(at, "dependentSchemas differ")
		return
	}
	for i, x := range a.dependentSchemas {
		if x.name != b.dependentSchemas[i].name {
			d.fail(at, "dependentSchemas name %q, %q", x.name, b.dependentSchemas[i].name)
		}
		d.node(at+"/dependentSchemas/"+x.name, x.node, b.dependentSchemas[i].node)
	}
	if !reflect.DeepEqual(a.dependentRequired, b.dependentRequired) {
		d.fail(at, "dependentRequired differs")
	}
}

func (d *differ) objectKeywords(at string, a, b *node) {
	if !slices.Equal(slices.Sorted(maps.Keys(a.properties)), slices.Sorted(maps.Keys(b.properties))) {
		d.fail(at, "property names differ")
		return
	}
	for _, k := range slices.Sorted(maps.Keys(a.properties)) {
		d.node(at+"/properties/"+k, a.properties[k], b.properties[k])
	}
	if len(a.patternProperties) != len(b.patternProperties) {
		d.fail(at, "patternProperties differ")
		return
	}
	for i, p := range a.patternProperties {
		if p.source != b.patternProperties[i].source {
			d.fail(at, "patternProperties pattern %q, %q", p.source, b.patternProperties[i].source)
		}
		d.node(at+"/patternProperties/"+p.source, p.node, b.patternProperties[i].node)
	}
	d.node(at+"/additionalProperties", a.additional, b.additional)
	d.node(at+"/propertyNames", a.propertyNames, b.propertyNames)
	if a.noAdditional != b.noAdditional || !slices.Equal(a.required, b.required) || a.minProps != b.minProps || a.maxProps != b.maxProps {
		d.fail(at, "object keywords differ")
	}
}

func (d *differ) arrayKeywords(at string, a, b *node) {
	d.list(at+"/prefixItems", a.prefixItems, b.prefixItems)
	d.node(at+"/items", a.items, b.items)
	d.node(at+"/contains", a.contains, b.contains)
	if a.minContains != b.minContains || a.maxContains != b.maxContains || a.minItems != b.minItems || a.maxItems != b.maxItems || a.uniqueItems != b.uniqueItems {
		d.fail(at, "array keywords differ")
	}
}

func (d *differ) scalarKeywords(at string, a, b *node) {
	if a.minLength != b.minLength || a.maxLength != b.maxLength {
		d.fail(at, "string lengths differ")
	}
	if (a.pattern == nil) != (b.pattern == nil) || a.pattern != nil && a.pattern.String() != b.pattern.String() {
		d.fail(at, "pattern differs")
	}
	for i, pair := range [...][2]*limit{{a.minimum, b.minimum}, {a.maximum, b.maximum}, {a.exclusiveMinimum, b.exclusiveMinimum}, {a.exclusiveMaximum, b.exclusiveMaximum}} {
		x, y := pair[0], pair[1]
		if (x == nil) != (y == nil) || x != nil && (x.rat.Cmp(y.rat) != 0 || x.exact != y.exact || x.float != y.float) {
			d.fail(at, "numeric bound %d differs", i)
		}
	}
	x, y := a.multipleOf, b.multipleOf
	if (x == nil) != (y == nil) || x != nil && (x.rat.Cmp(y.rat) != 0 || x.exact != y.exact) {
		d.fail(at, "multipleOf differs")
	}
}

func (d *differ) list(at string, a, b []*node) {
	if len(a) != len(b) {
		d.fail(at, "%d subschemas, %d", len(a), len(b))
		return
	}
	for i := range a {
		d.node(fmt.Sprintf("%s/%d", at, i), a[i], b[i])
	}
}

// equalPointers reports whether a and b are both nil or point to equal
// values.
func equalPointers[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// Compilations compiles tree both ways the shortcut may: straight from the
// document, and by the validator under the shortcut's URL, converted. It
// returns ok false when the shortcut does not apply or FromDocument
// declines; err is the validator's error.
func Compilations(tree any) (built, compiled *Program, ok bool, err error) {
	patterns, validRegex := documentEngine()
	if !Conforms(tree, validRegex) {
		return nil, nil, false, nil
	}
	if built, ok = FromDocument(tree, shortcutBase, patterns, validatorFormat); !ok {
		return nil, nil, false, nil
	}
	_, validated, err := compileValidator(tree, refuseLoader{}, shortcutBase, patterns)
	if err != nil {
		return built, nil, true, err
	}
	compiled = FromValidator(validated)
	// As Compile does, so that no check pays for a compilation: the charge
	// for matching a pattern reads the size of its program.
	if compilePatterns(compiled.Analyze(MaxSchemaVisits, strictjson.MaxDepth).Patterns) != nil {
		return nil, nil, false, nil
	}
	return built, compiled, true, nil
}
