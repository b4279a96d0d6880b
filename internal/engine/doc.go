// Package engine compiles JSON Schema documents and checks JSON values
// against them within a budget of work. It is the one place that knows
// what a keyword means, what it costs and how a violation of it is worded.
//
// A document compiles to a program of nodes, one per subschema. The
// program is built straight from the document (FromDocument) when the
// document is a self-contained draft 2020-12 schema the meta-schema check
// accepts; otherwise the validator (santhosh-tekuri/jsonschema) compiles
// it, which knows every draft, and its result is converted (FromValidator).
// Either way the cost analysis runs over the program, so every schema is
// bounded the same way. The program checks values itself wherever it
// covers the schema: draft 2020-12 without $dynamicRef, $recursiveRef,
// unevaluatedProperties, unevaluatedItems, content keywords or vocabulary
// extensions, and without a reference cycle that stays on one value.
// Elsewhere the validator checks, after the cost bounds have been met.
//
// Every keyword is charged for what it costs: a subschema applied to a
// value, a string matched against a pattern (length times the size of the
// pattern's program), a value compared with an enum, a violation recorded
// with its location. A check that would spend more than its budget stops
// and says so, so the time and memory of one check are bounded whatever
// the schema and the value.
//
// The program's verdicts must equal the validator's for every schema it
// covers, and an explanation lists violations exactly when the value is
// invalid: the tests check both against the JSON Schema conformance suite
// and by fuzzing. Explanations follow the validator's grouping of
// violations, with two deliberate differences: a string of the wrong
// length is not also matched against its pattern, and some violations
// carry advice (Misspelled, NullForOptional).
//
// A Decoder (NewDecoder) lets the direct read of a valid value also
// decode it into a Go value, as the codec the package tool decodes with
// would: Schema.CheckDecode is Check and that decode in one read of the
// value, for the types whose decoding the Decoder repeats exactly. It
// decodes only what it is certain of and otherwise gives up, leaving the
// value to the codec; the tests check it against the codec by fuzzing.
//
// The package's one compile entry is Compile, and its one check entry is
// Schema.Check (with CheckDecode, the same check that also decodes);
// everything else serves them.
package engine
