// Package adapterkit holds the steps every provider adapter under adapters/
// takes the same way: checking the definitions it is given, checking the
// outcomes it is asked to send back, and decoding a schema for an SDK's
// map-typed parameters. The adapters are separate modules and import it by
// path; it has no dependency beyond the core's.
package adapterkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// Definitions returns copies of defs, compacted, and a problem for each
// definition a provider would refuse: one whose name does not match name
// (described by nameRule), one that does not validate, a name given twice.
// A definition with a problem is left out.
func Definitions(defs []tool.Definition, name *regexp.Regexp, nameRule string) ([]tool.Definition, []string) {
	var out []tool.Definition
	var problems []string
	seen := make(map[string]bool, len(defs))
	for _, d := range defs {
		d = d.Clone()
		if !name.MatchString(d.Name) {
			problems = append(problems, fmt.Sprintf("name %q is not %s", d.Name, nameRule))
			continue
		}
		if err := d.Validate(); err != nil {
			problems = append(problems, strings.TrimPrefix(err.Error(), "tool: "))
			continue
		}
		if seen[d.Name] {
			problems = append(problems, fmt.Sprintf("name %q is given twice", d.Name))
			continue
		}
		seen[d.Name] = true
		var b bytes.Buffer
		if json.Compact(&b, d.InputSchema) == nil {
			d.InputSchema = b.Bytes()
		}
		out = append(out, d)
	}
	return out, problems
}

// OutcomeProblem says why outcomes cannot be sent back to a provider yet,
// or returns "": a suspended outcome (it has no result until resumed), the
// zero Outcome, an outcome without a call ID.
func OutcomeProblem(outcomes []dispatch.Outcome) string {
	for i, o := range outcomes {
		switch {
		case o.Kind == dispatch.KindSuspended:
			return fmt.Sprintf("outcome %d (call %q) is suspended: resume it and send the resumed outcome", i, o.CallID)
		case o.Kind == "":
			return fmt.Sprintf("outcome %d is the zero Outcome", i)
		case o.CallID == "":
			return fmt.Sprintf("outcome %d has no call ID to answer", i)
		}
	}
	return ""
}

// SchemaMap decodes a schema for an SDK's map-typed parameters: integers
// become int64 and other numbers float64, which every encoder writes as
// numbers. The map is new on every call. A schema that does not decode
// gives an empty map; the callers pass only validated schemas.
func SchemaMap(raw []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return map[string]any{}
	}
	return numbers(m).(map[string]any)
}

func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = numbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = numbers(e)
		}
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
	}
	return v
}
