package toolotel

import (
	"strings"
	"unicode/utf8"
)

// The bounds of what this package records from what a model or a client
// sent. Nothing else bounds it: a model may invent a tool name of any
// length, a client may send a call ID of megabytes, and an attribute is
// exported, stored and indexed whole. A longer value is cut at a UTF-8
// boundary and ends with the marker "…" (U+2026), the whole at most the
// bound's bytes; invalid UTF-8 is mended first, each invalid run made
// U+FFFD. A value within its bound and valid is recorded as given.
const (
	// MaxToolNameBytes bounds the requested tool name recorded as
	// gen_ai.tool.name on a span (a registered name is shorter: only a
	// model's invention is cut).
	MaxToolNameBytes = 128
	// MaxAttributeBytes bounds every other identifier recorded from a
	// call: gen_ai.tool.call.id (the provider's or the client's call ID)
	// and agentcontract.checkpoint.id (which a refused resume takes from
	// a checkpoint that may be forged).
	MaxAttributeBytes = 256
	// MaxContentBytes bounds gen_ai.tool.call.arguments and
	// gen_ai.tool.call.result, recorded only with Config.CaptureContent:
	// the bound applies to what Config.Redact returns, which is given the
	// whole text.
	MaxContentBytes = 64 << 10
)

// cutMarker ends a value that was cut.
const cutMarker = "…"

// bounded returns s as valid UTF-8 of at most max bytes (max is at least
// len(cutMarker)): s itself when it is both already, otherwise mended and,
// when it is still too long, cut at a rune boundary and marked. Only the
// first max bytes of a longer s are read.
func bounded(s string, max int) string {
	if len(s) <= max && utf8.ValidString(s) {
		return s
	}
	long := len(s) > max
	if long {
		s = s[:runeCut(s, max)]
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	if !long && len(s) <= max {
		return s
	}
	return s[:runeCut(s, max-len(cutMarker))] + cutMarker
}

// runeCut returns the length of the longest prefix of s of at most n bytes
// that does not split a rune; it backs up over at most utf8.UTFMax-1
// bytes, as a longer run of continuation bytes is no rune at all (and is
// mended after).
func runeCut(s string, n int) int {
	if n >= len(s) {
		return len(s)
	}
	for i := n; i > 0 && i > n-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}

// toolName bounds a requested tool name to MaxToolNameBytes.
func toolName(name string) string { return bounded(name, MaxToolNameBytes) }
