package tool

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/agentcontract/tool/internal/fastcheck"
	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/schemacost"
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
	costs     keywordCosts       // for the full validator's cost model
}

// MaxValidationWork bounds the work of checking one value against a
// schema, in steps. A step is one short operation: one subschema applied
// to one value costs a few, matching a string against a pattern costs its
// length times the size of the pattern's compiled program, looking a
// string up in an enum costs its length, comparing another value with an
// enum or a constant costs the size of what is compared, and recording a
// violation costs a few more. A value whose check would take more is
// refused with an *InputRejection that says so, and where the limit was
// reached when that is known; validation is charged as it goes and stops
// there. The bound keeps one check within the budget the package
// documentation states ("What one call may cost"); ordinary arguments take
// a few thousand steps.
const MaxValidationWork = 12 << 20

// checkWork refuses, before the full validator runs, a value whose check
// could exceed MaxValidationWork by the cost model of the full validator;
// see fullValidatorWork.
func (s Schema) checkWork(tree any) error {
	if work := s.s.fullValidatorWork(tree); work > MaxValidationWork {
		return rejectf("at the root: checking the value against the schema could take %d steps of work, more than the limit of %d (MaxValidationWork); send fewer or shorter values", work, MaxValidationWork)
	}
	return nil
}

// workExhausted is the rejection of a value whose check ran out of steps.
// Where is the location the check had reached; the root stands for the
// whole value when it is not known.
func workExhausted(where []string) *InputRejection {
	return rejectf("at %s: checking the value against the schema takes more than the limit of %d steps of work (MaxValidationWork); send fewer or shorter values", clippedPointer(where), MaxValidationWork)
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
// (file, http or otherwise), even in a definition nothing references, is
// refused with an error, never read. Refused as well, each with a message
// naming the keyword and its location: a schema whose validation work per
// value could exceed MaxSchemaVisits subschemas; a document nested deeper
// than 128 levels of arrays and objects or holding more than 4096 objects
// and booleans (each of which can be a subschema: the validator's compiler
// takes time that grows with the square of either); a pattern neither RE2
// nor ECMAScript accepts, or whose program would exceed ten thousand
// instructions; and patterns that together would take too long to parse
// or compile (MaxSchemaPrograms). A schema can come from storage or a
// peer, so ParseSchema is bounded like Prepare; see "What one call may
// cost" in the package documentation. Raw is not retained; every error
// wraps ErrInvalidSchema.
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
	if err := checkPatternText(tree); err != nil {
		return Schema{}, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(dateTimeFormat)
	c.UseLoader(loader)
	c.UseRegexpEngine(regex.Engine)
	if err := c.AddResource(schemaBase, tree); err != nil {
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	compiled, err := c.Compile(schemaBase)
	if err != nil {
		var load *jsonschema.LoadURLError
		if errors.As(err, &load) {
			return Schema{}, fmt.Errorf("%w: reference to %q outside the document is not allowed", ErrInvalidSchema, load.URL)
		}
		var meta *jsonschema.SchemaValidationError
		var verr *jsonschema.ValidationError
		if errors.As(err, &meta) && errors.As(meta.Err, &verr) {
			violations := leafViolations(verr)
			return Schema{}, fmt.Errorf("%w: %s", ErrInvalidSchema, oneLine(violationMessage(violations, len(violations))))
		}
		var invalid *jsonschema.InvalidRegexError
		if errors.As(err, &invalid) {
			return Schema{}, fmt.Errorf("%w: at %s: %s %q: %v", ErrInvalidSchema, schemaLocation(invalid.URL), "pattern", clipRunes(invalid.Regex, maxQuoted), invalid.Err)
		}
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	cost := schemacost.Analyze(compiled, MaxSchemaVisits, strictjson.MaxDepth)
	switch {
	case cost.Visits > MaxSchemaVisits:
		return Schema{}, fmt.Errorf("%w: validating one value could apply %d subschemas, more than the limit of %d (nested anyOf/oneOf/allOf through $ref multiply)", ErrInvalidSchema, cost.Visits, MaxSchemaVisits)
	case !cost.Bounded:
		return Schema{}, fmt.Errorf("%w: counting the subschemas validating one value could apply would take more than %d steps", ErrInvalidSchema, schemacost.MaxWork)
	case cost.Located > MaxSchemaVisits:
		return Schema{}, fmt.Errorf("%w: validating one value could apply %d subschemas to one of its members or items, more than the limit of %d (subschemas reached through several keywords multiply at every level)", ErrInvalidSchema, cost.Located, MaxSchemaVisits)
	}
	if err := compileDefinitions(c, tree); err != nil {
		return Schema{}, err
	}
	if err := compilePatterns(cost.Schemas); err != nil {
		return Schema{}, err
	}
	fast := fastcheck.Compile(compiled)
	interned := map[string]string{}
	collectStrings(tree, interned)
	return Schema{s: &compiledSchema{canonical: canonical, compiled: compiled, fast: fast, strings: interned, visits: max(cost.Visits, cost.Located), costs: keywordCostsOf(cost.Schemas)}}, nil
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

// validateTree checks an already parsed value holding values JSON values.
// Where the fast check covers the schema it decides and explains, within
// MaxValidationWork; the full validator runs only for the schemas it does
// not cover, after checkWork.
func (s Schema) validateTree(tree any, values int) error {
	if work := values * s.s.visits * fastcheck.CostPerApplication; work > MaxValidationWork {
		return rejectf("at the root: the value holds %d JSON values and each may meet %d subschemas: checking it could take %d steps of work, more than the limit of %d (MaxValidationWork); send fewer values", values, s.s.visits, work, MaxValidationWork)
	}
	if fast := s.s.fast; fast != nil {
		checked := fast.Check(tree, MaxValidationWork)
		switch {
		case checked.Valid:
			return nil
		case checked.Exhausted:
			return workExhausted(nil)
		}
		// The explanation gets what the check left of the budget, and at
		// least a quarter of it: it visits in a fixed order, and may need
		// more to reach a violation the check met early.
		report := fast.Explain(tree, max(MaxValidationWork-checked.Work, MaxValidationWork/4))
		switch {
		case report.Valid:
			return nil
		case report.Total == 0:
			return workExhausted(report.Where)
		}
		// Violations found before the budget ran out are certain.
		return rejectViolations(report.Violations, report.Total)
	}
	if err := s.checkWork(tree); err != nil {
		return err
	}
	if err := s.s.rehearseBacktracking(tree); err != nil {
		return err
	}
	err := s.s.compiled.Validate(tree)
	if err == nil {
		return nil
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return rejectf("value cannot be validated: %v", err)
	}
	violations := leafViolations(verr)
	return rejectViolations(violations, len(violations))
}

// leafViolations lists the violations verr reports, as collectViolations
// groups them.
func leafViolations(verr *jsonschema.ValidationError) []fastcheck.Violation {
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
	violations := make([]fastcheck.Violation, len(leaves))
	for i, l := range leaves {
		violations[i] = fastcheck.Violation{Location: l.InstanceLocation, Kind: l.ErrorKind}
	}
	return violations
}

// rejectViolations is the rejection of a value that breaks the schema in
// total ways, of which violations are the first found.
func rejectViolations(violations []fastcheck.Violation, total int) *InputRejection {
	message := oneLine(violationMessage(violations, total))
	var all strings.Builder
	for i, v := range violations {
		if i > 0 {
			all.WriteString("; ")
		}
		all.WriteString(describeLocated(v))
	}
	return &InputRejection{message: message, cause: fmt.Errorf("%w: %d violations: %s", ErrInvalidInvocation, total, all.String())}
}

var englishPrinter = message.NewPrinter(language.English)

// maxListedViolations is the most violations a public message lists; the
// package documentation states it.
const maxListedViolations = 5

// maxMessage bounds the violations part of a public message, in bytes.
const maxMessage = 4096

// violationMessage renders violations, total in all, as a single line: up
// to maxListedViolations of them, sorted by location, each with the JSON
// pointer of the offending value and the rule it breaks, then how many
// other problems were found.
func violationMessage(violations []fastcheck.Violation, total int) string {
	sorted := slices.Clone(violations)
	slices.SortStableFunc(sorted, func(a, b fastcheck.Violation) int {
		return compareLocations(a.Location, b.Location)
	})
	var b strings.Builder
	listed := 0
	for _, v := range sorted[:min(len(sorted), maxListedViolations)] {
		text := describeLocated(v)
		if listed > 0 && b.Len()+len("; ")+len(text) > maxMessage {
			break
		}
		if listed > 0 {
			b.WriteString("; ")
		}
		b.WriteString(text)
		listed++
	}
	if more := total - listed; more == 1 {
		b.WriteString(" (and 1 more problem)")
	} else if more > 1 {
		fmt.Fprintf(&b, " (and %d more problems)", more)
	}
	return b.String()
}

// compareLocations orders locations member by member, array indexes by
// number.
func compareLocations(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if c := compareTokens(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

func compareTokens(a, b string) int {
	if x, err := strconv.Atoi(a); err == nil && strconv.Itoa(x) == a {
		if y, err := strconv.Atoi(b); err == nil && strconv.Itoa(y) == b {
			return x - y
		}
	}
	return strings.Compare(a, b)
}

// describeLocated renders one violation with its location, both clipped
// so that a message stays short whatever the value holds.
func describeLocated(v fastcheck.Violation) string {
	return clip(fmt.Sprintf("at %s: %s", clippedPointer(v.Location), describeViolation(v.Kind)), maxViolationText)
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
		return shortened(k).LocalizedString(englishPrinter)
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

// keywordCosts are the figures of a schema the full validator's cost model
// needs: the steps one byte of a string may cost across all its patterns,
// the size of its largest enum, and its patterns of the backtracking
// engine, which are rehearsed (see rehearseBacktracking).
type keywordCosts struct {
	patternPerByte int
	largestEnum    int
	backtracking   []*regex.Regexp
}

// keywordCostsOf gathers the keyword costs of all, every subschema of a
// schema.
func keywordCostsOf(all []*jsonschema.Schema) keywordCosts {
	var k keywordCosts
	for _, s := range all {
		for _, re := range patternsOf(s) {
			k.patternPerByte += re.MatchCost(1) - re.MatchCost(0)
			if re.Backtracking() {
				k.backtracking = append(k.backtracking, re)
			}
		}
		if s.Enum != nil {
			k.largestEnum = max(k.largestEnum, len(s.Enum.Values))
		}
	}
	return k
}

// fullValidatorWork bounds, in the steps of MaxValidationWork, what the
// full validator may spend on tree: every value may meet every subschema
// one of its locations can meet (visits), every byte of every string and
// member name every pattern of the schema, every value the largest enum,
// and every violation copies its location. The bound is coarse, and it is
// used only for the schemas the fast check does not cover.
func (c *compiledSchema) fullValidatorWork(tree any) int {
	perValue := func(depth int) int { return c.visits * (4 + depth + c.costs.largestEnum) }
	perString := func(s string) int { return c.visits * (len(s) + 1) * (1 + c.costs.patternPerByte) }
	var walk func(v any, depth int) int
	walk = func(v any, depth int) int {
		work := perValue(depth)
		switch v := v.(type) {
		case string:
			work += perString(v)
		case json.Number:
			d := strictjson.ParseDecimal(string(v))
			work += c.visits * (len(v) + max(d.Exp, -d.Exp)/4)
		case []any:
			for _, item := range v {
				work += walk(item, depth+1)
			}
		case map[string]any:
			for name, member := range v {
				work += perString(name) + walk(member, depth+1)
			}
		}
		return min(work, MaxValidationWork+1)
	}
	return walk(tree, 0)
}

// MaxSchemaPrograms bounds the regular expressions of one schema: the
// estimated instructions of all their programs together. ParseSchema
// refuses a schema above it before compiling any of them: a pattern such
// as \pL{1000} is a few bytes of text and a thousand instructions of
// program, and four thousand of them took a second and a gigabyte to
// compile.
const MaxSchemaPrograms = 1 << 17

// patternsOf lists the regular expressions of s: its pattern and the keys
// of its patternProperties, in the order of their source text.
func patternsOf(s *jsonschema.Schema) []*regex.Regexp {
	var out []*regex.Regexp
	if re, ok := s.Pattern.(*regex.Regexp); ok {
		out = append(out, re)
	}
	for re := range s.PatternProperties {
		if re, ok := re.(*regex.Regexp); ok {
			out = append(out, re)
		}
	}
	slices.SortFunc(out[min(1, len(out)):], func(a, b *regex.Regexp) int { return strings.Compare(a.String(), b.String()) })
	return out
}

// compilePatterns compiles every regular expression of all, every
// subschema of a schema, once their programs together are known to stay
// within MaxSchemaPrograms, so that no validation pays for a compilation.
func compilePatterns(all []*jsonschema.Schema) error {
	total := 0
	for _, s := range all {
		for _, re := range patternsOf(s) {
			total += re.Size()
			if total > MaxSchemaPrograms {
				return fmt.Errorf("%w: at %s: the patterns of the schema expand to more than %d instructions of program together (MaxSchemaPrograms)", ErrInvalidSchema, schemaLocation(s.Location), MaxSchemaPrograms)
			}
		}
	}
	for _, s := range all {
		for _, re := range patternsOf(s) {
			if err := re.Compile(); err != nil {
				return fmt.Errorf("%w: at %s: pattern %q does not compile: %v", ErrInvalidSchema, schemaLocation(s.Location), clipRunes(re.String(), maxQuoted), err)
			}
		}
	}
	return nil
}

// schemaLocation renders the location of a subschema, a URL under
// schemaBase, as a JSON pointer into the document.
func schemaLocation(url string) string {
	_, fragment, _ := strings.Cut(url, "#")
	return strictjson.Where(fragment)
}

// maxPatternParse bounds the work of parsing the patterns of one schema
// document, in the steps of regex.ParseCost: about 60 ms here.
const maxPatternParse = 1 << 22

// checkPatternText refuses a document whose pattern and patternProperties
// texts would take more than maxPatternParse steps to parse, before
// anything parses them: Go builds the table of a Unicode class escape
// such as \pL afresh at every use, 80 µs and 13 KB each, so a document
// of a megabyte could hold seconds of parsing.
func checkPatternText(tree any) error {
	work := 0
	var where []string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				child := append(slices.Clip(at), k)
				switch pattern := v[k].(type) {
				case string:
					if k == "pattern" {
						work += regex.ParseCost(pattern)
					}
				case map[string]any:
					if k == "patternProperties" {
						for p := range pattern {
							work += regex.ParseCost(p)
						}
					}
				}
				if work > maxPatternParse && where == nil {
					where = child
				}
				walk(v[k], child)
			}
		case []any:
			for i, item := range v {
				walk(item, append(slices.Clip(at), strconv.Itoa(i)))
			}
		}
	}
	walk(tree, nil)
	if where != nil {
		return fmt.Errorf("%w: at %s: the patterns of the schema would take %d steps to parse, more than the limit of %d (a Unicode class escape such as \\pL costs %d)", ErrInvalidSchema, pointer(where), work, maxPatternParse, regex.UnicodeClassCost)
	}
	return nil
}

// compileDefinitions compiles every entry of every $defs (and definitions)
// of the document, so that a reference outside the document is refused
// even where no reference reaches it: the document is advertised to
// models whole, and a definition nothing uses today may be used by the
// next revision. An entry that does not compile for another reason is
// left alone: it is never applied, and it may not be a subschema at all
// (the $defs member of a const value, say).
func compileDefinitions(c *jsonschema.Compiler, tree any) error {
	var walk func(v any, at string) error
	walk = func(v any, at string) error {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(v)) {
				child := at + "/" + url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
				if defs, ok := v[k].(map[string]any); ok && (k == "$defs" || k == "definitions") {
					for _, name := range slices.Sorted(maps.Keys(defs)) {
						entry := child + "/" + url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1"))
						_, err := c.Compile(schemaBase + "#" + entry)
						var load *jsonschema.LoadURLError
						if errors.As(err, &load) {
							return fmt.Errorf("%w: at %s: reference to %q outside the document is not allowed", ErrInvalidSchema, schemaLocation("#"+entry), load.URL)
						}
					}
				}
				if err := walk(v[k], child); err != nil {
					return err
				}
			}
		case []any:
			for i, item := range v {
				if err := walk(item, at+"/"+strconv.Itoa(i)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(tree, "")
}

// rehearseBacktracking matches every string and member name of tree
// against every pattern of the backtracking engine in a schema the full
// validator checks, charging each match its cost up front and the time it
// takes, as the fast check does. The full validator cannot be stopped
// between matches, so a value whose matches would not fit
// MaxValidationWork is refused before it runs; one that fits costs the
// validator about as much again, since a match takes the same time twice.
func (c *compiledSchema) rehearseBacktracking(tree any) error {
	if len(c.costs.backtracking) == 0 {
		return nil
	}
	work := 0
	try := func(s string) bool {
		for _, re := range c.costs.backtracking {
			if work += re.MatchCost(len(s)); work > MaxValidationWork {
				return false
			}
			_, extra, err := re.Match(s)
			if work += extra; err != nil || work > MaxValidationWork {
				return false
			}
		}
		return true
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return try(v)
		case []any:
			for _, item := range v {
				if !walk(item) {
					return false
				}
			}
		case map[string]any:
			for name, member := range v {
				if !try(name) || !walk(member) {
					return false
				}
			}
		}
		return true
	}
	if !walk(tree) {
		return workExhausted(nil)
	}
	return nil
}
