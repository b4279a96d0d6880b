package engine

import (
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/agentcontract/tool/internal/strictjson"
)

// Feed checks one JSON object against a schema while its text arrives in
// pieces, and refuses it as soon as no text that begins with the pieces
// read can be one Check accepts: text that cannot be one I-JSON document
// (package strictjson), a first value other than an object, more values
// than checking them could cost, and a value that already breaks the
// schema where that cannot depend on what follows.
//
// A Feed never accepts: what it refuses Check refuses, whatever follows,
// but a text it does not refuse may still be refused by Check once
// whole. It reads each byte once and keeps no piece: its memory is that
// of the values open at a time (each string's first 4 KiB, the names of
// the members of the objects open, the subschemas that apply to them),
// within fixed bounds beyond which it checks less, never more, so that
// the memory of a Feed does not grow with the length of the text.
//
// What it judges early, and where:
//
//   - every rule of strictjson, at the byte that breaks it (a number token
//     at its 101st byte);
//   - at the first byte of a value: a type the subschemas that apply to it
//     refuse, the false schema, an anyOf or oneOf none of whose branches
//     accepts that type, and an item beyond maxItems;
//   - at a member name: a duplicate, a member beyond maxProperties, and a
//     member additionalProperties false refuses;
//   - while a string is read, a length beyond maxLength;
//   - at the end of a string (of at most 4 KiB), number or literal: every
//     keyword, exactly as Check applies it to that value;
//   - at the end of an array or object: minItems, minProperties and
//     required.
//
// Subschemas reached through not, if, then, else, contains,
// dependentSchemas, propertyNames, uniqueItems and an anyOf or oneOf with
// several branches that accept a container's type are not applied to
// containers; a schema the engine's program does not cover (see the
// package documentation) is not applied at all. Check applies them at the
// end.
//
// A Feed is not safe for concurrent use.
type Feed struct {
	push      strictjson.Push
	root      *node // nil: no schema is applied
	values    int
	maxValues int // 0: no bound
	started   bool
	refusal   *Refusal

	// check reads scalars as CheckJSON does, against the Feed's budget;
	// only its run and its decline are used.
	check stream

	frames []frame
	nodes  []*node  // the subschemas of open containers, frame by frame, then of the scalar being read
	bits   []uint64 // for each of nodes, the required members present, by index
	seeds  []seed   // the subschemas that apply to the next value
	scalar int      // start in nodes of the subschemas of the scalar being read

	names []byte // the member names kept of open objects, frame by frame
	ends  []int  // the end of each name in names
}

// frame is an open array or object.
type frame struct {
	kind  byte
	nodes int // start of its subschemas in Feed.nodes
	count int // members or items so far
	names int // start of its names in Feed.ends
	// cut: some name was not kept (too long, or too many names open),
	// and duplicates are no longer looked for.
	cut bool
	// partial: some name was too long to be kept whole, and required is
	// not checked.
	partial bool
	seen    map[string]struct{} // the names of an object of many members
	shown   string              // the current name when it was not kept
	showing bool                // shown is the current name
}

// seed is a subschema that applies to the next value.
type seed struct {
	n *node
	// optional: a member's declared schema, the member not required, so
	// that a null for it is advice to leave it out.
	optional bool
}

// Bounds on what a Feed keeps.
const (
	feedText  = 4 << 10  // bytes of a string checked at its end
	feedNames = 64 << 10 // bytes of the names of open objects
	feedNodes = 4096     // subschemas of open values
	feedSeeds = 1024     // subschemas for one value
)

// Refusal is a Feed's verdict on text that cannot become a document Check
// accepts.
type Refusal struct {
	// Offset is the byte the text was refused at.
	Offset int
	// Syntax, when not nil, says why the text cannot be one I-JSON
	// document: a *strictjson.Error with the offset and pointer Parse
	// would report.
	Syntax error
	// NotObject reports that the document is not a JSON object.
	NotObject bool
	// Costly reports that the value holds more values than checking them
	// could cost (Message says so), not that it breaks the schema.
	Costly bool
	// Message says, for a value that breaks the schema or costs too much,
	// what is wrong and where, as Check's Rejection does.
	Message string
}

func (r *Refusal) Error() string {
	switch {
	case r.Syntax != nil:
		return "invalid JSON " + r.Syntax.Error()
	case r.NotObject:
		return "not a JSON object"
	}
	return r.Message
}

var feeds = sync.Pool{New: func() any { return new(Feed) }}

// Feed returns a Feed of the schema, which refuses what does not begin
// an object s would accept. Release returns it when it is no longer used.
func (s *Schema) Feed() *Feed {
	f := feeds.Get().(*Feed)
	f.push.Reset(f, feedText)
	if s.fast != nil {
		f.root = s.fast.root
	}
	if s.visits > 0 {
		f.maxValues = MaxValidationWork / (s.visits * CostPerApplication)
	}
	f.check.run = run{budget: MaxValidationWork}
	return f
}

// Release forgets the document and returns f to a pool; f must not be
// used again.
func (f *Feed) Release() {
	for i := range f.frames {
		f.frames[i].seen = nil
	}
	clear(f.nodes[:cap(f.nodes)])
	clear(f.seeds[:cap(f.seeds)])
	keep := cap(f.names) <= feedNames && cap(f.nodes) <= feedNodes && cap(f.frames) <= strictjson.MaxDepth
	*f = Feed{frames: f.frames[:0], nodes: f.nodes[:0], bits: f.bits[:0], seeds: f.seeds[:0], names: f.names[:0], ends: f.ends[:0]}
	if keep {
		feeds.Put(f)
	}
}

// Len returns the number of bytes read.
func (f *Feed) Len() int { return f.push.Pos() }

// Write reads the next piece of the text and returns the refusal of the
// text, if any: then, and for every later call, the same refusal.
func (f *Feed) Write(piece []byte) *Refusal {
	if f.refusal == nil {
		f.settle(f.push.Write(piece))
	}
	return f.refusal
}

// End says that the text is complete and returns its refusal, if any.
// Text that is blank (JSON whitespace only) is not refused: Prepare reads
// it as {}.
func (f *Feed) End() *Refusal {
	if f.refusal == nil && f.started {
		f.settle(f.push.End())
	}
	return f.refusal
}

// settle records err, returned by the Push, as the refusal.
func (f *Feed) settle(err error) {
	switch err := err.(type) {
	case nil:
	case *Refusal:
		f.refusal = err
	case *strictjson.Error:
		err.Pointer = f.syntaxPointer()
		f.refusal = &Refusal{Offset: err.Offset, Syntax: err}
	default:
		f.refusal = &Refusal{Offset: f.push.Pos(), Syntax: err}
	}
}

// tokens returns the reference tokens of the value being read: the
// current member or item of every open container, or, when within is
// false, of every one but the innermost, whose own location it is.
func (f *Feed) tokens(within bool) []string {
	n := len(f.frames)
	if !within {
		n--
	}
	out := make([]string, 0, max(n, 0))
	for i := range n {
		out = append(out, f.token(i, false))
	}
	return out
}

// token is the reference token of the current member or item of frame
// i, or, for an array, of the item about to begin when awaiting.
func (f *Feed) token(i int, awaiting bool) string {
	fr := &f.frames[i]
	if fr.kind == strictjson.KindArray {
		if awaiting {
			return strconv.Itoa(fr.count)
		}
		return strconv.Itoa(fr.count - 1)
	}
	if fr.showing {
		return fr.shown
	}
	_, to := f.nameRange(i)
	return string(f.name(to - 1))
}

// syntaxPointer is the JSON pointer strictjson.Parse gives an error met
// at the position: the location of the value being read, of the member
// whose name was read, or of the item about to begin.
func (f *Feed) syntaxPointer() string {
	var b []byte
	for i := range f.frames {
		awaiting := false
		if i == len(f.frames)-1 {
			var within bool
			if within, awaiting = f.push.Within(); !within {
				break
			}
		}
		b = append(b, '/')
		t := f.token(i, awaiting)
		for j := 0; j < len(t); j++ {
			switch t[j] {
			case '~':
				b = append(b, "~0"...)
			case '/':
				b = append(b, "~1"...)
			default:
				b = append(b, t[j])
			}
		}
	}
	return string(b)
}

// violation is the refusal of a value, at the location tokens, that
// breaks the schema in the way k says.
func (f *Feed) violation(offset int, tokens []string, k jsonschema.ErrorKind) *Refusal {
	r := rejectViolations([]Violation{{Location: tokens, Kind: k}}, 1)
	return &Refusal{Offset: offset, Message: r.Message}
}

// Value begins a value: its seeds, its subschemas, and the checks of its
// type.
func (f *Feed) Value(k byte) error {
	offset := f.push.Pos()
	if !f.started {
		f.started = true
		if k != strictjson.KindObject {
			return &Refusal{Offset: offset, NotObject: true}
		}
	}
	f.values++
	if f.maxValues > 0 && f.values > f.maxValues {
		r := tooCostly("at the root: the value holds more than %d JSON values: checking it could take more than the limit of %d steps of work (MaxValidationWork); send at most %d values", f.maxValues, MaxValidationWork, f.maxValues)
		return &Refusal{Offset: offset, Costly: true, Message: r.Message}
	}
	if n := len(f.frames); n == 0 {
		f.seeds = f.seeds[:0]
		if f.root != nil {
			f.seeds = append(f.seeds, seed{n: f.root})
		}
	} else if top := &f.frames[n-1]; top.kind == strictjson.KindArray {
		top.count++
		if err := f.itemSeeds(top, offset); err != nil {
			return err
		}
	}
	start := len(f.nodes)
	for _, s := range f.seeds {
		if k := f.expand(s.n, k, start, 0); k != nil {
			return f.violation(offset, f.tokens(true), k)
		}
	}
	switch k {
	case strictjson.KindObject, strictjson.KindArray:
		f.frames = append(f.frames, frame{kind: k, nodes: start, names: len(f.ends)})
		f.seeds = f.seeds[:0]
	default:
		f.scalar = start
	}
	return nil
}

// itemSeeds finds the subschemas of the next item of the array top, and
// checks maxItems.
func (f *Feed) itemSeeds(top *frame, offset int) error {
	f.seeds = f.seeds[:0]
	i := top.count - 1
	for _, n := range f.nodes[top.nodes:] {
		if n.maxItems >= 0 && top.count > n.maxItems {
			return f.violation(offset, f.tokens(false), &kind.MaxItems{Got: top.count, Want: n.maxItems})
		}
		m := n.items
		if i < len(n.prefixItems) {
			m = n.prefixItems[i]
		}
		f.addSeed(m, false)
	}
	return nil
}

func (f *Feed) addSeed(n *node, optional bool) {
	if n != nil && len(f.seeds) < feedSeeds {
		f.seeds = append(f.seeds, seed{n: n, optional: optional})
	}
}

// Name reads a member name: duplicates, maxProperties, required,
// additionalProperties, and the seeds of its value.
func (f *Feed) Name(name []byte, whole bool) error {
	top := &f.frames[len(f.frames)-1]
	top.count++
	top.shown, top.showing = "", false
	if !top.cut && (!whole || len(f.names)+len(name) > feedNames) {
		top.cut = true // duplicates are no longer looked for
		top.seen = nil
	}
	switch {
	case !whole:
		top.partial = true
		top.shown, top.showing = string(name)+"…", true
	case top.cut:
		top.shown, top.showing = string(name), true
	default:
		if f.duplicate(top, name) {
			top.shown, top.showing = string(name), true
			err := &strictjson.Error{Offset: f.push.Start(), Reason: fmt.Sprintf("duplicate member name %q", strictjson.Elide(top.shown, 64))}
			err.Pointer = f.syntaxPointer()
			return &Refusal{Offset: err.Offset, Syntax: err}
		}
		f.names = append(f.names, name...)
		f.ends = append(f.ends, len(f.names))
	}
	f.seeds = f.seeds[:0]
	offset := f.push.Start()
	key := view(name)
	for i, n := range f.nodes[top.nodes:] {
		if n.maxProps >= 0 && top.count > n.maxProps {
			return f.violation(offset, f.tokens(false), &kind.MaxProperties{Got: top.count, Want: n.maxProps})
		}
		if !whole || f.root == nil {
			continue
		}
		required := false
		if j := slices.Index(n.required, key); j >= 0 && j < 64 {
			f.bits[top.nodes+i] |= 1 << j
			required = true
		}
		if m, ok := n.properties[key]; ok {
			f.addSeed(m, !required)
		}
		evaluated, decided := n.properties[key] != nil, true
		for _, p := range n.patternProperties {
			if p.re == nil || p.re.Backtracking() {
				decided = false
				continue
			}
			if !f.check.spendMatch(p.re, len(key)) {
				f.root = nil // out of budget: nothing more is checked
				return nil
			}
			matched := f.check.match(p.re, key)
			if f.check.exhausted {
				f.root = nil // no verdict: nothing more is checked
				return nil
			}
			if matched {
				evaluated = true
				f.addSeed(p.node, false)
			}
		}
		switch {
		case evaluated || !decided:
		case n.noAdditional:
			r := run{budget: MaxValidationWork}
			return f.violation(offset, f.tokens(false), r.unknownMembers(n, []string{string(name)}))
		default:
			f.addSeed(n.additional, false)
		}
	}
	return nil
}

// names returns the range in f.ends of the names kept of frame i.
func (f *Feed) nameRange(i int) (from, to int) {
	from, to = f.frames[i].names, len(f.ends)
	if i+1 < len(f.frames) {
		to = f.frames[i+1].names
	}
	return from, to
}

// name returns the j-th name kept, by its index in f.ends.
func (f *Feed) name(j int) []byte {
	start := 0
	if j > 0 {
		start = f.ends[j-1]
	}
	return f.names[start:f.ends[j]]
}

// duplicate reports whether the object top, the innermost frame, already
// has a member called name: by comparing the names kept, or for an object
// of many members by a set of them.
func (f *Feed) duplicate(top *frame, name []byte) bool {
	from, to := f.nameRange(len(f.frames) - 1)
	if top.seen == nil && to-from < linearDuplicateScan {
		for j := from; j < to; j++ {
			if string(f.name(j)) == string(name) {
				return true
			}
		}
		return false
	}
	if top.seen == nil {
		top.seen = make(map[string]struct{}, 2*(to-from))
		for j := from; j < to; j++ {
			top.seen[string(f.name(j))] = struct{}{}
		}
	}
	if _, dup := top.seen[string(name)]; dup {
		return true
	}
	top.seen[string(name)] = struct{}{}
	return false
}
