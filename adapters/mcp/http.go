package toolmcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// HTTPHandler wraps the SDK's streamable HTTP handler (what
// mcp.NewStreamableHTTPHandler returns) so that the tools AddTools serves
// see each HTTP request that carries a call:
//
//   - the exact bytes of a retry's answer. The SDK decodes the body into
//     Go values before any handler runs, and the answer of an input
//     request (inputResponses, an elicitation result's content) would
//     otherwise reach dispatch.Dispatcher.Resume re-encoded from a Go
//     map: a duplicate member collapsed to its last value, invalid UTF-8
//     replaced by U+FFFD, and numbers rounded to float64. Behind
//     HTTPHandler the answer is the JSON text the client sent, judged by
//     the response schema like any argument: a duplicate member or
//     invalid UTF-8 is refused with a JSON-RPC error (invalid params) and
//     nothing runs, and 9007199254740993 is that number. The body is read
//     as the SDK reads it, escapes undone: a method spelt "tools\/call",
//     or a member name spelt with \u escapes, is the same name, and two
//     members of one name however spelt are a duplicate. A retry sent in
//     a JSON-RPC batch (protocol versions before 2025-06-18) is refused
//     the same way: only a request sent alone has its answer read exactly.
//   - the request's lifetime. A call is cancelled (its ctx ends) when the
//     HTTP request carrying it ends before the result was written — the
//     client dropped the connection. The SDK cancels a call on
//     notifications/cancelled, but on a stateful server a dropped
//     connection alone would leave the call running; behind HTTPHandler it
//     does not. A client that means to resume a dropped stream (the
//     Last-Event-ID of protocol versions before 2026-07-28) gets the
//     cancelled call's result.
//
// HTTPHandler reads the body of each POST, up to
// mcp.DefaultMaxRequestBodyBytes, before the SDK does; a longer body is
// passed on unread and its answer, if any, is judged as on the transports
// below. It sets a header of its own on the request (any the client sent
// under that name is removed) naming an entry that lives while the
// request is served.
//
// Without HTTPHandler — over stdio, in-memory transports, or an HTTP
// handler not wrapped — the bridge sees only the SDK's decoded answer, and
// this is lost: a duplicate member (the last one wins, unnoticed), the
// difference between invalid UTF-8 and U+FFFD, and number text (1.0 and 1,
// digits beyond float64's precision). The bridge refuses there what it can
// tell might have changed: an integer whose magnitude is 2^53 or more (it
// may have been rounded) and a string or member name holding U+FFFD (it
// may have replaced invalid UTF-8), each a JSON-RPC error (invalid
// params). The answers a client before 2026-07-28 gives to a
// server-initiated elicitation arrive decoded on every transport and are
// judged the same way.
func HTTPHandler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(requestHeader)
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, mcp.DefaultMaxRequestBodyBytes+1))
		entry := &httpRequest{ctx: r.Context()}
		if err == nil && len(body) <= mcp.DefaultMaxRequestBodyBytes {
			entry.body = body
		}
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		token := rand.Text()
		httpRequests.Store(token, entry)
		defer httpRequests.Delete(token)
		r.Header.Set(requestHeader, token)
		next.ServeHTTP(w, r)
	})
}

// requestHeader names the entry of httpRequests for the HTTP request
// being served.
const requestHeader = "Toolmcp-Http-Request"

// httpRequest is what HTTPHandler keeps of an HTTP request while it is
// served.
type httpRequest struct {
	ctx  context.Context
	body []byte // nil when too long to keep
}

// httpRequests holds the requests HTTPHandler serves, by random token.
var httpRequests sync.Map

// httpRequestOf returns the HTTP request that carried req, when it came
// through HTTPHandler.
func httpRequestOf(req *mcp.CallToolRequest) *httpRequest {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return nil
	}
	token := req.Extra.Header.Get(requestHeader)
	if token == "" {
		return nil
	}
	v, ok := httpRequests.Load(token)
	if !ok {
		return nil
	}
	return v.(*httpRequest)
}

// errDisconnected ends the ctx of a call whose HTTP request ended first.
var errDisconnected = errors.New("the HTTP request carrying the call ended: the client disconnected")

// withRequest returns ctx, cancelled also when the HTTP request that
// carried req ends, and the function that releases it.
func withRequest(ctx context.Context, req *mcp.CallToolRequest) (context.Context, func()) {
	hr := httpRequestOf(req)
	if hr == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(hr.ctx, func() { cancel(errDisconnected) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// rawAnswer returns the exact text of the content of the answer to
// inputID in the body of the HTTP request that carried req: found is false
// when there is no such body or it carries no such answer (a body too
// long to keep, a call the SDK re-ran with an answer it asked for itself).
// A content that is absent or null is nil. The body is read as the SDK
// reads it, escapes undone: the method "tools\/call" is tools/call, and
// the member "p\u0061rams" is params. A body in which a member on the way
// to the answer appears twice, however spelt, is an error: the SDK kept
// one of them, and which one is not to be guessed. So is a batch that
// carries an answer (protocol versions before 2025-06-18 allow batches,
// and none of its messages can be told to be req's).
func rawAnswer(req *mcp.CallToolRequest) (content []byte, found bool, err error) {
	hr := httpRequestOf(req)
	if hr == nil || hr.body == nil {
		return nil, false, nil
	}
	v := bytes.TrimSpace(hr.body)
	if len(v) > 0 && v[0] == '[' {
		return nil, false, refuseBatchAnswer(v)
	}
	if len(v) == 0 || v[0] != '{' {
		return nil, false, nil
	}
	method, ok, err := member(v, "method")
	if err != nil || !ok {
		return nil, false, err
	}
	if name, ok := jsonString(method); !ok || name != "tools/call" {
		return nil, false, nil
	}
	for _, name := range []string{"params", "inputResponses", inputID} {
		if v, ok, err = member(v, name); err != nil || !ok {
			return nil, false, err
		}
	}
	if _, _, err := member(v, "action"); err != nil {
		return nil, false, err
	}
	content, _, err = member(v, "content")
	if err != nil {
		return nil, false, err
	}
	if string(content) == "null" {
		content = nil
	}
	return content, true, nil
}

// refuseBatchAnswer refuses the JSON-RPC batch body when one of its
// messages carries input responses: the exact text of an answer is kept
// only for a request sent alone.
func refuseBatchAnswer(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '[' {
		return nil // not a batch the SDK reads either
	}
	for dec.PeekKind() != ']' {
		msg, err := dec.ReadValue()
		if err != nil {
			return errprefix.Errorf("%w: the request body is not valid JSON: %v", dispatch.ErrInvalidAnswer, err)
		}
		params, ok, err := member(msg, "params")
		if err != nil || !ok {
			continue
		}
		if _, ok, err := member(params, "inputResponses"); err != nil || ok {
			return errprefix.Errorf("%w: a retry that answers a request for input must be sent alone, not in a JSON-RPC batch", dispatch.ErrInvalidAnswer)
		}
	}
	return nil
}

// jsonString returns the value of the JSON string raw, escapes undone,
// and false when raw is not a string.
func jsonString(raw []byte) (string, bool) {
	tok, err := jsontext.NewDecoder(bytes.NewReader(raw), jsontext.AllowInvalidUTF8(true)).ReadToken()
	if err != nil || tok.Kind() != '"' {
		return "", false
	}
	return tok.String(), true
}

// member returns the value of the member name of the JSON object obj, as
// written; duplicate members and invalid UTF-8 are let through, but a
// second member called name is an error. Member names are compared with
// their escapes undone, as the SDK's decoder reads them.
func member(obj []byte, name string) (value []byte, found bool, err error) {
	dec := jsontext.NewDecoder(bytes.NewReader(obj), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() != '{' {
		return nil, false, nil
	}
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, false, errprefix.Errorf("%w: the request body is not valid JSON: %v", dispatch.ErrInvalidAnswer, err)
		}
		key := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, false, errprefix.Errorf("%w: the request body is not valid JSON: %v", dispatch.ErrInvalidAnswer, err)
		}
		if key != name {
			continue
		}
		if found {
			return nil, false, errprefix.Errorf("%w: the request has a duplicate member %q on the way to the answer", dispatch.ErrInvalidAnswer, name)
		}
		value, found = bytes.Clone(v), true
	}
	return value, found, nil
}

// maxExact is 2^53: float64 holds every integer of smaller magnitude.
const maxExact = 1 << 53

// checkDecoded refuses a decoded answer that may differ from what the
// client sent: an integer of magnitude 2^53 or more (float64 may have
// rounded it) or a string or member name holding U+FFFD (the decoder puts
// it in place of invalid UTF-8).
func checkDecoded(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if strings.ContainsRune(k, utf8.RuneError) {
				return errprefix.Errorf("%w: member name %q at %s holds U+FFFD, which may stand for invalid UTF-8 the client sent; over this transport the answer cannot be checked", dispatch.ErrInvalidAnswer, k, at)
			}
			if err := checkDecoded(e, at+"/"+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkDecoded(e, fmt.Sprintf("%s/%d", at, i)); err != nil {
				return err
			}
		}
	case string:
		if strings.ContainsRune(v, utf8.RuneError) {
			return errprefix.Errorf("%w: the string at %s holds U+FFFD, which may stand for invalid UTF-8 the client sent; over this transport the answer cannot be checked", dispatch.ErrInvalidAnswer, at)
		}
	case float64:
		if math.Abs(v) >= maxExact && v == math.Trunc(v) {
			return errprefix.Errorf("%w: the number at %s has a magnitude of 2^53 or more and may have been rounded; over this transport the answer cannot be checked exactly", dispatch.ErrInvalidAnswer, at)
		}
	}
	return nil
}
