package toolmcp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// LimitTransport returns a copy of transport that refuses, while reading
// it, any message from the server longer than maxMessageBytes (0 means
// [DefaultMaxMessageBytes]): the connection fails as soon as the bound is
// passed, before the message is decoded, so a server cannot make the client
// read, buffer and decode an answer of any size. Over streamable HTTP, the
// event stream that answers a request (a POST, or the GET that resumes its
// stream) is also bounded as a whole, by [DefaultMaxStreamEvents] and
// [DefaultMaxStreamBytes]; a resumed stream counts on from the one it
// resumes. The calls waiting on the connection end with an error, which an
// imported tool reports as [ErrRemoteCall] (an unknown outcome).
//
// Import bounds what it does with a result, a listing or a schema once the
// SDK has decoded it; only the transport can bound the bytes read before
// that. [Connect] applies LimitTransport, with limits of its config; use
// LimitTransport directly for a session made otherwise (and then tell
// [Import] so, with [ImportConfig].UnboundedSession).
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
	return limitTransport(transport, transportLimits{message: n, streamEvents: DefaultMaxStreamEvents, streamBytes: DefaultMaxStreamBytes})
}

// transportLimits are the resolved bounds of a transport: a stream bound
// of 0 is off.
type transportLimits struct {
	message, streamEvents, streamBytes int
}

// limitTransport is LimitTransport with every bound given.
func limitTransport(transport mcp.Transport, l transportLimits) (mcp.Transport, error) {
	n := l.message
	var bounded mcp.Transport
	switch t := transport.(type) {
	case *mcp.StreamableClientTransport:
		bounded = boundCopy(t, func(c *mcp.StreamableClientTransport) {
			c.MaxEventSize = n
			c.HTTPClient = limitClient(c.HTTPClient, l)
		})
	case *mcp.SSEClientTransport:
		bounded = boundCopy(t, func(c *mcp.SSEClientTransport) {
			c.MaxEventSize = n
			c.HTTPClient = limitClient(c.HTTPClient, transportLimits{message: n}) // one stream carries the session
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
// response bodies fail past l.message bytes, except event streams, whose
// events fail past it; the event stream that answers a POST (one request
// and what precedes its response) also fails past l.streamEvents events or
// l.streamBytes bytes, when they are not 0.
func limitClient(client *http.Client, l transportLimits) *http.Client {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = limitRoundTripper{base: base, limits: l, ledger: &streamLedger{used: map[string]streamUse{}}}
	return &c
}

type limitRoundTripper struct {
	base   http.RoundTripper
	limits transportLimits
	ledger *streamLedger
}

// streamUse is what a bounded event stream has read so far.
type streamUse struct{ events, bytes int64 }

// streamLedger keeps what each bounded stream that ended had read, by the
// ID of its last event, so that the stream a client resumes from that ID
// (a GET with Last-Event-ID) goes on counting from there: a server cannot
// reset the bounds by ending the stream and letting the client resume it.
// It holds the last maxLedger streams.
type streamLedger struct {
	mu    sync.Mutex
	used  map[string]streamUse
	order []string
}

const maxLedger = 1024

func (l *streamLedger) put(id string, u streamUse) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.used[id]; !ok {
		l.order = append(l.order, id)
		if len(l.order) > maxLedger {
			delete(l.used, l.order[0])
			l.order = l.order[1:]
		}
	}
	l.used[id] = u
}

// get returns what the stream whose last event was id had read. The
// entry stays: a resumption refused, or one that fails, may be tried
// again from the same ID.
func (l *streamLedger) get(id string) streamUse {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.used[id]
}

func (rt limitRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.bound(req)
	if err != nil || resp.Body == nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	if l, ok := req.Context().Value(listingKey{}).(*listing); ok && isListing(req) {
		return rt.readListing(resp, l)
	}
	return resp, nil
}

// bound makes the request and bounds the body of its response.
func (rt limitRoundTripper) bound(req *http.Request) (*http.Response, error) {
	resp, err := rt.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	limit := int64(rt.limits.message)
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type"))), "text/event-stream") {
		// A stream has no length; each event of it is bounded instead,
		// while it is read (the SDK's MaxEventSize checks only what its
		// reader has already taken from the body).
		body := &eventBody{body: resp.Body, limit: limit + eventOverhead}
		resumed := req.Header.Get("Last-Event-ID")
		if req.Method == http.MethodPost || resumed != "" {
			// The answer to one request, or its resumption: bounded as a
			// whole too, the resumption counting on from the stream it
			// resumes. The stream a plain GET opens carries the
			// session's notifications for as long as it lives, and is
			// bounded per event only.
			body.maxEvents, body.maxBytes = int64(rt.limits.streamEvents), int64(rt.limits.streamBytes)
			body.ledger = rt.ledger
			if resumed != "" {
				u := rt.ledger.get(resumed)
				body.events, body.total = u.events, u.bytes
				if err := body.over(); err != nil {
					// Refused with a status the client does not retry:
					// an error would be retried, each time refused.
					resp.Body.Close()
					return refusal(req, err), nil
				}
			}
		}
		resp.Body = body
		return resp, nil
	}
	if resp.ContentLength > limit {
		resp.Body.Close()
		return nil, tooLarge(limit)
	}
	resp.Body = &limitedBody{body: resp.Body, left: limit, limit: limit}
	return resp, nil
}

// refusal is the response that refuses req, with err as a JSON-RPC error
// for the client to report.
func refusal(req *http.Request, err error) *http.Response {
	text, _ := json.Marshal(err.Error())
	body := `{"jsonrpc":"2.0","id":"refused","error":{"code":-32603,"message":` + string(text) + `}}`
	return &http.Response{
		Status:        "413 Content Too Large",
		StatusCode:    http.StatusRequestEntityTooLarge,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
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
// bytes up to a blank line) is longer than limit, or the stream holds
// more than maxEvents events or maxBytes bytes (each bound off when 0): it
// never asks body for more than the current event, or the stream, may
// still hold, plus one byte. Once failed, it fails every read. With a
// ledger, it leaves there what it read, under the ID of its last event,
// when closed.
type eventBody struct {
	body                io.ReadCloser
	limit               int64
	maxEvents, maxBytes int64
	ledger              *streamLedger
	event               int64  // bytes of the current event so far
	line                int    // bytes of the current line so far, without CR
	head                []byte // the current line's first bytes, enough for an id field
	pendingID           string // the id field of the event being read
	lastID              string // the ID of the last event ended
	deliveredID         string // the ID of the last event handed to the reader
	events, total       int64  // events ended and bytes read so far
	err                 error
}

// maxIDField bounds the id fields an eventBody keeps; a longer ID is not
// one the ledger can follow.
const maxIDField = 256

func (b *eventBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	room := b.limit - b.event + 1
	if b.maxBytes > 0 {
		room = min(room, b.maxBytes-b.total+1)
	}
	if int64(len(p)) > room {
		p = p[:room]
	}
	n, err := b.body.Read(p)
	b.total += int64(n)
	for _, c := range p[:n] {
		b.event++
		switch c {
		case '\n':
			if b.line == 0 {
				b.event = 0 // a blank line ends the event
				b.events++
				if b.pendingID != "" {
					b.lastID, b.pendingID = b.pendingID, ""
				}
			} else if id, ok := bytes.CutPrefix(b.head, []byte("id:")); ok && b.line <= maxIDField {
				b.pendingID = string(bytes.TrimPrefix(id, []byte(" ")))
			}
			b.line, b.head = 0, b.head[:0]
		case '\r':
		default:
			if b.line < maxIDField {
				b.head = append(b.head, c)
			}
			b.line++
		}
	}
	if b.err = b.over(); b.err != nil {
		return 0, b.err
	}
	b.deliveredID = b.lastID
	return n, err
}

// over is the error of a stream past one of its bounds, or nil.
func (b *eventBody) over() error {
	switch {
	case b.event > b.limit:
		return tooLarge(b.limit - eventOverhead)
	case b.maxBytes > 0 && b.total > b.maxBytes:
		return errprefix.Errorf("%w: the server's event stream is longer than the transport's limit of %d bytes (ConnectConfig.MaxStreamBytes)", ErrRemoteCall, b.maxBytes)
	case b.maxEvents > 0 && b.events > b.maxEvents:
		return errprefix.Errorf("%w: the server's event stream holds more than the transport's limit of %d events (ConnectConfig.MaxStreamEvents)", ErrRemoteCall, b.maxEvents)
	}
	return nil
}

func (b *eventBody) Close() error {
	if b.ledger != nil {
		// The reader resumes from the last event it was handed; the
		// last one read is recorded too, in case it was handed over.
		for _, id := range []string{b.deliveredID, b.lastID} {
			if id != "" {
				b.ledger.put(id, streamUse{events: b.events, bytes: b.total})
			}
		}
	}
	return b.body.Close()
}
