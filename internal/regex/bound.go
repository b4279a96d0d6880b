package regex

import (
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// This file bounds, before anything runs, the steps the backtracking
// engine may take to match a pattern against a string of a given length.
// The bound is a function of the pattern and the length only, so the
// verdict it leads to is the same on any machine under any load.
//
// The pattern is read into a small tree (readPattern), and the tree is
// costed for a length n (cost): every node gets the number of ways it can
// hand on to what follows it (each way makes the engine try the rest of
// the pattern again) and the steps it takes itself. A concatenation
// multiplies ways; an alternation adds them; a loop over a body with one
// way has as many ways as iterations it can give back, and a loop over a
// body with more than one way has exponentially many. Two facts keep
// ordinary patterns polynomial and small:
//
//   - a loop whose characters cannot start what follows it (the
//     [-0-9A-Za-z]* before \. in an e-mail domain) can give back only
//     where what follows fails at once, so it hands on at most once;
//   - an alternation whose alternatives start with disjoint characters
//     hands on through one alternative at most.
//
// Lookarounds run once each time they are reached (the engine never
// backtracks into them), so they add their cost without multiplying ways.
// Anything the reader does not understand makes the whole pattern
// unanalysed, costed as exponential in the length (fallbackCost).

// maxPrefix is how many characters of what follows a loop are looked at.
const maxPrefix = 4

// saturated is where costs stop growing: far above any budget, and far
// below overflow when two saturated values are added.
const saturated = math.MaxInt64 / 4

// kind is the kind of a node of a pattern's tree.
type kind uint8

const (
	kChar   kind = iota // one character of set
	kStart              // ^: the beginning of the input
	kEnd                // $: the end of the input
	kZero               // \b, \B: zero width, no constraint on the characters
	kLook               // a lookaround of sub[0]; behind when it looks back
	kRef                // a backreference
	kConcat             // sub in order
	kAlt                // one of sub
	kLoop               // sub[0] min to max times (max -1: unbounded)
)

// node is one node of a pattern's tree.
type node struct {
	kind     kind
	set      charset
	behind   bool
	min, max int
	sub      []*node

	// Recorded once the tree is read (see measure and place).
	least int     // the fewest characters it matches
	first charset // the characters it starts with, or unknown
	after follow  // what must follow it, as far as known
	back  bool    // in a lookbehind, read backwards
}

// charset is a set of characters as sorted, disjoint, inclusive ranges.
// end, in the follow sets of loops only, stands for the end of the input.
type charset struct {
	ranges []rune // lo, hi pairs
	end    bool
}

var anyChar = charset{ranges: []rune{0, utf8.MaxRune}}

func (c charset) known() bool { return c.ranges != nil || c.end }

func (c charset) intersects(d charset) bool {
	if c.end && d.end {
		return true
	}
	for i := 0; i < len(c.ranges); i += 2 {
		for j := 0; j < len(d.ranges); j += 2 {
			if c.ranges[i] <= d.ranges[j+1] && d.ranges[j] <= c.ranges[i+1] {
				return true
			}
		}
	}
	return false
}

func (c charset) union(d charset) charset {
	pairs := append(slices.Clone(c.ranges), d.ranges...)
	return normalize(pairs, c.end || d.end)
}

// normalize sorts and merges lo, hi pairs.
func normalize(pairs []rune, end bool) charset {
	type r struct{ lo, hi rune }
	rs := make([]r, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		rs = append(rs, r{min(pairs[i], pairs[i+1]), max(pairs[i], pairs[i+1])})
	}
	slices.SortFunc(rs, func(a, b r) int { return int(a.lo) - int(b.lo) })
	out := []rune{}
	for _, x := range rs {
		if n := len(out); n > 0 && x.lo <= out[n-1]+1 {
			out[n-1] = max(out[n-1], x.hi)
			continue
		}
		out = append(out, x.lo, x.hi)
	}
	return charset{ranges: out, end: end}
}

// complement is the characters not in c.
func (c charset) complement() charset {
	out := []rune{}
	next := rune(0)
	for i := 0; i < len(c.ranges); i += 2 {
		if c.ranges[i] > next {
			out = append(out, next, c.ranges[i]-1)
		}
		next = c.ranges[i+1] + 1
	}
	if next <= utf8.MaxRune {
		out = append(out, next, utf8.MaxRune)
	}
	return charset{ranges: out}
}

// The classes of ECMAScript escapes, as the backtracking engine reads them
// in ECMAScript mode.
var (
	digits = charset{ranges: []rune{'0', '9'}}
	word   = charset{ranges: []rune{'0', '9', 'A', 'Z', '_', '_', 'a', 'z'}}
)

// reader reads a pattern into a tree. It understands the common ECMAScript
// syntax and nothing more: a construct it is unsure of (inline options,
// comments, Unicode classes, class subtraction, an escape it does not
// know) makes ok false, and the pattern is costed as unanalysed.
type reader struct {
	src string
	pos int
	ok  bool
}

// readPattern returns the tree of source, or nil when the reader is
// unsure of it.
func readPattern(source string) *node {
	r := &reader{src: source, ok: true}
	n := r.alternation(0)
	if !r.ok || r.pos != len(r.src) {
		return nil
	}
	return n
}

const maxNesting = 1000

func (r *reader) alternation(depth int) *node {
	if depth > maxNesting {
		r.ok = false
		return nil
	}
	alts := []*node{r.concat(depth)}
	for r.ok && r.pos < len(r.src) && r.src[r.pos] == '|' {
		r.pos++
		alts = append(alts, r.concat(depth))
	}
	if len(alts) == 1 {
		return alts[0]
	}
	return &node{kind: kAlt, sub: alts}
}

func (r *reader) concat(depth int) *node {
	var seq []*node
	for r.ok && r.pos < len(r.src) && r.src[r.pos] != '|' && r.src[r.pos] != ')' {
		atom := r.atom(depth)
		if !r.ok {
			return nil
		}
		atom = r.quantified(atom)
		if atom.kind == kConcat {
			seq = append(seq, atom.sub...)
		} else {
			seq = append(seq, atom)
		}
	}
	return &node{kind: kConcat, sub: seq}
}

// quantified applies the quantifiers that follow atom, if any.
func (r *reader) quantified(atom *node) *node {
	for r.ok && r.pos < len(r.src) {
		lo, hi, width := 0, 0, 1
		switch r.src[r.pos] {
		case '*':
			lo, hi = 0, -1
		case '+':
			lo, hi = 1, -1
		case '?':
			lo, hi = 0, 1
		case '{':
			var ok bool
			lo, hi, width, ok = braces(r.src[r.pos:])
			if !ok {
				// The engine reads a brace that does not make a
				// count as a literal; so does the caller, as an atom.
				return atom
			}
		default:
			return atom
		}
		r.pos += width
		if r.pos < len(r.src) && r.src[r.pos] == '?' {
			r.pos++ // lazy: tries the same choices in another order
		}
		if atom.kind == kStart || atom.kind == kEnd || atom.kind == kZero || atom.kind == kLook {
			r.ok = false // a quantified assertion: unusual, not analysed
			return atom
		}
		atom = &node{kind: kLoop, min: lo, max: hi, sub: []*node{atom}}
	}
	return atom
}

// braces reads {n}, {n,} or {n,m} at the start of s.
func braces(s string) (lo, hi, width int, ok bool) {
	i := 1
	num := func() (int, bool) {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == start || i-start > 9 {
			return 0, false
		}
		v, err := strconv.Atoi(s[start:i])
		return v, err == nil
	}
	lo, ok = num()
	if !ok || i >= len(s) {
		return 0, 0, 0, false
	}
	switch s[i] {
	case '}':
		return lo, lo, i + 1, true
	case ',':
		i++
		if i < len(s) && s[i] == '}' {
			return lo, -1, i + 1, true
		}
		hi, ok = num()
		if !ok || i >= len(s) || s[i] != '}' || hi < lo {
			return 0, 0, 0, false
		}
		return lo, hi, i + 1, true
	}
	return 0, 0, 0, false
}

func (r *reader) atom(depth int) *node {
	c, size := utf8.DecodeRuneInString(r.src[r.pos:])
	switch c {
	case '(':
		return r.group(depth)
	case '[':
		return r.class()
	case '\\':
		return r.escape()
	case '.':
		r.pos++
		return &node{kind: kChar, set: normalize([]rune{0, '\n' - 1, '\n' + 1, utf8.MaxRune}, false)}
	case '^':
		r.pos++
		return &node{kind: kStart}
	case '$':
		r.pos++
		return &node{kind: kEnd}
	case '*', '+', '?':
		r.ok = false
		return nil
	case '{':
		if _, _, _, ok := braces(r.src[r.pos:]); ok {
			r.ok = false
			return nil
		}
	case utf8.RuneError:
		if size <= 1 {
			r.ok = false
			return nil
		}
	}
	r.pos += size
	return &node{kind: kChar, set: charset{ranges: []rune{c, c}}}
}

func (r *reader) group(depth int) *node {
	rest := r.src[r.pos:]
	look, behind := false, false
	switch {
	case hasPrefix(rest, "(?:"), hasPrefix(rest, "(?>"):
		r.pos += 3
	case hasPrefix(rest, "(?="), hasPrefix(rest, "(?!"):
		r.pos += 3
		look = true
	case hasPrefix(rest, "(?<="), hasPrefix(rest, "(?<!"):
		r.pos += 4
		look, behind = true, true
	case hasPrefix(rest, "(?<"):
		end := indexByte(rest, '>')
		if end < 4 || !isName(rest[3:end]) {
			r.ok = false
			return nil
		}
		r.pos += end + 1
	case hasPrefix(rest, "(?"):
		r.ok = false // inline options, comments, conditionals: not analysed
		return nil
	default:
		r.pos++
	}
	body := r.alternation(depth + 1)
	if !r.ok || r.pos >= len(r.src) || r.src[r.pos] != ')' {
		r.ok = false
		return nil
	}
	r.pos++
	if look {
		return &node{kind: kLook, behind: behind, sub: []*node{body}}
	}
	return body
}

func (r *reader) escape() *node {
	if r.pos+1 >= len(r.src) {
		r.ok = false
		return nil
	}
	c := r.src[r.pos+1]
	switch c {
	case 'b', 'B':
		r.pos += 2
		return &node{kind: kZero}
	case 'k':
		end := indexByte(r.src[r.pos:], '>')
		if r.pos+2 >= len(r.src) || r.src[r.pos+2] != '<' || end < 0 || !isName(r.src[r.pos+3:r.pos+end]) {
			r.ok = false
			return nil
		}
		r.pos += end + 1
		return &node{kind: kRef}
	}
	if c >= '1' && c <= '9' {
		// A backreference, or in ECMAScript an octal or literal
		// character when there is no such group: costed as a
		// backreference, the dearer of the two.
		r.pos++
		for r.pos < len(r.src) && r.src[r.pos] >= '0' && r.src[r.pos] <= '9' {
			r.pos++
		}
		return &node{kind: kRef}
	}
	set, _, known := r.escapeSet()
	if !known {
		r.ok = false
		return nil
	}
	return &node{kind: kChar, set: set}
}

// escapeSet reads an escape that stands for one character, inside or
// outside a class. Exact reports that the set is exactly the engine's;
// otherwise it is all characters, a superset. Known reports that the
// escape is one the reader knows stands for one character: \u{41}, for
// one, does not in the engine's ECMAScript mode.
func (r *reader) escapeSet() (set charset, exact, known bool) {
	set, exact = r.knownEscape()
	if set.known() {
		return set, exact, true
	}
	_, size := utf8.DecodeRuneInString(r.src[r.pos+1:])
	r.pos += 1 + size
	return anyChar, false, false
}

// knownEscape reads the escapes escapeSet knows, and returns an unknown
// set, having read nothing, for any other.
func (r *reader) knownEscape() (charset, bool) {
	c := r.src[r.pos+1]
	single := func(ch rune, width int) (charset, bool) {
		r.pos += width
		return charset{ranges: []rune{ch, ch}}, true
	}
	switch c {
	case 'd', 'D', 'w', 'W':
		r.pos += 2
		set := digits
		if c == 'w' || c == 'W' {
			set = word
		}
		if c == 'D' || c == 'W' {
			set = set.complement()
		}
		return set, true
	case 's', 'S':
		// The engine's whitespace differs in details from ECMAScript's:
		// the reader does not rely on either.
		r.pos += 2
		return anyChar, false
	case 't':
		return single('\t', 2)
	case 'n':
		return single('\n', 2)
	case 'r':
		return single('\r', 2)
	case 'v':
		return single('\v', 2)
	case 'f':
		return single('\f', 2)
	case '0':
		if r.pos+2 < len(r.src) && r.src[r.pos+2] >= '0' && r.src[r.pos+2] <= '9' {
			return charset{}, false // an octal escape: not read
		}
		return single(0, 2)
	case 'x':
		if v, ok := hexAt(r.src, r.pos+2, 2); ok {
			return single(v, 4)
		}
	case 'u':
		if v, ok := hexAt(r.src, r.pos+2, 4); ok {
			return single(v, 6)
		}
	case 'c':
		if r.pos+2 < len(r.src) {
			l := r.src[r.pos+2] | 0x20
			if l >= 'a' && l <= 'z' {
				return single(rune(l-'a'+1), 3)
			}
		}
	default:
		// An escaped punctuation character stands for itself.
		if c < utf8.RuneSelf && !isWordByte(c) {
			return single(rune(c), 2)
		}
	}
	return charset{}, false
}

// classItem reads one character or escape of a bracketed class: its set,
// whether the set is exact, and whether it is a single character (which
// may start a range).
func (r *reader) classItem() (set charset, exact, single bool) {
	if r.src[r.pos] == '\\' {
		if r.pos+1 >= len(r.src) {
			r.ok = false
			return charset{}, false, false
		}
		switch r.src[r.pos+1] {
		case 'b':
			r.pos += 2
			return charset{ranges: []rune{'\b', '\b'}}, true, true
		case 'd', 'D', 'w', 'W', 's', 'S':
			set, exact, _ := r.escapeSet()
			return set, exact, false
		}
		// In a class, an escape the reader does not know still
		// stands for characters: all of them, as far as costing goes.
		set, exact, _ := r.escapeSet()
		return set, exact, exact && len(set.ranges) == 2 && set.ranges[0] == set.ranges[1]
	}
	if r.src[r.pos] == '[' {
		r.ok = false // subtraction and nested classes: not analysed
		return charset{}, false, false
	}
	c, size := utf8.DecodeRuneInString(r.src[r.pos:])
	if c == utf8.RuneError && size <= 1 {
		r.ok = false
		return charset{}, false, false
	}
	r.pos += size
	return charset{ranges: []rune{c, c}}, true, true
}

// class reads a bracketed class.
func (r *reader) class() *node {
	r.pos++ // [
	negated := false
	if r.pos < len(r.src) && r.src[r.pos] == '^' {
		negated = true
		r.pos++
	}
	if r.pos >= len(r.src) || r.src[r.pos] == ']' {
		r.ok = false // [] and [^]: read differently by different engines
		return nil
	}
	var pairs []rune
	exact := true
	for r.ok && r.pos < len(r.src) && r.src[r.pos] != ']' {
		lo, ok, single := r.classItem()
		if !r.ok {
			return nil
		}
		exact = exact && ok
		if single && r.pos+1 < len(r.src) && r.src[r.pos] == '-' && r.src[r.pos+1] != ']' {
			r.pos++
			hi, ok, single2 := r.classItem()
			if !r.ok {
				return nil
			}
			if !single2 {
				// [a-\d]: the engine reads the dash literally.
				exact = exact && ok
				pairs = append(pairs, lo.ranges...)
				pairs = append(pairs, '-', '-')
				pairs = append(pairs, hi.ranges...)
				continue
			}
			if hi.ranges[0] < lo.ranges[0] {
				r.ok = false
				return nil
			}
			pairs = append(pairs, lo.ranges[0], hi.ranges[0])
			continue
		}
		pairs = append(pairs, lo.ranges...)
	}
	if !r.ok || r.pos >= len(r.src) {
		r.ok = false
		return nil
	}
	r.pos++ // ]
	set := normalize(pairs, false)
	switch {
	case !exact:
		// A superset is safe to cost; its complement would not be.
		set = anyChar
	case negated:
		set = set.complement()
	}
	return &node{kind: kChar, set: set}
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

func indexByte(s string, b byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == b {
			return i
		}
	}
	return -1
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c == '_'
}

func isName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isWordByte(s[i]) {
			return false
		}
	}
	return true
}

func hexAt(s string, at, digits int) (rune, bool) {
	if at+digits > len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[at:at+digits], 16, 32)
	return rune(v), err == nil
}

// Saturating arithmetic.

func add(a, b int) int { return min(a+b, saturated) }

func mul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > saturated {
		return saturated
	}
	return int(lo)
}

// measure records, bottom up, the fewest characters every node under nd
// matches and the characters it starts with.
func measure(nd *node) {
	for _, s := range nd.sub {
		measure(s)
	}
	switch nd.kind {
	case kChar:
		nd.least, nd.first = 1, nd.set
	case kConcat:
		for _, s := range nd.sub {
			nd.least = add(nd.least, s.least)
		}
		nd.first = concatFirst(nd.sub)
	case kAlt:
		nd.least = saturated
		for _, s := range nd.sub {
			nd.least = min(nd.least, s.least)
		}
		for _, s := range nd.sub {
			if !s.first.known() {
				nd.first = charset{}
				break
			}
			nd.first = nd.first.union(s.first)
		}
	case kLoop:
		nd.least = mul(nd.min, nd.sub[0].least)
		nd.first = nd.sub[0].first
	}
}

// concatFirst is the characters a sequence can start with when it
// consumes any, or unknown.
func concatFirst(seq []*node) charset {
	var set charset
	for _, s := range seq {
		switch s.kind {
		case kStart, kZero, kLook:
			continue // zero width: the next node consumes
		case kEnd, kRef:
			return charset{}
		}
		if !s.first.known() {
			return charset{}
		}
		set = set.union(s.first)
		if s.least > 0 {
			return set
		}
	}
	return charset{}
}

// place records, top down, what follows every node under nd; after is
// what follows nd. Inside a lookbehind characters are read backwards, and
// nothing is recorded.
func place(nd *node, after follow, behind bool) {
	if behind {
		after = nil
	}
	nd.after, nd.back = after, behind
	switch nd.kind {
	case kConcat:
		for i, s := range nd.sub {
			place(s, prefix(nd.sub[i+1:], after), behind)
		}
	case kAlt:
		for _, s := range nd.sub {
			place(s, after, behind)
		}
	case kLoop:
		// The body is followed by another iteration or by what follows
		// the loop: nothing is assumed.
		place(nd.sub[0], nil, behind)
	case kLook:
		place(nd.sub[0], nil, behind || nd.behind)
	}
}

// cost returns, for inputs of at most n characters, the ways nd can hand
// on to what follows it, and the steps it takes, at most, each time it is
// entered (not counting what follows).
func cost(nd *node, n int) (ways, work int) {
	switch nd.kind {
	case kChar, kStart, kEnd, kZero:
		return 1, 1
	case kRef:
		return 1, add(n, 1)
	case kLook:
		_, w := cost(nd.sub[0], n)
		return 1, add(w, 2)
	case kConcat:
		// Right to left: the work of entering node i is its own work
		// and, for each way it hands on, the work of the rest.
		ways, rest := 1, 0
		for i := len(nd.sub) - 1; i >= 0; i-- {
			w, k := cost(nd.sub[i], n)
			rest = add(k, mul(w, rest))
			ways = mul(ways, w)
		}
		return ways, rest
	case kAlt:
		// Read backwards, alternatives are told apart by their last
		// characters, not their first.
		disjoint := !nd.back
		var seen charset
		for _, s := range nd.sub {
			if !s.first.known() || s.least == 0 || seen.intersects(s.first) {
				disjoint = false
				break
			}
			seen = seen.union(s.first)
		}
		for _, s := range nd.sub {
			w, k := cost(s, n)
			if disjoint {
				// Only the alternative that starts with the character
				// at hand gets past its first.
				ways = max(ways, w)
			} else {
				ways = add(ways, w)
			}
			work = add(work, add(k, 1))
		}
		return max(ways, 1), work
	case kLoop:
		return loopCost(nd, n)
	}
	return 1, 1
}

// loopCost costs a loop.
func loopCost(nd *node, n int) (ways, work int) {
	body := nd.sub[0]
	most := nd.max
	if most < 0 {
		most = saturated
	}
	// Iterations that consume nothing end an unbounded loop; every other
	// one consumes at least body.least characters.
	if body.least > 0 {
		most = min(most, n/body.least)
	} else {
		most = min(most, add(nd.min, add(n, 1)))
	}
	choices := max(most-nd.min+1, 1)
	bw, bk := cost(body, n)
	if bw > 1 {
		// Every iteration may hand on in several ways, and the engine
		// tries every combination: exponential in the iterations.
		paths, level := 1, 1
		for range most {
			level = mul(level, bw)
			paths = add(paths, level)
			if paths == saturated {
				break
			}
		}
		return paths, mul(paths, add(bk, 2))
	}
	work = add(mul(most, add(bk, 1)), choices)
	ways = choices
	if !body.first.known() || body.least == 0 {
		return ways, work
	}
	if body.kind == kChar {
		// Given back one character at a time, what follows starts with
		// characters of the body's set: it fails within the first
		// character of its prefix that cannot be in that set.
		for i, f := range nd.after {
			if !f.intersects(body.set) {
				return min(ways, i+1), add(work, mul(choices, i+1))
			}
		}
		return ways, work
	}
	if len(nd.after) > 0 && !nd.after[0].intersects(body.first) {
		// Given back one iteration at a time, what follows starts where
		// an iteration started: it fails at once.
		return 1, add(work, choices)
	}
	return ways, work
}

// cost is the bound this file computes, in the steps of a budget: what
// the backtracking engine may spend to find a match of the pattern in a
// string of n characters, trying every start when the pattern is not
// anchored at the beginning. It saturates far above any budget.
func (t *tree) cost(n int) int {
	if t.root == nil {
		return fallbackCost(t.size, n)
	}
	_, work := cost(t.root, n)
	starts := 1
	if !t.anchored {
		starts = n + 1
	}
	return mul(stepsPerEngineStep, add(mul(starts, add(work, 2)), add(n, 1)))
}

// stepsPerEngineStep converts the engine's steps, as this file counts
// them, into the steps of a budget, which stand for about 10 ns. Measured
// here, a budget step of the tightest bounds (a*a* before a lookahead)
// took about 1 ns of matching: a budget of 12 million steps admits a
// match of about 12 ms, hundreds of times below SafetyTimeout, and still
// far below it on a machine loaded several times over.
const stepsPerEngineStep = 4

// fallbackCost costs a pattern the reader did not understand as
// exponential in the length of the string.
func fallbackCost(size, n int) int {
	if n >= 60 {
		return saturated
	}
	return mul(stepsPerEngineStep, mul(mul(size, n+1), 1<<n))
}

// newTree reads source for costing. Anchored reports that the engine
// tries the pattern at the beginning of the string only.
func newTree(source string, anchored bool) *tree {
	root := readPattern(source)
	if root != nil {
		measure(root)
		place(root, nil, false)
	}
	return &tree{root: root, anchored: anchored, size: max(1, len(source))}
}

// tree is a pattern read for costing.
type tree struct {
	root     *node // nil when the reader did not understand the pattern
	anchored bool  // matched at the beginning of the string only
	size     int
}

// follow is what must come after a node: the sets the next characters
// must be in, as far as they are known. A set may hold the end of the
// input.
type follow []charset

// prefix returns the follow of a node that seq follows, and then after.
func prefix(seq []*node, after follow) follow {
	var out follow
	for _, s := range seq {
		if len(out) >= maxPrefix {
			return out
		}
		switch s.kind {
		case kChar:
			out = append(out, s.set)
			continue
		case kStart, kZero, kLook:
			continue // zero width: constrains nothing the reader relies on
		case kEnd:
			// The end of the input; the engine's $ may also stand before
			// a final line feed.
			return append(out, charset{ranges: []rune{'\n', '\n'}, end: true})
		case kConcat:
			return append(out, prefix(s.sub, nil)...)
		}
		if s.first.known() && s.least > 0 {
			out = append(out, s.first)
		}
		return out
	}
	out = append(out, after...)
	return out[:min(len(out), maxPrefix)]
}
