package toolmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

// countingConn counts the bytes the client reads from its end of a pipe.
type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// pipeTransports connects a server and a client over newline-delimited
// JSON on a pipe; read counts the bytes the client reads.
func pipeTransports(read *atomic.Int64) (server, client *mcp.IOTransport) {
	s, c := net.Pipe()
	cc := countingConn{Conn: c, read: read}
	return &mcp.IOTransport{Reader: s, Writer: s}, &mcp.IOTransport{Reader: cc, Writer: cc}
}

// countingBody counts the bytes the client reads from HTTP response bodies.
type countingRoundTripper struct{ read *atomic.Int64 }

type countingBody struct {
	io.ReadCloser
	read *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	return n, err
}

func (rt countingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		resp.Body = countingBody{ReadCloser: resp.Body, read: rt.read}
	}
	return resp, err
}

// endlessListing makes s answer every tools/list with page tools and a
// next cursor, and counts the pages it sent.
func endlessListing(s *mcp.Server, page int, pages *atomic.Int64) {
	tools := make([]*mcp.Tool, page)
	for i := range tools {
		tools[i] = &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}}
	}
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			n := pages.Add(1)
			for i, t := range tools {
				t.Name = "t" + itoa(int(n)*page+i)
			}
			return &mcp.ListToolsResult{Tools: tools, NextCursor: "more"}, nil
		}
	})
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

func allocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestMeasureHostilePeers measures what a hostile server costs an importing
// client: the figures of issue 24, row 2. It is skipped unless
// TOOLMCP_MEASURE is set; the figures are logged, not asserted.
func TestMeasureHostilePeers(t *testing.T) {
	if os.Getenv("TOOLMCP_MEASURE") == "" {
		t.Skip("set TOOLMCP_MEASURE=1 to measure")
	}
	t.Run("endless listing", func(t *testing.T) {
		var pages, read atomic.Int64
		s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "v1"}, nil)
		endlessListing(s, 100, &pages)
		st, ct := pipeTransports(&read)
		ss, err := s.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: modern})
		require.NoError(t, err)
		defer cs.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		before, start := allocated(), time.Now()
		_, err = toolmcp.Import(ctx, cs, toolmcp.ImportConfig{})
		t.Logf("err=%v pages=%d tools<=%d read=%d B alloc=%d B in %v", err, pages.Load(), 100*pages.Load(), read.Load(), allocated()-before, time.Since(start))
	})
	t.Run("100 MiB result over streamable HTTP", func(t *testing.T) {
		// The SDK's server answers everything but the call, which is
		// written on the fly, so that the process's figures are the
		// client's.
		s := hostile()
		s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, nil
		})
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
		chunk := []byte(strings.Repeat("x", 1<<20))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"`)
				for range 100 {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
				_, _ = io.WriteString(w, `"}]}}`)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
			h.ServeHTTP(w, r)
		}))
		defer srv.Close()
		var read atomic.Int64
		transport := measuredTransport(t, &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: countingRoundTripper{&read}}})
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(t.Context(), transport, &mcp.ClientSessionOptions{ProtocolVersion: modern})
		require.NoError(t, err)
		defer cs.Close()
		b, inv := prepared(t, cs, toolmcp.ImportConfig{}, "big")
		runtime.GC()
		read.Store(0)
		before, start := allocated(), time.Now()
		_, err = b.Call(t.Context(), inv)
		t.Logf("err=%.300v read=%d B alloc=%d B in %v", err, read.Load(), allocated()-before, time.Since(start))
	})
	t.Run("8 MB schema, Import's own work", func(t *testing.T) {
		tree := bigSchema(200_000)
		runtime.GC()
		before, start := allocated(), time.Now()
		raw, err := json.Marshal(tree)
		require.NoError(t, err)
		err = tool.Definition{Name: "huge", InputSchema: raw}.Validate()
		t.Logf("as before (encode, then the core's check): err=%.120v alloc=%d B in %v", err, allocated()-before, time.Since(start))
		runtime.GC()
		before, start = allocated(), time.Now()
		_, err = toolmcp.MarshalBounded(tree, toolmcp.DefaultMaxSchemaBytes, "the input schema")
		t.Logf("bounded: err=%v alloc=%d B in %v", err, allocated()-before, time.Since(start))
	})
	t.Run("8 MB schema", func(t *testing.T) {
		props := map[string]any{}
		for i := 0; len(props) < 8<<20/40; i++ {
			props["property_"+itoa(i)] = map[string]any{"type": "string", "minLength": 1}
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "v1"}, nil)
		s.AddTool(&mcp.Tool{Name: "huge", InputSchema: map[string]any{"type": "object", "properties": props}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, nil
		})
		var read atomic.Int64
		st, ct := pipeTransports(&read)
		ss, err := s.Connect(t.Context(), st, nil)
		require.NoError(t, err)
		defer ss.Close()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: modern})
		require.NoError(t, err)
		defer cs.Close()
		runtime.GC()
		before, start := allocated(), time.Now()
		res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
		require.NoError(t, err)
		t.Logf("refused=%.160v read=%d B alloc=%d B in %v", res.Refused, read.Load(), allocated()-before, time.Since(start))
	})
	t.Run("elicitations of one call", func(t *testing.T) {
		s := mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "v1"}, nil)
		s.AddTool(&mcp.Tool{Name: "nag", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for range 2000 {
				if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "again?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
		var asked atomic.Int32
		cs := connect(t, s, measuredOptions(&mcp.ClientOptions{ElicitationHandler: approving(&asked)}), legacy)
		b, inv := prepared(t, cs, toolmcp.ImportConfig{}, "nag")
		start := time.Now()
		_, err := b.Call(t.Context(), inv)
		t.Logf("err=%v answered=%d in %v", err, asked.Load(), time.Since(start))
	})
}

// measuredTransport bounds the client's messages with the default limit.
func measuredTransport(t *testing.T, tr mcp.Transport) mcp.Transport {
	limited, err := toolmcp.LimitTransport(tr, 0)
	require.NoError(t, err)
	return limited
}

// measuredOptions bounds the elicitations of each imported call.
func measuredOptions(o *mcp.ClientOptions) *mcp.ClientOptions {
	o.ElicitationHandler = toolmcp.LimitElicitations(o.ElicitationHandler)
	return o
}
