package engine

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/agentcontract/tool/internal/keyword"
	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// MaxSchemaVisits bounds how many subschemas validating one value may
// apply to one location of it; Compile refuses a schema above it. The
// package tool documents it.
const MaxSchemaVisits = 1000

// schemaBase is the URL under which a schema document is compiled. Relative
// references resolve against it (or against the document's own $id), and
// nothing outside the document is ever loaded, so the host never resolves.
const schemaBase = "https://schema.invalid/schema.json"

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

// shortcutBase is the URL under which a document that Conforms
// accepts is compiled. The validator does not validate documents under
// https://json-schema.org/ against their meta-schema, taking them for
// meta-schemas of its own; Conforms has established that this one
// satisfies the draft 2020-12 meta-schema, and that it has no $id and only
// references to fragments of itself, so the URL changes nothing the
// document means and nothing is ever loaded from it.
const shortcutBase = "https://json-schema.org/schema.invalid/schema.json"

// Options are how Compile compiles. The zero Options are what every schema
// of the package is compiled with; only tests set them.
type Options struct {
	// Loader, when not nil, serves the documents that references outside
	// the document name; without it, such a reference is refused.
	Loader jsonschema.URLLoader
	// NoShortcut has the validator check every document against the
	// meta-schema, for comparison with the shortcut.
	NoShortcut bool
}

// Compile compiles tree, a schema document as strictjson.Parse builds it,
// which the result then shares (tree must not be modified afterwards).
// The draft is 2020-12 unless the document names another with $schema,
// and "format" is asserted. Compile refuses, with an error that says what
// and where: a document that is not an object or a boolean, or too deep
// or too large, or whose patterns would cost too much to parse or
// compile (MaxSchemaPrograms), or whose validation work per value could
// exceed MaxSchemaVisits subschemas; a reference outside the document;
// and whatever the meta-schema refuses. Its errors are plain text, for
// the caller to wrap. Compile is safe for concurrent use.
//
// Unless opts.NoShortcut is set, a document Conforms accepts is compiled
// straight into the engine's program (FromDocument) or, where that
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
func Compile(tree any, opts Options) (*Schema, error) {
	loader := opts.Loader
	if loader == nil {
		loader = refuseLoader{}
	}
	switch tree.(type) {
	case map[string]any, bool:
	default:
		return nil, fmt.Errorf("a schema must be a JSON object or boolean")
	}
	if depth, objects := schemaShape(tree, 1); depth > maxSchemaDepth {
		return nil, fmt.Errorf("the document is nested %d levels deep, more than the limit of %d", depth, maxSchemaDepth)
	} else if objects > maxSchemaObjects {
		return nil, fmt.Errorf("the document holds %d objects and booleans, more than the limit of %d", objects, maxSchemaObjects)
	}
	if err := checkPatternText(tree); err != nil {
		return nil, err
	}
	patterns, validRegex := documentEngine()
	if !opts.NoShortcut && Conforms(tree, validRegex) {
		if program, ok := FromDocument(tree, shortcutBase, patterns, validatorFormat); ok {
			s, err := finish(tree, nil, nil, program, shortcutBase)
			if err != nil || s.fast != nil {
				return s, err
			}
		}
		c, compiled, err := compileValidator(tree, loader, shortcutBase, patterns)
		if err == nil {
			s, err := finish(tree, c, compiled, FromValidator(compiled), shortcutBase)
			if err != nil || s.fast != nil {
				return s, err
			}
		}
	}
	c, compiled, err := compileValidator(tree, loader, schemaBase, patterns)
	if err != nil {
		return nil, err
	}
	return finish(tree, c, compiled, FromValidator(compiled), schemaBase)
}

// documentEngine returns the regular-expression engine that compiles the
// patterns of one document, and the check Conforms is given, which hands
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
		return nil, nil, err
	}
	compiled, err := c.Compile(base)
	if err == nil {
		return c, compiled, nil
	}
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		return nil, nil, fmt.Errorf("reference to %q outside the document is not allowed", load.URL)
	}
	var meta *jsonschema.SchemaValidationError
	var verr *jsonschema.ValidationError
	if errors.As(err, &meta) && errors.As(meta.Err, &verr) {
		violations := leafViolations(verr)
		return nil, nil, errors.New(OneLine(violationMessage(violations, len(violations))))
	}
	var invalid *jsonschema.InvalidRegexError
	if errors.As(err, &invalid) {
		return nil, nil, fmt.Errorf("at %s: %s %q: %v", schemaLocation(invalid.URL), "pattern", clipRunes(invalid.Regex, maxQuoted), invalid.Err)
	}
	return nil, nil, err
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

// finish bounds and completes program, the engine's program of
// tree: the cost bounds, the definitions, the patterns, the fast check and
// the strings to intern. Compiled is the validator's schema of tree,
// compiled by c under base, or nil (with c) when the program was compiled
// straight from the document.
func finish(tree any, c *jsonschema.Compiler, compiled *jsonschema.Schema, program *Program, base string) (*Schema, error) {
	cost := program.Analyze(MaxSchemaVisits, strictjson.MaxDepth)
	switch {
	case cost.Visits > MaxSchemaVisits:
		return nil, fmt.Errorf("validating one value could apply %d subschemas, more than the limit of %d (nested anyOf/oneOf/allOf through $ref multiply)", cost.Visits, MaxSchemaVisits)
	case !cost.Bounded:
		return nil, fmt.Errorf("counting the subschemas validating one value could apply would take more than %d steps", MaxWork)
	case cost.Located > MaxSchemaVisits:
		return nil, fmt.Errorf("validating one value could apply %d subschemas to one of its members or items, more than the limit of %d (subschemas reached through several keywords multiply at every level)", cost.Located, MaxSchemaVisits)
	}
	// A document compiled under shortcutBase has no reference outside
	// itself (Conforms), so its definitions need no such check.
	if base != shortcutBase {
		if err := compileDefinitions(c, base, tree); err != nil {
			return nil, err
		}
	}
	if err := compilePatterns(cost.Patterns); err != nil {
		return nil, err
	}
	interned := map[string]string{}
	collectStrings(tree, interned)
	out := &Schema{fast: program.Checker(), built: c == nil, interned: interned, visits: max(cost.Visits, cost.Located), costs: keywordCostsOf(cost)}
	if !out.built {
		out.compiled = compiled
	}
	return out, nil
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

// MaxSchemaPrograms bounds the estimated instructions of the programs of
// all the patterns of one schema together; Compile refuses a schema above
// it before compiling any of them. The package tool documents it.
const MaxSchemaPrograms = 1 << 17

// compilePatterns compiles every regular expression of a schema, once
// their programs together are known to stay within MaxSchemaPrograms, so
// that no validation pays for a compilation.
func compilePatterns(all []Pattern) error {
	total := 0
	for _, re := range all {
		total += re.Size()
		if total > MaxSchemaPrograms {
			return fmt.Errorf("at %s: the patterns of the schema expand to more than %d instructions of program together (MaxSchemaPrograms)", schemaLocation(re.Location), MaxSchemaPrograms)
		}
	}
	for _, re := range all {
		if err := re.Compile(); err != nil {
			return fmt.Errorf("at %s: pattern %q does not compile: %v", schemaLocation(re.Location), clipRunes(re.String(), maxQuoted), err)
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
			for _, k := range keyword.SortedNames(v) {
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
		return fmt.Errorf("at %s: the patterns of the schema would take %d steps to parse, more than the limit of %d (a Unicode class escape such as \\pL costs %d)", pointer(where), work, maxPatternParse, regex.UnicodeClassCost)
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
			for _, k := range keyword.SortedNames(v) {
				child := at + "/" + url.PathEscape(keyword.Escape(k))
				if defs, ok := v[k].(map[string]any); ok && (k == "$defs" || k == "definitions") {
					for _, name := range keyword.SortedNames(defs) {
						entry := child + "/" + url.PathEscape(keyword.Escape(name))
						_, err := c.Compile(base + "#" + entry)
						var load *jsonschema.LoadURLError
						if errors.As(err, &load) {
							return fmt.Errorf("at %s: reference to %q outside the document is not allowed", schemaLocation("#"+entry), load.URL)
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
