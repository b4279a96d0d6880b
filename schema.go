package tool

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/fastcheck"
	"github.com/agentcontract/tool/internal/strictjson"
)

// MaxSchemaVisits bounds the work one instance location can cause in a
// schema: the number of subschemas that validating a single JSON value may
// apply to that same value, counted through allOf, anyOf, oneOf, not,
// if/then/else, dependentSchemas and every kind of reference. The count is
// made at every location of the value, members and items included: where
// several keywords apply subschemas to the same member or item (items and
// contains, say, or two branches of an allOf that reach the same
// definition), their counts add up, level after level. ParseSchema
// refuses a schema above the bound, because the validator has no
// cancellation and a small schema of chained anyOf references would
// otherwise take minutes to validate one value. Ordinary schemas stay far
// below it: a chain of a hundred references costs a hundred visits.
const MaxSchemaVisits = 1000

// schemaBase is the URL under which a schema document is compiled. Relative
// references resolve against it (or against the document's own $id), and
// nothing outside the document is ever loaded, so the host never resolves.
const schemaBase = "https://schema.invalid/schema.json"

// Schema is a compiled JSON Schema document.
//
// The zero Schema is invalid: Valid reports false and Validate returns an
// error. A Schema is immutable and safe for concurrent use; copying it is
// cheap and shares the compiled form.
type Schema struct {
	s *compiledSchema
}

type compiledSchema struct {
	canonical []byte // compact, member order and number text as given
	compiled  *jsonschema.Schema
	fast      *fastcheck.Checker // nil when the schema needs the full validator
	strings   map[string]string  // short strings of the document, for interning
	visits    int                // the most subschemas one location of a value can meet
}

// MaxValidationWork bounds the work of validating one value: the number of
// values it holds times the most subschemas one of them can meet in the
// schema (at most MaxSchemaVisits). A value above it is refused before
// validation, with an *InputRejection, because validation has no
// cancellation: a schema near MaxSchemaVisits over a value of MaxInputBytes
// would otherwise take minutes. Ordinary schemas meet a few dozen
// subschemas per location, which admits hundreds of thousands of values.
const MaxValidationWork = 1 << 20

// checkWork refuses a value of so many values that validating it could
// exceed MaxValidationWork.
func (s Schema) checkWork(values int) error {
	if work := values * s.s.visits; work > MaxValidationWork {
		return rejectf("at the root: the value holds %d JSON values; validating them could apply %d subschemas, more than the limit of %d", values, work, MaxValidationWork)
	}
	return nil
}

// Bounds on the strings a schema offers for interning in the values it
// validates: its member names and string values are the likely member
// names and enum values of those values.
const (
	maxInterned       = 1024
	maxInternedLength = 64
)

// collectStrings gathers the short object keys and string values of a
// schema document, each mapped to itself.
func collectStrings(v any, into map[string]string) {
	if len(into) >= maxInterned {
		return
	}
	switch v := v.(type) {
	case string:
		if len(v) <= maxInternedLength {
			into[v] = v
		}
	case map[string]any:
		for k, m := range v {
			if len(k) <= maxInternedLength && len(into) < maxInterned {
				into[k] = k
			}
			collectStrings(m, into)
		}
	case []any:
		for _, m := range v {
			collectStrings(m, into)
		}
	}
}

// parse parses a value this schema is about to validate, reusing the
// schema's own strings where the value repeats them.
func (s Schema) parse(value []byte) (tree any, values int, err error) {
	return strictjson.ParseInterning(value, s.s.strings)
}

// ParseSchema compiles raw, which must be one RFC 7493 JSON document of at
// most MaxInputBytes. The draft is 2020-12 unless the document names another
// with $schema, and "format" is asserted, not just annotated.
//
// Nothing is loaded from outside the document: a $ref to any other URL
// (file, http or otherwise) is refused with an error, never read. A schema
// whose validation work per value could exceed MaxSchemaVisits subschemas is
// refused as well, and so is a document nested deeper than 128 levels of
// arrays and objects or holding more than 4096 objects and booleans (each
// of which can be a subschema): the validator's compiler takes time that
// grows with the square of either (about 80 ms for 128 levels of nested
// properties and 200 ms for 4096 properties here), and a schema can come
// from storage or a peer. Raw is not
// retained; every error wraps ErrInvalidSchema.
func ParseSchema(raw []byte) (Schema, error) {
	if len(raw) > MaxInputBytes {
		return Schema{}, fmt.Errorf("%w: document is %d bytes, more than the limit of %d", ErrInvalidSchema, len(raw), MaxInputBytes)
	}
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return Schema{}, fmt.Errorf("%w: not one I-JSON document: %v", ErrInvalidSchema, err)
	}
	return compileSchema(tree, strictjson.Compact(make([]byte, 0, len(raw)), raw))
}

func compileSchema(tree any, canonical []byte) (Schema, error) {
	return compileSchemaWith(tree, canonical, refuseLoader{})
}

// compileSchemaWith compiles with loader; only tests install another loader
// than refuseLoader.
func compileSchemaWith(tree any, canonical []byte, loader jsonschema.URLLoader) (Schema, error) {
	switch tree.(type) {
	case map[string]any, bool:
	default:
		return Schema{}, fmt.Errorf("%w: a schema must be a JSON object or boolean", ErrInvalidSchema)
	}
	if depth, objects := schemaShape(tree, 1); depth > maxSchemaDepth {
		return Schema{}, fmt.Errorf("%w: the document is nested %d levels deep, more than the limit of %d", ErrInvalidSchema, depth, maxSchemaDepth)
	} else if objects > maxSchemaObjects {
		return Schema{}, fmt.Errorf("%w: the document holds %d objects and booleans, more than the limit of %d", ErrInvalidSchema, objects, maxSchemaObjects)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(dateTimeFormat)
	c.UseLoader(loader)
	if err := c.AddResource(schemaBase, tree); err != nil {
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	compiled, err := c.Compile(schemaBase)
	if err != nil {
		var load *jsonschema.LoadURLError
		if errors.As(err, &load) {
			return Schema{}, fmt.Errorf("%w: reference to %q outside the document is not allowed", ErrInvalidSchema, load.URL)
		}
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	visits := maxVisits(compiled)
	if visits > MaxSchemaVisits {
		return Schema{}, fmt.Errorf("%w: validating one value could apply %d subschemas, more than the limit of %d (nested anyOf/oneOf/allOf through $ref multiply)", ErrInvalidSchema, visits, MaxSchemaVisits)
	}
	if located, bounded := maxLocationVisits(compiled); !bounded {
		return Schema{}, fmt.Errorf("%w: counting the subschemas validating one value could apply would take more than %d steps", ErrInvalidSchema, maxLocationWork)
	} else if located > MaxSchemaVisits {
		return Schema{}, fmt.Errorf("%w: validating one value could apply %d subschemas to one of its members or items, more than the limit of %d (subschemas reached through several keywords multiply at every level)", ErrInvalidSchema, located, MaxSchemaVisits)
	} else {
		visits = max(visits, located)
	}
	interned := map[string]string{}
	collectStrings(tree, interned)
	return Schema{s: &compiledSchema{canonical: canonical, compiled: compiled, fast: fastcheck.Compile(compiled), strings: interned, visits: visits}}, nil
}

// Bounds on the shape of a schema document; see ParseSchema.
const (
	maxSchemaDepth   = 128
	maxSchemaObjects = 4096
)

// schemaShape returns the nesting depth of v (which sits at depth) and the
// number of objects and booleans in it: the values that can be subschemas.
func schemaShape(v any, depth int) (deepest, objects int) {
	deepest = depth - 1
	switch v := v.(type) {
	case bool:
		objects = 1
	case map[string]any:
		deepest, objects = depth, 1
		for _, m := range v {
			d, o := schemaShape(m, depth+1)
			deepest, objects = max(deepest, d), objects+o
		}
	case []any:
		deepest = depth
		for _, m := range v {
			d, o := schemaShape(m, depth+1)
			deepest, objects = max(deepest, d), objects+o
		}
	}
	return deepest, objects
}

// refuseLoader is the only loader a compiler here ever has: metaschemas come
// embedded in the validator, anything else would be I/O on behalf of whoever
// wrote the schema.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("loading %q is not allowed", url)
}

// Valid reports whether s holds a compiled schema. The zero Schema is not
// valid.
func (s Schema) Valid() bool { return s.s != nil }

// JSON returns the schema document in compact form with member order,
// escapes and number text exactly as given. The caller owns the returned
// bytes. It is nil for the zero Schema.
func (s Schema) JSON() json.RawMessage {
	if s.s == nil {
		return nil
	}
	return bytes.Clone(s.s.canonical)
}

// MarshalJSON returns the canonical document, as JSON does. The zero Schema
// cannot be marshalled.
func (s Schema) MarshalJSON() ([]byte, error) {
	if s.s == nil {
		return nil, fmt.Errorf("%w: the zero Schema has no document", ErrInvalidSchema)
	}
	return s.JSON(), nil
}

// UnmarshalJSON parses and compiles data as ParseSchema does. On error s is
// left unchanged.
func (s *Schema) UnmarshalJSON(data []byte) error {
	parsed, err := ParseSchema(data)
	if err != nil {
		return err
	}
	*s = parsed
	return nil
}

// Validate reports whether value, which must be one RFC 7493 JSON document
// of at most MaxInputBytes, satisfies the schema. Numbers are compared
// exactly, never through float64.
//
// A value that is not valid I-JSON or breaks the schema gets an
// *InputRejection whose Message names the JSON pointer of the offending
// value and the rule it breaks, in words fit to show to whoever wrote the
// value. The zero Schema gets an error wrapping ErrInvalidSchema.
func (s Schema) Validate(value []byte) error {
	if s.s == nil {
		return fmt.Errorf("%w: the zero Schema validates nothing", ErrInvalidSchema)
	}
	if len(value) > MaxInputBytes {
		return rejectf("value is %d bytes, more than the limit of %d", len(value), MaxInputBytes)
	}
	tree, values, err := s.parse(value)
	if err != nil {
		return rejectf("invalid JSON %v", err)
	}
	return s.validateTree(tree, values)
}

// validateTree checks an already parsed value.
func (s Schema) validateTree(tree any, values int) error {
	if err := s.checkWork(values); err != nil {
		return err
	}
	if s.s.fast != nil && s.s.fast.Valid(tree) {
		return nil
	}
	// The full validator decides, and says what is wrong.
	err := s.s.compiled.Validate(tree)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return rejectf("value cannot be validated: %v", err)
	}
	return &InputRejection{message: oneLine(violationMessage(verr)), cause: err}
}

var englishPrinter = message.NewPrinter(language.English)

// violationMessage renders one validation error as a single line: the JSON
// pointer of the first offending value, the rule it breaks, and how many
// other problems were found.
func violationMessage(verr *jsonschema.ValidationError) string {
	var leaves []*jsonschema.ValidationError
	collectViolations(verr, &leaves)
	if len(leaves) == 0 {
		leaves = append(leaves, verr)
	}
	// Ordered by instance location, then by schema location: the
	// validator walks some keywords (patternProperties) in map order, and
	// the message must not depend on it, so that the same value always
	// gets the same message (a workflow replaying Prepare relies on it).
	slices.SortStableFunc(leaves, func(a, b *jsonschema.ValidationError) int {
		return cmp.Or(slices.Compare(a.InstanceLocation, b.InstanceLocation), strings.Compare(a.SchemaURL, b.SchemaURL))
	})
	first := leaves[0]
	msg := fmt.Sprintf("at %s: %s", pointer(first.InstanceLocation), describeViolation(first.ErrorKind))
	if more := len(leaves) - 1; more == 1 {
		msg += " (and 1 more problem)"
	} else if more > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", more)
	}
	return msg
}

// describeViolation renders one broken rule. The validator's own text
// prints numeric bounds through float64 in scientific notation with
// superscripts ("9.007199254740992 × 10¹⁵" for a maximum of
// 9007199254740993), which is both wrong and hard to act on; numeric
// rules are rendered here with exact decimals instead.
func describeViolation(k jsonschema.ErrorKind) string {
	var rule string
	var got, want *big.Rat
	switch k := k.(type) {
	case *kind.Minimum:
		rule, got, want = "minimum", k.Got, k.Want
	case *kind.Maximum:
		rule, got, want = "maximum", k.Got, k.Want
	case *kind.ExclusiveMinimum:
		rule, got, want = "exclusiveMinimum", k.Got, k.Want
	case *kind.ExclusiveMaximum:
		rule, got, want = "exclusiveMaximum", k.Got, k.Want
	case *kind.MultipleOf:
		rule, got, want = "multipleOf", k.Got, k.Want
	default:
		return k.LocalizedString(englishPrinter)
	}
	if got == nil || want == nil {
		return k.LocalizedString(englishPrinter)
	}
	return fmt.Sprintf("%s: got %s, want %s", rule, exactDecimal(got), exactDecimal(want))
}

// exactDecimal renders r, which came from a JSON number and so has a
// finite decimal expansion, exactly: plain digits for ordinary magnitudes
// and d.ddde±x beyond them. The digits are those of the number's own
// significand, so the text stays short.
func exactDecimal(r *big.Rat) string {
	num := new(big.Int).Abs(r.Num())
	den := new(big.Int).Set(r.Denom())
	two, five, ten := big.NewInt(2), big.NewInt(5), big.NewInt(10)
	var mod big.Int
	scale := 0 // r = ±num × 10^-scale once den is 1
	for den.Cmp(big.NewInt(1)) != 0 {
		switch {
		case mod.Mod(den, ten).Sign() == 0:
			den.Quo(den, ten)
		case mod.Mod(den, two).Sign() == 0:
			den.Quo(den, two)
			num.Mul(num, five)
		case mod.Mod(den, five).Sign() == 0:
			den.Quo(den, five)
			num.Mul(num, two)
		default:
			return r.FloatString(20) // not a decimal fraction; cannot come from JSON
		}
		scale++
	}
	if num.Sign() == 0 {
		return "0"
	}
	digits := num.String()
	trimmed := strings.TrimRight(digits, "0")
	exp := len(digits) - len(trimmed) - scale // r = ±trimmed × 10^exp
	point := len(trimmed) + exp               // digits before the decimal point
	var out string
	switch {
	case exp >= 0 && point <= 21:
		out = trimmed + strings.Repeat("0", exp)
	case exp < 0 && point > 0:
		out = trimmed[:point] + "." + trimmed[point:]
	case exp < 0 && point > -6:
		out = "0." + strings.Repeat("0", -point) + trimmed
	default:
		out = trimmed[:1]
		if len(trimmed) > 1 {
			out += "." + trimmed[1:]
		}
		out += fmt.Sprintf("e%+d", point-1)
	}
	if r.Sign() < 0 {
		out = "-" + out
	}
	return out
}

// collectViolations gathers the errors that say what is wrong, looking
// through the ones that only group others. It stops at anyOf and oneOf: the
// causes of a failed alternative are guesses, the alternative is the fact.
func collectViolations(e *jsonschema.ValidationError, out *[]*jsonschema.ValidationError) {
	switch e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, c := range e.Causes {
			collectViolations(c, out)
		}
		return
	case *kind.AnyOf, *kind.OneOf:
		// When all alternatives but one failed on the type of the value
		// alone (a nullable field that is not null, say), the one that
		// matched the type says what is wrong.
		// Each cause is walked once: walking the chosen one again would
		// double the work at every nested anyOf, 2^depth in all.
		var candidate []*jsonschema.ValidationError
		matches := 0
		for _, c := range e.Causes {
			var leaves []*jsonschema.ValidationError
			collectViolations(c, &leaves)
			if !onlyTypeMismatch(leaves, e.InstanceLocation) {
				candidate = leaves
				matches++
			}
		}
		if matches == 1 {
			*out = append(*out, candidate...)
			return
		}
	}
	*out = append(*out, e)
}

// onlyTypeMismatch reports whether leaves are just a wrong type at loc.
func onlyTypeMismatch(leaves []*jsonschema.ValidationError, loc []string) bool {
	if len(leaves) == 0 {
		return false
	}
	for _, l := range leaves {
		if _, ok := l.ErrorKind.(*kind.Type); !ok || !slices.Equal(l.InstanceLocation, loc) {
			return false
		}
	}
	return true
}

// pointer renders reference tokens as an RFC 6901 JSON pointer for a
// message; see strictjson.Where.
func pointer(tokens []string) string {
	if len(tokens) == 0 {
		return strictjson.Where("")
	}
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		t = strings.ReplaceAll(t, "~", "~0")
		b.WriteString(strings.ReplaceAll(t, "/", "~1"))
	}
	return b.String()
}

// maxVisits returns the largest number of subschemas validating one
// instance location can apply, over every subschema of root. Edges that
// stay on the same instance location (applicators and references) add up;
// edges that descend into children (properties, items, ...) start a new
// location and are only followed to find more subschemas. A reference cycle
// that stays on one location is counted once, as the validator stops it.
func maxVisits(root *jsonschema.Schema) int {
	all, anchors := reachable(root)

	const inProgress = -1
	memo := make(map[*jsonschema.Schema]int, len(all))
	var visits func(*jsonschema.Schema) int
	visits = func(s *jsonschema.Schema) int {
		switch n, ok := memo[s]; {
		case ok && n == inProgress:
			return 1
		case ok:
			return n
		}
		memo[s] = inProgress
		total := 1
		for _, c := range sameLocation(s, anchors) {
			total += visits(c)
			if total > MaxSchemaVisits {
				total = MaxSchemaVisits + 1 // saturate: the answer is already "too many"
			}
		}
		memo[s] = total
		return total
	}
	highest := 0
	for _, s := range all {
		highest = max(highest, visits(s))
	}
	return highest
}

// sameLocation lists the subschemas s applies to the value it is applied
// to. With anchors, a dynamic reference counts every subschema its anchor
// could resolve to.
func sameLocation(s *jsonschema.Schema, anchors map[string][]*jsonschema.Schema) []*jsonschema.Schema {
	return append(staticSameLocation(s), dynamicTargets(s, anchors)...)
}

// dynamicTargets lists the subschemas a dynamic reference of s could
// resolve to: its static target and, with anchors, every subschema that
// declares its anchor. Exactly one of them applies.
func dynamicTargets(s *jsonschema.Schema, anchors map[string][]*jsonschema.Schema) []*jsonschema.Schema {
	if s.DynamicRef == nil {
		return nil
	}
	var out []*jsonschema.Schema
	if s.DynamicRef.Ref != nil {
		out = append(out, s.DynamicRef.Ref)
	}
	if s.DynamicRef.Anchor != "" {
		out = append(out, anchors[s.DynamicRef.Anchor]...)
	}
	return out
}

// staticSameLocation is sameLocation without dynamic references.
func staticSameLocation(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c ...*jsonschema.Schema) {
		for _, x := range c {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	for _, k := range sortedKeys(s.DependentSchemas) {
		add(s.DependentSchemas[k])
	}
	for _, k := range sortedKeys(s.Dependencies) {
		if c, ok := s.Dependencies[k].(*jsonschema.Schema); ok {
			add(c)
		}
	}
	return out
}

// childLocations lists the subschemas s applies to members, items or
// decoded content of the value.
func childLocations(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c ...*jsonschema.Schema) {
		for _, x := range c {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	addAny := func(v any) {
		switch v := v.(type) {
		case *jsonschema.Schema:
			add(v)
		case []*jsonschema.Schema:
			add(v...)
		}
	}
	add(s.PropertyNames, s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	for _, k := range sortedKeys(s.Properties) {
		add(s.Properties[k])
	}
	for _, c := range s.PatternProperties {
		add(c)
	}
	addAny(s.AdditionalProperties)
	addAny(s.Items)
	addAny(s.AdditionalItems)
	add(s.PrefixItems...)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// maxLocationWork bounds the steps maxLocationVisits may take, so that the
// analysis itself stays well under a second. Ordinary schemas, even
// documents of MaxInputBytes, take a small fraction of it.
const maxLocationWork = 1 << 21

// maxLocationVisits returns the largest number of subschemas validating one
// value could apply to a single location of that value, at any depth. It
// complements maxVisits, which counts from one subschema only: the members
// and items of a value receive subschemas from every subschema applied to
// the value itself (items and contains both apply to every item; two
// branches of an allOf may each reach the same definition), so the counts
// multiply level after level. It follows the value down, one location at a
// time, with the multiset of subschemas entering that location, until no
// new multiset appears or the nesting bound of strictjson is reached.
// Bounded reports false when the analysis would exceed maxLocationWork
// steps.
func maxLocationVisits(root *jsonschema.Schema) (visits int, bounded bool) {
	const saturated = MaxSchemaVisits + 1
	anchors := dynamicAnchors(root)
	work := 0

	// apply adds to applied the subschemas that n applications of s apply
	// to the same location, s included, and returns how many there are. A
	// subschema already on the path is counted and not followed, as the
	// validator stops the cycle there. Of the targets of a dynamic
	// reference only one applies, so they are merged by taking the larger
	// count of each subschema, not the sum. It gives up past the limit.
	onPath := map[*jsonschema.Schema]bool{}
	static := map[*jsonschema.Schema][]*jsonschema.Schema{}
	var apply func(s *jsonschema.Schema, n int, applied map[*jsonschema.Schema]int) int
	apply = func(s *jsonschema.Schema, n int, applied map[*jsonschema.Schema]int) int {
		work++
		if onPath[s] {
			return n
		}
		applied[s] = min(applied[s]+n, saturated)
		total := n
		onPath[s] = true
		defer func() { onPath[s] = false }()
		subs, ok := static[s]
		if !ok {
			subs = staticSameLocation(s)
			static[s] = subs
		}
		for _, sub := range subs {
			total = min(total+apply(sub, n, applied), saturated)
			if total > MaxSchemaVisits {
				return total
			}
		}
		if targets := dynamicTargets(s, anchors); len(targets) > 0 {
			merged := map[*jsonschema.Schema]int{}
			largest := 0
			for _, target := range targets {
				one := map[*jsonschema.Schema]int{}
				largest = max(largest, apply(target, n, one))
				for x, k := range one {
					merged[x] = max(merged[x], k)
				}
			}
			for x, k := range merged {
				applied[x] = min(applied[x]+k, saturated)
			}
			total = min(total+largest, saturated)
		}
		return total
	}

	type location struct {
		entering map[*jsonschema.Schema]int
		depth    int // of the value at this location; the root value is at 1
	}
	seen := map[string]bool{}
	ids := map[*jsonschema.Schema]int{}
	key := func(m map[*jsonschema.Schema]int) string {
		for s := range m {
			if _, ok := ids[s]; !ok {
				ids[s] = len(ids)
			}
		}
		var b []byte
		for _, s := range sortedSchemas(m, ids) {
			b = strconv.AppendInt(b, int64(ids[s]), 10)
			b = append(b, '*')
			b = strconv.AppendInt(b, int64(m[s]), 10)
			b = append(b, ',')
		}
		return string(b)
	}

	applied := map[*jsonschema.Schema]int{} // reused: cleared for every location
	queue := []location{{entering: map[*jsonschema.Schema]int{root: 1}, depth: 1}}
	seen[key(queue[0].entering)] = true
	for len(queue) > 0 {
		loc := queue[0]
		queue = queue[1:]

		// Everything applied at this location, with multiplicity.
		clear(applied)
		total := 0
		for _, s := range sortedSchemas(loc.entering, ids) {
			clear(onPath)
			total = min(total+apply(s, loc.entering[s], applied), saturated)
			if total > MaxSchemaVisits {
				break
			}
		}
		visits = max(visits, total)
		if total > MaxSchemaVisits {
			return visits, true
		}
		if work > maxLocationWork {
			return visits, false
		}
		if loc.depth > strictjson.MaxDepth {
			continue // a value this deep holds no arrays or objects
		}
		for _, child := range childMultisets(applied) {
			work += len(child)
			k := key(child)
			if !seen[k] {
				seen[k] = true
				queue = append(queue, location{entering: child, depth: loc.depth + 1})
			}
		}
	}
	return visits, true
}

// sortedSchemas returns the keys of m in the order of their ids.
func sortedSchemas(m map[*jsonschema.Schema]int, ids map[*jsonschema.Schema]int) []*jsonschema.Schema {
	out := make([]*jsonschema.Schema, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b *jsonschema.Schema) int { return ids[a] - ids[b] })
	return out
}

// childMultisets returns, for each kind of member or item a value could
// have, the multiset of subschemas applied reaches it with: one per
// property name any applied subschema names, one for every other name, one
// for property names themselves, one per prefix index, one for the items
// after every prefix, and one for decoded content. Where it is not known
// which keyword applies (a name that no schema lists could match any
// pattern), every candidate is counted.
func childMultisets(applied map[*jsonschema.Schema]int) []map[*jsonschema.Schema]int {
	var out []map[*jsonschema.Schema]int
	addTo := func(m map[*jsonschema.Schema]int, s *jsonschema.Schema, n int) {
		if s != nil {
			m[s] = min(m[s]+n, MaxSchemaVisits+1)
		}
	}
	keep := func(m map[*jsonschema.Schema]int) {
		if len(m) > 0 {
			out = append(out, m)
		}
	}
	schemaOf := func(v any) *jsonschema.Schema {
		s, _ := v.(*jsonschema.Schema)
		return s
	}

	// Members.
	names := map[string]bool{}
	prefix := 0
	for s := range applied {
		for name := range s.Properties {
			names[name] = true
		}
		prefix = max(prefix, len(s.PrefixItems))
		if list, ok := s.Items.([]*jsonschema.Schema); ok {
			prefix = max(prefix, len(list))
		}
	}
	for _, name := range sortedKeys(names) {
		m := map[*jsonschema.Schema]int{}
		for s, n := range applied {
			p, listed := s.Properties[name]
			addTo(m, p, n)
			matched := false
			for re, ps := range s.PatternProperties {
				if re.MatchString(name) {
					addTo(m, ps, n)
					matched = true
				}
			}
			if !listed && !matched {
				addTo(m, schemaOf(s.AdditionalProperties), n)
			}
			addTo(m, s.UnevaluatedProperties, n)
		}
		keep(m)
	}
	other := map[*jsonschema.Schema]int{}
	propertyNames := map[*jsonschema.Schema]int{}
	content := map[*jsonschema.Schema]int{}
	for s, n := range applied {
		for _, ps := range s.PatternProperties {
			addTo(other, ps, n)
		}
		addTo(other, schemaOf(s.AdditionalProperties), n)
		addTo(other, s.UnevaluatedProperties, n)
		addTo(propertyNames, s.PropertyNames, n)
		addTo(content, s.ContentSchema, n)
	}
	keep(other)
	keep(propertyNames)
	keep(content)

	// Items: index i for every prefix position, then any later index.
	for i := 0; i <= prefix; i++ {
		m := map[*jsonschema.Schema]int{}
		for s, n := range applied {
			if i < len(s.PrefixItems) {
				addTo(m, s.PrefixItems[i], n)
			} else {
				addTo(m, s.Items2020, n)
			}
			switch items := s.Items.(type) {
			case *jsonschema.Schema:
				addTo(m, items, n)
			case []*jsonschema.Schema:
				if i < len(items) {
					addTo(m, items[i], n)
				} else {
					addTo(m, schemaOf(s.AdditionalItems), n)
				}
			}
			addTo(m, s.Contains, n)
			addTo(m, s.UnevaluatedItems, n)
		}
		keep(m)
	}
	return out
}

// dynamicAnchors maps every dynamic anchor name reachable from root to the
// subschemas that declare it.
func dynamicAnchors(root *jsonschema.Schema) map[string][]*jsonschema.Schema {
	_, anchors := reachable(root)
	return anchors
}

// reachable lists every subschema reachable from root, and maps every
// dynamic anchor name among them to the subschemas that declare it.
func reachable(root *jsonschema.Schema) (all []*jsonschema.Schema, anchors map[string][]*jsonschema.Schema) {
	seen := map[*jsonschema.Schema]bool{}
	anchors = map[string][]*jsonschema.Schema{}
	var collect func(*jsonschema.Schema)
	collect = func(s *jsonschema.Schema) {
		if s == nil || seen[s] {
			return
		}
		seen[s] = true
		all = append(all, s)
		if s.DynamicAnchor != "" {
			anchors[s.DynamicAnchor] = append(anchors[s.DynamicAnchor], s)
		}
		for _, c := range sameLocation(s, nil) {
			collect(c)
		}
		for _, c := range childLocations(s) {
			collect(c)
		}
	}
	collect(root)
	return all, anchors
}
