package toolmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

// connectOver connects a client with opts to s over the transports st and
// ct.
func connectOver(t *testing.T, s *mcp.Server, st, ct mcp.Transport, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ss, err := s.Connect(t.Context(), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, opts).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func hostile() *mcp.Server {
	return mcp.NewServer(&mcp.Implementation{Name: "hostile", Version: "v1"}, nil)
}

// A server whose every page names a next one: Import reads the pages its
// limit allows and not one more. Before the limit it read until its ctx
// ended.
func TestImportBoundsPages(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxPages int
		want     int64
	}{
		{"default", 0, 100},
		{"configured", 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pages atomic.Int64
			s := hostile()
			endlessListing(s, 1, &pages)
			cs := connect(t, s, nil, modern)
			res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{MaxPages: tc.maxPages})
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			require.EqualError(t, err, fmt.Sprintf("tool: remote mcp call failed: listing tools: the server lists more than %d pages (ImportConfig.MaxPages)", tc.want))
			require.Empty(t, res.Tools)
			require.Equal(t, tc.want, pages.Load(), "pages asked for")
		})
	}
}

// More tools than the limit fail the listing at the page that passes it,
// across pages or in one page, and no tool is converted.
func TestImportBoundsTools(t *testing.T) {
	t.Run("across pages", func(t *testing.T) {
		var pages atomic.Int64
		s := hostile()
		endlessListing(s, 300, &pages)
		cs := connect(t, s, nil, modern)
		_, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
		require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
		require.EqualError(t, err, "tool: remote mcp call failed: listing tools: the server lists more than 1000 tools (ImportConfig.MaxTools)")
		require.Equal(t, int64(4), pages.Load(), "the fourth page takes the listing past 1000 tools")
	})
	t.Run("one page", func(t *testing.T) {
		s := hostile()
		for i := range 6 {
			s.AddTool(&mcp.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(`{"type":"object"}`)}, nil)
		}
		cs := connect(t, s, nil, modern)
		_, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{MaxTools: 5})
		require.EqualError(t, err, "tool: remote mcp call failed: listing tools: the server lists more than 5 tools (ImportConfig.MaxTools)")
		res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{MaxTools: 6})
		require.NoError(t, err)
		require.Len(t, res.Tools, 6, "a listing of exactly the limit is whole")
	})
}

// bigSchema is an object schema of n properties, about 40 bytes each.
func bigSchema(n int) map[string]any {
	props := map[string]any{}
	for i := range n {
		props[fmt.Sprintf("property_%07d", i)] = map[string]any{"type": "string", "minLength": 1}
	}
	return map[string]any{"type": "object", "properties": props}
}

// A schema over the limit refuses its tool, by name of the limit, and the
// others stay; the form of a request for input is bounded the same way.
func TestImportBoundsSchemas(t *testing.T) {
	s := hostile()
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "?", RequestedSchema: bigSchema(100)}}, RequestState: "s"}, nil
	}
	s.AddTool(&mcp.Tool{Name: "small", InputSchema: json.RawMessage(`{"type":"object"}`)}, handler)
	s.AddTool(&mcp.Tool{Name: "wide_input", InputSchema: bigSchema(100)}, handler)
	s.AddTool(&mcp.Tool{Name: "wide_output", InputSchema: json.RawMessage(`{"type":"object"}`), OutputSchema: bigSchema(100)}, handler)
	s.AddTool(&mcp.Tool{Name: "huge", InputSchema: bigSchema(30_000)}, handler) // about 1.2 MB
	cs := connect(t, s, manual(), modern)

	res, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{})
	require.NoError(t, err)
	require.Len(t, res.Tools, 3)
	require.Len(t, res.Refused, 1)
	require.ErrorIs(t, res.Refused[0].Err, toolmcp.ErrRemoteTool)
	require.EqualError(t, res.Refused[0].Err, "tool: remote mcp tool refused: the input schema is more than 1048576 bytes (ImportConfig.MaxSchemaBytes)")

	res, err = toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{MaxSchemaBytes: 1000})
	require.NoError(t, err)
	refused := map[string]string{}
	for _, r := range res.Refused {
		refused[r.Name] = r.Err.Error()
	}
	require.Equal(t, map[string]string{
		"huge":        "tool: remote mcp tool refused: the input schema is more than 1000 bytes (ImportConfig.MaxSchemaBytes)",
		"wide_input":  "tool: remote mcp tool refused: the input schema is more than 1000 bytes (ImportConfig.MaxSchemaBytes)",
		"wide_output": "tool: remote mcp tool refused: the output schema is more than 1000 bytes (ImportConfig.MaxSchemaBytes)",
	}, refused)
	require.Len(t, res.Tools, 1)
	b, err := tool.Bind(res.Tools[0])
	require.NoError(t, err)
	inv, err := b.Contract().Prepare(tool.Request{Name: "small", Arguments: `{}`}, tool.Admission{})
	require.NoError(t, err)
	_, err = b.Call(t.Context(), inv)
	require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
	require.EqualError(t, err, "tool: remote mcp call failed: small asked for input: the form's schema is more than 1000 bytes (ImportConfig.MaxSchemaBytes)")
}

// The size of a decoded schema is checked before it is encoded: refusing
// an 8 MB tree allocates next to nothing, where encoding it (what Import
// did first) allocates more than the tree's own size.
func TestMarshalBoundedAllocatesBeforeRefusing(t *testing.T) {
	tree := bigSchema(200_000) // about 8 MB of JSON
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := toolmcp.MarshalBounded(tree, tool.MaxInputBytes, "the input schema")
	runtime.ReadMemStats(&after)
	require.EqualError(t, err, "the input schema is more than 1048576 bytes")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20), "bytes allocated to refuse (the race detector's own included)")

	raw, err := toolmcp.MarshalBounded(tree, 16<<20, "the input schema")
	require.NoError(t, err)
	require.Greater(t, len(raw), 8_000_000, "the same tree under a larger limit is encoded whole")
}

// bigResult serves a tool "big" whose result is one text block of size
// bytes.
func bigResult(size int) *mcp.Server {
	text := strings.Repeat("x", size)
	s := hostile()
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
	})
	return s
}

// callBig imports "big" over cs, a session its maker bounded, and calls
// it.
func callBig(t *testing.T, cs *mcp.ClientSession) (tool.Result, error) {
	t.Helper()
	b, inv := prepared(t, cs, toolmcp.ImportConfig{UnboundedSession: true}, "big")
	return b.Call(t.Context(), inv)
}

// A result longer than the transport's limit is refused while it is read:
// the client reads about the limit, not the result. Without LimitTransport
// the same client read the whole 8 MiB (over HTTP) or 8 MiB up to the
// SDK's 16 MiB (over a pipe); over an event stream, bounded by the SDK's
// MaxEventSize alone, it read on for a while after the event was refused
// (1.4 to 3.5 MB, depending on timing), which eventBody stops.
func TestLimitTransportBoundsResults(t *testing.T) {
	const limit, size, slack = 1 << 20, 8 << 20, 64 << 10
	http := func(json bool) func(t *testing.T, s *mcp.Server, read *atomic.Int64) *mcp.ClientSession {
		return func(t *testing.T, s *mcp.Server, read *atomic.Int64) *mcp.ClientSession {
			srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{JSONResponse: json}))
			t.Cleanup(srv.Close)
			ct, err := toolmcp.LimitTransport(&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: countingRoundTripper{read}}, MaxRetries: -1}, limit)
			require.NoError(t, err)
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil).Connect(t.Context(), ct, &mcp.ClientSessionOptions{ProtocolVersion: modern})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		}
	}
	for _, tc := range []struct {
		name    string
		connect func(t *testing.T, s *mcp.Server, read *atomic.Int64) *mcp.ClientSession
	}{
		{"pipe", func(t *testing.T, s *mcp.Server, read *atomic.Int64) *mcp.ClientSession {
			st, ct := pipeTransports(read)
			limited, err := toolmcp.LimitTransport(ct, limit)
			require.NoError(t, err)
			return connectOver(t, s, st, limited, nil, modern)
		}},
		{"streamable HTTP, JSON", http(true)},
		{"streamable HTTP, events", http(false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var read atomic.Int64
			cs := tc.connect(t, bigResult(limit/2), &read)
			res, err := callBig(t, cs)
			require.NoError(t, err, "a result under the limit passes")
			require.Len(t, res.Output.Content[0].Text, limit/2)

			read.Store(0)
			cs = tc.connect(t, bigResult(size), &read)
			_, err = callBig(t, cs)
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			require.Less(t, read.Load(), int64(limit+slack), "bytes the client read of a %d-byte result", size)
		})
	}
}

// The bounded HTTP body passes a body of exactly the limit and fails on
// the byte after, with the limit in the error.
func TestLimitClientBody(t *testing.T) {
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		err     string
	}{
		{"at the limit", 100, false, ""},
		{"at the limit, chunked", 100, true, ""},
		{"over, by its length", 101, false, "Get %q: tool: remote mcp call failed: the server's response is longer than the transport's limit of 100 bytes (LimitTransport)"},
		{"over, chunked", 101, true, "tool: remote mcp call failed: the server's response is longer than the transport's limit of 100 bytes (LimitTransport)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				if tc.chunked {
					w.(http.Flusher).Flush() // no length known
				} else {
					w.Header().Set("Content-Length", fmt.Sprint(tc.size))
				}
				_, _ = w.Write([]byte(strings.Repeat("7", tc.size)))
			}))
			defer srv.Close()
			resp, err := toolmcp.LimitClient(nil, 100).Get(srv.URL)
			if err == nil {
				var body []byte
				body, err = io.ReadAll(resp.Body)
				_ = resp.Body.Close()
				if err == nil {
					require.Len(t, body, tc.size)
				}
			}
			if tc.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			if strings.Contains(tc.err, "%q") {
				tc.err = fmt.Sprintf(tc.err, srv.URL)
			}
			require.EqualError(t, err, tc.err)
		})
	}
}

func TestLimitTransportRefuses(t *testing.T) {
	inMemory, _ := mcp.NewInMemoryTransports()
	for _, tc := range []struct {
		name      string
		transport mcp.Transport
		limit     int
		err       string
	}{
		{"nil", nil, 0, "tool: invalid mcp config: the transport is nil"},
		{"typed nil", (*mcp.IOTransport)(nil), 0, "tool: invalid mcp config: the transport is nil"},
		{"negative", &mcp.StdioTransport{}, -1, "tool: invalid mcp config: the message limit is -1, want 0 (the default, 16777216) or more"},
		{"in memory", inMemory, 0, "tool: invalid mcp config: LimitTransport cannot bound the messages of a *mcp.InMemoryTransport; use a streamable HTTP, SSE, IO or stdio transport"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := toolmcp.LimitTransport(tc.transport, tc.limit)
			require.ErrorIs(t, err, toolmcp.ErrInvalidConfig)
			require.EqualError(t, err, tc.err)
		})
	}
	t.Run("copies", func(t *testing.T) {
		client := &http.Client{}
		given := &mcp.StreamableClientTransport{Endpoint: "http://127.0.0.1:1/", HTTPClient: client}
		limited, err := toolmcp.LimitTransport(given, 0)
		require.NoError(t, err)
		require.Equal(t, toolmcp.DefaultMaxMessageBytes, limited.(*mcp.StreamableClientTransport).MaxEventSize)
		require.Zero(t, given.MaxEventSize, "the given transport is not changed")
		require.Same(t, client, given.HTTPClient)
		require.Nil(t, client.Transport, "nor is its client")
		io, err := toolmcp.LimitTransport(&mcp.IOTransport{}, 5)
		require.NoError(t, err)
		require.Equal(t, 5, io.(*mcp.IOTransport).MaxLineLength)
	})
}

// nagging serves a tool "nag" that asks for elicitations until refused:
// with the protocol before 2026-07-28 as requests of its own, one at a
// time; with 2026-07-28 as input requests of its result, perRound at a
// time (the SDK's client retries at most 10 rounds).
func nagging(perRound int) *mcp.Server {
	form := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}}}`)
	s := hostile()
	s.AddTool(&mcp.Tool{Name: "nag", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if perRound == 0 {
			for range 2000 {
				if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "again?", RequestedSchema: form}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		}
		asks := mcp.InputRequestMap{}
		for i := range perRound {
			asks[fmt.Sprint(i)] = &mcp.ElicitParams{Message: "again?", RequestedSchema: form}
		}
		return &mcp.CallToolResult{InputRequests: asks, RequestState: "again"}, nil
	})
	return s
}

// approving answers every form with a fresh result (the SDK fills in
// defaults in place, and answers concurrently) and counts the questions.
func approving(asked *atomic.Int32) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
	}
}

// One call of an imported tool answers at most MaxElicitations
// elicitations through a handler wrapped with LimitElicitations; the call
// then fails, naming the limit. Unbounded, the same call answered 2,000
// (older protocol) or 10 rounds of whatever the server asked (2026-07-28).
func TestLimitElicitations(t *testing.T) {
	for _, tc := range []struct {
		name     string
		version  string
		perRound int
		max      int
		want     int32
	}{
		{"requests of the server, default", legacy, 0, 0, 10},
		{"requests of the server, configured", legacy, 0, 3, 3},
		{"input requests of the result, default", modern, 50, 0, 10},
		{"input requests of the result, configured", modern, 2, 5, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			cs := connect(t, nagging(tc.perRound), &mcp.ClientOptions{ElicitationHandler: toolmcp.LimitElicitations(approving(&asked))}, tc.version)
			b, inv := prepared(t, cs, toolmcp.ImportConfig{MaxElicitations: tc.max}, "nag")
			_, err := b.Call(t.Context(), inv)
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			require.EqualError(t, err, fmt.Sprintf("tool: remote mcp call failed: nag: the server asked for more than %d elicitations in one call (ImportConfig.MaxElicitations)", tc.want))
			require.Equal(t, tc.want, asked.Load(), "elicitations answered")

			// The next call has a budget of its own.
			asked.Store(0)
			_, err = b.Call(t.Context(), inv)
			require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
			require.Equal(t, tc.want, asked.Load())
		})
	}
	t.Run("a handler the caller did not wrap", func(t *testing.T) {
		// Connect wraps it: with no options, a call answers the default
		// number of elicitations. Before, it answered all 2,000.
		var asked atomic.Int32
		cs := connect(t, nagging(0), &mcp.ClientOptions{ElicitationHandler: approving(&asked)}, legacy)
		b, inv := prepared(t, cs, toolmcp.ImportConfig{}, "nag")
		_, err := b.Call(t.Context(), inv)
		require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
		require.Equal(t, int32(toolmcp.DefaultMaxElicitations), asked.Load(), "elicitations answered")
	})
	t.Run("turned off", func(t *testing.T) {
		var asked atomic.Int32
		cs := connect(t, nagging(0), &mcp.ClientOptions{ElicitationHandler: approving(&asked)}, legacy)
		b, inv := prepared(t, cs, toolmcp.ImportConfig{MaxElicitations: toolmcp.NoLimit}, "nag")
		res, err := b.Call(t.Context(), inv)
		require.NoError(t, err)
		require.Equal(t, "done", res.Output.Content[0].Text)
		require.Equal(t, int32(2000), asked.Load(), "NoLimit answers every elicitation")
	})
	t.Run("outside imported calls", func(t *testing.T) {
		var asked atomic.Int32
		handler := toolmcp.LimitElicitations(approving(&asked))
		for range 20 {
			_, err := handler(t.Context(), &mcp.ElicitRequest{Params: &mcp.ElicitParams{Message: "?"}})
			require.NoError(t, err)
		}
		require.Equal(t, int32(20), asked.Load(), "the handler is only bounded within the calls of imported tools")
		require.Nil(t, toolmcp.LimitElicitations(nil), "no handler stays no handler")
	})
}

// A server that stops answering is left when Import's deadline passes;
// the error names the limit and what was read.
func TestImportTimeout(t *testing.T) {
	var pages atomic.Int64
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := hostile()
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/list" {
				return next(ctx, method, req)
			}
			if pages.Add(1) == 3 {
				select {
				case <-ctx.Done():
				case <-release:
				}
				return nil, ctx.Err()
			}
			return &mcp.ListToolsResult{Tools: []*mcp.Tool{{Name: fmt.Sprint("t", pages.Load()), InputSchema: map[string]any{"type": "object"}}}, NextCursor: "more"}, nil
		}
	})
	cs := connect(t, s, nil, modern)
	_, err := toolmcp.Import(t.Context(), cs, toolmcp.ImportConfig{Timeout: 200 * time.Millisecond})
	require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.EqualError(t, err, "tool: remote mcp call failed: listing tools: after 2 pages and 2 tools: took longer than 200ms (ImportConfig.Timeout): context deadline exceeded")
	require.Equal(t, int64(3), pages.Load())
}

func TestImportRefusesNegativeLimits(t *testing.T) {
	cs := connect(t, (&remote{}).server(), nil, modern)
	for _, tc := range []struct {
		config toolmcp.ImportConfig
		err    string
	}{
		{toolmcp.ImportConfig{MaxPages: -2}, "tool: invalid mcp config: ImportConfig.MaxPages is -2, want 0 (the default, 100), NoLimit (-1) or more"},
		{toolmcp.ImportConfig{MaxTools: -2}, "tool: invalid mcp config: ImportConfig.MaxTools is -2, want 0 (the default, 1000), NoLimit (-1) or more"},
		{toolmcp.ImportConfig{MaxSchemaBytes: -3}, "tool: invalid mcp config: ImportConfig.MaxSchemaBytes is -3, want 0 (the default, 1048576), NoLimit (-1) or more"},
		{toolmcp.ImportConfig{MaxElicitations: -4}, "tool: invalid mcp config: ImportConfig.MaxElicitations is -4, want 0 (the default, 10), NoLimit (-1) or more"},
		{toolmcp.ImportConfig{Timeout: -time.Second}, "tool: invalid mcp config: ImportConfig.Timeout is -1s, want 0 (the default, 1m0s), NoLimit (-1ns) or more"},
		{toolmcp.ImportConfig{CallTimeout: -time.Second}, "tool: invalid mcp config: ImportConfig.CallTimeout is -1s, want 0 (the default, 5m0s), NoLimit (-1ns) or more"},
	} {
		_, err := toolmcp.Import(t.Context(), cs, tc.config)
		require.ErrorIs(t, err, toolmcp.ErrInvalidConfig)
		require.EqualError(t, err, tc.err)
	}
}

// A call of an imported tool whose server never answers ends after
// CallTimeout, an unknown outcome naming the limit; before, only the
// caller's ctx ended it.
func TestImportCallTimeout(t *testing.T) {
	s := hostile()
	s.AddTool(&mcp.Tool{Name: "stuck", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	cs := connect(t, s, nil, modern)
	b, inv := prepared(t, cs, toolmcp.ImportConfig{CallTimeout: 100 * time.Millisecond}, "stuck")
	_, err := b.Call(t.Context(), inv)
	require.ErrorIs(t, err, toolmcp.ErrRemoteCall)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "tool: remote mcp call failed: stuck: took longer than 100ms (ImportConfig.CallTimeout): context deadline exceeded")
}
