package toolmcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	toolmcp "github.com/agentcontract/tool/adapters/mcp"
)

// amountForm asks for an integer no smaller than 2^53+1: only an answer
// judged on its exact value passes it.
const amountForm = `{"type":"object","properties":{"amount":{"type":"integer","minimum":9007199254740993}},"required":["amount"]}`

// amount asks for an amount and completes with the answer it got.
type amount struct{ calls *atomic.Int32 }

func (amount) Definition() tool.Definition {
	return tool.Definition{Name: "amount", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectIdempotent}
}

func (a amount) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	a.calls.Add(1)
	if c, resumed := inv.Continuation(); resumed {
		return tool.Result{Output: tool.NewTextOutput("answer " + string(c.Response()))}, nil
	}
	schema, err := tool.ParseSchema([]byte(amountForm))
	if err != nil {
		return tool.Result{}, err
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"How much?"`), ResponseSchema: schema})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{InputRequest: &ir}, nil
}

// capturing forwards every HTTP request but a retry with input responses,
// whose body and headers it keeps and does not send.
type capturing struct {
	header http.Header
	body   []byte
}

var errCaptured = errors.New("captured, not sent")

func (c *capturing) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		if bytes.Contains(body, []byte(`"inputResponses"`)) {
			c.header, c.body = r.Header.Clone(), body
			return nil, errCaptured
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// strictServer serves approve and amount over stateless streamable HTTP,
// wrapped with toolmcp.HTTPHandler.
func strictServer(t *testing.T, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	reg := &tool.Registry{}
	for _, executable := range []tool.Tool{approve(calls, false), amount{calls: calls}} {
		b, err := tool.Bind(executable)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	amountSchema, err := tool.ParseSchema([]byte(amountForm))
	require.NoError(t, err)
	server := newServer(t, reg, func(c *toolmcp.Config) {
		c.Tools["amount"] = toolmcp.ToolOptions{ResponseSchemas: []tool.Schema{amountSchema}}
	})
	return serveHTTP(t, server, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// rawRetry suspends a call of name through the SDK client, captures the
// body of its retry (answered with marker), and returns it with the
// headers it was sent with.
func rawRetry(t *testing.T, srv *httptest.Server, name string, marker map[string]any) (http.Header, []byte) {
	t.Helper()
	capture := &capturing{}
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, manual())
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: &http.Client{Transport: capture}}, &mcp.ClientSessionOptions{ProtocolVersion: modern})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"order": "7"}})
	require.NoError(t, err)
	require.True(t, res.NeedsInput())
	params := retry(res.RequestState, &mcp.ElicitResult{Action: "accept", Content: marker})
	params.Name = name
	_, err = cs.CallTool(t.Context(), params)
	require.ErrorIs(t, err, errCaptured)
	require.NotNil(t, capture.body)
	return capture.header, capture.body
}

// post sends body as it is and returns the JSON-RPC response.
func post(t *testing.T, srv *httptest.Server, header http.Header, body []byte) map[string]string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header = header.Clone()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if batch := []json.RawMessage{}; json.Unmarshal(out, &batch) == nil {
		require.Len(t, batch, 1, "response %s", out)
		out = batch[0]
	}
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(out, &raw), "response %s", out)
	msg := map[string]string{}
	for k, v := range raw {
		msg[k] = string(v)
	}
	return msg
}

// The answer of a retry over streamable HTTP reaches Resume as the bytes
// the client sent: a duplicate member and invalid UTF-8 are refused and
// nothing runs; a number beyond 2^53 is judged on its exact value.
func TestStrictAnswerOverHTTP(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		marker     map[string]any
		sent       string      // replaces the marker's JSON in the body
		edits      [][2]string // then each first text, found once, becomes the second
		batch      bool        // send the request as a batch of one, as a client of 2025-03-26
		refused    string      // part of the JSON-RPC error, when refused
		text       string      // the result's text, when accepted
	}{
		{name: "duplicate member", tool: "approve", marker: map[string]any{"approve": true},
			sent: `{"approve":false,"approve":true}`, refused: "duplicate"},
		{name: "invalid UTF-8", tool: "approve", marker: map[string]any{"approve": true},
			sent: "{\"approve\":true,\"note\":\"ok\xff\"}", refused: "UTF-8"},
		{name: "2^53+1", tool: "amount", marker: map[string]any{"amount": 1},
			sent: `{"amount":9007199254740993}`, text: `answer {"amount":9007199254740993}`},
		{name: "2^53+1 written with an exponent", tool: "amount", marker: map[string]any{"amount": 1},
			sent: `{"amount":9.007199254740993e15}`, text: `answer {"amount":9.007199254740993e15}`},
		{name: "2^53, below the minimum", tool: "amount", marker: map[string]any{"amount": 1},
			sent: `{"amount":9007199254740992}`, refused: "minimum"},
		// The method and the names on the way to the answer are read as
		// JSON, escapes undone, so that the SDK and the exact reading
		// agree on which request carries which answer.
		{name: "duplicate member, method escaped", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`"method":"tools/call"`, `"method":"tools\/call"`}}, sent: `{"approve":false,"approve":true}`, refused: "duplicate"},
		{name: "duplicate member, method in unicode escapes", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`"method":"tools/call"`, `"method":"\u0074ools/c\u0061ll"`}}, sent: `{"approve":false,"approve":true}`, refused: "duplicate"},
		{name: "number text kept, method escaped", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`"method":"tools/call"`, `"method":"tools\/call"`}}, sent: `{"approve":true,"n":1.0}`, text: `answer {"approve":true,"n":1.0} state {"step":1}`},
		{name: "escaped member name, method escaped", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`"method":"tools/call"`, `"method":"tools\/call"`}}, sent: `{"approve":false,"\u0061pprove":true}`, refused: "duplicate"},
		{name: "number text kept, names on the way escaped", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`"params":`, `"p\u0061rams":`}, {`"inputResponses":`, `"inputResp\u006fnses":`}, {`"content":`, `"c\u006fntent":`}},
			sent:  `{"approve":true,"n":1.0}`, text: `answer {"approve":true,"n":1.0} state {"step":1}`},
		// The answer itself is judged after unescaping: a name spelt
		// twice is the same name.
		{name: "duplicate member, one name escaped", tool: "approve", marker: map[string]any{"approve": true},
			sent: `{"approve":false,"\u0061pprove":true}`, refused: "duplicate"},
		{name: "duplicate member, both names escaped", tool: "approve", marker: map[string]any{"approve": true},
			sent: `{"\u0061pprove":false,"appro\u0076e":true}`, refused: "duplicate"},
		{name: "duplicate content, one name escaped", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`"content":`, `"content":{"approve":false},"c\u006fntent":`}}, refused: "duplicate"},
		// A batch (protocol versions before 2025-06-18) carries no answer
		// the exact reading can tell apart: a retry in one is refused.
		{name: "retry in a batch", tool: "approve", marker: map[string]any{"approve": true},
			edits: [][2]string{{`,"io.modelcontextprotocol/protocolVersion":"2026-07-28"`, ``}},
			sent:  `{"approve":false,"approve":true}`, batch: true, refused: "batch"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := strictServer(t, &calls)
			header, body := rawRetry(t, srv, tc.tool, tc.marker)
			markerJSON, err := json.Marshal(tc.marker)
			require.NoError(t, err)
			require.Equal(t, 1, bytes.Count(body, markerJSON), "body %s", body)
			if tc.sent != "" {
				body = bytes.Replace(body, markerJSON, []byte(tc.sent), 1)
			}
			for _, e := range tc.edits {
				require.Equal(t, 1, bytes.Count(body, []byte(e[0])), "%s in body %s", e[0], body)
				body = bytes.Replace(body, []byte(e[0]), []byte(e[1]), 1)
			}
			if tc.batch {
				body = append(append([]byte("["), body...), ']')
				header = header.Clone()
				header.Set("Mcp-Protocol-Version", "2025-03-26")
			}

			msg := post(t, srv, header, body)

			if tc.refused != "" {
				require.Contains(t, msg, "error", "refused: %s", msg["result"])
				require.Contains(t, strings.ToLower(msg["error"]), strings.ToLower(tc.refused))
				require.Equal(t, int32(1), calls.Load(), "nothing ran after the suspension")
				return
			}
			require.NotContains(t, msg, "error")
			var res mcp.CallToolResult
			require.NoError(t, json.Unmarshal([]byte(msg["result"]), &res))
			require.False(t, res.IsError)
			require.JSONEq(t, fmt.Sprintf(`[{"type":"text","text":%q}]`, tc.text), wire(t, res.Content))
			require.Equal(t, int32(2), calls.Load())
		})
	}
}

// Over in-memory transports (as over stdio) the bridge sees only the SDK's
// decoded answer: it refuses what decoding may have changed.
func TestDecodedAnswerChecked(t *testing.T) {
	for _, tc := range []struct {
		name, tool string
		content    map[string]any
		refused    string
	}{
		{name: "an integer of 2^53 may have been rounded", tool: "amount", content: map[string]any{"amount": json.Number("9007199254740993")}, refused: "2^53"},
		{name: "U+FFFD may stand for invalid UTF-8", tool: "approve", content: map[string]any{"approve": true, "note": "ok\uFFFD"}, refused: "U+FFFD"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			reg := &tool.Registry{}
			for _, executable := range []tool.Tool{approve(&calls, false), amount{calls: &calls}} {
				b, err := tool.Bind(executable)
				require.NoError(t, err)
				require.NoError(t, reg.Register(b))
			}
			amountSchema, err := tool.ParseSchema([]byte(amountForm))
			require.NoError(t, err)
			cs := connect(t, newServer(t, reg, func(c *toolmcp.Config) {
				c.Tools["amount"] = toolmcp.ToolOptions{ResponseSchemas: []tool.Schema{amountSchema}}
			}), manual(), modern)
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tc.tool, Arguments: map[string]any{"order": "7"}})
			require.NoError(t, err)
			params := retry(res.RequestState, &mcp.ElicitResult{Action: "accept", Content: tc.content})
			params.Name = tc.tool
			_, err = cs.CallTool(t.Context(), params)
			require.ErrorContains(t, err, tc.refused)
			require.Equal(t, int32(1), calls.Load(), "nothing ran after the suspension")
		})
	}
}

// On a stateful streamable HTTP server, a client that drops the connection
// carrying a call (without notifications/cancelled) cancels the call.
func TestDroppedConnectionCancels(t *testing.T) {
	gate := newSlowGate()
	server := newServer(t, registry(t, nil, gate))
	srv := serveHTTP(t, server, nil)
	cs := connectURL(t, srv.URL, nil, legacy)

	ctx, cancel := context.WithCancel(t.Context())
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", legacy)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-gate.entered
	cancel() // the connection drops; nothing is sent
	require.ErrorIs(t, <-errc, context.Canceled)
	select {
	case <-gate.cancelled:
	case <-time.After(30 * time.Second):
		t.Fatal("the call was not cancelled when its connection dropped")
	}
}
