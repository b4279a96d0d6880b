package toolmcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/agentcontract/tool/internal/keyword"
)

// MCP carries a request for input as an elicitation form, whose schema is a
// small subset of JSON Schema: a flat object whose members are primitives
// (string, number, integer, boolean), single-select enums or multi-select
// arrays of enums. checkElicitation reports, for the first thing outside
// that subset, where it is and what is wrong. The schema is the canonical
// JSON of a tool.Schema, already a valid document.
func checkElicitation(schema json.RawMessage) error {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil || root == nil {
		return fmt.Errorf("the schema is not an object with \"type\":\"object\"")
	}
	if root["type"] != "object" {
		return fmt.Errorf("the root must have \"type\":\"object\"")
	}
	if err := onlyKeys("the root", root, "type", "properties", "required", "title", "description", "$schema", "additionalProperties"); err != nil {
		return err
	}
	if ap, ok := root["additionalProperties"]; ok && ap != false {
		return fmt.Errorf("the root may only have \"additionalProperties\":false")
	}
	props, ok := root["properties"].(map[string]any)
	if !ok {
		return fmt.Errorf("the root must have \"properties\", an object")
	}
	if req, ok := root["required"]; ok {
		names, ok := req.([]any)
		if !ok {
			return fmt.Errorf("\"required\" must be an array of member names")
		}
		for _, n := range names {
			if _, ok := props[fmt.Sprint(n)]; !ok {
				return fmt.Errorf("\"required\" names %q, which is not a property", n)
			}
		}
	}
	for _, name := range keyword.SortedNames(props) {
		prop, ok := props[name].(map[string]any)
		if !ok {
			return fmt.Errorf("property %q must be a schema object", name)
		}
		if err := checkElicitationProperty(prop); err != nil {
			return errprefix.Part("property %q: %w", name, err)
		}
	}
	return nil
}

func checkElicitationProperty(prop map[string]any) error {
	common := []string{"type", "title", "description", "default"}
	switch prop["type"] {
	case "string":
		if err := onlyKeys("a string", prop, append(common, "minLength", "maxLength", "format", "enum", "enumNames", "oneOf")...); err != nil {
			return err
		}
		if f, ok := prop["format"]; ok && !slices.Contains([]any{"email", "uri", "date", "date-time"}, f) {
			return fmt.Errorf("format %v is not one of email, uri, date, date-time", f)
		}
		if err := checkEnum(prop["enum"]); err != nil {
			return err
		}
		return checkConstOptions(prop["oneOf"])
	case "number", "integer":
		return onlyKeys("a number", prop, append(common, "minimum", "maximum")...)
	case "boolean":
		return onlyKeys("a boolean", prop, common...)
	case "array":
		if err := onlyKeys("an array", prop, append(common, "items", "minItems", "maxItems")...); err != nil {
			return err
		}
		items, ok := prop["items"].(map[string]any)
		if !ok {
			return fmt.Errorf("a multi-select array needs \"items\" with an enum")
		}
		if err := onlyKeys("the items of an array", items, "type", "enum", "anyOf"); err != nil {
			return err
		}
		if t, ok := items["type"]; ok && t != "string" {
			return fmt.Errorf("the items of an array must be strings")
		}
		if items["enum"] == nil && items["anyOf"] == nil {
			return fmt.Errorf("the items of an array need \"enum\" or \"anyOf\" of constants")
		}
		if err := checkEnum(items["enum"]); err != nil {
			return err
		}
		return checkConstOptions(items["anyOf"])
	default:
		return fmt.Errorf("type %v is not one of string, number, integer, boolean, array", prop["type"])
	}
}

// onlyKeys reports the first keyword of schema (in sorted order) that is not
// in allowed.
func onlyKeys(what string, schema map[string]any, allowed ...string) error {
	for _, k := range keyword.SortedNames(schema) {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("keyword %q is not allowed on %s in an elicitation form", k, what)
		}
	}
	return nil
}

func checkEnum(enum any) error {
	if enum == nil {
		return nil
	}
	values, ok := enum.([]any)
	if !ok || len(values) == 0 {
		return fmt.Errorf("\"enum\" must be a non-empty array of strings")
	}
	for _, v := range values {
		if _, ok := v.(string); !ok {
			return fmt.Errorf("\"enum\" must hold strings only")
		}
	}
	return nil
}

// checkConstOptions checks a oneOf or anyOf of titled constants.
func checkConstOptions(options any) error {
	if options == nil {
		return nil
	}
	list, ok := options.([]any)
	if !ok || len(list) == 0 {
		return fmt.Errorf("options must be a non-empty array of {\"const\",\"title\"}")
	}
	for _, o := range list {
		opt, ok := o.(map[string]any)
		if !ok {
			return fmt.Errorf("options must be a non-empty array of {\"const\",\"title\"}")
		}
		if err := onlyKeys("an option", opt, "const", "title"); err != nil {
			return err
		}
		if _, ok := opt["const"].(string); !ok {
			return fmt.Errorf("an option's \"const\" must be a string")
		}
	}
	return nil
}
