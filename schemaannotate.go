package tool

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"
)

// annotate adds what the reflector leaves out: null for pointer fields and
// items, and the numeric range of sized integer and float32 types.
func (x *reflector) annotate(s *jsonschema.Schema, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil || wireFormOf(t) != wireReflected {
		return
	}
	if name, ok := strings.CutPrefix(s.Ref, "#/$defs/"); ok {
		if x.annotated[t] || x.defs[name] == nil {
			return
		}
		x.annotated[t] = true
		s = x.defs[name]
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Slice, reflect.Array, reflect.Map:
		x.annotateElements(s, t)
	default:
		x.annotateRange(s, t)
	}
}

// annotateElements annotates the schema s of t, a struct, slice, array or
// map: the schemas of its fields, items or values, each made nullable when
// it is a pointer's; a slice or array of bytes is a base64 string.
func (x *reflector) annotateElements(s *jsonschema.Schema, t reflect.Type) {
	switch t.Kind() {
	case reflect.Struct:
		x.annotateFields(s, t)
	case reflect.Slice, reflect.Array:
		if t.Elem() == byteType {
			// Bytes: a base64 string, in the form the codec decodes when
			// exact (contentEncoding alone asserts nothing).
			if x.exact && s.Type == "string" && s.Pattern == "" {
				exactBase64(s, t)
			}
			return
		}
		x.annotate(s.Items, t.Elem())
		s.Items = nullable(s.Items, t.Elem())
	case reflect.Map:
		x.annotateIntKeys(s, t.Key())
		if as := s.AdditionalProperties; as != nil && as != jsonschema.FalseSchema && as != jsonschema.TrueSchema {
			x.annotate(as, t.Elem())
			s.AdditionalProperties = nullable(as, t.Elem())
		}
		for k, ps := range s.PatternProperties {
			x.annotate(ps, t.Elem())
			s.PatternProperties[k] = nullable(ps, t.Elem())
		}
	}
}

// annotateRange adds to the schema s of t, a type that holds no other
// values, the range of numbers t holds when it is an integer or float32
// type, as far as the schema states ranges (see below).
func (x *reflector) annotateRange(s *jsonschema.Schema, t reflect.Type) {
	if x.exact && t.Kind() == reflect.Float32 && s.Type == "number" {
		// The largest float32, rounded up to the digits that name it: a
		// number up to it decodes to the nearest float32.
		tighten(&s.Minimum, "-3.4028235e+38", false)
		tighten(&s.Maximum, "3.4028235e+38", true)
		return
	}
	if s.Type != "integer" {
		return // a number written as a string, or described by a hook
	}
	// The schema carries only the bounds of a Go type that a model may
	// plausibly cross: the range of a type of 8 or 16 bits (300 for a
	// uint8 percentage, 40000 for an int16) and the minimum 0 of every
	// unsigned type (the negative count). The bounds of 32 and 64 bits are
	// far beyond any number a model means, so they would be read on every
	// turn for nothing (and some providers refuse such bounds in their
	// strict modes). Admission refuses a number out of the type's range
	// all the same, when the typed input is decoded; see Signature. A
	// schema derived exact (an AskFunc's answer, which is decoded
	// only after the checkpoint is claimed) states every range instead, so
	// that what it admits is what the type can hold.
	switch t.Kind() {
	case reflect.Int8:
		bound(s, math.MinInt8, math.MaxInt8)
	case reflect.Int16:
		bound(s, math.MinInt16, math.MaxInt16)
	case reflect.Uint8:
		boundUnsigned(s, math.MaxUint8)
	case reflect.Uint16:
		boundUnsigned(s, math.MaxUint16)
	case reflect.Int, reflect.Int32, reflect.Int64:
		if x.exact {
			bound(s, math.MinInt64>>(64-t.Bits()), math.MaxInt64>>(64-t.Bits()))
		}
	case reflect.Uint, reflect.Uint32, reflect.Uint64:
		if x.exact {
			boundUnsigned(s, uint64(math.MaxUint64)>>(64-t.Bits()))
			return
		}
		tighten(&s.Minimum, "0", false)
	}
}

// annotateIntKeys fixes the member names of a map with signed integer keys:
// the reflector admits only digits, but the codec writes negative keys with
// a minus sign, and a key type with text methods writes what it likes.
func (x *reflector) annotateIntKeys(s *jsonschema.Schema, key reflect.Type) {
	const digits = "^[0-9]+$"
	ps, ok := s.PatternProperties[digits]
	if !ok {
		return
	}
	delete(s.PatternProperties, digits)
	if wireFormOf(key) == wireText {
		s.AdditionalProperties = ps
	} else {
		s.PatternProperties["^-?[0-9]+$"] = ps
	}
	if len(s.PatternProperties) == 0 {
		s.PatternProperties = nil
	}
}

// annotateFields annotates the properties of a struct's schema, following
// embedded structs the way the JSON codec flattens them.
func (x *reflector) annotateFields(s *jsonschema.Schema, t reflect.Type) {
	if s.Properties != nil {
		x.annotateMembers(s, t)
	}
}

// annotateMembers annotates the properties of t's fields and returns their
// JSON names. The members of a struct embedded through a pointer become
// optional: the codec writes none of them when the pointer is nil.
func (x *reflector) annotateMembers(s *jsonschema.Schema, t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				promoted := x.annotateMembers(s, ft)
				if f.Type.Kind() == reflect.Pointer {
					s.Required = slices.DeleteFunc(s.Required, func(r string) bool { return slices.Contains(promoted, r) })
				}
				names = append(names, promoted...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names = append(names, name)
		prop, ok := s.Properties.Get(name)
		if !ok || prop == nil {
			continue
		}
		x.annotate(prop, f.Type)
		s.Properties.Set(name, nullable(prop, f.Type))
	}
	return names
}

// nullable lets the schema of a pointer-typed value admit null, which is
// how the JSON codec writes a nil pointer.
func nullable(s *jsonschema.Schema, t reflect.Type) *jsonschema.Schema {
	if s == nil || t.Kind() != reflect.Pointer || s == jsonschema.TrueSchema || reflect.DeepEqual(*s, jsonschema.Schema{}) {
		return s // already admits null
	}
	if len(s.AnyOf) == 2 && s.AnyOf[1].Type == "null" {
		return s // already nullable
	}
	inner := *s
	inner.Description, inner.Title = "", ""
	return &jsonschema.Schema{
		Title:       s.Title,
		Description: s.Description,
		AnyOf:       []*jsonschema.Schema{&inner, {Type: "null"}},
	}
}

func bound(s *jsonschema.Schema, lo, hi int64) {
	tighten(&s.Minimum, strconv.FormatInt(lo, 10), false)
	tighten(&s.Maximum, strconv.FormatInt(hi, 10), true)
}

func boundUnsigned(s *jsonschema.Schema, hi uint64) {
	tighten(&s.Minimum, "0", false)
	tighten(&s.Maximum, strconv.FormatUint(hi, 10), true)
}

// tighten sets *limit to value unless it is already at least as strict.
func tighten(limit *json.Number, value string, upper bool) {
	if *limit == "" {
		*limit = json.Number(value)
		return
	}
	current, ok1 := new(big.Rat).SetString(string(*limit))
	candidate, ok2 := new(big.Rat).SetString(value)
	if !ok1 || !ok2 {
		*limit = json.Number(value)
		return
	}
	if c := candidate.Cmp(current); (upper && c < 0) || (!upper && c > 0) {
		*limit = json.Number(value)
	}
}

// exactBase64 states the standard base64 with padding that the codec
// decodes into t, a slice or an array of bytes: of any length for a
// slice; for an array, of the one length and padding that decode to
// exactly its length.
func exactBase64(s *jsonschema.Schema, t reflect.Type) {
	const group = "(?:[A-Za-z0-9+/]{4})*"
	if t.Kind() == reflect.Slice {
		s.Pattern = "^" + group + "(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
		return
	}
	tail := [3]string{"", "[A-Za-z0-9+/]{2}==", "[A-Za-z0-9+/]{3}="}[t.Len()%3]
	s.Pattern = "^" + group + tail + "$"
	length := uint64(4 * ((t.Len() + 2) / 3))
	s.MinLength, s.MaxLength = &length, &length
}
