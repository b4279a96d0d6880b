package toolotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"

	toolotel "github.com/agentcontract/tool/adapters/otel"
	"github.com/agentcontract/tool/dispatch"
)

// Tool names a model invents make one span name and one series, with the
// Registry (decided as the span starts) and without it (renamed when the
// Dispatcher finds no such tool, or refuses the call before looking); a
// registered tool keeps its name. The requested name stays on the span,
// bounded.
func TestInventedToolNames(t *testing.T) {
	const invented = 5000
	long := strings.Repeat("x", 1<<20)
	tests := []struct {
		name     string
		registry bool
	}{
		{"with the registry", true},
		{"without a registry", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, func(c *toolotel.Config) {
				if !tt.registry {
					c.Registry = nil
				}
			})
			ctx := context.Background()
			for i := range invented {
				o := r.d.Run(ctx, runCall(fmt.Sprint("c", i), fmt.Sprintf("invented_%d", i), `{}`))
				require.Equal(t, dispatch.KindUnknownTool, o.Kind)
			}
			o := r.d.Run(ctx, runCall("long", long, `{}`))
			require.Equal(t, dispatch.KindUnknownTool, o.Kind)
			// Refused before the tool is looked for: an invalid principal.
			bad := runCall("bad", "invented_principal", `{}`)
			bad.Principal = "\xff"
			o = r.d.Run(ctx, bad)
			require.Equal(t, dispatch.KindUnknown, o.Kind)
			require.ErrorIs(t, o.Err, dispatch.ErrInvalidConfig)
			o = r.d.Run(ctx, runCall("known", "add", `{"a":1,"b":2}`))
			require.Equal(t, dispatch.KindCompleted, o.Kind)

			spanNames := map[string]int{}
			for _, s := range r.take() {
				spanNames[s.Name]++
				name, ok := attrs(s.Attributes)["gen_ai.tool.name"].(string)
				require.True(t, ok)
				require.LessOrEqual(t, len(name), toolotel.MaxToolNameBytes)
			}
			require.LessOrEqual(t, len(spanNames), 2, "%d distinct span names", len(spanNames))
			require.Equal(t, map[string]int{"execute_tool _OTHER": invented + 2, "execute_tool add": 1}, spanNames)

			series := map[string]bool{}
			for encoded := range r.durations(t) {
				set := attribute.NewSet(parseEncoded(t, encoded)...)
				name, _ := set.Value(toolotel.AttrToolName)
				series[name.AsString()] = true
			}
			require.LessOrEqual(t, len(series), 2, "%d distinct tool names in the histogram", len(series))
			require.Equal(t, map[string]bool{toolotel.OtherToolName: true, "add": true}, series)
		})
	}
}

// parseEncoded reads back the key=value pairs of an encoded attribute set
// whose values hold no comma.
func parseEncoded(t *testing.T, encoded string) []attribute.KeyValue {
	t.Helper()
	var kvs []attribute.KeyValue
	for pair := range strings.SplitSeq(encoded, ",") {
		k, v, ok := strings.Cut(pair, "=")
		require.True(t, ok, pair)
		kvs = append(kvs, attribute.String(k, v))
	}
	return kvs
}

// What a model or a client sent is recorded within its bound: a call ID
// of 4 MiB, of multi-byte runes or of invalid UTF-8 is cut at a rune
// boundary, mended and marked; one within the bound is recorded whole.
func TestCallIDBounded(t *testing.T) {
	tests := []struct {
		name, id string
		want     string // "" when the ID is cut near the bound: a valid prefix and the marker
	}{
		{"short", "call_abc", "call_abc"},
		{"at the bound", strings.Repeat("a", toolotel.MaxAttributeBytes), strings.Repeat("a", toolotel.MaxAttributeBytes)},
		{"4 MiB", strings.Repeat("a", 4<<20), ""},
		{"4 MiB of 3-byte runes", strings.Repeat("€", 4<<20/3), ""},
		{"short, invalid UTF-8", "call\xff\xfe_1", "call\uFFFD_1"},
		{"long, invalid UTF-8", strings.Repeat("\xff", 4<<20), "\uFFFD…"}, // one invalid run, one U+FFFD
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, nil)
			r.d.Run(context.Background(), runCall(tt.id, "add", `{"a":1,"b":2}`))
			spans := r.take()
			require.Len(t, spans, 1)
			got, ok := attrs(spans[0].Attributes)["gen_ai.tool.call.id"].(string)
			require.True(t, ok)
			require.LessOrEqual(t, len(got), toolotel.MaxAttributeBytes)
			require.True(t, utf8.ValidString(got))
			if tt.want != "" {
				require.Equal(t, tt.want, got)
				return
			}
			require.True(t, strings.HasSuffix(got, "…"), got)
			require.Greater(t, len(got), toolotel.MaxAttributeBytes-8, "cut near the bound")
			prefix := strings.TrimSuffix(got, "…")
			require.True(t, strings.HasPrefix(strings.ToValidUTF8(tt.id, "\uFFFD"), prefix))
		})
	}
}

// Captured content is bounded after Config.Redact, which is given the
// whole text.
func TestContentBounded(t *testing.T) {
	big := strings.Repeat("é", 600_000)
	args := `{"a":1,"b":2,"pad":"` + strings.Repeat("x", 1<<20) + `"}`
	var seen []int
	r := newRig(t, func(c *toolotel.Config) {
		c.CaptureContent = true
		c.Redact = func(_ string, kind toolotel.ContentKind, text string) string {
			if kind == toolotel.ContentArguments {
				seen = append(seen, len(text))
				return text
			}
			return big
		}
	})
	ctx := context.Background()
	require.Equal(t, dispatch.KindRejected, r.d.Run(ctx, runCall("c1", "add", args)).Kind)
	require.Equal(t, dispatch.KindCompleted, r.d.Run(ctx, runCall("c2", "add", `{"a":1,"b":2}`)).Kind)
	spans := r.take()
	require.Len(t, spans, 2)
	require.Equal(t, []int{len(args), len(`{"a":1,"b":2}`)}, seen, "Redact sees the whole text")
	for _, c := range []struct {
		span int
		key  string
	}{{0, "gen_ai.tool.call.arguments"}, {1, "gen_ai.tool.call.result"}} {
		got, ok := attrs(spans[c.span].Attributes)[c.key].(string)
		require.True(t, ok, c.key)
		require.LessOrEqual(t, len(got), toolotel.MaxContentBytes, c.key)
		require.Greater(t, len(got), toolotel.MaxContentBytes-8, c.key)
		require.True(t, utf8.ValidString(got), c.key)
		require.True(t, strings.HasSuffix(got, "…"), c.key)
	}
}
