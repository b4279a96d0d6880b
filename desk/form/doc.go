// Package form is the one reading of "a JSON Schema a person fills as a
// form", shared by the approval desk (which renders it) and the MCP
// adapter (which sends it as an elicitation form). [Read] turns a response
// schema into a [Form], the fields a person fills, or says exactly where
// and why the schema is not one; [Form.Answer] builds the answer document
// from the values a person entered.
//
// # The subset
//
// With the zero [Options], Read accepts exactly MCP's elicitation form
// schema: an object with "type":"object" and "properties" (and optionally
// "required", "title", "description", "$schema" and
// "additionalProperties":false), each property one of
//
//   - a boolean: "type":"boolean";
//   - a string: "type":"string" with "minLength", "maxLength" and a
//     "format" among email, uri, date and date-time;
//   - a number: "type":"number" or "integer" with "minimum" and "maximum";
//   - a single-select: "type":"string" with "enum" (and the legacy
//     "enumNames", one title for each value) or "oneOf" of
//     {"const","title"} options;
//   - a multi-select: "type":"array" with "minItems", "maxItems" and
//     "items" holding "type":"string" and "enum", or "anyOf" of
//     {"const","title"} options;
//
// each with an optional "title", "description" and a "default" of its
// kind (one of the options for a single-select, some of them for a
// multi-select). Nothing else is accepted: a property is never nested, a
// constraint the form cannot show (a "pattern", a length on a select) is
// refused rather than silently dropped, so that what a person can enter
// is what the schema accepts.
//
// The desk asks for more, each by its own field of [Options]: a bare
// boolean schema as an Approve button (Options.Approve), a root string,
// number, integer, boolean, select or multi-select as a form of one field
// whose answer is the value itself (Options.Value), and "exclusiveMinimum" and
// "exclusiveMaximum" on numbers (Options.ExclusiveBounds). None of them
// widens what the zero Options accept.
//
// # Ownership and errors
//
// Read keeps nothing of the schema it reads: the Form it returns is the
// caller's, and neither Read nor Answer retains or changes what it is
// given. A Form is a plain value, safe for concurrent reads.
//
// Read wraps [ErrNotForm], Answer [ErrInvalidValues]; each message says
// which property or field is wrong and how. A schema is read in memory
// linear in its length and time close to it (names are sorted), and any
// bytes are safe to hand in: a schema imported from a peer is not
// trusted.
package form
