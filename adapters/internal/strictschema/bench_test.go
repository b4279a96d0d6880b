package strictschema_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/adapters/internal/strictschema"
)

func BenchmarkLower(b *testing.B) {
	s, err := tool.SchemaFor[orderInput]()
	if err != nil {
		b.Fatal(err)
	}
	schema := s.JSON()
	b.ReportMetric(float64(len(schema)), "schema-bytes")
	b.ReportAllocs()
	adaptertest.LoopCPU(b, func() {
		if res := strictschema.Lower(schema, strictschema.OpenAI); len(res.Blocked) > 0 {
			b.Fatal(res.Blocked)
		}
	})
}

// BenchmarkApply undoes the lowering on the arguments of an order with one
// item and with 1,000: nulls for absent optional members at the top and in
// a nested object, a top object of nine members, and, for the long one, an
// array of many small objects.
func BenchmarkApply(b *testing.B) {
	s, err := tool.SchemaFor[orderInput]()
	if err != nil {
		b.Fatal(err)
	}
	res := strictschema.Lower(s.JSON(), strictschema.OpenAI)
	for _, n := range []int{1, 1000} {
		items := make([]string, n)
		for i := range items {
			items[i] = fmt.Sprintf(`{"sku":"SKU-%04d","count":3,"tags":["a","bb","ccc"]}`, i)
		}
		args := `{"customer":"ana@example.com","items":[` + strings.Join(items, ",") + `],"ship":null,` +
			`"bill":{"street":"Rua Augusta 1, Lisboa","zip":null,"kind":"home"},"notes":"leave at the door",` +
			`"priority":null,"express":true,"when":"2026-11-30T10:00:00Z","grid":null}`
		if out := res.Undo.Apply(args); len(out) == len(args) || s.Validate([]byte(out)) != nil {
			b.Fatalf("undo of %d items: %s", n, out)
		}
		b.Run(fmt.Sprintf("items-%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(args)))
			b.ReportAllocs()
			for b.Loop() {
				res.Undo.Apply(args)
			}
		})
	}
}
