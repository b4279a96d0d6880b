package form

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Read reads schema, a JSON Schema document (in practice the canonical
// JSON of a tool.Schema), as a Form: with the zero opts, exactly when it
// is an MCP elicitation form (see the package documentation); opts admit
// the desk's extras. Otherwise it returns an error wrapping ErrNotForm
// that says, for the first problem found, where it is (the root, or
// property "name", properties taken in sorted order) and what is wrong.
//
// Read does not retain schema, and is safe for concurrent use. Any bytes
// are safe: what is not one JSON object is refused like any other schema
// outside the subset, and reading takes memory linear in len(schema) and
// time close to it.
func Read(schema []byte, opts Options) (Form, error) {
	f, err := read(schema, opts)
	if err != nil {
		return Form{}, errprefix.Errorf("%w: %w", ErrNotForm, err)
	}
	return f, nil
}

// rootKeys are the keywords of an object schema a form reads.
var rootKeys = []string{"type", "properties", "required", "title", "description", "$schema", "additionalProperties"}

// read is Read without the sentinel.
func read(schema []byte, opts Options) (Form, error) {
	root, ok := decodeObject(schema)
	if !ok {
		return Form{}, fmt.Errorf("the schema is not an object with \"type\":\"object\"")
	}
	if root["type"] != "object" {
		if f, ok, err := readRootValue(root, opts); ok {
			return f, err
		}
		return Form{}, fmt.Errorf("the root must have \"type\":\"object\"")
	}
	if err := onlyKeys("the root", root, rootKeys...); err != nil {
		return Form{}, err
	}
	if ap, ok := root["additionalProperties"]; ok && ap != false {
		return Form{}, fmt.Errorf("the root may only have \"additionalProperties\":false")
	}
	props, ok := root["properties"].(map[string]any)
	if !ok {
		return Form{}, fmt.Errorf("the root must have \"properties\", an object")
	}
	required, err := requiredNames(root["required"], props)
	if err != nil {
		return Form{}, err
	}
	f := Form{Shape: ShapeObject}
	if f.Title, f.Description, err = texts(root); err != nil {
		return Form{}, err
	}
	fields := make(map[string]Field, len(props))
	for _, name := range sortedNames(props) {
		prop, ok := props[name].(map[string]any)
		if !ok {
			return Form{}, fmt.Errorf("property %q must be a schema object", name)
		}
		fd, err := readField(prop, opts)
		if err != nil {
			return Form{}, errprefix.Part("property %q: %w", name, err)
		}
		fd.Name, fd.Required = name, required[name]
		fields[name] = fd
	}
	order, err := propertyOrder(schema)
	if err != nil {
		return Form{}, err
	}
	if len(order) > 0 {
		f.Fields = make([]Field, len(order))
		for i, name := range order {
			f.Fields[i] = fields[name]
		}
	}
	return f, nil
}

// readRootValue reads a root that is not an object, as the desk's
// options allow: ok is false when none of them applies.
func readRootValue(root map[string]any, opts Options) (Form, bool, error) {
	if opts.Approve && root["type"] == "boolean" && onlyKeys("", root, "type", "title", "description", "$schema") == nil {
		f := Form{Shape: ShapeApprove}
		var err error
		f.Title, f.Description, err = texts(root)
		return f, true, err
	}
	switch root["type"] {
	case "string", "number", "integer", "boolean", "array":
		if !opts.Value {
			return Form{}, false, nil
		}
	default:
		return Form{}, false, nil
	}
	field := make(map[string]any, len(root))
	for k, v := range root {
		if k != "$schema" {
			field[k] = v
		}
	}
	fd, err := readField(field, opts)
	if err != nil {
		return Form{}, true, errprefix.Part("the root: %w", err)
	}
	f := Form{Shape: ShapeValue, Title: fd.Title, Description: fd.Description}
	fd.Title, fd.Description, fd.Required = "", "", true
	f.Fields = []Field{fd}
	return f, true, nil
}

// requiredNames reads "required": names of properties.
func requiredNames(v any, props map[string]any) (map[string]bool, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("\"required\" must be an array of member names")
	}
	names := make(map[string]bool, len(list))
	for _, n := range list {
		name, ok := n.(string)
		if !ok {
			return nil, fmt.Errorf("\"required\" must be an array of member names")
		}
		if _, ok := props[name]; !ok {
			return nil, fmt.Errorf("\"required\" names %q, which is not a property", name)
		}
		names[name] = true
	}
	return names, nil
}

// texts returns a schema's "title" and "description".
func texts(schema map[string]any) (title, description string, err error) {
	for _, k := range []string{"title", "description"} {
		v, ok := schema[k]
		if !ok {
			continue
		}
		s, ok := v.(string)
		if !ok {
			return "", "", fmt.Errorf("%q must be a string", k)
		}
		if k == "title" {
			title = s
		} else {
			description = s
		}
	}
	return title, description, nil
}

// onlyKeys reports the first keyword of schema (in sorted order) that is
// not in allowed.
func onlyKeys(what string, schema map[string]any, allowed ...string) error {
	for _, k := range sortedNames(schema) {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("keyword %q is not allowed on %s in an elicitation form", k, what)
		}
	}
	return nil
}

// sortedNames returns the member names of m, sorted.
func sortedNames[V any](m map[string]V) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// decodeObject decodes doc, which must be one JSON object and nothing
// more, with numbers as json.Number.
func decodeObject(doc []byte) (map[string]any, bool) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	return m, true
}

// propertyOrder returns the names of the root's "properties" in the
// order written; the document is known to be an object whose
// "properties" is an object.
func propertyOrder(doc []byte) ([]string, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("the schema is not an object with \"type\":\"object\"")
	}
	dec := json.NewDecoder(bytes.NewReader(root["properties"]))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("the root must have \"properties\", an object")
	}
	var names []string
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			return nil, fmt.Errorf("the root must have \"properties\", an object")
		}
		if seen[name] {
			return nil, fmt.Errorf("\"properties\" names %q twice", name)
		}
		seen[name] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, fmt.Errorf("the root must have \"properties\", an object")
		}
		names = append(names, name)
	}
	return names, nil
}
