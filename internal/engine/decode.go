package engine

import (
	"reflect"
	"strings"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Decoder writes the values CheckJSON reads into a Go value of one type,
// so that a document is checked and decoded in the same read. What it
// writes is what the codec the package tool decodes with
// (go-json-experiment/json's Unmarshal, rejecting unknown members) writes
// into a zero value of the type: a Decoder exists only for the types whose
// decoding it repeats exactly (see NewDecoder), and it gives up, leaving
// the decision to the codec, on any value it is not certain the codec
// takes as it would: a member no field holds, a number out of range or
// with a fraction for an integer, a value of another kind than the field.
//
// A Decoder is immutable and safe for concurrent use.
type Decoder struct {
	typ  reflect.Type
	root *plan
}

// planKind is what a plan writes.
type planKind uint8

const (
	planBool planKind = iota + 1
	planString
	planInt
	planUint
	planFloat
	planAny // the empty interface: what the codec makes of any JSON value
	planPointer
	planSlice
	planMap // with string keys
	planStruct
)

// plan says how to decode a JSON value into Go memory of one type.
type plan struct {
	kind   planKind
	typ    reflect.Type
	size   uintptr        // of the type, in bytes: a number's width, an item's stride
	elem   *plan          // of a pointer, slice or map
	fields []field        // of a struct, in order
	byName map[string]int // of a struct: the index in fields of each member name
}

// field is a struct field the codec decodes a member into.
type field struct {
	name   string
	offset uintptr
	plan   *plan
}

// NewDecoder returns the Decoder of t, or nil when t, or a type it holds,
// is one the Decoder does not decode: one with its own JSON or text
// decoding methods, time.Time and time.Duration (which the codec treats
// apart), []byte and arrays, interfaces other than any, maps whose keys
// are not plain strings, uintptr, complex numbers, channels and
// functions, and structs with an embedded field, a field tag with options
// other than omitempty and omitzero, two fields of one name, a name in
// quotes, or fields but none the codec decodes and no tag.
func NewDecoder(t reflect.Type) *Decoder {
	c := planner{plans: map[reflect.Type]*plan{}}
	root := c.plan(t)
	if root == nil || c.refused {
		return nil
	}
	return &Decoder{typ: t, root: root}
}

// planner builds the plans of a type and of every type it holds, each
// once, so recursive types end.
type planner struct {
	plans   map[reflect.Type]*plan
	refused bool
}

var (
	anyType      = reflect.TypeFor[any]()
	timeType     = reflect.TypeFor[time.Time]()
	durationType = reflect.TypeFor[time.Duration]()

	// The methods with which the codec lets a type decode itself, but
	// for UnmarshalJSONFrom, which is found by its name: any method of
	// that name refuses a type, whatever its signature.
	decodingMethods = []reflect.Type{
		reflect.TypeFor[interface{ UnmarshalJSON([]byte) error }](),
		reflect.TypeFor[interface{ UnmarshalText([]byte) error }](),
	}
)

// hasDecodingMethod reports whether t or *t has a method the codec would
// call to decode it.
func hasDecodingMethod(t reflect.Type) bool {
	for _, m := range []reflect.Type{t, reflect.PointerTo(t)} {
		if _, ok := m.MethodByName("UnmarshalJSONFrom"); ok {
			return true
		}
		for _, iface := range decodingMethods {
			if m.Implements(iface) {
				return true
			}
		}
	}
	return false
}

// plan returns the plan of t, or nil (and refused set) when there is none.
func (c *planner) plan(t reflect.Type) *plan {
	if p, ok := c.plans[t]; ok {
		return p
	}
	if t == timeType || t == durationType || hasDecodingMethod(t) {
		return c.refuse()
	}
	p := &plan{typ: t, size: t.Size()}
	c.plans[t] = p
	switch t.Kind() {
	case reflect.Bool:
		p.kind = planBool
	case reflect.String:
		p.kind = planString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind = planInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		p.kind = planUint
	case reflect.Float32, reflect.Float64:
		p.kind = planFloat
	case reflect.Interface:
		if t != anyType {
			return c.refuse()
		}
		p.kind = planAny
	case reflect.Pointer:
		p.kind, p.elem = planPointer, c.plan(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return c.refuse() // bytes are base64 text to the codec
		}
		p.kind, p.elem = planSlice, c.plan(t.Elem())
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String || hasDecodingMethod(k) {
			return c.refuse()
		}
		p.kind, p.elem = planMap, c.plan(t.Elem())
	case reflect.Struct:
		p.kind = planStruct
		c.structFields(p)
	default:
		return c.refuse()
	}
	if c.refused {
		return nil
	}
	return p
}

func (c *planner) refuse() *plan {
	c.refused = true
	return nil
}

// structFields fills in the fields of p, a struct, by the codec's rules
// for the structs it takes.
func (c *planner) structFields(p *plan) {
	t := p.typ
	p.byName = make(map[string]int, t.NumField())
	tagged := false
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		tagged = tagged || hasTag
		switch {
		case tag == "-":
			continue
		case f.Anonymous:
			c.refuse() // embedding: the codec's rules of promotion
			return
		case !f.IsExported():
			if hasTag {
				c.refuse() // the codec refuses such a struct
				return
			}
			continue
		}
		name, ok := memberName(f.Name, tag)
		if _, twice := p.byName[name]; !ok || twice {
			c.refuse()
			return
		}
		p.byName[name] = len(p.fields)
		p.fields = append(p.fields, field{name: name, offset: f.Offset, plan: c.plan(f.Type)})
	}
	if t.NumField() > 0 && len(p.fields) == 0 && !tagged {
		c.refuse() // the codec refuses a struct with nothing it can decode
	}
}

// memberName returns the member name of a field with the tag, and false
// when the tag is one the Decoder does not read: a quoted or malformed
// name, or an option other than omitempty and omitzero.
func memberName(goName, tag string) (string, bool) {
	name, options, _ := strings.Cut(tag, ",")
	if strings.ContainsAny(name, "\\'\"`") || !utf8.ValidString(name) {
		return "", false
	}
	if name == "" {
		name = goName
	}
	if options == "" {
		return name, !strings.HasSuffix(tag, ",")
	}
	for _, option := range strings.Split(options, ",") {
		if option != "omitempty" && option != "omitzero" {
			return "", false
		}
	}
	return name, true
}

// Decode decodes data, one I-JSON document, into *into, which must point
// to the zero value of the Decoder's type, and reports whether it did;
// false leaves *into in any state, and then only the codec can say what
// data decodes to, or why it does not. It reads data without a schema,
// once, and keeps nothing of it. It is safe for concurrent use.
func (d *Decoder) Decode(data []byte, into any) bool {
	at, ok := d.address(into)
	if !ok || len(data) > MaxInputBytes {
		return false
	}
	// The Checker without a schema only reads; a document holds at most
	// as many values as bytes, and reading it spends nothing.
	var reader Checker
	_, decoded := reader.checkJSON(data, len(data)+minReread, len(data), slot{p: d.root, at: at})
	return decoded
}

// address returns where into points, when it is a non-nil pointer to the
// Decoder's type.
func (d *Decoder) address(into any) (unsafe.Pointer, bool) {
	if d == nil {
		return nil, false
	}
	v := reflect.ValueOf(into)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem() != d.typ {
		return nil, false
	}
	return v.UnsafePointer(), true
}
