package toolmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limits [Connect], [Import] and the tools it returns apply when a
// limit is given as zero (a field of [ConnectConfig] or [ImportConfig], or
// [LimitTransport]'s argument). Each bounds what a remote server can make
// this client read, hold or do; every one is checked before the cost it
// bounds is paid. A limit given as [NoLimit] is turned off, where the
// field's doc says it may be.
const (
	// NoLimit, given as a limit of [ConnectConfig] or [ImportConfig],
	// turns that limit off: the one explicit way to read, wait or answer
	// without a bound. Another negative value is refused.
	NoLimit = -1

	// DefaultMaxPages bounds the pages of one tools/list listing.
	DefaultMaxPages = 100
	// DefaultMaxTools bounds the tools of one listing, all pages together.
	DefaultMaxTools = 1000
	// DefaultMaxSchemaBytes bounds one schema a server sends: a tool's
	// input or output schema, or the form of a request for input. It is
	// the core's own bound on a schema document, [tool.MaxInputBytes].
	DefaultMaxSchemaBytes = tool.MaxInputBytes
	// DefaultMaxElicitations bounds the elicitations one call of an
	// imported tool may ask the client's handler (see [LimitElicitations],
	// which [Connect] applies).
	DefaultMaxElicitations = 10
	// DefaultImportTimeout bounds one call of [Import], every page of the
	// listing included.
	DefaultImportTimeout = time.Minute
	// DefaultCallTimeout bounds one call of a [RemoteTool], every round
	// of a request for input and every elicitation it asks included.
	DefaultCallTimeout = 5 * time.Minute
	// DefaultMaxMessageBytes bounds one message read from the server by a
	// transport made by [Connect] or [LimitTransport]: twice
	// [tool.MaxOutputBytes], room for the largest result the core admits
	// and the text copy of its structured content that servers add.
	DefaultMaxMessageBytes = 2 * tool.MaxOutputBytes
	// DefaultMaxStreamEvents bounds the events of one event stream that
	// answers a request over streamable HTTP (the response to one call,
	// with the notifications and requests that precede it).
	DefaultMaxStreamEvents = 10_000
	// DefaultMaxStreamBytes bounds the bytes of one such stream: twice
	// [DefaultMaxMessageBytes], room for the largest response and as much
	// again of notifications.
	DefaultMaxStreamBytes = 2 * DefaultMaxMessageBytes
)

// limits are the resolved limits of an [ImportConfig]. A limit turned
// off with NoLimit is math.MaxInt, or a zero duration.
type limits struct {
	pages, tools, schemaBytes, elicitations int
	timeout, callTimeout                    time.Duration
}

// resolve checks the limits of config and replaces each zero with its
// default.
func (config ImportConfig) resolve() (limits, error) {
	var l limits
	var err error
	for _, f := range []struct {
		name     string
		value    int
		fallback int
		to       *int
	}{
		{"MaxPages", config.MaxPages, DefaultMaxPages, &l.pages},
		{"MaxTools", config.MaxTools, DefaultMaxTools, &l.tools},
		{"MaxSchemaBytes", config.MaxSchemaBytes, DefaultMaxSchemaBytes, &l.schemaBytes},
		{"MaxElicitations", config.MaxElicitations, DefaultMaxElicitations, &l.elicitations},
	} {
		if *f.to, err = limitOrDefault("ImportConfig."+f.name, f.value, f.fallback); err != nil {
			return limits{}, err
		}
	}
	if l.timeout, err = durationOrDefault("ImportConfig.Timeout", config.Timeout, DefaultImportTimeout); err != nil {
		return limits{}, err
	}
	if l.callTimeout, err = durationOrDefault("ImportConfig.CallTimeout", config.CallTimeout, DefaultCallTimeout); err != nil {
		return limits{}, err
	}
	return l, nil
}

// limitOrDefault resolves a limit that NoLimit may turn off: math.MaxInt
// then.
func limitOrDefault(name string, value, fallback int) (int, error) {
	if value == NoLimit {
		return math.MaxInt, nil
	}
	switch {
	case value < 0:
		return 0, errprefix.Errorf("%w: %s is %d, want 0 (the default, %d), NoLimit (-1) or more", ErrInvalidConfig, name, value, fallback)
	case value == 0:
		return fallback, nil
	}
	return value, nil
}

// durationOrDefault resolves a time limit that NoLimit may turn off: 0
// then.
func durationOrDefault(name string, value, fallback time.Duration) (time.Duration, error) {
	switch {
	case value == NoLimit:
		return 0, nil
	case value < 0:
		return 0, errprefix.Errorf("%w: %s is %v, want 0 (the default, %v), NoLimit (-1ns) or more", ErrInvalidConfig, name, value, fallback)
	case value == 0:
		return fallback, nil
	}
	return value, nil
}

// orDefault resolves a limit that cannot be turned off.
func orDefault(name string, value, fallback int) (int, error) {
	switch {
	case value < 0:
		return 0, errprefix.Errorf("%w: %s is %d, want 0 (the default, %d) or more", ErrInvalidConfig, name, value, fallback)
	case value == 0:
		return fallback, nil
	}
	return value, nil
}

// marshalBounded encodes v, a value the SDK decoded from the server's
// JSON, unless its encoding would be longer than limit bytes: the size is
// estimated from below by a walk that stops as soon as it passes limit, so
// that a huge value is refused after at most about limit bytes of work,
// before anything is encoded. what names the value and the limit in the
// error.
func marshalBounded(v any, limit int, what string) ([]byte, error) {
	if size := jsonSize(v, limit); size > limit {
		return nil, fmt.Errorf("%s is more than %d bytes", what, limit)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, errprefix.Part("%s: %w", what, err)
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than %d", what, len(raw), limit)
	}
	return raw, nil
}

// jsonSize returns at most the length of v's JSON encoding, or a number
// above budget once it is known to exceed budget. v is a tree as
// encoding/json decodes into any; another type counts as its encoding
// (a caller's own value, small).
func jsonSize(v any, budget int) int {
	var num [32]byte
	size := 0
	var walk func(v any) bool // false once size > budget
	walk = func(v any) bool {
		switch v := v.(type) {
		case nil:
			size += 4
		case bool:
			size += 4
		case string:
			size += len(v) + 2 // escapes only make it longer
		case float64:
			size += floatSize(v, num[:0])
		case json.Number:
			size += len(v)
		case json.RawMessage:
			size += len(v)
		case map[string]any:
			size += 1 + len(v) // braces and separators
			for k, e := range v {
				size += len(k) + 3
				if size > budget || !walk(e) {
					return false
				}
			}
		case []any:
			size += 1 + max(len(v), 1)
			for _, e := range v {
				if size > budget || !walk(e) {
					return false
				}
			}
		default:
			raw, err := json.Marshal(v)
			if err != nil {
				return true // the encoding that follows reports it
			}
			size += len(raw)
		}
		return size <= budget
	}
	if !walk(v) {
		return max(size, budget+1)
	}
	return size
}

// floatSize is the length of f as encoding/json writes it: as 'f' within
// [1e-6, 1e21), as 'e' outside with a one-digit exponent unpadded. buf is
// scratch space.
func floatSize(f float64, buf []byte) int {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b := strconv.AppendFloat(buf, f, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		return n - 1 // e-07 is written e-7
	}
	return len(b)
}

// elicitBudget is what one call of an imported tool may still ask the
// client's elicitation handler.
type elicitBudget struct {
	left   atomic.Int64
	max    int
	over   atomic.Bool
	cancel context.CancelCauseFunc
}

// take charges one elicitation; false once the budget is spent, and then
// the call is cancelled.
func (b *elicitBudget) take() bool {
	if b.left.Add(-1) >= 0 {
		return true
	}
	b.over.Store(true)
	b.cancel(b.err())
	return false
}

func (b *elicitBudget) err() error {
	return fmt.Errorf("the server asked for more than %d elicitations in one call (ImportConfig.MaxElicitations)", b.max)
}

type elicitBudgetKey struct{}

// elicitChargedKey marks an elicitation already charged, so that a handler
// wrapped twice (by the caller and by Connect) charges it once.
type elicitChargedKey struct{}

// inflight holds the budgets of the imported calls running on each
// session: an elicitation that reaches the handler without its call's
// context (the server-initiated requests of protocol versions before
// 2026-07-28) is charged to every call running on its session.
var inflight = struct {
	sync.Mutex
	calls map[*mcp.ClientSession]map[*elicitBudget]struct{}
}{calls: map[*mcp.ClientSession]map[*elicitBudget]struct{}{}}

// startBudget gives a call a budget of max elicitations: a context that
// carries it and that is cancelled when it is spent, and the function
// that ends it.
func startBudget(ctx context.Context, session *mcp.ClientSession, max int) (context.Context, *elicitBudget, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	b := &elicitBudget{max: max, cancel: cancel}
	b.left.Store(int64(max))
	inflight.Lock()
	calls := inflight.calls[session]
	if calls == nil {
		calls = map[*elicitBudget]struct{}{}
		inflight.calls[session] = calls
	}
	calls[b] = struct{}{}
	inflight.Unlock()
	return context.WithValue(ctx, elicitBudgetKey{}, b), b, func() {
		inflight.Lock()
		delete(calls, b)
		if len(calls) == 0 {
			delete(inflight.calls, session)
		}
		inflight.Unlock()
		cancel(nil)
	}
}

// LimitElicitations wraps a client's elicitation handler
// ([mcp.ClientOptions].ElicitationHandler) so that one call of a
// [RemoteTool] cannot make it answer more than [ImportConfig].MaxElicitations
// elicitations: the one past the bound is refused with an error, without
// calling handler, and the call is cancelled and fails with an error
// wrapping [ErrRemoteCall] that names the limit. Elicitations outside the
// calls of imported tools pass through.
//
// An elicitation sent within a call (MCP 2026-07-28, the SDK's own
// multi-round-trip handling) is charged to that call. One the server sends
// as a request of its own (older protocol versions) cannot be told apart:
// it is charged to every imported call running on the session, so that no
// call answers more than its bound. A nil handler stays nil: the client
// then offers no elicitation at all. [Connect] wraps the handler it is
// given; a handler wrapped more than once is charged once per elicitation.
func LimitElicitations(handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if handler == nil {
		return nil
	}
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		if ctx.Value(elicitChargedKey{}) != nil {
			return handler(ctx, req) // charged by an outer LimitElicitations
		}
		ctx = context.WithValue(ctx, elicitChargedKey{}, true)
		if b, ok := ctx.Value(elicitBudgetKey{}).(*elicitBudget); ok {
			if !b.take() {
				return nil, b.err()
			}
			return handler(ctx, req)
		}
		if req != nil && req.Session != nil {
			inflight.Lock()
			var spent *elicitBudget
			for b := range inflight.calls[req.Session] {
				if !b.take() {
					spent = b
				}
			}
			inflight.Unlock()
			if spent != nil {
				return nil, spent.err()
			}
		}
		return handler(ctx, req)
	}
}
