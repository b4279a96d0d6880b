package toolmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The limits [Import] and the tools it returns apply when a field of
// [ImportConfig] is zero, and the one [LimitTransport] applies when given
// zero. Each bounds what a remote server can make this client read, hold
// or do; every one is checked before the cost it bounds is paid.
const (
	// DefaultMaxPages bounds the pages of one tools/list listing.
	DefaultMaxPages = 100
	// DefaultMaxTools bounds the tools of one listing, all pages together.
	DefaultMaxTools = 1000
	// DefaultMaxSchemaBytes bounds one schema a server sends: a tool's
	// input or output schema, or the form of a request for input. It is
	// the core's own bound on a schema document, [tool.MaxInputBytes].
	DefaultMaxSchemaBytes = tool.MaxInputBytes
	// DefaultMaxElicitations bounds the elicitations one call of an
	// imported tool may ask the client's handler (see [LimitElicitations]).
	DefaultMaxElicitations = 10
	// DefaultImportTimeout bounds one call of [Import], every page of the
	// listing included.
	DefaultImportTimeout = time.Minute
	// DefaultMaxMessageBytes bounds one message read from the server by a
	// transport made with [LimitTransport]: twice [tool.MaxOutputBytes],
	// room for the largest result the core admits and the text copy of
	// its structured content that servers add.
	DefaultMaxMessageBytes = 2 * tool.MaxOutputBytes
)

// limits are the resolved limits of an [ImportConfig].
type limits struct {
	pages, tools, schemaBytes, elicitations int
	timeout                                 time.Duration
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
		if *f.to, err = orDefault("ImportConfig."+f.name, f.value, f.fallback); err != nil {
			return limits{}, err
		}
	}
	switch {
	case config.Timeout < 0:
		return limits{}, errprefix.Errorf("%w: ImportConfig.Timeout is %v, want 0 (the default, %v) or more", ErrInvalidConfig, config.Timeout, DefaultImportTimeout)
	case config.Timeout == 0:
		l.timeout = DefaultImportTimeout
	default:
		l.timeout = config.Timeout
	}
	return l, nil
}

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

// LimitTransport returns a copy of transport that refuses, while reading
// it, any message from the server longer than maxMessageBytes (0 means
// [DefaultMaxMessageBytes]): the connection fails as soon as the bound is
// passed, before the message is decoded, so a server cannot make the client
// read, buffer and decode an answer of any size. The calls waiting on the
// connection end with an error, which an imported tool reports as
// [ErrRemoteCall] (an unknown outcome).
//
// Import bounds what it does with a result, a listing or a schema once the
// SDK has decoded it; only the transport can bound the bytes read before
// that. Make the client's transport with LimitTransport to give [Import]
// and every [RemoteTool] a bound per result.
//
// Supported transports, each copied and never changed:
//   - [*mcp.StreamableClientTransport]: a JSON response body is read through
//     a reader that fails past the bound (the SDK reads it whole and has no
//     bound of its own), and each server-sent event is bounded by setting
//     MaxEventSize; HTTPClient is copied with its Transport wrapped;
//   - [*mcp.SSEClientTransport]: MaxEventSize, and response bodies as above;
//   - [*mcp.IOTransport] and [*mcp.StdioTransport]: MaxLineLength.
//
// Another transport is refused with an error wrapping [ErrInvalidConfig]:
// the SDK's in-memory and command transports take no bound (both stop at
// the SDK's own 16 MiB); use an [mcp.IOTransport] over the command's pipes
// to choose one. A negative maxMessageBytes, or a nil transport, is
// refused the same way.
func LimitTransport(transport mcp.Transport, maxMessageBytes int) (mcp.Transport, error) {
	n, err := orDefault("the message limit", maxMessageBytes, DefaultMaxMessageBytes)
	if err != nil {
		return nil, err
	}
	var bounded mcp.Transport
	switch t := transport.(type) {
	case *mcp.StreamableClientTransport:
		bounded = boundCopy(t, func(c *mcp.StreamableClientTransport) {
			c.MaxEventSize = n
			c.HTTPClient = limitClient(c.HTTPClient, n)
		})
	case *mcp.SSEClientTransport:
		bounded = boundCopy(t, func(c *mcp.SSEClientTransport) {
			c.MaxEventSize = n
			c.HTTPClient = limitClient(c.HTTPClient, n)
		})
	case *mcp.IOTransport:
		bounded = boundCopy(t, func(c *mcp.IOTransport) { c.MaxLineLength = n })
	case *mcp.StdioTransport:
		bounded = boundCopy(t, func(c *mcp.StdioTransport) { c.MaxLineLength = n })
	default:
		if transport != nil {
			return nil, errprefix.Errorf("%w: LimitTransport cannot bound the messages of a %T; use a streamable HTTP, SSE, IO or stdio transport", ErrInvalidConfig, transport)
		}
	}
	if bounded == nil {
		return nil, errprefix.Errorf("%w: the transport is nil", ErrInvalidConfig)
	}
	return bounded, nil
}

// boundCopy returns a copy of the transport t with bound applied to the
// copy, or nil, not a typed nil, when t is nil. The caller's transport is
// never changed.
func boundCopy[T any, P interface {
	*T
	mcp.Transport
}](t P, bound func(P)) mcp.Transport {
	if t == nil {
		return nil
	}
	c := *t
	bound(&c)
	return P(&c)
}

// limitClient returns a copy of client (or of [http.DefaultClient]) whose
// response bodies, except event streams, fail past limit bytes.
func limitClient(client *http.Client, limit int) *http.Client {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = limitRoundTripper{base: base, limit: int64(limit)}
	return &c
}

type limitRoundTripper struct {
	base  http.RoundTripper
	limit int64
}

func (rt limitRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type"))), "text/event-stream") {
		// A stream has no length; each event of it is bounded instead,
		// while it is read (the SDK's MaxEventSize checks only what its
		// reader has already taken from the body).
		resp.Body = &eventBody{body: resp.Body, limit: rt.limit + eventOverhead}
		return resp, nil
	}
	if resp.ContentLength > rt.limit {
		resp.Body.Close()
		return nil, tooLarge(rt.limit)
	}
	resp.Body = &limitedBody{body: resp.Body, left: rt.limit, limit: rt.limit}
	return resp, nil
}

// tooLarge is the error of a response body past the bound. The SDK reports
// a failed read in its own words, keeping only this text.
func tooLarge(limit int64) error {
	return errprefix.Errorf("%w: the server's response is longer than the transport's limit of %d bytes (LimitTransport)", ErrRemoteCall, limit)
}

// limitedBody reads at most left bytes of body, and fails on the next
// byte.
type limitedBody struct {
	body  io.ReadCloser
	left  int64
	limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells the end of the body from a longer one.
		var one [1]byte
		n, err := b.body.Read(one[:])
		if n > 0 {
			return 0, tooLarge(b.limit)
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.body.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.body.Close() }

// eventOverhead is what an event may hold beyond its message: the
// "data: " prefix of each line, and its event and id fields.
const eventOverhead = 4 << 10

// eventBody reads an event stream and fails as soon as one event (the
// bytes up to a blank line) is longer than limit: it never asks body
// for more than the current event may still hold, plus one byte.
type eventBody struct {
	body  io.ReadCloser
	limit int64
	event int64 // bytes of the current event so far
	line  int   // bytes of the current line so far, without CR
}

func (b *eventBody) Read(p []byte) (int, error) {
	if b.event > b.limit {
		return 0, tooLarge(b.limit - eventOverhead)
	}
	if room := b.limit - b.event + 1; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.body.Read(p)
	for _, c := range p[:n] {
		b.event++
		switch c {
		case '\n':
			if b.line == 0 {
				b.event = 0 // a blank line ends the event
			}
			b.line = 0
		case '\r':
		default:
			b.line++
		}
	}
	if b.event > b.limit {
		return 0, tooLarge(b.limit - eventOverhead)
	}
	return n, err
}

func (b *eventBody) Close() error { return b.body.Close() }

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
// then offers no elicitation at all.
func LimitElicitations(handler func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error)) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	if handler == nil {
		return nil
	}
	return func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
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
