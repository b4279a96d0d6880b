package engine

import (
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/agentcontract/tool/internal/strictjson"
)

// This file holds what CheckJSON does for a Decoder: while it reads a
// value for the first time, it writes it to the slot the value decodes
// to. Values read again (for a reference, a combination, contains) decode
// nothing: their slot was taken by the first read.

// slot is where a value decodes to: memory of p's type at at. The zero
// slot decodes nothing.
type slot struct {
	p  *plan
	at unsafe.Pointer
}

// anyPlan is the plan of a member or item of an object or array decoded
// into an any.
var anyPlan = &plan{kind: planAny, typ: anyType, size: anyType.Size()}

// anySlicePlan is the plan of an array decoded into an any.
var anySlicePlan = &plan{kind: planSlice, typ: reflect.TypeFor[[]any](), elem: anyPlan}

// take returns the slot of the value at the position, and clears it, so
// that the values it holds start with none.
func (s *stream) take() slot {
	dst := s.into
	s.into = slot{}
	if s.undecodable {
		return slot{}
	}
	return dst
}

// giveUp stops decoding: the value read does not decode as certainly as
// the codec would decode it. Checking goes on.
func (s *stream) giveUp() { s.undecodable = true }

// deref follows the pointers of dst to the memory a value of the kind
// decodes to, allocating what each points to, as the codec does. A null
// sets no pointer, and decodes to the zero slot.
func (s *stream) deref(dst slot, kind byte) slot {
	for dst.p != nil && dst.p.kind == planPointer {
		if kind == strictjson.KindNull {
			return slot{}
		}
		elem := reflect.New(dst.p.elem.typ).UnsafePointer()
		*(*unsafe.Pointer)(dst.at) = elem
		dst = slot{p: dst.p.elem, at: elem}
	}
	return dst
}

// decodeScalar writes the scalar t, just read, to dst.
func (s *stream) decodeScalar(dst slot, t *target) {
	dst = s.deref(dst, t.kind)
	p := dst.p
	if p == nil {
		return
	}
	ok := false
	switch t.kind {
	case strictjson.KindNull:
		ok = true // the codec's null sets the zero value, which is there
	case strictjson.KindString:
		switch p.kind {
		case planString:
			*(*string)(dst.at), ok = s.strings.clone(t.text), true
		case planAny:
			*(*any)(dst.at), ok = s.strings.clone(t.text), true
		}
	case strictjson.KindTrue, strictjson.KindFalse:
		b := t.kind == strictjson.KindTrue
		switch p.kind {
		case planBool:
			*(*bool)(dst.at), ok = b, true
		case planAny:
			*(*any)(dst.at), ok = b, true
		}
	case strictjson.KindNumber:
		// The token as written: the scanner gives "0" for -0e1.
		ok = putNumber(dst, view(s.sc.Slice(t.start)))
	}
	if !ok {
		s.giveUp()
	}
}

// stringCache holds short strings decoded before, by a hash of their
// content, so that the strings a model repeats from call to call (enum
// values, names, keys) are not allocated each time. A string is
// immutable, so a value may share one with an earlier value; the cache
// lives with a pooled stream, and holds at most cachedStrings strings of
// at most maxCachedString bytes. The zero stringCache is empty.
type stringCache struct {
	seen *[cachedStrings]string
}

const (
	cachedStrings   = 256
	maxCachedString = 256
)

// clone returns a string equal to text that does not share its memory.
func (c *stringCache) clone(text string) string {
	if len(text) < 2 || len(text) > maxCachedString {
		return strings.Clone(text) // one byte strings are never allocated
	}
	if c.seen == nil {
		c.seen = new([cachedStrings]string)
	}
	e := &c.seen[shortHash(text)%cachedStrings]
	if *e != text {
		*e = strings.Clone(text)
	}
	return *e
}

// shortHash hashes a string of at least two bytes by its length and at
// most eight bytes from each end, in constant time. Strings made to
// collide only cost their allocation.
func shortHash(s string) uint64 {
	n := len(s)
	var head, tail uint64
	if n >= 8 {
		head, tail = load64(s), load64(s[n-8:])
	} else {
		for i := range n {
			head = head<<8 | uint64(s[i])
		}
		tail = uint64(s[0])<<8 | uint64(s[n-1])
	}
	h := (head ^ tail*0x9e3779b97f4a7c15 ^ uint64(n)) * 0xbf58476d1ce4e5b9
	return h >> 56
}

// load64 reads the first eight bytes of s, little-endian.
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// putNumber writes the number token text to dst as the codec does, and
// reports whether it did: an integer out of its type's range, or written
// with a fraction or an exponent, and a float out of range, are left to
// the codec, which refuses them.
func putNumber(dst slot, text string) bool {
	at := dst.at
	switch dst.p.kind {
	case planInt:
		n, ok := parseInt(text, 8*dst.p.size)
		if !ok {
			return false
		}
		putInteger(dst, uint64(n)) // two's complement: the low bytes are the narrow integer
	case planUint:
		n, ok := parseUint(text)
		if !ok || dst.p.size < 8 && n >= 1<<(8*dst.p.size) {
			return false
		}
		putInteger(dst, n)
	case planFloat:
		f, err := strconv.ParseFloat(text, int(8*dst.p.size))
		if err != nil {
			return false
		}
		if dst.p.size == 4 {
			*(*float32)(at) = float32(f)
		} else {
			*(*float64)(at) = f
		}
	case planAny:
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return false
		}
		*(*any)(at) = f
	default:
		return false
	}
	return true
}

// putInteger writes the low bytes of bits to dst, an integer of 1, 2, 4
// or 8 bytes, signed or not.
func putInteger(dst slot, bits uint64) {
	switch dst.p.size {
	case 1:
		*(*uint8)(dst.at) = uint8(bits)
	case 2:
		*(*uint16)(dst.at) = uint16(bits)
	case 4:
		*(*uint32)(dst.at) = uint32(bits)
	default:
		*(*uint64)(dst.at) = bits
	}
}

// parseInt parses an integer token of JSON into an integer of bits bits:
// digits only, after an optional minus sign.
func parseInt(text string, bits uintptr) (int64, bool) {
	digits, negative := strings.CutPrefix(text, "-")
	u, ok := parseUint(digits)
	limit := uint64(1) << (bits - 1)
	switch {
	case !ok, negative && u > limit, !negative && u >= limit:
		return 0, false
	case negative:
		return int64(-u), true
	}
	return int64(u), true
}

// parseUint parses the digits of an unsigned integer.
func parseUint(digits string) (uint64, bool) {
	const safe = 19 // digits that cannot overflow
	if len(digits) == 0 || len(digits) > safe {
		n, err := strconv.ParseUint(digits, 10, 64)
		return n, err == nil
	}
	var n uint64
	for i := range len(digits) {
		c := digits[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = 10*n + uint64(c-'0')
	}
	return n, true
}

// objectFrame decodes the members of one object: into the fields of a
// struct, or the entries of a map, each member's value decoded first into
// temp. The zero objectFrame decodes nothing.
type objectFrame struct {
	p    *plan // of a struct or map; nil decodes nothing
	at   unsafe.Pointer
	next int // of a struct: the field the next member most likely decodes to

	m    reflect.Value // of a map of another type than map[string]any
	temp reflect.Value // a pointer to where the value of each member decodes

	anyMap  map[string]any // of an object decoded into an any
	anyTemp *any
}

// openObject returns the frame of the object about to be read to dst.
func (s *stream) openObject(dst slot) objectFrame {
	dst = s.deref(dst, strictjson.KindObject)
	p := dst.p
	if p == nil {
		return objectFrame{}
	}
	switch p.kind {
	case planStruct:
		return objectFrame{p: p, at: dst.at}
	case planMap:
		m := reflect.MakeMap(p.typ)
		reflect.NewAt(p.typ, dst.at).Elem().Set(m)
		return objectFrame{p: p, m: m, temp: reflect.New(p.elem.typ)}
	case planAny:
		m := map[string]any{}
		*(*any)(dst.at) = m
		return objectFrame{p: p, anyMap: m, anyTemp: new(any)}
	}
	s.giveUp()
	return objectFrame{}
}

// memberSlot returns the slot of the value of the member name.
func (s *stream) memberSlot(f *objectFrame, name string) slot {
	if f.p == nil || s.undecodable {
		return slot{}
	}
	switch f.p.kind {
	case planStruct:
		// Members mostly come in the order of the fields, which is the
		// order of the schema's properties and of the codec's output.
		i := f.next
		if i >= len(f.p.fields) || f.p.fields[i].name != name {
			var ok bool
			if i, ok = f.p.byName[name]; !ok {
				s.giveUp() // the codec refuses the unknown member
				return slot{}
			}
		}
		f.next = i + 1
		field := &f.p.fields[i]
		return slot{p: field.plan, at: unsafe.Add(f.at, field.offset)}
	case planMap:
		return slot{p: f.p.elem, at: f.temp.UnsafePointer()}
	}
	return slot{p: anyPlan, at: unsafe.Pointer(f.anyTemp)}
}

// storeMember stores the value of the member name, decoded in the frame's
// temp, in the map.
func (s *stream) storeMember(f *objectFrame, name string) {
	if f.p == nil || s.undecodable {
		return
	}
	switch f.p.kind {
	case planMap:
		key := reflect.New(f.p.typ.Key()).Elem()
		key.SetString(s.strings.clone(name))
		f.m.SetMapIndex(key, f.temp.Elem())
		f.temp.Elem().SetZero()
	case planAny:
		f.anyMap[s.strings.clone(name)] = *f.anyTemp
		*f.anyTemp = nil
	}
}

// arrayFrame decodes the items of one array into a slice, grown as it
// is read. The zero arrayFrame decodes nothing.
type arrayFrame struct {
	p     *plan        // of the slice; nil decodes nothing
	slice *sliceHeader // where the slice is

	anySlice *[]any         // of an array decoded into an any
	iface    unsafe.Pointer // where the any is
}

// sliceHeader is the memory of a slice.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

// openArray returns the frame of the array about to be read to dst.
func (s *stream) openArray(dst slot) arrayFrame {
	dst = s.deref(dst, strictjson.KindArray)
	p := dst.p
	if p == nil {
		return arrayFrame{}
	}
	switch p.kind {
	case planSlice:
		return arrayFrame{p: p, slice: (*sliceHeader)(dst.at)}
	case planAny:
		items := new([]any)
		return arrayFrame{p: anySlicePlan, slice: (*sliceHeader)(unsafe.Pointer(items)), anySlice: items, iface: dst.at}
	}
	s.giveUp()
	return arrayFrame{}
}

// itemSlot returns the slot of the next item.
func (s *stream) itemSlot(f *arrayFrame) slot {
	if f.p == nil || s.undecodable {
		return slot{}
	}
	h := f.slice
	if h.len == h.cap {
		f.grow()
	}
	at := unsafe.Add(h.data, uintptr(h.len)*f.p.elem.size)
	h.len++
	return slot{p: f.p.elem, at: at}
}

// grow doubles the capacity of the slice, to at least minItems.
func (f *arrayFrame) grow() {
	const minItems = 4
	h := f.slice
	old := reflect.NewAt(f.p.typ, unsafe.Pointer(h)).Elem()
	grown := reflect.MakeSlice(f.p.typ, h.len, max(minItems, 2*h.cap))
	reflect.Copy(grown, old)
	h.data, h.cap = grown.UnsafePointer(), grown.Cap()
}

// closeArray finishes the slice once the array is read: an empty array
// decodes to an empty slice, not a nil one.
func (s *stream) closeArray(f *arrayFrame) {
	if f.p == nil || s.undecodable {
		return
	}
	if f.slice.len == 0 {
		reflect.NewAt(f.p.typ, unsafe.Pointer(f.slice)).Elem().Set(reflect.MakeSlice(f.p.typ, 0, 0))
	}
	if f.anySlice != nil {
		*(*any)(f.iface) = *f.anySlice
	}
}
