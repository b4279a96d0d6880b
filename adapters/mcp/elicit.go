package toolmcp

import (
	"encoding/json"
	"errors"

	"github.com/agentcontract/tool/desk/form"
	"github.com/agentcontract/tool/internal/errprefix"
)

// MCP carries a request for input as an elicitation form, whose schema is a
// small subset of JSON Schema: a flat object whose members are primitives
// (string, number, integer, boolean), single-select enums or multi-select
// arrays of enums. Which schemas those are is package form's, the one
// reading the approval desk renders too: form.Read with the zero Options
// accepts exactly MCP's subset. checkElicitation reports, for the first
// thing outside it, where it is and what is wrong, in words that go into
// this package's own messages. The schema is the canonical JSON of a
// tool.Schema, already a valid document.
func checkElicitation(schema json.RawMessage) error {
	if _, err := form.Read(schema, form.Options{}); err != nil {
		return errors.New(errprefix.Detail(err, form.ErrNotForm))
	}
	return nil
}
