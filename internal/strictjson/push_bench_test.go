package strictjson_test

import (
	"strings"
	"testing"

	"github.com/agentcontract/tool/internal/strictjson"
)

// BenchmarkPush reads documents of about 256 KiB with a Push, in pieces of
// 64 bytes (the deltas a model streams), with a Handler that accepts
// everything: the cost of the reader alone on the streaming admission
// path. Compact holds no white space; Indented is the same rows written
// with new lines and indentation, which the reader takes byte by byte;
// Strings is mostly string content, with escapes.
func BenchmarkPush(b *testing.B) {
	row := `{"field":"a field","value":12.5,"ok":true,"none":null,"list":[1,-2,3e4]}`
	indented := "\n  {\n    \"field\": \"a field\",\n    \"value\": 12.5,\n    \"ok\": true,\n    \"none\": null,\n    \"list\": [ 1, -2, 3e4 ]\n  }"
	text := `"a sentence of text with \"quotes\", \u00e9 and é, ` + strings.Repeat("x", 40) + `"`
	docs := []struct{ name, doc string }{
		{"Compact", "[" + strings.Repeat(row+",", (256<<10)/(len(row)+1)) + "{}]"},
		{"Indented", "[" + strings.Repeat(indented+",", (256<<10)/(len(indented)+1)) + "{}\n]"},
		{"Strings", "[" + strings.Repeat(text+",", (256<<10)/(len(text)+1)) + `""]`},
	}
	for _, d := range docs {
		doc := []byte(d.doc)
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			h := &recorder{}
			p := strictjson.NewPush(h, 64)
			for b.Loop() {
				p.Reset(h, 64)
				for at := 0; at < len(doc); at += 64 {
					if err := p.Write(doc[at:min(at+64, len(doc))]); err != nil {
						b.Fatal(err)
					}
				}
				if err := p.End(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
