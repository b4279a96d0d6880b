package tool_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/agentcontract/tool"
)

// benchFilter and benchInput mirror the input of the comparison benchmarks
// in benchmarks/: ten top-level fields, an enum, bounded integers, a nested
// object and a slice of strings.
type benchFilter struct {
	Field  string `json:"field"`
	Op     string `json:"op" jsonschema:"enum=eq,enum=lt,enum=gt"`
	Weight int    `json:"weight"`
}

type benchInput struct {
	Query           string        `json:"query" jsonschema:"description=Free-text search query"`
	Mode            string        `json:"mode" jsonschema:"enum=fast,enum=exact,enum=fuzzy"`
	Limit           int           `json:"limit" jsonschema:"minimum=1,maximum=100"`
	Offset          int           `json:"offset" jsonschema:"minimum=0"`
	Filter          benchFilter   `json:"filter"`
	Tags            []string      `json:"tags"`
	IncludeArchived bool          `json:"include_archived"`
	Locale          string        `json:"locale"`
	MinScore        float64       `json:"min_score"`
	Nested          []benchFilter `json:"nested,omitempty"`
}

type benchOutput struct {
	Hits int `json:"hits"`
}

func benchPayloads(tb testing.TB) []struct {
	name string
	args string
} {
	small := benchInput{Query: "x", Mode: "fast", Limit: 1, Filter: benchFilter{Field: "a", Op: "eq"}, Tags: []string{}, Locale: "en"}
	medium := benchInput{
		Query:    "quarterly revenue report for the EMEA region including currency-adjusted growth, churn and net retention figures",
		Mode:     "fuzzy",
		Limit:    25,
		Offset:   50,
		Filter:   benchFilter{Field: "region", Op: "eq", Weight: 3},
		Tags:     []string{"finance", "emea", "quarterly", "revenue", "retention"},
		Locale:   "en-GB",
		MinScore: 0.75,
	}
	large := medium
	for i := range 200 {
		large.Nested = append(large.Nested, benchFilter{Field: fmt.Sprintf("field_%03d", i), Op: []string{"eq", "lt", "gt"}[i%3], Weight: i})
	}
	var out []struct {
		name string
		args string
	}
	for _, p := range []struct {
		name string
		v    benchInput
	}{{"small", small}, {"medium", medium}, {"large", large}} {
		b, err := jsonv2.Marshal(p.v)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, struct {
			name string
			args string
		}{p.name, string(b)})
	}
	return out
}

func benchBinding(tb testing.TB, middlewares ...tool.CallMiddleware) tool.Binding {
	f, err := tool.NewFunc(tool.FuncConfig{Name: "search", Effect: tool.EffectSafe},
		func(_ context.Context, in benchInput) (benchOutput, error) {
			return benchOutput{Hits: len(in.Tags) + len(in.Nested)}, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := tool.Bind(f, middlewares...)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func BenchmarkPrepare(b *testing.B) {
	contract := benchBinding(b).Contract()
	benchPayloadLoop(b, func(b *testing.B, req tool.Request) {
		if _, err := contract.Prepare(req, tool.Admission{}); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkPrepareCall(b *testing.B) {
	benchCall(b, benchBinding(b))
}

func BenchmarkGuardedCall(b *testing.B) {
	guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
		return true, nil
	})})
	if err != nil {
		b.Fatal(err)
	}
	benchCall(b, benchBinding(b, tool.Recover, guard.Call))
}

func benchCall(b *testing.B, binding tool.Binding) {
	ctx := context.Background()
	contract := binding.Contract()
	benchPayloadLoop(b, func(b *testing.B, req tool.Request) {
		inv, err := contract.Prepare(req, tool.Admission{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := binding.Call(ctx, inv); err != nil {
			b.Fatal(err)
		}
	})
}

// benchPayloadLoop runs one sub-benchmark per payload, with iteration as
// the body of its loop.
func benchPayloadLoop(b *testing.B, iteration func(*testing.B, tool.Request)) {
	for _, p := range benchPayloads(b) {
		b.Run(p.name, func(b *testing.B) {
			req := tool.Request{Name: "search", Arguments: p.args}
			b.SetBytes(int64(len(p.args)))
			b.ReportAllocs()
			for b.Loop() {
				iteration(b, req)
			}
		})
	}
}

func BenchmarkBind(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		benchBinding(b)
	}
}

func BenchmarkRegistryResolve(b *testing.B) {
	var bindings []tool.Binding
	for i := range 100 {
		f, err := tool.NewFunc(tool.FuncConfig{Name: fmt.Sprintf("tool_%03d", i)},
			func(context.Context, struct{}) (string, error) { return "", nil })
		if err != nil {
			b.Fatal(err)
		}
		bound, err := tool.Bind(f)
		if err != nil {
			b.Fatal(err)
		}
		bindings = append(bindings, bound)
	}
	registry, err := tool.NewRegistry(bindings...)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 100)
	for i := range names {
		names[i] = fmt.Sprintf("tool_%03d", i)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, ok := registry.Resolve(names[i%100]); !ok {
			b.Fatal("missing")
		}
		i++
	}
}

// memoryPayloads are argument texts of about size bytes: many small
// objects, and one long string that is mostly escapes.
func memoryPayloads(size int) []struct {
	name string
	args string
} {
	var objects strings.Builder
	objects.WriteString(`{"items":[`)
	for i := 0; objects.Len() < size-64; i++ {
		if i > 0 {
			objects.WriteByte(',')
		}
		fmt.Fprintf(&objects, `{"a":%d,"b":"x%d"}`, i, i%10)
	}
	objects.WriteString(`]}`)
	escapes := `{"text":"` + strings.Repeat(`\u00e9\n\"`, (size-16)/10) + `"}`
	return []struct {
		name string
		args string
	}{{"objects", objects.String()}, {"escapes", escapes}}
}

// BenchmarkPrepareMemory prepares argument texts of 256 KiB and 1 MiB and
// reports the bytes allocated per byte of input (alloc/input-byte). Every
// byte a Prepare allocates counts, so this bounds the peak heap of one
// Prepare from above; equal figures at both sizes show that nothing grows
// faster than the input.
func BenchmarkPrepareMemory(b *testing.B) {
	schema := []byte(`{"type":"object","properties":{
		"items":{"type":"array","items":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string","maxLength":8}},"required":["a","b"],"additionalProperties":false}},
		"text":{"type":"string"}}}`)
	binding, err := tool.Bind(echoTool{definition: tool.Definition{Name: "bulk", InputSchema: schema}})
	if err != nil {
		b.Fatal(err)
	}
	contract := binding.Contract()
	for _, size := range []int{256 << 10, tool.MaxInputBytes} {
		for _, p := range memoryPayloads(size) {
			b.Run(fmt.Sprintf("%s/%dKiB", p.name, size>>10), func(b *testing.B) {
				req := tool.Request{Name: "bulk", Arguments: p.args}
				if _, err := contract.Prepare(req, tool.Admission{}); err != nil {
					b.Fatal(err)
				}
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				n := 0
				for b.Loop() {
					if _, err := contract.Prepare(req, tool.Admission{}); err != nil {
						b.Fatal(err)
					}
					n++
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(len(p.args)), "alloc/input-byte")
			})
		}
	}
}
