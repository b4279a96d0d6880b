package tool

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/invopop/jsonschema"
)

// schemaModeler is implemented by types whose JSON form is described by
// another Go type; see SchemaFor.
type schemaModeler interface {
	JSONSchemaModel() any
}

var (
	modelerType    = reflect.TypeFor[schemaModeler]()
	timeType       = reflect.TypeFor[time.Time]()
	durationType   = reflect.TypeFor[time.Duration]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	byteType       = reflect.TypeFor[byte]()

	// Methods with which a type reads or writes its own JSON, as the codec
	// looks for them: the JSON ones win over the text ones.
	jsonMethodTypes = []reflect.Type{
		reflect.TypeFor[jsonv2.MarshalerTo](),
		reflect.TypeFor[jsonv2.Marshaler](),
		reflect.TypeFor[json.Marshaler](),
		reflect.TypeFor[jsonv2.UnmarshalerFrom](),
		reflect.TypeFor[jsonv2.Unmarshaler](),
		reflect.TypeFor[json.Unmarshaler](),
	}
	textMethodTypes = []reflect.Type{
		reflect.TypeFor[encoding.TextAppender](),
		reflect.TypeFor[encoding.TextMarshaler](),
		reflect.TypeFor[encoding.TextUnmarshaler](),
	}
	// The schema reflector's own hooks: a type with one of them describes
	// itself.
	schemaHookTypes = []reflect.Type{
		reflect.TypeFor[interface{ JSONSchema() *jsonschema.Schema }](),
		reflect.TypeFor[interface{ JSONSchemaAlias() any }](),
	}
)

// implementsAny reports whether t or *t has one of the interfaces; the
// codec calls pointer-receiver methods too.
func implementsAny(t reflect.Type, ifaces []reflect.Type) bool {
	for _, iface := range ifaces {
		if t.Implements(iface) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(iface)) {
			return true
		}
	}
	return false
}

// wireForm says how the JSON codec writes a type that is not described by
// reflecting its structure.
type wireForm uint8

const (
	wireReflected wireForm = iota // described by its Go structure
	wireModel                     // JSONSchemaModel describes it
	wireHook                      // the schema reflector's own hook describes it
	wireNative                    // time.Time and json.RawMessage: known forms
	wireJSON                      // its own JSON methods, either way: any JSON value
	wireText                      // its own text methods, either way: a string
)

func wireFormOf(t reflect.Type) wireForm {
	switch {
	case t.Kind() == reflect.Interface:
		return wireReflected
	case t.Implements(modelerType):
		return wireModel
	case implementsAny(t, schemaHookTypes):
		return wireHook
	case t == timeType || t == rawMessageType:
		return wireNative
	case implementsAny(t, jsonMethodTypes):
		return wireJSON
	case implementsAny(t, textMethodTypes):
		return wireText
	}
	return wireReflected
}

// SchemaFor derives the JSON Schema of T's JSON form and compiles it.
//
// The derivation follows the JSON field names; a field tagged omitempty or
// omitzero is optional and every other field is required. Every struct
// gets "additionalProperties": false. Named struct types go to $defs,
// except the root, which is inlined; recursive types are supported. A
// []byte is a base64 string, time.Time a date-time string, and
// json.RawMessage and interface types are unconstrained. A pointer field
// also admits null. An unsigned integer has the minimum 0, and an
// integer of 8 or 16 bits its type's range; wider types carry no bound of
// their own, since it would tell a model nothing and cost it tokens on
// every turn: the typed decode of Signature refuses a number out of the
// type's range, at the member's location. Decode what the schema admitted
// into the type the same way when the schema is used on its own. (The
// answer schema of an AskFunc, decoded only after the call resumed, states
// every range; see AskFunc.)
//
// A `jsonschema` struct tag adds keywords to a field's schema:
// `jsonschema:"description=…,enum=a,enum=b,minimum=1"`, and the flags
// required and nullable. A bound stated in a tag is kept. The tag is cut
// at every comma, so a comma inside a value is escaped with a backslash
// before it; in Go source, between the tag's quotes, that backslash is
// itself written twice:
//
//	City string `json:"city" jsonschema:"description=City name\\, e.g. Lisbon,pattern=^[a-z]{1\\,40}$"`
//
// A tag that would be read otherwise than written is an error naming the
// field: a piece that is neither a known key=value nor a flag (what an
// unescaped comma leaves), a bound that is not a number, malformed tag
// quoting (a single backslash), and a key the type's own schema would
// drop (see below). A key or flag within two slips of the keyboard of a
// known one (minimun, maxlength, requried) is refused naming the one
// meant. A `jsonschema_extras` tag follows the same escape.
//
// A type with a value-receiver method JSONSchemaModel() any is described by
// the schema of the Go type of the value that method returns; Output,
// Block, Definition and InputRequest use this to describe their wire forms.
// A type with the reflector's own hook, a JSONSchema() method, is
// described by the schema it returns. A field of such a type takes from
// its tag the keys any schema takes (title, description and the type keys
// below) unless the tag states its type.
//
// A type that reads or writes itself as text (MarshalText or
// UnmarshalText, and no JSON methods) is a string, and its tags apply as
// to a string. A type that reads or writes its own JSON (a MarshalJSON or
// UnmarshalJSON method, such as *big.Int) without a JSONSchemaModel or
// JSONSchema method has a form its structure does not tell: a field of
// such a type must state it with a type key in its tag (type=,
// oneof_type=, anyof_type=, oneof_ref= or anyof_ref=), after which the
// tag's other keys apply too, as in `jsonschema:"type=integer,minimum=0"`
// for a *big.Int; anywhere else (the root, the items of an array, the
// values of a map) such a type is an error. Its own methods still decide
// what is admitted, after the schema. A JSONSchemaModel method returning
// a value of a local type defined from the type (type plain T) describes
// T's fields without its methods. An array of bytes is a base64 string, as
// the JSON codec writes it.
//
// T must be a type the JSON codec (go-json-experiment/json) can both
// encode and decode, so that the schema describes what it writes. A
// channel, function, complex or unsafe pointer type anywhere in T is an
// error wrapping ErrInvalidSchema, as are time.Duration (which the codec
// writes only with a format option, and format options are not
// supported), a `string` option on a field that is not a number, map keys
// that cannot be member names, struct tags the codec refuses, the
// `format`, `inline` and `embed` options, two fields that share one JSON
// name through embedding, an embedded pointer to an unexported struct and
// a struct that embeds itself. Any failure to derive or compile is an
// error too.
func SchemaFor[T any]() (Schema, error) {
	doc, err := reflectSchema(reflect.TypeFor[T](), false)
	if err != nil {
		return Schema{}, err
	}
	return ParseSchema(doc)
}

// reflectSchema returns the schema document for t. With nullableRoot, a
// pointer root also admits null (for outputs, where a nil pointer encodes
// as null).
func reflectSchema(t reflect.Type, nullableRoot bool) (doc []byte, err error) {
	return deriveSchema(t, derivation{nullableRoot: nullableRoot})
}

// derivation says how a schema is derived beyond SchemaFor's rules.
type derivation struct {
	// nullableRoot lets a pointer root admit null too.
	nullableRoot bool
	// exact makes the schema admit only what the type's decode takes:
	// it states the range of every sized number type and the form of
	// base64 bytes, for a value decoded after it can no longer be
	// refused (the answer of an AskFunc; see annotate).
	exact bool
}

// deriveSchema returns the schema document for t, derived as d says.
func deriveSchema(t reflect.Type, d derivation) (doc []byte, err error) {
	if t == nil {
		return nil, errorf("%w: cannot derive a schema for a nil interface type", ErrInvalidSchema)
	}
	defer func() {
		if p := recover(); p != nil {
			doc, err = nil, errorf("%w: deriving the schema of %s panicked: %v", ErrInvalidSchema, t, p)
		}
	}()
	if err := checkSupported(t, t.String(), map[reflect.Type]bool{}); err != nil {
		return nil, err
	}
	x := newReflector()
	x.exact = d.exact
	root := x.r.ReflectFromType(t)
	defs := root.Definitions
	if defs == nil {
		defs = jsonschema.Definitions{}
	}
	if err := x.resolveModels(defs); err != nil {
		return nil, err
	}
	x.defs = defs
	// Inline the root: follow local references until a real schema.
	for hops := 0; root.Ref != "" && hops < 16; hops++ {
		name, ok := strings.CutPrefix(root.Ref, "#/$defs/")
		def := defs[name]
		if !ok || def == nil {
			break
		}
		inlined := *def
		root = &inlined
	}
	root.Version = ""
	root.ID = ""
	x.annotate(root, t)
	if d.nullableRoot && t.Kind() == reflect.Pointer {
		root = &jsonschema.Schema{AnyOf: []*jsonschema.Schema{root, {Type: "null"}}}
	}
	root.Definitions = nil
	body, err := json.Marshal(root)
	if err != nil {
		return nil, errorf("%w: encoding the schema of %s: %v", ErrInvalidSchema, t, err)
	}
	// Keep only the definitions the document refers to, transitively.
	used := x.usedDefinitions(body)
	if len(used) == 0 {
		return body, nil
	}
	var kept jsonschema.Definitions = make(jsonschema.Definitions, len(used))
	for _, name := range used {
		kept[name] = defs[name]
	}
	root.Definitions = kept
	return json.Marshal(root)
}

// checkSupported refuses types the JSON codec and the reflector cannot
// handle, or would describe differently, naming the path to the offending
// type.
func checkSupported(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if t == durationType {
		return errorf("%w: %s is a time.Duration, which the JSON codec encodes only with a format option; use an integer or a string", ErrInvalidSchema, path)
	}
	form := wireFormOf(t)
	if t.Kind() == reflect.Pointer {
		// *time.Time has the JSON methods of time.Time; what matters is
		// how the pointed-to type is described.
		form = wireFormOf(derefType(t))
	}
	switch form {
	case wireModel, wireNative, wireText:
		return nil // its own methods encode it
	case wireJSON:
		return errorf("%w: %s has type %s, which reads and writes its own JSON, so its form cannot be derived and would be advertised as any value; %s", ErrInvalidSchema, path, t, customTypeRemedy)
	}
	switch t.Kind() {
	case reflect.Chan, reflect.Func, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer, reflect.Uintptr:
		return errorf("%w: %s has unsupported type %s", ErrInvalidSchema, path, t)
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkSupported(t.Elem(), path+"[]", seen)
	case reflect.Map:
		if err := checkMapKey(t.Key(), path); err != nil {
			return err
		}
		return checkSupported(t.Elem(), path+"[]", seen)
	case reflect.Struct:
		if err := checkStruct(t, path); err != nil {
			return err
		}
		for _, f := range reflect.VisibleFields(t) {
			if !f.IsExported() || f.Tag.Get("json") == "-" || (f.Anonymous && f.Type.Kind() == reflect.Struct) {
				continue
			}
			if wireFormOf(derefType(f.Type)) == wireJSON && tagStatesType(f.Tag.Get("jsonschema")) {
				continue // its tag describes it
			}
			if err := checkSupported(f.Type, path+"."+f.Name, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// customTypeRemedy says how to describe a type that writes its own JSON.
const customTypeRemedy = "state its form in the field's tag, such as `jsonschema:\"type=string\"` or `jsonschema:\"type=integer\"` (a type written as JSON text), or give the type a JSONSchemaModel method (see SchemaFor) or a JSONSchema method"

func derefType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// checkMapKey refuses map keys the codec cannot write as member names.
func checkMapKey(k reflect.Type, path string) error {
	if implementsAny(k, textMethodTypes) {
		return nil
	}
	switch k.Kind() {
	case reflect.String, reflect.Interface,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return nil
	}
	return errorf("%w: %s has map key type %s, which cannot be a JSON member name", ErrInvalidSchema, path, k)
}

// checkStruct refuses a struct whose fields the codec refuses (malformed
// or conflicting tags, format options) or whose JSON form the reflector
// would describe differently from the codec.
func checkStruct(t reflect.Type, path string) error {
	// The codec reports every problem with a struct's fields as soon as
	// it decodes an object into it, before reading any member. A type
	// with its own decoder is not probed: that would run its code.
	if !implementsAny(t, jsonMethodTypes) && !implementsAny(t, textMethodTypes) {
		if err := jsonv2.Unmarshal([]byte("{}"), reflect.New(t).Interface()); err != nil {
			return errorf("%w: %s cannot be decoded by the JSON codec: %v", ErrInvalidSchema, path, err)
		}
	}
	names := map[string]string{}
	return collectMemberNames(t, path, names, map[reflect.Type]bool{})
}

// collectMemberNames records the JSON member name of every field of t,
// including those of embedded structs, and refuses options the reflector
// does not read as the codec does.
func collectMemberNames(t reflect.Type, path string, names map[string]string, visiting map[reflect.Type]bool) error {
	if visiting[t] {
		// The reflector would follow the cycle without end.
		return errorf("%w: %s embeds %s within itself", ErrInvalidSchema, path, t)
	}
	visiting[t] = true
	defer delete(visiting, t)
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		if tag == "-" {
			continue
		}
		name, options, _ := strings.Cut(tag, ",")
		fieldPath := path + "." + f.Name
		switch {
		case strings.HasPrefix(name, "'"):
			return errorf("%w: %s has a quoted JSON name, which schema derivation does not read", ErrInvalidSchema, fieldPath)
		case hasTag && name == "-":
			return errorf(`%w: %s is named "-", which schema derivation reads as an ignored field`, ErrInvalidSchema, fieldPath)
		}
		for _, opt := range strings.Split(options, ",") {
			if strings.HasPrefix(opt, "format:") {
				// Refused whatever the codec's global setting: the schema
				// would describe the default form, not the formatted one.
				return errorf("%w: %s has a format option, which schema derivation does not follow", ErrInvalidSchema, fieldPath)
			}
			switch opt {
			case "inline", "embed":
				return errorf("%w: %s has the %q option, which the JSON codec and schema derivation read differently", ErrInvalidSchema, fieldPath, opt)
			case "string":
				ft := f.Type
				for ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				switch ft.Kind() {
				case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
					reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
					reflect.Float32, reflect.Float64:
				default:
					return errorf("%w: %s has the \"string\" option, which the JSON codec allows only on numbers", ErrInvalidSchema, fieldPath)
				}
			}
		}
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if f.Type.Kind() == reflect.Pointer && !f.IsExported() {
					return errorf("%w: %s embeds a pointer to an unexported struct, which the JSON codec cannot allocate when decoding", ErrInvalidSchema, fieldPath)
				}
				if err := collectMemberNames(et, fieldPath, names, visiting); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if err := checkSchemaTags(t, f); err != nil {
			return err
		}
		if name == "" {
			name = f.Name
		}
		if other, dup := names[name]; dup {
			return errorf("%w: %s and %s share the JSON name %q; give one of them another name", ErrInvalidSchema, other, fieldPath, name)
		}
		names[name] = fieldPath
	}
	return nil
}

// reflector wraps the schema reflector with unique definition names,
// JSONSchemaModel support and the annotations the reflector omits.
type reflector struct {
	r         *jsonschema.Reflector
	names     map[reflect.Type]string
	taken     map[string]reflect.Type
	pending   []reflect.Type // types with JSONSchemaModel, to describe
	defs      jsonschema.Definitions
	annotated map[reflect.Type]bool
	// exact states what SchemaFor leaves to the decode; see derivation.
	exact bool
}

func newReflector() *reflector {
	x := &reflector{
		names:     map[reflect.Type]string{},
		taken:     map[string]reflect.Type{},
		annotated: map[reflect.Type]bool{},
	}
	x.r = &jsonschema.Reflector{
		Anonymous: true,
		Namer:     x.name,
		Mapper:    x.mapType,
	}
	return x
}

// name gives every named type a definition name that is unique in this
// document and safe in a JSON pointer: same-named types of two packages
// and generic instantiations would otherwise collide or break references.
func (x *reflector) name(t reflect.Type) string {
	if t.Name() == "" {
		return ""
	}
	if n, ok := x.names[t]; ok {
		return n
	}
	base := strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '_'
	}, t.Name())
	n := base
	for i := 2; x.taken[n] != nil; i++ {
		n = base + "_" + strconv.Itoa(i)
	}
	x.names[t], x.taken[n] = n, t
	return n
}

// mapType describes the types whose JSON form is not their Go structure: a
// JSONSchemaModel type by a reference to a definition that resolveModels
// fills in, a type with its own JSON or text methods as any value or any
// string, and an array of bytes as base64.
func (x *reflector) mapType(t reflect.Type) *jsonschema.Schema {
	switch wireFormOf(t) {
	case wireModel:
		x.pending = append(x.pending, t)
		return &jsonschema.Schema{Ref: "#/$defs/" + x.name(t)}
	case wireJSON:
		return &jsonschema.Schema{} // written as true: any value
	case wireText:
		return &jsonschema.Schema{Type: "string"}
	case wireReflected:
		if t.Kind() == reflect.Array && t.Elem() == byteType {
			return &jsonschema.Schema{Type: "string", ContentEncoding: "base64"}
		}
	}
	return nil
}

// resolveModels reflects the model of every pending JSONSchemaModel type
// into defs.
func (x *reflector) resolveModels(defs jsonschema.Definitions) error {
	for len(x.pending) > 0 {
		t := x.pending[0]
		x.pending = x.pending[1:]
		name := x.name(t)
		if defs[name] != nil {
			continue
		}
		model := reflect.Zero(t).Interface().(schemaModeler).JSONSchemaModel()
		mt := reflect.TypeOf(model)
		if mt == nil {
			return errorf("%w: %s.JSONSchemaModel returned nil", ErrInvalidSchema, t)
		}
		if mt == t {
			return errorf("%w: %s.JSONSchemaModel returned a value of its own type", ErrInvalidSchema, t)
		}
		if err := checkSupported(mt, mt.String(), map[reflect.Type]bool{}); err != nil {
			return err
		}
		s := x.r.ReflectFromType(mt)
		for k, v := range s.Definitions {
			if defs[k] == nil {
				defs[k] = v
			}
		}
		x.defs = defs
		x.annotate(s, mt)
		s.Version, s.ID, s.Definitions = "", "", nil
		defs[name] = s
	}
	return nil
}

// usedDefinitions lists the definitions reachable from body by reference.
func (x *reflector) usedDefinitions(body []byte) []string {
	var used []string
	seen := map[string]bool{}
	queue := [][]byte{body}
	for len(queue) > 0 {
		doc := string(queue[0])
		queue = queue[1:]
		for {
			i := strings.Index(doc, `"$ref":"#/$defs/`)
			if i < 0 {
				break
			}
			doc = doc[i+len(`"$ref":"#/$defs/`):]
			end := strings.IndexByte(doc, '"')
			name := doc[:end]
			if seen[name] || x.defs[name] == nil {
				continue
			}
			seen[name] = true
			used = append(used, name)
			def, err := json.Marshal(x.defs[name])
			if err == nil {
				queue = append(queue, def)
			}
		}
	}
	return used
}
