package tool

import (
	"fmt"
	"reflect"

	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/strictjson"
)

// ParseSchemaWithRemotes is ParseSchema with a loader that serves remotes
// from memory, for the JSON Schema conformance suite only: the package
// itself never loads anything from outside a document.
func ParseSchemaWithRemotes(raw []byte, remotes map[string][]byte) (Schema, error) {
	tree, err := strictjson.Parse(raw)
	if err != nil {
		return Schema{}, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return compileSchema(tree, strictjson.Compact(nil, raw), engine.Options{Loader: memoryLoader(remotes)})
}

type memoryLoader map[string][]byte

func (m memoryLoader) Load(url string) (any, error) {
	doc, ok := m[url]
	if !ok {
		return nil, fmt.Errorf("no remote %q", url)
	}
	return strictjson.Parse(doc)
}

// SchemaForType is SchemaFor of a type built at run time, for tags that Go
// source cannot spell without a vet warning.
func SchemaForType(t reflect.Type) (Schema, error) {
	doc, err := reflectSchema(t, false)
	if err != nil {
		return Schema{}, err
	}
	return ParseSchema(doc)
}

// ShownValid reports whether Validate decides value valid by reading it
// directly, without building its value tree.
func ShownValid(s Schema, value []byte) bool { return s.s.engine.ShownValid(value) }

// ParseSchemaWithoutShortcut is ParseSchema that always has the validator
// check the document against the meta-schema, for comparison with the
// shortcut ParseSchema takes for documents engine.Conforms accepts.
func ParseSchemaWithoutShortcut(raw []byte) (Schema, error) {
	return parseSchema(raw, engine.Options{NoShortcut: true})
}

// TookShortcut reports whether s was compiled without the validator's
// pass over the meta-schema.
func TookShortcut(s Schema) bool {
	return s.s.engine.Shortcut()
}

// Built reports whether s was compiled straight from its document
// (engine.FromDocument), without the validator's compiler.
func Built(s Schema) bool { return s.s.engine.Built() }

// AdmissionTypes are the kinds of admission a Contract may hold behind its
// one interface: a tool's own input validator, and the typed admission of
// a Func's input (one instance stands for all, as they hold the same).
var AdmissionTypes = []reflect.Type{
	reflect.TypeFor[plainAdmission](),
	reflect.TypeFor[typedAdmission[struct{}]](),
}

// AdmissionType is the interface a Contract holds its admission behind.
var AdmissionType = reflect.TypeFor[admission]()
