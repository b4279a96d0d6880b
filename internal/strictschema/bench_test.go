package strictschema_test

import (
	"testing"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/adaptertest"
	"github.com/agentcontract/tool/internal/strictschema"
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
