package benchmarks

import (
	"context"
	"testing"

	"github.com/agentcontract/tool"
)

// searchTool is SearchInput behind this module's library: a NewFunc tool
// whose Out is SearchOutput, so its output is encoded into Details and
// checked against the derived output schema, as the MCP SDK path does.
func searchTool(tb testing.TB) tool.Binding {
	tb.Helper()
	f, err := tool.NewFunc(tool.FuncConfig{Name: "search", Effect: tool.EffectSafe},
		func(_ context.Context, in SearchInput) (SearchOutput, error) {
			return SearchOutput{Hits: len(in.Tags) + len(in.Nested)}, nil
		})
	if err != nil {
		tb.Fatal(err)
	}
	b, err := tool.Bind(f)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkTool is the library's whole admission and call path, per
// iteration: Contract.Prepare (RFC 7493 parse building the validator's
// value tree, schema validation, the strict typed decode of the input
// validator) and Binding.Call (the strict typed decode for the function,
// the function, JSON encoding of the output, its validation against the
// output schema, and the copy handed to the caller).
func BenchmarkTool(b *testing.B) {
	binding := searchTool(b)
	contract := binding.Contract()
	ctx := context.Background()
	for _, p := range Payloads {
		b.Run(p.Name, func(b *testing.B) {
			req := tool.Request{Name: "search", Arguments: string(p.Data)}
			b.SetBytes(int64(len(p.Data)))
			b.ReportAllocs()
			for b.Loop() {
				inv, err := contract.Prepare(req, tool.Admission{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := binding.Call(ctx, inv); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolParallel is BenchmarkTool's medium iteration on every
// goroutine of b.RunParallel: one Binding shared by all, each goroutine
// preparing and calling its own invocations. With -cpu 1,2 it shows how
// throughput scales with cores: ns/op is wall time per call over all
// goroutines, so perfect scaling halves it at -cpu 2.
func BenchmarkToolParallel(b *testing.B) {
	binding := searchTool(b)
	contract := binding.Contract()
	ctx := context.Background()
	req := tool.Request{Name: "search", Arguments: string(MediumJSON)}
	b.SetBytes(int64(len(req.Arguments)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			inv, err := contract.Prepare(req, tool.Admission{})
			if err != nil {
				b.Error(err)
				return
			}
			if _, err := binding.Call(ctx, inv); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkToolPrepare is Contract.Prepare alone.
func BenchmarkToolPrepare(b *testing.B) {
	contract := searchTool(b).Contract()
	for _, p := range Payloads {
		b.Run(p.Name, func(b *testing.B) {
			req := tool.Request{Name: "search", Arguments: string(p.Data)}
			b.SetBytes(int64(len(p.Data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := contract.Prepare(req, tool.Admission{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolBind is the one-time cost of NewFunc and Bind: reflection,
// compilation and freezing of the definition.
func BenchmarkToolBind(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		searchTool(b)
	}
}

// TestToolAdmitsPayloads checks that the library admits and runs every
// payload, and refuses the same bad inputs the baselines refuse.
func TestToolAdmitsPayloads(t *testing.T) {
	binding := searchTool(t)
	for _, p := range Payloads {
		inv, err := binding.Contract().Prepare(tool.Request{Name: "search", Arguments: string(p.Data)}, tool.Admission{})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if _, err := binding.Call(context.Background(), inv); err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
	}
	for _, bad := range []string{
		`{"query":"x","mode":"slow","limit":1,"offset":0,"filter":{"field":"a","op":"eq","weight":0},"tags":[],"include_archived":false,"locale":"en","min_score":0}`,
		`{"query":"x","mode":"fast","limit":101,"offset":0,"filter":{"field":"a","op":"eq","weight":0},"tags":[],"include_archived":false,"locale":"en","min_score":0}`,
		`{"query":"x","mode":"fast","limit":1,"offset":0,"filter":{"field":"a","op":"eq","weight":0,"x":1},"tags":[],"include_archived":false,"locale":"en","min_score":0}`,
	} {
		if _, err := binding.Contract().Prepare(tool.Request{Name: "search", Arguments: bad}, tool.Admission{}); err == nil {
			t.Fatalf("admitted %s", bad)
		}
	}
}
