package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/regex"
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
	canonical []byte             // compact, member order and number text as given
	compiled  *jsonschema.Schema // nil when built
	built     bool               // compiled straight from the document: fast is non-nil, and the validator never runs
	fast      *engine.Checker    // nil when the schema needs the full validator
	strings   map[string]string  // short strings of the document, for interning
	object    bool               // the document is an object whose "type" is "object"
	visits    int                // the most subschemas one location of a value can meet
	costs     keywordCosts       // for the full validator's cost model
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
	return parseSchema(raw, true)
}

// parseSchema is ParseSchema, with the meta-schema shortcut of
// compileSchemaWith on or off.
func parseSchema(raw []byte, shortcut bool) (Schema, error) {
	if len(raw) > MaxInputBytes {
		return Schema{}, errorf("%w: document is %d bytes, more than the limit of %d", ErrInvalidSchema, len(raw), MaxInputBytes)
	}
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return Schema{}, errorf("%w: not one I-JSON document: %v", ErrInvalidSchema, err)
	}
	return compileSchemaWith(tree, strictjson.Compact(make([]byte, 0, len(raw)), raw), refuseLoader{}, shortcut)
}

func compileSchema(tree any, canonical []byte) (Schema, error) {
	return compileSchemaWith(tree, canonical, refuseLoader{}, true)
}

// shortcutBase is the URL under which a document that engine.Conforms
// accepts is compiled. The validator does not validate documents under
// https://json-schema.org/ against their meta-schema, taking them for
// meta-schemas of its own; engine.Conforms has established that this one
// satisfies the draft 2020-12 meta-schema, and that it has no $id and only
// references to fragments of itself, so the URL changes nothing the
// document means and nothing is ever loaded from it.
const shortcutBase = "https://json-schema.org/schema.invalid/schema.json"

// compileSchemaWith compiles with loader; only tests install another loader
// than refuseLoader, and only they turn shortcut off.
//
// With shortcut on, a document engine.Conforms accepts is compiled
// straight into the engine's program (engine.FromDocument) or, where that
// declines, by the validator under shortcutBase, without its pass over
// the meta-schema.
// The result is kept when that compilation succeeds and the fast check
// covers the schema, so that every message about a value comes from the
// fast check, which names no URL (the full validator's message about a
// reference cycle quotes the URL the document was compiled under).
// Otherwise the document is compiled again under schemaBase, which
// validates it against the meta-schema and words every error exactly as
// before. An error after compilation (the cost bounds, the definitions,
// the patterns) names no URL and is returned as it is: the ordinary
// compilation, whose pass over the meta-schema would have succeeded,
// would have met it as well.
func compileSchemaWith(tree any, canonical []byte, loader jsonschema.URLLoader, shortcut bool) (Schema, error) {
	switch tree.(type) {
	case map[string]any, bool:
	default:
		return Schema{}, errorf("%w: a schema must be a JSON object or boolean", ErrInvalidSchema)
	}
	if depth, objects := schemaShape(tree, 1); depth > maxSchemaDepth {
		return Schema{}, errorf("%w: the document is nested %d levels deep, more than the limit of %d", ErrInvalidSchema, depth, maxSchemaDepth)
	} else if objects > maxSchemaObjects {
		return Schema{}, errorf("%w: the document holds %d objects and booleans, more than the limit of %d", ErrInvalidSchema, objects, maxSchemaObjects)
	}
	if err := checkPatternText(tree); err != nil {
		return Schema{}, err
	}
	patterns, validRegex := documentEngine()
	if shortcut && engine.Conforms(tree, validRegex) {
		if program, ok := engine.FromDocument(tree, shortcutBase, patterns, validatorFormat); ok {
			s, err := finishSchema(tree, canonical, nil, nil, program, shortcutBase)
			if err != nil || s.s.fast != nil {
				return s, err
			}
		}
		c, compiled, err := compileValidator(tree, loader, shortcutBase, patterns)
		if err == nil {
			s, err := finishSchema(tree, canonical, c, compiled, engine.FromValidator(compiled), shortcutBase)
			if err != nil || s.s.fast != nil {
				return s, err
			}
		}
	}
	c, compiled, err := compileValidator(tree, loader, schemaBase, patterns)
	if err != nil {
		return Schema{}, err
	}
	return finishSchema(tree, canonical, c, compiled, engine.FromValidator(compiled), schemaBase)
}

// documentEngine returns the regular-expression engine that compiles the
// patterns of one document, and the check engine.Conforms is given, which hands
// the engine what it parses so that no pattern is parsed twice. The
// remembered patterns are written only by validRegex, before any
// compilation; a compiled schema keeps the engine (for the "regex"
// format) and only reads them, so the engine is then safe for concurrent
// use.
func documentEngine() (engine jsonschema.RegexpEngine, validRegex func(string) bool) {
	parsed := map[string]jsonschema.Regexp{}
	engine = func(source string) (jsonschema.Regexp, error) {
		if re, ok := parsed[source]; ok && re != nil {
			return re, nil
		}
		return regex.Engine(source)
	}
	validRegex = func(source string) bool {
		re, err := regex.Engine(source)
		parsed[source] = re
		return err == nil
	}
	return engine, validRegex
}

// compileValidator compiles tree under base with the validator. Errors are
// worded for the caller.
func compileValidator(tree any, loader jsonschema.URLLoader, base string, engine jsonschema.RegexpEngine) (*jsonschema.Compiler, *jsonschema.Schema, error) {
	c := newValidatorCompiler(loader, engine)
	if err := c.AddResource(base, tree); err != nil {
		return nil, nil, errorf("%w: %v", ErrInvalidSchema, err)
	}
	compiled, err := c.Compile(base)
	if err == nil {
		return c, compiled, nil
	}
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		return nil, nil, errorf("%w: reference to %q outside the document is not allowed", ErrInvalidSchema, load.URL)
	}
	var meta *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &meta) && errors.As(meta.Err, &verr) {
		violations := leafViolations(verr)
		return nil, nil, errorf("%w: %s", ErrInvalidSchema, oneLine(violationMessage(violations, len(violations))))
	}
	var invalid *jsonschema.InvalidRegexError
	if errors.As(err, &invalid) {
		return nil, nil, errorf("%w: at %s: %s %q: %v", ErrInvalidSchema, schemaLocation(invalid.URL), "pattern", clipRunes(invalid.Regex, maxQuoted), invalid.Err)
	}
	return nil, nil, errorf("%w: %v", ErrInvalidSchema, err)
}

// newValidatorCompiler returns the validator's compiler as every schema
// here is compiled: draft 2020-12 unless the document names another,
// "format" asserted with this package's date-time, loading through loader
// and compiling patterns with engine.
func newValidatorCompiler(loader jsonschema.URLLoader, engine jsonschema.RegexpEngine) *jsonschema.Compiler {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.RegisterFormat(dateTimeFormat)
	c.UseLoader(loader)
	c.UseRegexpEngine(engine)
	return c
}

// maxCachedFormats bounds the format names validatorFormat remembers: the
// validator knows a few dozen, and a document may name any string.
const maxCachedFormats = 128

var (
	formatCache      sync.Map // format name to *jsonschema.Format, nil for an unknown name
	formatCacheCount atomic.Int32
)

// validatorFormat returns the check the validator's compiler attaches to
// "format": name, nil for a name it does not know, by compiling a schema
// of that one keyword once per name. Once maxCachedFormats names are
// remembered it answers false for any other, so that documents naming
// ever new formats cost no compilation each. It is safe for concurrent
// use.
func validatorFormat(name string) (*jsonschema.Format, bool) {
	if f, ok := formatCache.Load(name); ok {
		return f.(*jsonschema.Format), true
	}
	if formatCacheCount.Add(1) > maxCachedFormats {
		return nil, false
	}
	c := newValidatorCompiler(refuseLoader{}, regex.Engine)
	var f *jsonschema.Format
	if err := c.AddResource(shortcutBase, map[string]any{"format": name}); err == nil {
		if compiled, err := c.Compile(shortcutBase); err == nil {
			f = compiled.Format
		}
	}
	formatCache.Store(name, f)
	return f, true
}

// finishSchema bounds and completes program, the engine's program of
// tree: the cost bounds, the definitions, the patterns, the fast check and
// the strings to intern. Compiled is the validator's schema of tree,
// compiled by c under base, or nil (with c) when the program was compiled
// straight from the document.
func finishSchema(tree any, canonical []byte, c *jsonschema.Compiler, compiled *jsonschema.Schema, program *engine.Program, base string) (Schema, error) {
	cost := program.Analyze(MaxSchemaVisits, strictjson.MaxDepth)
	switch {
	case cost.Visits > MaxSchemaVisits:
		return Schema{}, errorf("%w: validating one value could apply %d subschemas, more than the limit of %d (nested anyOf/oneOf/allOf through $ref multiply)", ErrInvalidSchema, cost.Visits, MaxSchemaVisits)
	case !cost.Bounded:
		return Schema{}, errorf("%w: counting the subschemas validating one value could apply would take more than %d steps", ErrInvalidSchema, engine.MaxWork)
	case cost.Located > MaxSchemaVisits:
		return Schema{}, errorf("%w: validating one value could apply %d subschemas to one of its members or items, more than the limit of %d (subschemas reached through several keywords multiply at every level)", ErrInvalidSchema, cost.Located, MaxSchemaVisits)
	}
	// A document compiled under shortcutBase has no reference outside
	// itself (engine.Conforms), so its definitions need no such check.
	if base != shortcutBase {
		if err := compileDefinitions(c, base, tree); err != nil {
			return Schema{}, err
		}
	}
	if err := compilePatterns(cost.Patterns); err != nil {
		return Schema{}, err
	}
	interned := map[string]string{}
	collectStrings(tree, interned)
	out := &compiledSchema{canonical: canonical, fast: program.Checker(), built: c == nil, strings: interned, object: isObjectSchema(tree), visits: max(cost.Visits, cost.Located), costs: keywordCostsOf(cost)}
	if !out.built {
		out.compiled = compiled
	}
	return Schema{s: out}, nil
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
		return nil, errorf("%w: the zero Schema has no document", ErrInvalidSchema)
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
		return errorf("%w: the zero Schema validates nothing", ErrInvalidSchema)
	}
	if len(value) > MaxInputBytes {
		return rejectf("value is %d bytes, more than the limit of %d", len(value), MaxInputBytes)
	}
	if s.shownValid(value) {
		return nil
	}
	tree, values, err := s.parse(value)
	if err != nil {
		return rejectf("invalid JSON %v", err)
	}
	return s.validateTree(tree, values)
}

// shownValid reports whether the fast check shows value, read directly,
// to be one I-JSON document that passes every check validateTree makes of
// its tree. False means only that validateTree must decide, and explain.
func (s Schema) shownValid(value []byte) bool {
	fast := s.s.fast
	if fast == nil {
		return false
	}
	maxValues := MaxValidationWork / (max(1, s.s.visits) * engine.CostPerApplication)
	return fast.CheckJSON(value, streamWork, maxValues).Valid
}

// streamWork is the budget of reading a value directly. A value that needs
// more, valid or not, is decided on the tree: an eighth of the budget keeps
// what a costly value spends here small beside what the tree then spends,
// and is still twice what a megabyte of small objects needs.
const streamWork = MaxValidationWork / 8

// validateTree checks an already parsed value holding values JSON values.
// Where the fast check covers the schema it decides and explains, within
// MaxValidationWork; the full validator runs only for the schemas it does
// not cover, after checkWork.
func (s Schema) validateTree(tree any, values int) error {
	if work := values * s.s.visits * engine.CostPerApplication; work > MaxValidationWork {
		return tooCostly("at the root: the value holds %d JSON values and each may meet %d subschemas: checking it could take %d steps of work, more than the limit of %d (MaxValidationWork); send at most %d values", values, s.s.visits, work, MaxValidationWork, MaxValidationWork/(s.s.visits*engine.CostPerApplication))
	}
	if fast := s.s.fast; fast != nil {
		checked := fast.Check(tree, MaxValidationWork)
		switch {
		case checked.Valid:
			return nil
		case checked.Stopped != nil:
			return matchStopped(checked.Stopped)
		case checked.Exhausted && checked.Costly == nil:
			return workExhausted(nil)
		}
		// The explanation gets what the check left of the budget, and at
		// least a quarter of it: it visits in a fixed order, and may need
		// more to reach a violation the check met early, or the location
		// of a pattern one match of which exceeds the budget.
		report := fast.Explain(tree, max(MaxValidationWork-checked.Work, MaxValidationWork/4))
		switch {
		case report.Valid:
			return nil
		case report.Stopped != nil:
			return matchStopped(report.Stopped)
		case report.Total == 0 && report.Costly != nil:
			return patternTooCostly(report.Where, report.Costly, report.CostlyLength)
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
	err := s.s.validateFully(tree)
	if err == nil {
		return nil
	}
	if errors.Is(err, regex.ErrStopped) {
		return matchStopped(err)
	}
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return rejectf("value cannot be validated: %v", err)
	}
	violations := leafViolations(verr)
	return rejectViolations(violations, len(violations))
}

// validateFully runs the full validator on tree. A pattern's match that
// has no verdict stops it with a panic (see regex.Regexp.MatchString),
// recovered here as the error of the match.
func (c *compiledSchema) validateFully(tree any) (err error) {
	defer regex.RecoverStopped(&err)
	return c.compiled.Validate(tree)
}

// MaxSchemaPrograms bounds the regular expressions of one schema: the
// estimated instructions of all their programs together. ParseSchema
// refuses a schema above it before compiling any of them: a pattern such
// as \pL{1000} is a few bytes of text and a thousand instructions of
// program, and four thousand of them took a second and a gigabyte to
// compile.
const MaxSchemaPrograms = 1 << 17

// compilePatterns compiles every regular expression of a schema, once
// their programs together are known to stay within MaxSchemaPrograms, so
// that no validation pays for a compilation.
func compilePatterns(all []engine.Pattern) error {
	total := 0
	for _, re := range all {
		total += re.Size()
		if total > MaxSchemaPrograms {
			return errorf("%w: at %s: the patterns of the schema expand to more than %d instructions of program together (MaxSchemaPrograms)", ErrInvalidSchema, schemaLocation(re.Location), MaxSchemaPrograms)
		}
	}
	for _, re := range all {
		if err := re.Compile(); err != nil {
			return errorf("%w: at %s: pattern %q does not compile: %v", ErrInvalidSchema, schemaLocation(re.Location), clipRunes(re.String(), maxQuoted), err)
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
	if patternParseWork(tree) <= maxPatternParse {
		return nil
	}
	work := 0
	var where []string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				child := append(slices.Clip(at), k)
				work += memberPatternCost(k, v[k])
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
		return errorf("%w: at %s: the patterns of the schema would take %d steps to parse, more than the limit of %d (a Unicode class escape such as \\pL costs %d)", ErrInvalidSchema, pointer(where), work, maxPatternParse, regex.UnicodeClassCost)
	}
	return nil
}

// memberPatternCost is the work of parsing the patterns of member k, of
// value v, of an object: a pattern, or the names of patternProperties.
func memberPatternCost(k string, v any) int {
	work := 0
	switch pattern := v.(type) {
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
	return work
}

// patternParseWork is the work checkPatternText counts in tree, added up
// without allocating: most documents are within the limit, and only a
// document beyond it needs the walk in order that finds where.
func patternParseWork(v any) int {
	work := 0
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			work += memberPatternCost(k, m) + patternParseWork(m)
		}
	case []any:
		for _, item := range v {
			work += patternParseWork(item)
		}
	}
	return work
}

// compileDefinitions compiles every entry of every $defs (and definitions)
// of the document, so that a reference outside the document is refused
// even where no reference reaches it: the document is advertised to
// models whole, and a definition nothing uses today may be used by the
// next revision. An entry that does not compile for another reason is
// left alone: it is never applied, and it may not be a subschema at all
// (the $defs member of a const value, say).
func compileDefinitions(c *jsonschema.Compiler, base string, tree any) error {
	var walk func(v any, at string) error
	walk = func(v any, at string) error {
		switch v := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(v) {
				child := at + "/" + url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(k, "~", "~0"), "/", "~1"))
				if defs, ok := v[k].(map[string]any); ok && (k == "$defs" || k == "definitions") {
					for _, name := range sortedKeys(defs) {
						entry := child + "/" + url.PathEscape(strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1"))
						_, err := c.Compile(base + "#" + entry)
						var load *jsonschema.LoadURLError
						if errors.As(err, &load) {
							return errorf("%w: at %s: reference to %q outside the document is not allowed", ErrInvalidSchema, schemaLocation("#"+entry), load.URL)
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

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}
