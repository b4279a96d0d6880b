package toolgemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/dispatch"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"
)

// geminiServer speaks the generateContent method of the Gemini API: it
// answers each request with the next response of a script and records what
// the SDK sent.
type geminiServer struct {
	*httptest.Server
	mu        sync.Mutex
	responses []json.RawMessage
	requests  []recorded
}

type recorded struct {
	Path, APIKey string
	Body         []byte
}

func newGeminiServer(t *testing.T, responses ...json.RawMessage) *geminiServer {
	s := &geminiServer{responses: responses}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		n := len(s.requests)
		s.requests = append(s.requests, recorded{Path: r.URL.Path, APIKey: r.Header.Get("x-goog-api-key"), Body: body})
		s.mu.Unlock()
		if r.Method != http.MethodPost || n >= len(s.responses) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"code":400,"message":"unexpected request","status":"INVALID_ARGUMENT"}}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(s.responses[n])
	}))
	t.Cleanup(s.Close)
	return s
}

// request returns the i-th request the SDK sent, decoded.
func (s *geminiServer) request(t *testing.T, i int) (recorded, map[string]json.RawMessage) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Greater(t, len(s.requests), i)
	var body map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(s.requests[i].Body, &body))
	return s.requests[i], body
}

func newClient(t *testing.T, baseURL string) *genai.Client {
	t.Helper()
	client, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey:      "test-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: baseURL},
	})
	require.NoError(t, err)
	return client
}

// The tools of the conversation.

type weatherIn struct {
	City string `json:"city" jsonschema:"description=City name,minLength=1,maxLength=80"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
}

type ordersIn struct {
	Customer string `json:"customer" jsonschema:"pattern=^c-[0-9]+$"`
	Limit    int    `json:"limit" jsonschema:"minimum=1,maximum=20"`
}

type order struct {
	ID    string  `json:"id"`
	Total float64 `json:"total"`
}

type refundIn struct {
	Order string `json:"order"`
}

type chartIn struct {
	Order string `json:"order"`
}

// pngBytes is a PNG signature and header: enough to stand for an image.
var pngBytes = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'}

var errAlreadyRefunded = errors.New("ledger: refund r-1 exists for o-9")

func newRegistry(t testing.TB) *tool.Registry {
	t.Helper()
	weather, err := tool.NewFunc(tool.FuncConfig{Name: "get_weather", Description: "Current weather of a city.", Effect: tool.EffectSafe},
		func(_ context.Context, in weatherIn) (string, error) { return in.City + ": 21°C, clear sky", nil })
	require.NoError(t, err)
	orders, err := tool.NewFunc(tool.FuncConfig{Name: "search_orders", Description: "Orders of a customer, newest first.", Effect: tool.EffectSafe},
		func(_ context.Context, in ordersIn) ([]order, error) {
			return []order{{ID: "o-7", Total: 42.5}, {ID: "o-9", Total: 19}}[:min(in.Limit, 2)], nil
		})
	require.NoError(t, err)
	refund, err := tool.NewFunc(tool.FuncConfig{Name: "refund_order", Description: "Refund an order in full."},
		func(_ context.Context, in refundIn) (string, error) {
			f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed,
				Output: tool.NewTextOutput("Order " + in.Order + " was refunded already."), Cause: errAlreadyRefunded})
			if err != nil {
				return "", err
			}
			return "", f
		})
	require.NoError(t, err)
	chart, err := tool.NewFunc(tool.FuncConfig{Name: "render_chart", Description: "Chart of an order's history.", Effect: tool.EffectSafe},
		func(_ context.Context, in chartIn) (tool.Output, error) {
			return tool.Output{Content: []tool.Block{
				tool.NewTextBlock("Chart of " + in.Order + ":"),
				tool.NewMediaBlock("image/png", pngBytes),
				tool.NewMediaBlock("audio/wav", []byte("RIFF")),
			}}, nil
		})
	require.NoError(t, err)
	var bindings []tool.Binding
	for _, tl := range []tool.Tool{weather, orders, refund, chart} {
		b, err := tool.Bind(tl, tool.Recover)
		require.NoError(t, err)
		bindings = append(bindings, b)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	return reg
}

// project returns New with config's Definitions set to defs.
func project(defs []tool.Definition, config toolgemini.Config) (*toolgemini.Tools, error) {
	config.Definitions = defs
	return toolgemini.New(config)
}

// part is the one part of Results for o.
func part(o dispatch.Outcome) (*genai.Part, error) {
	c, err := toolgemini.Results([]dispatch.Outcome{o})
	if err != nil {
		return nil, err
	}
	return c.Parts[0], nil
}
