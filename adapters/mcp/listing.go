package toolmcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// A page of tools/list costs the SDK a tree of Go values for every
// schema, some thirty times the page's bytes, and its session keeps the
// trees. Over streamable HTTP, a transport Connect bounded reads the pages
// Import asks for itself: it counts the tools against what the listing
// may still hold and refuses the page before anything is built, and it
// takes each schema out as the bytes the server sent, handing the SDK
// {"type":"object"} in its place. Import then checks and compiles those
// bytes. A page costs about three times its bytes: the body, the page the
// SDK decodes, and the schemas kept for Import.

// listingKey carries a *listing in the context of Import's tools/list
// requests.
type listingKey struct{}

// placeholder is what the SDK is handed in place of a schema.
const placeholder = `{"type":"object"}`

// listing is what a bounded transport and Import share while the tools
// are listed: the tools the listing may still hold, and the schemas of
// the page last read.
type listing struct {
	mu        sync.Mutex
	toolsLeft int
	maxTools  int
	page      []rawSchemas
	read      bool  // page holds the schemas of the page last read
	err       error // why the page last read was refused
}

// rawSchemas are the schemas of one listed tool as the server sent them;
// output is nil when the tool has none.
type rawSchemas struct{ input, output []byte }

// take returns the schemas of the page last read, and false when it was
// not read here; and the error that refused it, if any.
func (l *listing) take() ([]rawSchemas, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	page, read, err := l.page, l.read, l.err
	l.page, l.read, l.err = nil, false, nil
	return page, read, err
}

// isListing reports whether req sends a tools/list request.
func isListing(req *http.Request) bool {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return false
	}
	body, err := req.GetBody()
	if err != nil {
		return false
	}
	defer body.Close()
	msg, err := io.ReadAll(io.LimitReader(body, 1<<20))
	if err != nil {
		return false
	}
	method, ok, err := member(msg, "method")
	if err != nil || !ok {
		return false
	}
	name, ok := jsonString(method)
	return ok && name == "tools/list"
}

// readListing reads resp, the answer to a tools/list request of Import
// whose body is what rt bounds, and returns it with the schemas taken
// out, or the error that refuses it as a JSON-RPC error: either way the
// SDK decodes a small page.
func (rt limitRoundTripper) readListing(resp *http.Response, l *listing) (*http.Response, error) {
	stream := strings.HasPrefix(strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Type"))), "text/event-stream")
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var out []byte
	if stream {
		out = rewriteEvents(body, l)
	} else {
		out = rewriteMessage(body, l)
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Del("Content-Length")
	return resp, nil
}

// rewriteEvents rewrites the data of each event of stream that answers
// the listing; the other events pass as they came. It reads the lines of
// stream in place.
func rewriteEvents(stream []byte, l *listing) []byte {
	var out bytes.Buffer
	var data [][]byte
	var fields [][]byte
	flush := func() {
		if data == nil && fields == nil {
			return
		}
		for _, f := range fields {
			out.Write(f)
			out.WriteByte('\n')
		}
		if data != nil {
			msg := data[0]
			if len(data) > 1 {
				msg = bytes.Join(data, []byte("\n"))
			}
			out.WriteString("data: ")
			out.Write(rewriteMessage(msg, l))
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
		data, fields = nil, nil
	}
	for len(stream) > 0 {
		line, rest, _ := bytes.Cut(stream, []byte("\n"))
		stream = rest
		line = bytes.TrimSuffix(line, []byte("\r"))
		switch {
		case len(line) == 0:
			flush()
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" ")))
		default:
			fields = append(fields, line)
		}
	}
	flush()
	return out.Bytes()
}

// rewriteMessage returns msg, a JSON-RPC message, with the schemas of its
// result's tools taken out into l, or a JSON-RPC error for its ID when the
// tools are more than l may still hold, counted before any is kept, or
// when msg cannot be read (the SDK would build what this could not). It
// reads msg as a stream of tokens, keeping nothing but the schemas. A
// message without tools passes as it came, and l notes that no page was
// read here.
func rewriteMessage(msg []byte, l *listing) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	// As lenient as the SDK's decoder, which reads what this passes on.
	lenient := []jsontext.Options{jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true)}
	r := rewriter{dec: jsontext.NewDecoder(bytes.NewBuffer(msg), lenient...), left: l.toolsLeft}
	r.enc = jsontext.NewEncoder(&r.out, lenient...)
	id, err := r.message()
	switch {
	case errors.Is(err, errTooManyTools):
		l.err = fmt.Errorf("the server lists more than %d tools (ImportConfig.MaxTools)", l.maxTools)
	case err != nil:
		// Not passed on: the SDK would build what this could not read.
		l.err = fmt.Errorf("the server's page of tools is not a JSON-RPC message: %v", err)
	case !r.listed:
		return msg // an error, or a result without tools: small
	default:
		l.page, l.read = r.page, true
		return r.out.Bytes()
	}
	if id == nil {
		id = jsontext.Value("null")
	}
	text, _ := json.Marshal(l.err.Error())
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32603,"message":%s}}`, id, text)
}

var errTooManyTools = errors.New("too many tools")

// rewriter copies a listing from dec to enc, the schemas taken out.
type rewriter struct {
	dec    *jsontext.Decoder
	enc    *jsontext.Encoder
	out    bytes.Buffer
	left   int // tools the page may hold
	page   []rawSchemas
	listed bool // a result with tools was read
}

// message copies the message, and returns its ID.
func (r *rewriter) message() (id jsontext.Value, err error) {
	err = r.object(func(name string) error {
		switch name {
		case "id":
			v, err := r.dec.ReadValue()
			if err != nil {
				return err
			}
			id = bytes.Clone(v)
			return r.enc.WriteValue(v)
		case "result":
			return r.object(func(name string) error {
				if name != "tools" {
					return r.copyValue()
				}
				r.listed = true
				return r.tools()
			})
		}
		return r.copyValue()
	})
	return id, err
}

// tools copies the array of tools, refusing it at the first tool past
// r.left.
func (r *rewriter) tools() error {
	if err := r.expect('['); err != nil {
		return err
	}
	for r.dec.PeekKind() != ']' {
		if len(r.page) == r.left {
			return errTooManyTools
		}
		var s rawSchemas
		err := r.object(func(name string) error {
			switch name {
			case "inputSchema", "outputSchema":
				v, err := r.dec.ReadValue()
				if err != nil {
					return err
				}
				if name == "outputSchema" && v.Kind() == 'n' {
					return r.enc.WriteValue(v)
				}
				kept := compact(v)
				if name == "inputSchema" {
					s.input = kept
				} else {
					s.output = kept
				}
				return r.enc.WriteValue(jsontext.Value(placeholder))
			}
			return r.copyValue()
		})
		if err != nil {
			return err
		}
		r.page = append(r.page, s)
	}
	return r.copyToken() // ]
}

// object copies an object, calling member for each member name once the
// name is copied: member copies the value.
func (r *rewriter) object(member func(name string) error) error {
	if err := r.expect('{'); err != nil {
		return err
	}
	for r.dec.PeekKind() != '}' {
		tok, err := r.dec.ReadToken()
		if err != nil {
			return err
		}
		if err := r.enc.WriteToken(tok); err != nil {
			return err
		}
		if err := member(tok.String()); err != nil {
			return err
		}
	}
	return r.copyToken() // }
}

// expect copies the next token, which must be of kind k.
func (r *rewriter) expect(k jsontext.Kind) error {
	if r.dec.PeekKind() != k {
		return fmt.Errorf("want %v, got %v", k, r.dec.PeekKind())
	}
	return r.copyToken()
}

func (r *rewriter) copyToken() error {
	tok, err := r.dec.ReadToken()
	if err != nil {
		return err
	}
	return r.enc.WriteToken(tok)
}

func (r *rewriter) copyValue() error {
	v, err := r.dec.ReadValue()
	if err != nil {
		return err
	}
	return r.enc.WriteValue(v)
}

// compact is v without insignificant whitespace, or v when it is not
// valid JSON (the core refuses it then).
func compact(v jsontext.Value) []byte {
	c := bytes.Clone(v)
	if (*jsontext.Value)(&c).Compact() != nil {
		return v
	}
	return c
}
