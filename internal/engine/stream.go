package engine

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/agentcontract/tool/internal/regex"
	"github.com/agentcontract/tool/internal/strictjson"
)

// Streamed is the outcome of CheckJSON.
type Streamed struct {
	// Valid reports that the document is one I-JSON document, holds at
	// most the values allowed, and satisfies the schema within the
	// budget. False says only that the document was not shown valid: it
	// may be invalid, too large, too costly, or use something CheckJSON
	// does not read directly (see CheckJSON).
	Valid bool
	// Values is the number of values read, containers included; all of
	// the document's values when Valid.
	Values int
	// Work is the number of steps spent.
	Work int
}

// CheckJSON reports whether data is one I-JSON document (the rules of
// package strictjson) of at most maxValues values that satisfies the
// schema, spending at most budget steps, without building its value tree.
// It charges every keyword what Check charges for it on the tree, plus a
// step per sixteen bytes each time a subschema reads a value again (a
// reference, a combination, contains, a second member schema), so a
// document it shows valid is one Check shows valid within the same
// budget, give or take the order in which failed alternatives stop.
//
// It reads no more than a few times the document's length in all: a
// document whose subschemas would read its values again more than that
// is not shown valid. Nor is, because CheckJSON does not read it directly,
// a document where it would meet: a pattern of the backtracking engine
// (whose static cost may be far above what its match then takes, a cost
// better charged once, on the tree); the "regex" format (whose parser allocates much), or
// any format applied to an object or array; uniqueItems over a nonempty
// array; an enum or const comparing an object or array with one; or, in
// one object of more than 64 members, required with more than 64 names or
// dependent keywords. Callers then parse the tree and use Check and
// Explain, which also say what is wrong with an invalid document.
//
// Data is only read during the call, and nothing retains it. On the valid
// path CheckJSON allocates nothing, unless the schema asserts a format or
// compares a non-string value with an enum or const. It is safe for
// concurrent use.
func (c *Checker) CheckJSON(data []byte, budget, maxValues int) Streamed {
	out, _ := c.checkJSON(data, budget, maxValues, slot{})
	return out
}

// checkJSON is CheckJSON decoding the document to into, and reports
// whether it did.
func (c *Checker) checkJSON(data []byte, budget, maxValues int, into slot) (Streamed, bool) {
	s := streams.Get().(*stream)
	s.sc.Reset(data)
	s.run = run{budget: budget}
	s.primary, s.maxValues = true, maxValues
	s.rereadable = maxReread*len(data) + minReread
	s.into = into
	valid := s.sc.Begin() == nil && s.check(c.root) && s.sc.End() == nil && !s.aborted()
	out := Streamed{Valid: valid, Values: s.values, Work: s.work}
	decoded := valid && into.p != nil && !s.undecodable
	s.release()
	return out, decoded
}

// stream is the state of one CheckJSON.
type stream struct {
	run
	sc        strictjson.Scanner
	primary   bool // reading the document for the first time: validate and count
	declined  bool // met invalid JSON or something not read directly
	values    int
	maxValues int

	rereadable int // bytes that may still be read again

	text   []byte   // decoded strings with escapes, innermost last
	names  []string // member names of the objects being read, innermost last
	sorted []string // scratch for finding duplicate names in a large object

	into        slot        // where the next value read decodes to, if anywhere
	undecodable bool        // a value read does not decode as the codec decodes it
	strings     stringCache // kept in the pool
}

var streams = sync.Pool{New: func() any { return new(stream) }}

// Bounds on the scratch space a pooled stream keeps.
const (
	maxPooledNames = 1 << 12
	maxPooledText  = 1 << 16
)

// release forgets every view of the document and returns s to the pool.
func (s *stream) release() {
	clear(s.names[:cap(s.names)])
	clear(s.sorted[:cap(s.sorted)])
	keep := cap(s.names) <= maxPooledNames && cap(s.sorted) <= maxPooledNames && cap(s.text) <= maxPooledText
	*s = stream{text: s.text[:0], names: s.names[:0], sorted: s.sorted[:0], strings: s.strings}
	if keep {
		streams.Put(s)
	}
}

// Bytes a stream may read again, in all: maxReread times the document
// plus minReread. Reading again is charged to the budget like every other
// step, but a step of reading costs more time than most; past this bound
// the tree, which a subschema applies to without reading anything, is
// cheaper.
const (
	maxReread = 4
	minReread = 1 << 12
)

// manyMembers is the member count above which an object is read directly
// only when the keywords about it take time independent of its size.
const manyMembers = 64

// linearDuplicateScan is the member count up to which duplicate names are
// found by comparing each name with those before it; larger objects sort
// their names once read.
const linearDuplicateScan = 16

// aborted reports whether the stream can no longer show the document
// valid, whatever happens next.
func (s *stream) aborted() bool { return s.declined || s.exhausted }

// decline gives up showing the document valid.
func (s *stream) decline() bool {
	s.declined = true
	return false
}

// forget drops the decoded strings after the first mark bytes of the
// scratch text, whose bytes will be reused: the count of characters Check
// keeps for the last string it measured may be one of them.
func (s *stream) forget(mark int) {
	if mark < len(s.text) {
		s.text = s.text[:mark]
		s.counted = ""
	}
}

// view returns b as a string without copying. Views are dropped before
// CheckJSON returns.
func view(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// target is a value a subschema applies to: a scalar by its text (a
// string's decoded content, a number's token), an array or object by where
// it lies in the document.
type target struct {
	kind              byte // a strictjson Kind
	text              string
	start, end, depth int
	members           int  // of an object, once read
	into              slot // of a value read for the first time: where it decodes to
}

func (t *target) container() bool {
	return t.kind == strictjson.KindObject || t.kind == strictjson.KindArray
}

// check reads the value at the position and reports whether it satisfies
// n; a nil n only reads it. When it reports false, where the scanner stopped
// matters only when reading for the first time, which then ends.
func (s *stream) check(n *node) bool {
	dst := s.take()
	// Check charges a reference alone the application, and a visit per
	// member of an object; reading the value with the reference at once
	// saves reading it twice.
	hops := 0
	for ; n != nil && n.onlyRef(); hops++ {
		if !s.spend(costApply) {
			return false
		}
		n = n.ref
	}
	if s.primary {
		s.values++
		if s.values > s.maxValues {
			return s.decline()
		}
	}
	k, err := s.sc.ValueKind()
	if err != nil {
		return s.decline()
	}
	t := target{kind: k, start: s.sc.Pos(), depth: s.sc.Depth(), into: dst}
	if t.container() {
		return s.container(n, &t) && s.spend(hops*costMember*t.members)
	}
	mark := len(s.text)
	if !s.scalar(&t) {
		return s.decline()
	}
	if dst.p != nil {
		s.decodeScalar(dst, &t)
	}
	ok := n == nil || s.scalarCheck(n, &t)
	s.forget(mark)
	return ok
}

// scalar reads the scalar at the position into t.
func (s *stream) scalar(t *target) bool {
	var err error
	switch t.kind {
	case strictjson.KindString:
		var content []byte
		var inPlace bool
		mark := len(s.text)
		content, inPlace, err = s.sc.String(s.text)
		if err == nil && !inPlace {
			s.text, content = content, content[mark:]
		}
		t.text = view(content)
	case strictjson.KindNumber:
		var token []byte
		token, err = s.sc.Number()
		t.text = view(token)
	case strictjson.KindTrue:
		err = s.sc.Literal("true")
	case strictjson.KindFalse:
		err = s.sc.Literal("false")
	default:
		err = s.sc.Literal("null")
	}
	return err == nil
}

// container reads the array or object at the position and checks it
// against n.
func (s *stream) container(n *node, t *target) bool {
	if n != nil {
		if !s.spend(costApply) {
			return false
		}
		if n.boolean != nil {
			if !*n.boolean {
				return false
			}
			n = nil
		}
	}
	if n != nil && (n.hasType && !n.kindMatches(t) || !s.valueKeywords(n, t)) {
		return false
	}
	var ok bool
	if t.kind == strictjson.KindObject {
		ok = s.object(n, t)
	} else {
		ok = s.array(n, t)
	}
	if !ok || n == nil {
		return ok
	}
	t.end = s.sc.Pos()
	if n.ref != nil && !s.apply(n.ref, t) {
		return false
	}
	return s.applicators(n, t)
}

// scalarCheck checks the scalar t against n, as Check does.
func (s *stream) scalarCheck(n *node, t *target) bool {
	if !s.spend(costApply) {
		return false
	}
	if n.boolean != nil {
		return *n.boolean
	}
	if n.hasType && !n.kindMatches(t) || !s.valueKeywords(n, t) {
		return false
	}
	if n.ref != nil && !s.scalarCheck(n.ref, t) {
		return false
	}
	switch t.kind {
	case strictjson.KindString:
		if n.pattern != nil && n.pattern.Backtracking() {
			return s.decline()
		}
		if !s.str(n, t.text) {
			return false
		}
	case strictjson.KindNumber:
		if !s.num(n, json.Number(t.text)) {
			return false
		}
	}
	return s.applicators(n, t)
}

// valueKeywords checks const, enum and format.
func (s *stream) valueKeywords(n *node, t *target) bool {
	if n.constant != nil && !s.equal(t, *n.constant) {
		return false
	}
	if n.enum != nil && !s.inEnum(n, t) {
		return false
	}
	f := n.format
	if f == nil {
		return true
	}
	if t.container() || f.Name == "regex" {
		return s.decline()
	}
	cost := costFormat
	if t.kind == strictjson.KindString {
		cost += len(t.text)
		if f.Name == "regex" {
			cost += regex.ParseCost(t.text)
		}
	}
	// A format check gets its own copy: it may keep what it is given.
	return s.spend(cost) && f.Validate(t.value(true)) == nil
}

// value returns the scalar t as Check sees it, a copy of its text when
// owned.
func (t *target) value(owned bool) any {
	text := t.text
	if owned {
		text = strings.Clone(text)
	}
	switch t.kind {
	case strictjson.KindString:
		return text
	case strictjson.KindNumber:
		return json.Number(text)
	case strictjson.KindTrue:
		return true
	case strictjson.KindFalse:
		return false
	}
	return nil
}

// equal is Check's equality of t with b; an array or object is compared
// only with what is not one of its kind.
func (s *stream) equal(t *target, b any) bool {
	if !t.container() {
		return s.run.equal(t.value(false), b)
	}
	switch b.(type) {
	case []any:
		if t.kind == strictjson.KindArray {
			return s.decline()
		}
	case map[string]any:
		if t.kind == strictjson.KindObject {
			return s.decline()
		}
	}
	s.spend(1)
	return false
}

// inEnum is Check's inEnum on t.
func (s *stream) inEnum(n *node, t *target) bool {
	if t.kind == strictjson.KindString {
		s.spend(1 + len(t.text)/bytesPerStep)
		return n.enum.strings[t.text]
	}
	for _, i := range n.enum.others {
		if s.equal(t, n.enum.values[i]) {
			return true
		}
		if s.aborted() {
			return false
		}
	}
	return false
}

// apply checks t, read before, against n: a scalar by its text, an array
// or object by reading it again.
func (s *stream) apply(n *node, t *target) bool {
	if !t.container() {
		return s.scalarCheck(n, t)
	}
	return s.reread(n, t)
}

// reread checks the value t spans, read before, against n by reading it
// again, which costs a step per bytesPerStep bytes.
func (s *stream) reread(n *node, t *target) bool {
	if !s.spend((t.end - t.start) / bytesPerStep) {
		return false
	}
	if s.rereadable -= t.end - t.start; s.rereadable < 0 {
		return s.decline()
	}
	primary, names, text := s.primary, len(s.names), len(s.text)
	s.primary = false
	s.sc.Seek(t.start, t.depth)
	ok := s.check(n)
	s.sc.Seek(t.end, t.depth)
	clear(s.names[names:])
	s.primary, s.names = primary, s.names[:names]
	s.forget(text)
	return ok
}

// applicators checks not, allOf, anyOf, oneOf and if/then/else, as Check
// does.
func (s *stream) applicators(n *node, t *target) bool {
	if n.not != nil && (s.apply(n.not, t) || s.aborted()) {
		return false
	}
	for _, m := range n.allOf {
		if !s.apply(m, t) {
			return false
		}
	}
	if len(n.anyOf) > 0 && !s.alternatives(n.anyOf, t, false) {
		return false
	}
	if len(n.oneOf) > 0 && !s.alternatives(n.oneOf, t, true) {
		return false
	}
	if n.ifN == nil {
		return true
	}
	if s.apply(n.ifN, t) {
		return n.thenN == nil || s.apply(n.thenN, t)
	}
	return !s.aborted() && (n.elseN == nil || s.apply(n.elseN, t))
}

// alternatives is anyOf (exactlyOne false) or oneOf.
func (s *stream) alternatives(alts []*node, t *target, exactlyOne bool) bool {
	found := false
	for _, m := range alts {
		valid := s.apply(m, t)
		if s.aborted() {
			return false
		}
		if !valid {
			continue
		}
		if !exactlyOne || found {
			return !found
		}
		found = true
	}
	return found
}

// object reads the object at the position and checks the keywords of n
// about objects; a nil n only reads it.
func (s *stream) object(n *node, t *target) bool {
	empty, err := s.sc.OpenObject()
	if err != nil {
		return s.decline()
	}
	base, mark := len(s.names), len(s.text)
	var present uint64 // bit i: n.required[i] is a member
	next := 0          // the index in required of the name most likely next
	if n != nil && len(n.required) > manyMembers {
		return s.decline()
	}
	frame := s.openObject(t.into)
	for more := !empty; more; {
		content, inPlace, err := s.sc.MemberName(s.text)
		if err != nil {
			return s.decline()
		}
		if !inPlace {
			s.text, content = content, content[len(s.text):]
		}
		name := view(content)
		if s.primary && len(s.names)-base <= linearDuplicateScan && slices.Contains(s.names[base:], name) {
			return s.decline()
		}
		s.names = append(s.names, name)
		if s.sc.Colon() != nil {
			return s.decline()
		}
		s.into = s.memberSlot(&frame, name)
		var ok bool
		if n == nil {
			ok = s.check(nil)
		} else {
			// Members mostly come in the order of required.
			i := next
			if i >= len(n.required) || n.required[i] != name {
				i = slices.Index(n.required, name)
			}
			if i >= 0 {
				present, next = present|1<<i, i+1
			}
			ok = s.member(n, name, i)
		}
		s.into = slot{}
		if !ok {
			return false
		}
		s.storeMember(&frame, name)
		if more, err = s.sc.NextMember(); err != nil {
			return s.decline()
		}
	}
	names := s.names[base:]
	t.members = len(names)
	ok := (!s.primary || len(names) <= linearDuplicateScan+1 || s.distinct(names)) &&
		(n == nil || s.objectKeywords(n, t, names, present))
	clear(s.names[base:])
	s.names = s.names[:base]
	s.forget(mark)
	return ok
}

// distinct reports whether names holds no name twice, declining when it
// does.
func (s *stream) distinct(names []string) bool {
	s.sorted = append(s.sorted[:0], names...)
	slices.Sort(s.sorted)
	for i := 1; i < len(s.sorted); i++ {
		if s.sorted[i] == s.sorted[i-1] {
			clear(s.sorted)
			return s.decline()
		}
	}
	clear(s.sorted)
	return true
}

// member reads the value of member name, the required member of that
// index in n (-1 if none), and checks it against every subschema of n that
// applies to it: the first one reads it, the others read it again.
func (s *stream) member(n *node, name string, required int) bool {
	if !s.spend(costMember) {
		return false
	}
	value := target{start: s.sc.Pos(), depth: s.sc.Depth()}
	read := false
	apply := func(m *node) bool {
		if read {
			return s.reread(m, &value)
		}
		read = true
		ok := s.check(m)
		value.end = s.sc.Pos()
		return ok
	}
	evaluated := false
	var m *node
	var has bool
	if required >= 0 && n.requiredProperties != nil {
		m = n.requiredProperties[required]
		has = m != nil
	} else {
		m, has = n.properties[name]
	}
	if has {
		evaluated = true
		if !apply(m) {
			return false
		}
	}
	for _, p := range n.patternProperties {
		if p.re.Backtracking() {
			return s.decline()
		}
		if !s.spend(p.re.MatchCost(len(name))) {
			return false
		}
		if s.match(p.re, name) {
			evaluated = true
			if !apply(p.node) {
				return false
			}
		}
		if s.exhausted {
			return false
		}
	}
	switch {
	case evaluated:
		return true
	case n.noAdditional:
		return false
	}
	return apply(n.additional)
}

// objectKeywords checks the keywords of n about an object once it is read:
// its members by name and the rest by reading it again.
func (s *stream) objectKeywords(n *node, t *target, names []string, present uint64) bool {
	if n.minProps >= 0 && len(names) < n.minProps || n.maxProps >= 0 && len(names) > n.maxProps {
		return false
	}
	if len(n.required) > 0 && (!s.spend(len(n.required)) || present != 1<<len(n.required)-1) {
		return false
	}
	if n.propertyNames != nil {
		for _, name := range names {
			if !s.scalarCheck(n.propertyNames, &target{kind: strictjson.KindString, text: name}) {
				return false
			}
		}
	}
	if (len(n.dependentSchemas) > 0 || len(n.dependentRequired) > 0) && len(names) > manyMembers {
		return s.decline()
	}
	t.end = s.sc.Pos()
	for _, d := range n.dependentSchemas {
		if slices.Contains(names, d.name) && !s.apply(d.node, t) {
			return false
		}
	}
	for _, d := range n.dependentRequired {
		if !slices.Contains(names, d.name) {
			continue
		}
		if !s.spend(len(d.list)) {
			return false
		}
		for _, name := range d.list {
			if !slices.Contains(names, name) {
				return false
			}
		}
	}
	return true
}

// array reads the array at the position and checks the keywords of n
// about arrays; a nil n only reads it.
func (s *stream) array(n *node, t *target) bool {
	empty, err := s.sc.OpenArray()
	if err != nil || n != nil && n.uniqueItems && !empty {
		return s.decline()
	}
	frame := s.openArray(t.into)
	count, contained := 0, 0
	for more := !empty; more; count++ {
		var m *node
		if n != nil {
			if count < len(n.prefixItems) {
				m = n.prefixItems[count]
			} else {
				m = n.items
			}
		}
		if m != nil && !s.spend(costMember) {
			return false
		}
		item := target{start: s.sc.Pos(), depth: s.sc.Depth()}
		s.into = s.itemSlot(&frame)
		if !s.check(m) {
			return false
		}
		if n != nil && n.contains != nil {
			item.end = s.sc.Pos()
			if !s.spend(costMember) {
				return false
			}
			if s.reread(n.contains, &item) {
				contained++
			} else if s.aborted() {
				return false
			}
		}
		if more, err = s.sc.NextItem(); err != nil {
			return s.decline()
		}
	}
	s.closeArray(&frame)
	if n == nil {
		return true
	}
	switch {
	case n.minItems >= 0 && count < n.minItems, n.maxItems >= 0 && count > n.maxItems:
		return false
	case n.contains == nil:
		return true
	case n.minContains >= 0 && contained < n.minContains, n.minContains < 0 && contained == 0:
		return false
	}
	return n.maxContains < 0 || contained <= n.maxContains
}
