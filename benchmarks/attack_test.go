package benchmarks

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentcontract/tool"
)

// The attack families of the cost bounds (issue 11), one iteration each:
// what a hostile model or client can make one check cost, at full size.
// benchmarks/README.md lists the figures; limits_test.go in the library
// holds the same attacks as tests.

// fillArray returns {"<name>":[item,item,…]} of at most MaxInputBytes.
func fillArray(name, item string) string {
	prefix, suffix := `{"`+name+`":[`, "]}"
	n := (tool.MaxInputBytes - len(prefix) - len(suffix) + 1) / (len(item) + 1)
	return prefix + strings.Repeat(item+",", n-1) + item + suffix
}

// attackCase is one attack: a schema and arguments for Prepare.
type attackCase struct {
	name, schema, arguments string
	admitted                bool
}

func attackCases() []attackCase {
	long := `{"s":"` + strings.Repeat("a", tool.MaxInputBytes-len(`{"s":""}`)) + `"}`
	var patterns, members []string
	for i := range 400 {
		patterns = append(patterns, fmt.Sprintf(`"a{0,100}%d":true`, i))
	}
	for i := range 2500 {
		members = append(members, fmt.Sprintf(`"%s%05d":0`, strings.Repeat("a", 395), i))
	}
	enum := make([]string, 100_000)
	for i := range enum {
		enum[i] = fmt.Sprintf(`"v%d"`, i)
	}
	var defs []string
	for i := range 995 {
		defs = append(defs, fmt.Sprintf(`"d%d":{"$ref":"#/$defs/d%d"}`, i, i+1))
	}
	defs = append(defs, `"d995":{"type":"string"}`)
	refMembers := make([]string, 1049)
	for i := range refMembers {
		refMembers[i] = fmt.Sprintf(`"m%d":1`, i)
	}
	alternatives := strings.TrimSuffix(strings.Repeat(`{"items":{"type":"integer"}},`, 999), ",")
	return []attackCase{
		{"subnormals", `{"type":"object"}`, fillArray("n", "3e-324"), true},
		{"pattern-long-string", `{"type":"object","properties":{"s":{"pattern":"[a-z]{0,1000}[0-9]"}}}`, long, false},
		{"maxLength-and-pattern", `{"type":"object","properties":{"s":{"maxLength":64,"pattern":"[a-z]{0,1000}[0-9]"}}}`, long, false},
		{"patternProperties", `{"type":"object","patternProperties":{` + strings.Join(patterns, ",") + `}}`, "{" + strings.Join(members, ",") + "}", false},
		{"format-regex", `{"type":"object","properties":{"r":{"items":{"format":"regex"}}}}`, fillArray("r", `"(?:a{0,1000}b){0,1}"`), true},
		{"backtracking", `{"type":"object","properties":{"s":{"items":{"pattern":"^(a+)+(?=b)"}}}}`, fillArray("s", `"`+strings.Repeat("a", 30)+`!"`), false},
		{"enum-100000", `{"type":"object","properties":{"e":{"items":{"enum":[` + strings.Join(enum, ",") + `]}}}}`, `{"e":[` + strings.Join(enum[:5000], ",") + `]}`, true},
		{"error-path", `{"type":"object","properties":{"v":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"integer"}]}}}}`, `{"v":` + strings.Repeat("[", 998) + strings.TrimSuffix(strings.Repeat("1.5,", 50_000), ",") + strings.Repeat("]", 998) + "}", false},
		{"ref-chain", `{"type":"object","additionalProperties":{"$ref":"#/$defs/d0"},"$defs":{` + strings.Join(defs, ",") + `}}`, "{" + strings.Join(refMembers, ",") + "}", false},
		{"allOf-long-string", `{"type":"object","properties":{"s":{"allOf":[` + strings.TrimSuffix(strings.Repeat(`{"maxLength":2000000},`, 990), ",") + `]}}}`, long, true},
		{"anyOf-fan-out", `{"type":"object","properties":{"a":{"anyOf":[` + alternatives + `]}}}`, fillArray("a", `"x"`)[:len(`{"a":[`)+4*2790] + `"x"]}`, false},
		{"minimum-1e308", `{"type":"object","properties":{"a":{"items":{"minimum":1e308}}}}`, fillArray("a", "1e308"), true},
		{"multipleOf-1e-300", `{"type":"object","properties":{"a":{"items":{"multipleOf":1e-300}}}}`, fillArray("a", "1e300"), true},
		{"uniqueItems", `{"type":"object","properties":{"a":{"uniqueItems":true}}}`, distinctNumbers(), true},
	}
}

// distinctNumbers returns {"a":[1e300,2e300,…]} of at most MaxInputBytes.
func distinctNumbers() string {
	var b strings.Builder
	b.WriteString(`{"a":[1e300`)
	for i := 2; ; i++ {
		item := fmt.Sprintf(",%de300", i)
		if b.Len()+len(item)+2 > tool.MaxInputBytes {
			break
		}
		b.WriteString(item)
	}
	b.WriteString("]}")
	return b.String()
}

// BenchmarkAttack is one Contract.Prepare of each attack.
func BenchmarkAttack(b *testing.B) {
	for _, c := range attackCases() {
		b.Run(c.name, func(b *testing.B) {
			bound, err := tool.Bind(attackTool{definition: tool.Definition{Name: "attack", InputSchema: []byte(c.schema)}})
			if err != nil {
				b.Fatal(err)
			}
			contract := bound.Contract()
			req := tool.Request{Name: "attack", Arguments: c.arguments}
			b.SetBytes(int64(len(c.arguments)))
			b.ReportAllocs()
			for b.Loop() {
				_, err := contract.Prepare(req, tool.Admission{})
				if (err == nil) != c.admitted {
					b.Fatalf("admitted %v: %v", err == nil, err)
				}
			}
		})
	}
}

// BenchmarkAttackSchema is one ParseSchema of a document whose patterns
// are short to write and costly to parse or compile; both are refused.
func BenchmarkAttackSchema(b *testing.B) {
	for _, c := range []struct{ name, pattern string }{
		{"unicode-classes", `\\pL{700}`},
		{"large-programs", `[a-z]{0,1000}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			var members []string
			for i := range 2000 {
				members = append(members, fmt.Sprintf(`"p%d":{"pattern":"%s%d"}`, i, c.pattern, i))
			}
			doc := []byte(`{"properties":{` + strings.Join(members, ",") + `}}`)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tool.ParseSchema(doc); err == nil {
					b.Fatal("admitted")
				}
			}
		})
	}
}

// BenchmarkAttackOutput is Output.MarshalJSON and Binding.Call of a tool
// that returns 200 text blocks of a megabyte; both are refused.
func BenchmarkAttackOutput(b *testing.B) {
	megabyte := strings.Repeat("x", 1<<20)
	blocks := make([]tool.Block, 200)
	for i := range blocks {
		blocks[i] = tool.NewTextBlock(megabyte)
	}
	out := tool.Output{Content: blocks}
	b.Run("marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := out.MarshalJSON(); err == nil {
				b.Fatal("admitted")
			}
		}
	})
	bound, err := tool.Bind(attackTool{definition: tool.Definition{Name: "big", InputSchema: []byte(`{"type":"object"}`)}, output: out})
	if err != nil {
		b.Fatal(err)
	}
	inv, err := bound.Contract().Prepare(tool.Request{Name: "big", Arguments: "{}"}, tool.Admission{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("call", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := bound.Call(context.Background(), inv); err == nil {
				b.Fatal("admitted")
			}
		}
	})
}

// attackTool returns the same output on every call.
type attackTool struct {
	definition tool.Definition
	output     tool.Output
}

func (a attackTool) Definition() tool.Definition { return a.definition.Clone() }

func (a attackTool) Call(context.Context, tool.Invocation) (tool.Result, error) {
	return tool.Result{Output: a.output}, nil
}
