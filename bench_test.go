package tool_test

import (
	"context"
	"fmt"
	"math/rand/v2"
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

// registrySchemas generates n input schemas of the kind typed tools derive:
// objects of 5 to 30 properties of assorted types, some of them nested
// objects or arrays of objects, every property required and no others
// allowed.
func registrySchemas(n int) [][]byte {
	r := rand.New(rand.NewPCG(15, 1000))
	var object func(fields, depth int) string
	object = func(fields, depth int) string {
		var props, required []string
		for i := range fields {
			name := fmt.Sprintf("field_%02d", i)
			var prop string
			switch k := r.IntN(8); {
			case k == 0 && depth < 2:
				prop = object(2+r.IntN(5), depth+1)
			case k == 1 && depth < 2:
				prop = `{"type":"array","items":` + object(2+r.IntN(4), depth+1) + `}`
			case k == 2:
				prop = `{"type":"integer","minimum":0,"maximum":1000}`
			case k == 3:
				prop = `{"type":"string","enum":["a","b","c"]}`
			case k == 4:
				prop = `{"type":"boolean"}`
			case k == 5:
				prop = `{"type":"array","items":{"type":"string"}}`
			case k == 6:
				prop = `{"type":"number"}`
			default:
				prop = `{"type":"string","maxLength":200}`
			}
			props = append(props, fmt.Sprintf("%q:%s", name, prop))
			required = append(required, fmt.Sprintf("%q", name))
		}
		return `{"type":"object","properties":{` + strings.Join(props, ",") + `},"required":[` + strings.Join(required, ",") + `],"additionalProperties":false}`
	}
	out := make([][]byte, n)
	for i := range out {
		out[i] = []byte(object(5+r.IntN(26), 0))
	}
	return out
}

// BenchmarkRegistryBind1000 binds 1,000 tools with generated input schemas
// of 5 to 30 fields, some nested, and registers them in one Registry: the
// start-up cost of a large tool catalogue. One iteration is the whole
// catalogue.
func BenchmarkRegistryBind1000(b *testing.B) {
	schemas := registrySchemas(1000)
	b.ReportAllocs()
	for b.Loop() {
		bindings := make([]tool.Binding, len(schemas))
		for i, schema := range schemas {
			bound, err := tool.Bind(echoTool{definition: tool.Definition{Name: fmt.Sprintf("tool_%04d", i), InputSchema: schema}})
			if err != nil {
				b.Fatal(err)
			}
			bindings[i] = bound
		}
		if _, err := tool.NewRegistry(bindings...); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSchemaECMAPattern validates an e-mail address against zod's
// e-mail pattern, which only the backtracking engine compiles: the fast
// check (2020-12) and the full validator (draft-07).
func BenchmarkSchemaECMAPattern(b *testing.B) {
	const zod = `^(?!\\.)(?!.*\\.\\.)([A-Za-z0-9_'+\\-\\.]*)[A-Za-z0-9_+-]@([A-Za-z0-9][A-Za-z0-9\\-]*\\.)+[A-Za-z]{2,}$`
	for _, c := range []struct{ name, dialect string }{
		{"fast", ``},
		{"full", `"$schema":"http://json-schema.org/draft-07/schema#",`},
	} {
		s, err := tool.ParseSchema([]byte(`{` + c.dialect + `"type":"object","properties":{"email":{"type":"string","pattern":"` + zod + `"}}}`))
		if err != nil {
			b.Fatal(err)
		}
		value := []byte(`{"email":"first.last+tag@mail.example.com"}`)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Validate(value); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
