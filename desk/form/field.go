package form

import (
	"fmt"
	"slices"
)

// common are the keywords every property may have.
var common = []string{"type", "title", "description", "default"}

// formats are the string formats of MCP's elicitation forms.
var formats = []any{"email", "uri", "date", "date-time"}

// readField reads one property (or, with Options.Value, the root) as a
// Field without its name and Required.
func readField(prop map[string]any, opts Options) (Field, error) {
	var fd Field
	var err error
	switch prop["type"] {
	case "string":
		if prop["enum"] != nil || prop["oneOf"] != nil {
			fd, err = readSelect(prop)
		} else {
			fd, err = readString(prop)
		}
	case "number", "integer":
		fd, err = readNumber(prop, opts)
	case "boolean":
		fd = Field{Kind: KindBoolean}
		err = onlyKeys("a boolean", prop, common...)
	case "array":
		fd, err = readMultiSelect(prop)
	case nil:
		return Field{}, fmt.Errorf("\"type\" must be one of string, number, integer, boolean, array")
	default:
		return Field{}, fmt.Errorf("type %v is not one of string, number, integer, boolean, array", prop["type"])
	}
	if err != nil {
		return Field{}, err
	}
	if fd.Title, fd.Description, err = texts(prop); err != nil {
		return Field{}, err
	}
	if d, ok := prop["default"]; ok {
		if fd.Default, err = fd.readDefault(d); err != nil {
			return Field{}, err
		}
	}
	return fd, nil
}

// readString reads a string that is not a select.
func readString(prop map[string]any) (Field, error) {
	if err := onlyKeys("a string", prop, append(slices.Clip(common), "minLength", "maxLength", "format")...); err != nil {
		return Field{}, err
	}
	fd := Field{Kind: KindString}
	if f, ok := prop["format"]; ok {
		if !slices.Contains(formats, f) {
			return Field{}, fmt.Errorf("format %v is not one of email, uri, date, date-time", f)
		}
		fd.Format = f.(string)
	}
	var err error
	if fd.MinLength, fd.MaxLength, err = countBounds(prop, "minLength", "maxLength"); err != nil {
		return Field{}, err
	}
	return fd, nil
}

// readNumber reads a number or an integer.
func readNumber(prop map[string]any, opts Options) (Field, error) {
	keys := append(slices.Clip(common), "minimum", "maximum")
	if opts.ExclusiveBounds {
		keys = append(keys, "exclusiveMinimum", "exclusiveMaximum")
	}
	if err := onlyKeys("a number", prop, keys...); err != nil {
		return Field{}, err
	}
	fd := Field{Kind: KindNumber}
	if prop["type"] == "integer" {
		fd.Kind = KindInteger
	}
	var err error
	if fd.Minimum, fd.Maximum, err = numberBounds(prop, "minimum", "maximum"); err != nil {
		return Field{}, err
	}
	if fd.ExclusiveMinimum, err = number(prop, "exclusiveMinimum"); err != nil {
		return Field{}, err
	}
	if fd.ExclusiveMaximum, err = number(prop, "exclusiveMaximum"); err != nil {
		return Field{}, err
	}
	return fd, nil
}

// readSelect reads a string with "enum" or "oneOf": one of its options.
func readSelect(prop map[string]any) (Field, error) {
	if err := onlyKeys("a single-select", prop, append(slices.Clip(common), "enum", "enumNames", "oneOf")...); err != nil {
		return Field{}, err
	}
	fd := Field{Kind: KindSelect}
	var err error
	switch {
	case prop["enum"] != nil && prop["oneOf"] != nil:
		return Field{}, fmt.Errorf("a single-select has \"enum\" or \"oneOf\", not both")
	case prop["enum"] != nil:
		if fd.Options, err = enumOptions(prop["enum"]); err != nil {
			return Field{}, err
		}
		if names, ok := prop["enumNames"]; ok {
			err = enumNames(fd.Options, names)
		}
	default:
		if _, ok := prop["enumNames"]; ok {
			return Field{}, fmt.Errorf("\"enumNames\" needs \"enum\"")
		}
		fd.Options, err = constOptions("oneOf", prop["oneOf"])
	}
	return fd, err
}

// readMultiSelect reads an array of options.
func readMultiSelect(prop map[string]any) (Field, error) {
	if err := onlyKeys("an array", prop, append(slices.Clip(common), "items", "minItems", "maxItems")...); err != nil {
		return Field{}, err
	}
	items, ok := prop["items"].(map[string]any)
	if !ok {
		return Field{}, fmt.Errorf("a multi-select array needs \"items\" with an enum")
	}
	if err := onlyKeys("the items of an array", items, "type", "enum", "anyOf"); err != nil {
		return Field{}, err
	}
	typ, typed := items["type"]
	if typed && typ != "string" {
		return Field{}, fmt.Errorf("the items of an array must be strings")
	}
	fd := Field{Kind: KindMultiSelect}
	var err error
	switch {
	case items["enum"] == nil && items["anyOf"] == nil:
		return Field{}, fmt.Errorf("the items of an array need \"enum\" or \"anyOf\" of constants")
	case items["enum"] != nil && items["anyOf"] != nil:
		return Field{}, fmt.Errorf("the items of an array have \"enum\" or \"anyOf\", not both")
	case items["enum"] != nil:
		if !typed {
			return Field{}, fmt.Errorf("the items of an array with \"enum\" need \"type\":\"string\"")
		}
		fd.Options, err = enumOptions(items["enum"])
	default:
		if typed {
			return Field{}, fmt.Errorf("the items of an array with \"anyOf\" take no \"type\"")
		}
		fd.Options, err = constOptions("anyOf", items["anyOf"])
	}
	if err != nil {
		return Field{}, err
	}
	if fd.MinItems, fd.MaxItems, err = countBounds(prop, "minItems", "maxItems"); err != nil {
		return Field{}, err
	}
	return fd, nil
}

// enumOptions reads an "enum" of strings as options without titles.
func enumOptions(enum any) ([]Option, error) {
	values, ok := enum.([]any)
	if !ok || len(values) == 0 {
		return nil, fmt.Errorf("\"enum\" must be a non-empty array of strings")
	}
	options := make([]Option, len(values))
	for i, v := range values {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("\"enum\" must hold strings only")
		}
		options[i].Value = s
	}
	return options, nil
}

// enumNames sets the titles of options from the legacy "enumNames".
func enumNames(options []Option, names any) error {
	list, ok := names.([]any)
	if !ok || len(list) != len(options) {
		return fmt.Errorf("\"enumNames\" must hold one string for each value of \"enum\"")
	}
	for i, n := range list {
		s, ok := n.(string)
		if !ok {
			return fmt.Errorf("\"enumNames\" must hold one string for each value of \"enum\"")
		}
		options[i].Title = s
	}
	return nil
}

// constOptions reads a "oneOf" or "anyOf" of titled constants.
func constOptions(keyword string, v any) ([]Option, error) {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, fmt.Errorf("%q must be a non-empty array of {\"const\",\"title\"}", keyword)
	}
	options := make([]Option, len(list))
	for i, o := range list {
		opt, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q must be a non-empty array of {\"const\",\"title\"}", keyword)
		}
		if err := onlyKeys("an option", opt, "const", "title"); err != nil {
			return nil, err
		}
		c, ok := opt["const"].(string)
		if !ok || c == "" {
			return nil, fmt.Errorf("an option's \"const\" must be a non-empty string")
		}
		t, ok := opt["title"].(string)
		if !ok || t == "" {
			return nil, fmt.Errorf("option %q needs a \"title\", a non-empty string", c)
		}
		options[i] = Option{Value: c, Title: t}
	}
	return options, nil
}
