// Package benchmarks holds baseline benchmarks for admitting JSON tool
// arguments into a typed Go value, so that github.com/agentcontract/tool can be
// compared against them in the same `go test -bench` run.
//
// This file defines the input type and the payloads shared by every
// benchmark in the package (baselines and, later, the library's own).
package benchmarks

import (
	"fmt"

	"github.com/go-json-experiment/json"
)

// Filter is a nested object of SearchInput.
type Filter struct {
	Field  string `json:"field"`
	Op     string `json:"op" jsonschema:"enum=eq,enum=lt,enum=gt"`
	Weight int    `json:"weight"`
}

// SearchInput is the benchmark's tool-argument type: exactly 10 top-level
// fields, 9 of them required (no omitempty), Nested optional.
type SearchInput struct {
	Query           string   `json:"query" jsonschema:"description=Free-text search query"`
	Mode            string   `json:"mode" jsonschema:"enum=fast,enum=exact,enum=fuzzy"`
	Limit           int      `json:"limit" jsonschema:"minimum=1,maximum=100"`
	Offset          int      `json:"offset" jsonschema:"minimum=0"`
	Filter          Filter   `json:"filter"`
	Tags            []string `json:"tags"`
	IncludeArchived bool     `json:"include_archived"`
	Locale          string   `json:"locale"`
	MinScore        float64  `json:"min_score"`
	Nested          []Filter `json:"nested,omitempty"` // only set in the large payload
}

// SearchOutput is a deliberately tiny tool result, for benchmarks (such as the
// MCP SDK's typed handler) whose measured path includes output handling.
type SearchOutput struct {
	Hits int `json:"hits"`
}

// Payload is one named JSON argument document.
type Payload struct {
	Name string // sub-benchmark name: "small", "medium" or "large"
	Data []byte
}

// Payloads, generated once at package initialisation. Every one of them is a
// valid SearchInput: it decodes strictly and satisfies the derived schema
// (checked by TestPayloads).
var (
	// SmallJSON holds only the required fields, with minimal values (~155 B).
	SmallJSON = mustMarshal(SearchInput{
		Query:  "x",
		Mode:   "fast",
		Limit:  1,
		Filter: Filter{Field: "a", Op: "eq"},
		Tags:   []string{},
		Locale: "en",
	})
	// MediumJSON holds the required fields with realistic values, 5 tags and
	// 1 filter, no Nested (~400 B).
	MediumJSON = mustMarshal(medium())
	// LargeJSON is MediumJSON plus 200 Filter objects in Nested (~20 KB).
	LargeJSON = mustMarshal(large())

	// Payloads lists the payloads in the order sub-benchmarks are run.
	Payloads = []Payload{
		{"small", SmallJSON},
		{"medium", MediumJSON},
		{"large", LargeJSON},
	}
)

func medium() SearchInput {
	return SearchInput{
		Query:  "quarterly revenue report for the EMEA region including currency-adjusted growth, churn and net retention figures over the last four fiscal years",
		Mode:   "fuzzy",
		Limit:  25,
		Offset: 50,
		Filter: Filter{Field: "document.metadata.department", Op: "eq", Weight: 3},
		Tags: []string{
			"finance", "quarterly-report", "emea", "revenue", "net-retention",
		},
		IncludeArchived: true,
		Locale:          "en-GB",
		MinScore:        0.625,
	}
}

func large() SearchInput {
	in := medium()
	ops := [...]string{"eq", "lt", "gt"}
	in.Nested = make([]Filter, 200)
	for i := range in.Nested {
		in.Nested[i] = Filter{
			Field:  fmt.Sprintf("document.metadata.custom_attributes.section_%03d.subsection.value", i),
			Op:     ops[i%len(ops)],
			Weight: 1000 + i,
		}
	}
	return in
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v, json.Deterministic(true))
	if err != nil {
		panic(err)
	}
	return b
}
