package toolmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

// hostileHTTP serves, over streamable HTTP, a server with one tool "big"
// whose calls are answered by answer instead of the SDK (which would
// build the whole answer first): everything else is the SDK's. resumed,
// when not nil, answers a GET that resumes a stream (Last-Event-ID).
func hostileHTTP(t *testing.T, answer func(w http.ResponseWriter, id string), resumed func(w http.ResponseWriter, lastID string)) *httptest.Server {
	t.Helper()
	s := hostile()
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Last-Event-ID"); r.Method == http.MethodGet && id != "" && resumed != nil {
			resumed(w, id)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
			answer(w, string(msg.ID))
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// writeHuge writes a result whose text is size bytes, in 1 MiB chunks,
// framed by before and after; it stops when the client stops reading.
func writeHuge(w http.ResponseWriter, id string, size int, before, after string) {
	chunk := []byte(strings.Repeat("x", 1<<20))
	_, _ = io.WriteString(w, before+`{"jsonrpc":"2.0","id":`+id+`,"result":{"content":[{"type":"text","text":"`)
	for range size >> 20 {
		if _, err := w.Write(chunk); err != nil {
			return
		}
	}
	_, _ = io.WriteString(w, `"}]}}`+after)
}

// eventIDs numbers the events of every flood, so that each resumed stream
// makes progress in the client's eyes.
var eventIDs atomic.Int64

// flood writes notifications of about eventSize bytes as events, each
// with a new ID when ids is set, until the client stops reading or limit
// bytes are written (a bound for the test, far past the client's).
func flood(w http.ResponseWriter, eventSize int, ids bool, limit int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	data := strings.Repeat("x", eventSize)
	for written := 0; written < limit; {
		id := ""
		if ids {
			id = fmt.Sprintf("id: %d\nretry: 1\n", eventIDs.Add(1)) // resume at once
		}
		n, err := fmt.Fprintf(w, "%sevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":%q}}\n\n", id, data)
		if err != nil {
			return
		}
		written += n
	}
}

// With no options — a session from Connect given only a name and a
// transport, and the zero ImportConfig — a server cannot make an imported
// call read more than the documented bounds, or go on past them. Before
// Connect, a session made with the SDK alone read the whole 100 MiB
// result, and the flood until the caller's ctx ended.
func TestConnectBoundsByDefault(t *testing.T) {
	const slack = 256 << 10 // the reads in flight when a bound is passed
	for _, tc := range []struct {
		name    string
		answer  func(w http.ResponseWriter, id string)
		resumed func(w http.ResponseWriter, lastID string)
		bound   int
		err     string
	}{
		{
			name: "100 MiB result, JSON",
			answer: func(w http.ResponseWriter, id string) {
				w.Header().Set("Content-Type", "application/json")
				writeHuge(w, id, 100<<20, "", "")
			},
			bound: toolmcp.DefaultMaxMessageBytes,
			err:   "longer than the transport's limit of 16777216 bytes",
		},
		{
			name: "100 MiB result, one event",
			answer: func(w http.ResponseWriter, id string) {
				w.Header().Set("Content-Type", "text/event-stream")
				writeHuge(w, id, 100<<20, "event: message\ndata: ", "\n\n")
			},
			bound: toolmcp.DefaultMaxMessageBytes,
		},
		{
			name:   "flood of small events",
			answer: func(w http.ResponseWriter, _ string) { flood(w, 1<<10, false, 1<<30) },
			bound:  toolmcp.DefaultMaxStreamBytes,
		},
		{
			name:   "flood of large events",
			answer: func(w http.ResponseWriter, _ string) { flood(w, 64<<10, false, 1<<30) },
			bound:  toolmcp.DefaultMaxStreamBytes,
		},
		{
			// The stream ends after 12 MiB with an event ID; the client
			// resumes it with a GET, which the server floods again, and
			// so on: the resumptions count on from the stream they
			// resume, and the one past the bound is refused.
			name:    "flood resumed from its last event",
			answer:  func(w http.ResponseWriter, _ string) { flood(w, 8<<10, true, 12<<20) },
			resumed: func(w http.ResponseWriter, _ string) { flood(w, 8<<10, true, 12<<20) },
			bound:   toolmcp.DefaultMaxStreamBytes,
			err:     "the server's event stream is longer than the transport's limit of 33554432 bytes (ConnectConfig.MaxStreamBytes)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int64
			srv := hostileHTTP(t, tc.answer, tc.resumed)
			cs, err := toolmcp.Connect(t.Context(), toolmcp.ConnectConfig{
				Implementation: &mcp.Implementation{Name: "client", Version: "v0"},
				Transport:      &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: countingRoundTripper{&read}}},
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			b, inv := prepared(t, cs, toolmcp.ImportConfig{}, "big")

			// The call's own default bound ends it at the latest; the
			// test's deadline is that bound.
			ctx, cancel := context.WithTimeout(t.Context(), toolmcp.DefaultCallTimeout)
			defer cancel()
			read.Store(0)
			_, err = b.Call(ctx, inv)
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			require.ErrorContains(t, err, tc.err)
			require.NoError(t, ctx.Err(), "the call ended by a bound on what it read, not by the deadline")
			require.LessOrEqual(t, read.Load(), int64(tc.bound+slack), "bytes the client read")
		})
	}
}

// A session Connect did not make is refused by default: Import cannot tell
// whether its reads and elicitations are bounded.
func TestImportRefusesUnboundedSession(t *testing.T) {
	s := (&remote{}).server()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil).Connect(t.Context(), ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	_, err = toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
	require.ErrorIs(t, err, toolmcp.ErrInvalidConfig)
	require.EqualError(t, err, "tool: invalid mcp config: the session was not made by Connect, so the bytes it reads and the elicitations it answers may have no bound; make it with Connect, or set ImportConfig.UnboundedSession")

	res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{UnboundedSession: true})
	require.NoError(t, err, "the explicit choice is honoured")
	require.NotEmpty(t, res.Tools)
}

func TestConnectRefuses(t *testing.T) {
	inMemory, _ := mcp.NewInMemoryTransports()
	impl := &mcp.Implementation{Name: "client", Version: "v0"}
	for _, tc := range []struct {
		name   string
		config toolmcp.ConnectConfig
		err    string
	}{
		{"no implementation", toolmcp.ConnectConfig{Transport: inMemory}, "tool: invalid mcp config: ConnectConfig.Implementation is nil"},
		{"no transport", toolmcp.ConnectConfig{Implementation: impl}, "tool: invalid mcp config: ConnectConfig.Transport is nil"},
		{"a transport without bounds", toolmcp.ConnectConfig{Implementation: impl, Transport: inMemory}, "tool: invalid mcp config: LimitTransport cannot bound the messages of a *mcp.InMemoryTransport; use a streamable HTTP, SSE, IO or stdio transport"},
		{"negative message bound", toolmcp.ConnectConfig{Implementation: impl, Transport: &mcp.StdioTransport{}, MaxMessageBytes: -2}, "tool: invalid mcp config: ConnectConfig.MaxMessageBytes is -2, want 0 (the default, 16777216), NoLimit (-1) or more"},
		{"negative event bound", toolmcp.ConnectConfig{Implementation: impl, Transport: &mcp.StdioTransport{}, MaxStreamEvents: -5}, "tool: invalid mcp config: ConnectConfig.MaxStreamEvents is -5, want 0 (the default, 10000), NoLimit (-1) or more"},
		{"negative stream bound", toolmcp.ConnectConfig{Implementation: impl, Transport: &mcp.StdioTransport{}, MaxStreamBytes: -5}, "tool: invalid mcp config: ConnectConfig.MaxStreamBytes is -5, want 0 (the default, 33554432), NoLimit (-1) or more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolmcp.Connect(t.Context(), tc.config)
			require.ErrorIs(t, err, toolmcp.ErrInvalidConfig)
			require.EqualError(t, err, tc.err)
		})
	}
}

// listingServer serves over streamable HTTP (answering with events, the
// SDK's default, or with JSON) a tools/list of the given tools, as JSON
// text written by hand.
func listingServer(t *testing.T, jsonResponse bool, tools string) *httptest.Server {
	t.Helper()
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return hostile() }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/list" {
			page := `{"jsonrpc":"2.0","id":` + string(msg.ID) + `,"result":{"tools":` + tools + `}}`
			if jsonResponse {
				w.Header().Set("Content-Type", "application/json")
				_, _ = io.WriteString(w, page)
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":\"listing\"}}\n\nevent: message\ndata: "+page+"\n\n")
			return
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Over a session Connect made, a page of tools/list is read by the
// transport: its tools are counted against what the listing may still
// hold before any is built, and the schemas are kept as the server sent
// them (numbers and member order too), never built into Go values by the
// SDK.
func TestConnectReadsListing(t *testing.T) {
	schema := `{"type":"object","properties":{"b":{"type":"number","multipleOf":0.1},"a":{"type":"integer","maximum":1.0}}}`
	tool := func(i int) string {
		return fmt.Sprintf(`{"name":"t%d","inputSchema":%s,"outputSchema":{"type":"object"}}`, i, schema)
	}
	six := make([]string, 6)
	for i := range six {
		six[i] = tool(i)
	}
	for _, jsonResponse := range []bool{true, false} {
		t.Run(fmt.Sprintf("JSON response %v", jsonResponse), func(t *testing.T) {
			srv := listingServer(t, jsonResponse, "["+strings.Join(six, ",")+"]")
			cs, err := toolmcp.Connect(t.Context(), toolmcp.ConnectConfig{
				Implementation: &mcp.Implementation{Name: "client", Version: "v0"},
				Transport:      &mcp.StreamableClientTransport{Endpoint: srv.URL},
			})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })

			res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
			require.NoError(t, err)
			require.Len(t, res.Tools, 6)
			require.Equal(t, schema, string(res.Tools[0].Definition().InputSchema), "the schema as the server sent it")

			_, err = toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{MaxTools: 5})
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			require.EqualError(t, err, "tool: remote mcp call failed: listing tools: the server lists more than 5 tools (ImportConfig.MaxTools)")

			res, err = toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{MaxSchemaBytes: len(schema) - 1})
			require.NoError(t, err)
			require.Len(t, res.Refused, 6)
			require.EqualError(t, res.Refused[0].Err, fmt.Sprintf("tool: remote mcp tool refused: the input schema is more than %d bytes (ImportConfig.MaxSchemaBytes)", len(schema)-1))
		})
	}
}
