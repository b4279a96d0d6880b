package engine

import (
	"encoding/json"
	"hash/maphash"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/agentcontract/tool/internal/regex"
)

// The costs of a check, in steps. A step is the work of one short
// operation: a map lookup, a comparison, sixteen bytes of a string read.
// Matching a pattern costs what regex.Regexp.MatchCost says.
const (
	costApply     = 4  // one subschema applied to one value
	costMember    = 2  // one member or item visited
	costViolation = 16 // one violation recorded
	costFormat    = 8  // one format check, plus a step per byte of a string
	costNumber    = 8  // one exact comparison of numbers, plus a step per byte of the tokens
	bytesPerStep  = 16 // bytes of a string scanned, compared or hashed per step
)

// CostPerApplication is the least a subschema applied to a member or item
// costs: the application and the visit.
const CostPerApplication = costApply + costMember

// MaxKept is the most violations a Report keeps; it counts the others.
const MaxKept = 64

// Violation is one rule a value breaks, where.
type Violation struct {
	Location []string // reference tokens of the offending value
	Kind     jsonschema.ErrorKind
}

// Report is the outcome of a check.
type Report struct {
	// Valid reports that the value satisfies the schema; it is false when
	// the budget was exhausted.
	Valid bool
	// Exhausted reports that the check stopped because it would have
	// spent more than its budget. Valid is then false, and the violations
	// of Explain are those found before it stopped: each of them is
	// certain (none is a guess about an alternative), but there may be
	// more.
	Exhausted bool
	// Stopped, when not nil, is why a pattern's match had no verdict:
	// the backtracking engine stopped it at its safety timeout. The check
	// then stopped too, with Exhausted set, and decided nothing.
	Stopped error
	// Costly, when not nil, is a pattern whose one match against a string
	// of CostlyLength bytes would alone have cost more than the whole
	// budget: the check stopped there, with Exhausted set.
	Costly       *regex.Regexp
	CostlyLength int
	// Where is, for Explain only, the location of the value being checked
	// when the budget ran out.
	Where []string
	// Work is the number of steps spent.
	Work int
	// Violations holds, for Explain only, the first MaxKept violations in
	// the order found: members by name, items by index, keywords in the
	// full validator's order. Total counts them all.
	Violations []Violation
	Total      int
}

// Check reports whether v, a tree of map[string]any, []any, string,
// json.Number, bool and nil, satisfies the schema, spending at most budget
// steps. It allocates nothing on the common path.
func (c *Checker) Check(v any, budget int) Report {
	r := run{budget: budget}
	valid := r.check(c.root, v)
	return r.report(valid)
}

// report is the outcome of the check r made, which found valid.
func (r *run) report(valid bool) Report {
	return Report{Valid: valid && !r.exhausted, Exhausted: r.exhausted, Stopped: r.stopped, Work: r.work, Costly: r.costly, CostlyLength: r.costlyLength}
}

// Explain is Check that also says what is wrong: the violations the full
// validator would report, after the same grouping (a failed anyOf or oneOf
// is explained by its one alternative that did not fail on the type of the
// value alone, when there is exactly one). Its order of work is fixed, so
// its Report depends only on the schema, the value and the budget.
func (c *Checker) Explain(v any, budget int) Report {
	r := run{budget: budget, explain: true, at: &location{}}
	root := &sink{onlyType: true}
	r.sink = root
	valid := r.check(c.root, v)
	report := r.report(valid)
	if r.exhausted {
		report.Where = r.where.tokens()
	}
	for _, f := range root.kept {
		report.Violations = append(report.Violations, Violation{Location: f.at.tokens(), Kind: f.kind})
	}
	report.Total = root.total
	return report
}

// run is the state of one check.
type run struct {
	budget, work int
	exhausted    bool
	explain      bool
	at           *location // explain only: the location being checked
	where        *location // explain only: the location where the budget ran out
	sink         *sink     // explain only: where violations go

	counted string // the string runes counts the characters of
	runes   int

	stopped error // why a match had no verdict, if one had none

	costly       *regex.Regexp // a pattern one match of which exceeded the whole budget
	costlyLength int           // the length of the string it was to match
}

// location is a location in the value, shared by the violations found
// under it: recording one costs a pointer, whatever its depth. A location
// is made once per check, however many subschemas visit it.
type location struct {
	parent  *location
	token   string
	depth   int
	members map[string]*location
	items   []*location
}

// member returns the location of member name of the value at l.
func (l *location) member(name string) *location {
	if c, ok := l.members[name]; ok {
		return c
	}
	if l.members == nil {
		l.members = map[string]*location{}
	}
	c := &location{parent: l, token: name, depth: l.depth + 1}
	l.members[name] = c
	return c
}

// item returns the location of item i of the value at l.
func (l *location) item(i int) *location {
	if i < len(l.items) && l.items[i] != nil {
		return l.items[i]
	}
	if i >= len(l.items) {
		l.items = append(l.items, make([]*location, i+1-len(l.items))...)
	}
	c := &location{parent: l, token: strconv.Itoa(i), depth: l.depth + 1}
	l.items[i] = c
	return c
}

// tokens returns the reference tokens of l, outermost first.
func (l *location) tokens() []string {
	if l.depth == 0 {
		return nil
	}
	out := make([]string, l.depth)
	for ; l.depth > 0; l = l.parent {
		out[l.depth-1] = l.token
	}
	return out
}

func (l *location) length() int { return l.depth }

// found is a violation as a check keeps it.
type found struct {
	at   *location
	kind jsonschema.ErrorKind
}

// sink collects the violations of one subschema application.
type sink struct {
	kept     []found
	total    int
	depth    int  // length of the location it was opened at
	onlyType bool // every violation so far is a wrong type at depth
	discard  bool // only the verdict matters
}

// spend charges n steps and reports whether the budget still holds.
func (r *run) spend(n int) bool {
	r.work += n
	if r.work > r.budget && !r.exhausted {
		r.exhausted = true
		r.where = r.at
	}
	return !r.exhausted
}

// spendMatch charges one match of re against a string of length bytes. A
// match that alone would cost more than the whole budget is remembered:
// no value holding that string can be checked, whatever else it holds.
func (r *run) spendMatch(re *regex.Regexp, length int) bool {
	cost := re.MatchCost(length)
	if cost > r.budget && !r.exhausted {
		r.costly, r.costlyLength = re, length
	}
	return r.spend(cost)
}

// stop reports whether a check that found ok should end now: at the first
// violation when only the verdict counts, and once the budget is gone.
func (r *run) stop(ok bool) bool {
	return r.exhausted || (!ok && !r.explain)
}

// violated records the violation k makes, and returns false. The kind is
// made only for a violation that is kept.
func (r *run) violated(k func() jsonschema.ErrorKind) bool {
	return r.record(false, k)
}

// mistyped records a wrong type, which an alternative may be dismissed
// for; see alternatives.
func (r *run) mistyped(k func() jsonschema.ErrorKind) bool {
	return r.record(true, k)
}

func (r *run) record(wrongType bool, k func() jsonschema.ErrorKind) bool {
	if !r.explain || r.exhausted {
		return false
	}
	s := r.sink
	s.total++
	s.onlyType = s.onlyType && wrongType && r.at.length() == s.depth
	if s.discard || len(s.kept) >= MaxKept {
		r.spend(1)
		return false
	}
	if r.spend(costViolation) {
		s.kept = append(s.kept, found{at: r.at, kind: k()})
	}
	return false
}

// open starts a sink for a subschema applied at the current location and
// returns the one it replaces.
func (r *run) open(discard bool) (previous *sink) {
	previous = r.sink
	r.sink = &sink{depth: r.at.length(), onlyType: !discard, discard: discard}
	return previous
}

// merge adds the violations of s to the current sink.
func (r *run) merge(s *sink) {
	into := r.sink
	into.total += s.total
	into.onlyType = into.onlyType && s.onlyType && s.depth == into.depth
	room := max(0, MaxKept-len(into.kept))
	into.kept = append(into.kept, s.kept[:min(room, len(s.kept))]...)
}

// quietly checks v against n for its verdict only.
func (r *run) quietly(n *node, v any) bool {
	if !r.explain {
		return r.check(n, v)
	}
	previous := r.open(true)
	valid := r.check(n, v)
	r.sink = previous
	return valid
}

// enter, enterItem and leave track the location of the value being
// checked.
func (r *run) enter(name string) {
	if r.explain {
		r.at = r.at.member(name)
	}
}

func (r *run) enterItem(i int) {
	if r.explain {
		r.at = r.at.item(i)
	}
}

func (r *run) leave() {
	if r.explain {
		r.at = r.at.parent
	}
}

func (r *run) check(n *node, v any) bool {
	if !r.spend(costApply) {
		return false
	}
	if n.boolean != nil {
		if !*n.boolean {
			return r.violated(func() jsonschema.ErrorKind { return &kind.FalseSchema{} })
		}
		return true
	}
	if n.hasType && !n.typeMatches(v) {
		return r.mistyped(func() jsonschema.ErrorKind {
			return &kind.Type{Got: typeName(v), Want: n.types.ToStrings()}
		})
	}
	if n.constant != nil && !r.equal(v, *n.constant) {
		return r.violated(func() jsonschema.ErrorKind { return &kind.Const{Got: v, Want: *n.constant} })
	}
	if n.enum != nil && !r.inEnum(n, v) {
		return r.violated(func() jsonschema.ErrorKind { return &kind.Enum{Got: v, Want: n.enum.values} })
	}
	if f := n.format; f != nil {
		cost := costFormat
		if s, ok := v.(string); ok {
			cost += len(s)
			if f.Name == "regex" {
				cost += regex.ParseCost(s)
			}
		}
		if !r.spend(cost) {
			return false
		}
		if err := f.Validate(v); err != nil {
			return r.violated(func() jsonschema.ErrorKind { return &kind.Format{Got: v, Want: f.Name, Err: err} })
		}
	}
	ok := true
	if n.ref != nil {
		ok = r.check(n.ref, v)
		if r.stop(ok) {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		ok = r.object(n, v) && ok
	case []any:
		ok = r.array(n, v) && ok
	case string:
		ok = r.str(n, v) && ok
	case json.Number:
		ok = r.num(n, v) && ok
	}
	if r.stop(ok) {
		return false
	}
	return r.applicators(n, v) && ok
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "number"
}

func (n *node) typeMatches(v any) bool {
	if x, ok := v.(json.Number); ok {
		return n.number || (n.integer && isInteger(x))
	}
	var probe jsonschema.Types
	probe.Add(typeName(v))
	return n.types&probe != 0
}

// isInteger reports whether v, a JSON number, has an integer value.
func isInteger(v json.Number) bool {
	x := number{text: string(v)}
	if _, ok := x.small(); ok {
		return true
	}
	return x.exact().IsInteger()
}

// names returns the member names of obj: sorted when explaining, so that
// the explanation does not depend on the order of a map.
func (r *run) names(obj map[string]any) []string {
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	if r.explain && r.spend(len(obj)) {
		slices.Sort(names)
	}
	return names
}

// member checks the member name of an object against n: its property,
// the patterns that match its name, or additionalProperties, to which it
// adds name when that is false.
func (r *run) member(n *node, name string, value any, additional *[]string) bool {
	if !r.spend(costMember) {
		return false
	}
	r.enter(name)
	defer r.leave()
	ok, evaluated := true, false
	if s, has := n.properties[name]; has {
		evaluated = true
		if value == nil && r.explain && !slices.Contains(n.required, name) {
			ok = r.optionalNull(s)
		} else {
			ok = r.check(s, value)
		}
	}
	for _, p := range n.patternProperties {
		if r.stop(ok) || !r.spendMatch(p.re, len(name)) {
			return false
		}
		if r.match(p.re, name) {
			evaluated = true
			ok = r.check(p.node, value) && ok
		}
	}
	if evaluated || r.stop(ok) {
		return ok
	}
	if n.noAdditional {
		*additional = append(*additional, name)
		return false
	}
	if n.additional != nil {
		return r.check(n.additional, value)
	}
	return ok
}

// missing lists the names of required that obj lacks; when only the
// verdict counts, the first one.
func (r *run) missing(obj map[string]any, required []string) []string {
	var out []string
	for _, name := range required {
		if _, ok := obj[name]; !ok {
			out = append(out, name)
			if !r.explain {
				break
			}
		}
	}
	return out
}

func (r *run) object(n *node, obj map[string]any) bool {
	ok := true
	if n.minProps >= 0 && len(obj) < n.minProps {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.MinProperties{Got: len(obj), Want: n.minProps} })
	}
	if n.maxProps >= 0 && len(obj) > n.maxProps {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.MaxProperties{Got: len(obj), Want: n.maxProps} })
	}
	var missing []string
	if len(n.required) > 0 {
		if !r.spend(len(n.required)) {
			return false
		}
		missing = r.missing(obj, n.required)
		if missing != nil {
			ok = false
		}
	}
	if r.stop(ok) {
		return false
	}
	var additional []string
	if r.explain {
		for _, name := range r.names(obj) {
			ok = r.member(n, name, obj[name], &additional) && ok
			if r.exhausted {
				return false
			}
		}
	} else {
		for name, value := range obj {
			if !r.member(n, name, value, &additional) {
				return false
			}
		}
	}
	// Unknown members before missing ones: a member written in the wrong
	// case is both, and the unknown one says what to fix.
	if additional != nil {
		ok = r.violated(func() jsonschema.ErrorKind { return r.unknownMembers(n, additional) })
	}
	if missing != nil {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.Required{Missing: missing} })
	}
	if n.propertyNames != nil {
		for _, name := range r.names(obj) {
			if !r.quietly(n.propertyNames, name) {
				ok = r.violated(func() jsonschema.ErrorKind { return &kind.PropertyNames{Property: name} })
			}
			if r.stop(ok) {
				return false
			}
		}
	}
	for _, d := range n.dependentSchemas {
		if _, present := obj[d.name]; present {
			ok = r.check(d.node, obj) && ok
			if r.stop(ok) {
				return false
			}
		}
	}
	for _, d := range n.dependentRequired {
		if _, present := obj[d.name]; present {
			if !r.spend(len(d.list)) {
				return false
			}
			if missing := r.missing(obj, d.list); missing != nil {
				ok = r.violated(func() jsonschema.ErrorKind { return &kind.DependentRequired{Prop: d.name, Missing: missing} })
				if r.stop(ok) {
					return false
				}
			}
		}
	}
	return ok
}

// match reports whether s contains a match of re, whose cost the caller
// has charged. A match with no verdict (stopped by the backtracking
// engine's safety timeout) stops the check, which reports it in Stopped.
func (r *run) match(re *regex.Regexp, s string) bool {
	matched, err := re.Match(s)
	if err != nil {
		r.stopped = err
		r.spend(r.budget + 1)
		return false
	}
	return matched
}

// items checks arr[from:] against n, each at its own location.
func (r *run) items(arr []any, from int, each func(i int) *node) bool {
	ok := true
	for i := from; i < len(arr); i++ {
		if !r.spend(costMember) {
			return false
		}
		r.enterItem(i)
		ok = r.check(each(i), arr[i]) && ok
		r.leave()
		if r.stop(ok) {
			return false
		}
	}
	return ok
}

func (r *run) array(n *node, arr []any) bool {
	ok := true
	if n.minItems >= 0 && len(arr) < n.minItems {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.MinItems{Got: len(arr), Want: n.minItems} })
	}
	if n.maxItems >= 0 && len(arr) > n.maxItems {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.MaxItems{Got: len(arr), Want: n.maxItems} })
	}
	if n.uniqueItems && len(arr) > 1 {
		if i, j, found := r.duplicates(arr); found {
			ok = r.violated(func() jsonschema.ErrorKind { return &kind.UniqueItems{Duplicates: [2]int{i, j}} })
		}
	}
	if r.stop(ok) {
		return false
	}
	prefix := min(len(n.prefixItems), len(arr))
	ok = r.items(arr[:prefix], 0, func(i int) *node { return n.prefixItems[i] }) && ok
	if r.stop(ok) {
		return false
	}
	if n.items != nil {
		ok = r.items(arr, prefix, func(int) *node { return n.items }) && ok
		if r.stop(ok) {
			return false
		}
	}
	if n.contains == nil {
		return ok
	}
	var matched []int
	count := 0
	for i, item := range arr {
		if !r.spend(costMember) {
			return false
		}
		if r.quietly(n.contains, item) {
			count++
			if r.explain {
				matched = append(matched, i)
			}
		}
	}
	switch {
	case n.minContains >= 0 && count < n.minContains:
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.MinContains{Got: matched, Want: n.minContains} })
	case n.minContains < 0 && count == 0:
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.Contains{} })
	}
	if n.maxContains >= 0 && count > n.maxContains {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.MaxContains{Got: matched, Want: n.maxContains} })
	}
	return ok
}

func (r *run) str(n *node, s string) bool {
	ok := true
	if n.minLength >= 0 || n.maxLength >= 0 {
		length, counted := r.runeCount(s)
		if !counted {
			return false
		}
		if n.minLength >= 0 && length < n.minLength {
			ok = r.violated(func() jsonschema.ErrorKind { return &kind.MinLength{Got: length, Want: n.minLength} })
		}
		if n.maxLength >= 0 && length > n.maxLength {
			ok = r.violated(func() jsonschema.ErrorKind { return &kind.MaxLength{Got: length, Want: n.maxLength} })
		}
		if !ok {
			// A string of the wrong length is explained by its length: a
			// pattern matched against a long one would spend the budget
			// on a second opinion.
			return false
		}
	}
	if re := n.pattern; re != nil {
		if !r.spendMatch(re, len(s)) {
			return false
		}
		if !r.match(re, s) && !r.exhausted {
			ok = r.violated(func() jsonschema.ErrorKind { return &kind.Pattern{Got: s, Want: re.String()} })
		}
	}
	return ok
}

// runeCount returns the length of s in characters, charging for counting
// only the first time in a row it is asked about the same string: many
// subschemas with length bounds may apply to one long string.
func (r *run) runeCount(s string) (int, bool) {
	if len(s) == len(r.counted) && unsafe.StringData(s) == unsafe.StringData(r.counted) {
		return r.runes, true
	}
	if !r.spend(1 + len(s)/bytesPerStep) {
		return 0, false
	}
	r.counted, r.runes = s, utf8.RuneCountInString(s)
	return r.runes, true
}

func (r *run) num(n *node, v json.Number) bool {
	if n.minimum == nil && n.maximum == nil && n.exclusiveMinimum == nil && n.exclusiveMaximum == nil && n.multipleOf == nil {
		return true
	}
	x := number{text: string(v)}
	ok := true
	bounds := []struct {
		l    *limit
		fail func(c int) bool
		kind func(got, want *big.Rat) jsonschema.ErrorKind
	}{
		{n.minimum, func(c int) bool { return c < 0 }, func(g, w *big.Rat) jsonschema.ErrorKind { return &kind.Minimum{Got: g, Want: w} }},
		{n.maximum, func(c int) bool { return c > 0 }, func(g, w *big.Rat) jsonschema.ErrorKind { return &kind.Maximum{Got: g, Want: w} }},
		{n.exclusiveMinimum, func(c int) bool { return c <= 0 }, func(g, w *big.Rat) jsonschema.ErrorKind { return &kind.ExclusiveMinimum{Got: g, Want: w} }},
		{n.exclusiveMaximum, func(c int) bool { return c >= 0 }, func(g, w *big.Rat) jsonschema.ErrorKind { return &kind.ExclusiveMaximum{Got: g, Want: w} }},
	}
	for _, b := range bounds {
		if b.l == nil {
			continue
		}
		if !r.spend(x.cost()) {
			return false
		}
		if b.fail(x.cmp(b.l)) {
			ok = r.violated(func() jsonschema.ErrorKind { return b.kind(x.rat(), b.l.rat) })
			if r.stop(ok) {
				return false
			}
		}
	}
	if m := n.multipleOf; m != nil {
		if !r.spend(x.divisionCost(m)) {
			return false
		}
		if !x.multipleOf(m) {
			ok = r.violated(func() jsonschema.ErrorKind { return &kind.MultipleOf{Got: x.rat(), Want: m.rat} })
		}
	}
	return ok
}

func (r *run) applicators(n *node, v any) bool {
	ok := true
	if n.not != nil && r.quietly(n.not, v) {
		ok = r.violated(func() jsonschema.ErrorKind { return &kind.Not{} })
		if r.stop(ok) {
			return false
		}
	}
	for _, s := range n.allOf {
		ok = r.check(s, v) && ok
		if r.stop(ok) {
			return false
		}
	}
	if len(n.anyOf) > 0 {
		ok = r.alternatives(n.anyOf, v, false) && ok
		if r.stop(ok) {
			return false
		}
	}
	if len(n.oneOf) > 0 {
		ok = r.alternatives(n.oneOf, v, true) && ok
		if r.stop(ok) {
			return false
		}
	}
	if n.ifN != nil {
		if r.quietly(n.ifN, v) {
			if n.thenN != nil {
				ok = r.check(n.thenN, v) && ok
			}
		} else if n.elseN != nil {
			ok = r.check(n.elseN, v) && ok
		}
	}
	return ok
}

// alternatives checks anyOf (exactly one false) or oneOf (exactly one
// true). When none matches, the explanation is the violations of the one
// alternative that did not fail on the type of the value alone, if there is
// exactly one such, and otherwise the failed keyword itself.
func (r *run) alternatives(alts []*node, v any, exactlyOne bool) bool {
	first := -1
	var candidate *sink
	candidates := 0
	for i, s := range alts {
		var valid bool
		if r.explain {
			previous := r.open(first >= 0)
			valid = r.check(s, v)
			if sub := r.sink; !valid && !sub.discard && !sub.onlyType {
				candidate = sub
				candidates++
			}
			r.sink = previous
		} else {
			valid = r.check(s, v)
		}
		if r.exhausted {
			return false
		}
		if !valid {
			continue
		}
		if !exactlyOne {
			return true
		}
		if first >= 0 {
			return r.violated(func() jsonschema.ErrorKind { return &kind.OneOf{Subschemas: []int{first, i}} })
		}
		first = i
	}
	if first >= 0 {
		return true
	}
	if candidates == 1 {
		r.merge(candidate)
		return false
	}
	if exactlyOne {
		return r.violated(func() jsonschema.ErrorKind { return &kind.OneOf{} })
	}
	return r.violated(func() jsonschema.ErrorKind { return &kind.AnyOf{} })
}

// inEnum reports whether v is one of the enum values of n.
func (r *run) inEnum(n *node, v any) bool {
	if s, ok := v.(string); ok {
		r.spend(1 + len(s)/bytesPerStep)
		return n.enum.strings[s]
	}
	for _, i := range n.enum.others {
		if r.equal(v, n.enum.values[i]) {
			return true
		}
		if r.exhausted {
			return false
		}
	}
	return false
}

// equal is JSON equality: numbers by value, objects by members, arrays by
// items in order. It charges a step per value and per bytesPerStep bytes
// of strings compared.
func (r *run) equal(a, b any) bool {
	if !r.spend(1) {
		return false
	}
	switch a := a.(type) {
	case nil:
		return b == nil
	case bool:
		bb, ok := b.(bool)
		return ok && a == bb
	case string:
		bs, ok := b.(string)
		if !ok || len(a) != len(bs) {
			return false
		}
		return r.spend(len(a)/bytesPerStep) && a == bs
	case json.Number:
		bn, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == bn {
			return true
		}
		x, y := number{text: string(a)}, number{text: string(bn)}
		return r.spend(x.cost()+y.cost()) && x.exact().Cmp(y.exact()) == 0
	case []any:
		ba, ok := b.([]any)
		if !ok || len(a) != len(ba) {
			return false
		}
		for i := range a {
			if !r.equal(a[i], ba[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		bm, ok := b.(map[string]any)
		if !ok || len(a) != len(bm) {
			return false
		}
		for k, av := range a {
			bv, ok := bm[k]
			if !ok || !r.equal(av, bv) {
				return false
			}
		}
		return true
	}
	return false
}

// duplicates finds two equal items of arr, the earlier first. Beyond a few
// items it compares only items of equal hash, so that the work grows with
// the length of arr, not its square.
func (r *run) duplicates(arr []any) (int, int, bool) {
	if len(arr) <= 16 {
		for i := 1; i < len(arr); i++ {
			for j := 0; j < i; j++ {
				if r.equal(arr[i], arr[j]) {
					return j, i, true
				}
				if r.exhausted {
					return 0, 0, false
				}
			}
		}
		return 0, 0, false
	}
	seed := maphash.MakeSeed()
	seen := make(map[uint64][]int, len(arr))
	var h maphash.Hash
	for i, item := range arr {
		h.SetSeed(seed)
		if !r.hashValue(&h, item) {
			return 0, 0, false
		}
		sum := h.Sum64()
		for _, j := range seen[sum] {
			if r.equal(item, arr[j]) {
				return j, i, true
			}
			if r.exhausted {
				return 0, 0, false
			}
		}
		seen[sum] = append(seen[sum], i)
	}
	return 0, 0, false
}

// hashValue writes v to h so that values equal by equal hash alike:
// numbers by their exact value, objects whatever the order of members. It
// reports false when the budget ran out.
func (r *run) hashValue(h *maphash.Hash, v any) bool {
	if !r.spend(1) {
		return false
	}
	switch v := v.(type) {
	case nil:
		h.WriteByte('n')
	case bool:
		if v {
			h.WriteByte('t')
		} else {
			h.WriteByte('f')
		}
	case string:
		if !r.spend(len(v) / bytesPerStep) {
			return false
		}
		h.WriteByte('s')
		h.WriteString(strconv.Itoa(len(v)))
		h.WriteString(v)
	case json.Number:
		x := number{text: string(v)}
		if !r.spend(x.cost()) {
			return false
		}
		d := x.exact()
		h.WriteByte('#')
		if d.Negative {
			h.WriteByte('-')
		}
		h.WriteString(d.Digits)
		h.WriteByte('e')
		h.WriteString(strconv.Itoa(d.Exp))
	case []any:
		h.WriteByte('[')
		for _, item := range v {
			if !r.hashValue(h, item) {
				return false
			}
		}
		h.WriteByte(']')
	case map[string]any:
		if !r.spend(len(v)) {
			return false
		}
		h.WriteByte('{')
		for _, name := range slices.Sorted(maps.Keys(v)) {
			if !r.hashValue(h, name) || !r.hashValue(h, v[name]) {
				return false
			}
		}
		h.WriteByte('}')
	}
	return true
}
