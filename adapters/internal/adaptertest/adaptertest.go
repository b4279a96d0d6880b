// Package adaptertest holds what the provider adapters' tests share: a
// small registry of tools that covers every kind of result, a dispatcher
// over it, and a replay server that answers an SDK client's requests from
// fixtures and records what the client sent. It is imported only by tests.
package adaptertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// Update is the -update flag of every adapter's tests: rewrite what the
// tests compare with (golden files, and fixtures recorded against a real
// server) instead of comparing.
var Update = flag.Bool("update", false, "rewrite the golden files and recordings in testdata")

type weatherInput struct {
	City string `json:"city" jsonschema:"minLength=1,description=City name"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
}

type ordersInput struct {
	Customer string `json:"customer" jsonschema:"format=email"`
	Status   string `json:"status,omitempty" jsonschema:"enum=open,enum=shipped"`
	Limit    int    `json:"limit,omitempty" jsonschema:"minimum=1,maximum=20"`
}

type order struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

type ordersOutput struct {
	Orders []order `json:"orders"`
}

type lookupInput struct {
	SKU string `json:"sku"`
}

type chartInput struct {
	Title string `json:"title"`
}

// PNG is the image render_chart returns: a 1×1 PNG.
var PNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\xff\xff?\x00\x05\xfe\x02\xfe\xa7\x35\x81\x84\x00\x00\x00\x00IEND\xaeB`\x82")

// Registry returns the test tools: get_weather (text), search_orders
// (details under an output schema), flaky_lookup (always a Failure) and
// render_chart (text, a PNG and a CSV).
func Registry(t testing.TB) *tool.Registry {
	t.Helper()
	weather, err := tool.NewFunc(tool.FuncConfig{Name: "get_weather", Description: "Current weather for a city.", Effect: tool.EffectSafe},
		func(_ context.Context, in weatherInput) (string, error) {
			if in.Unit == "fahrenheit" {
				return in.City + ": 70°F, clear sky.", nil
			}
			return in.City + ": 21°C, clear sky.", nil
		})
	require.NoError(t, err)
	orders, err := tool.NewFunc(tool.FuncConfig{Name: "search_orders", Description: "Find a customer's orders.", Effect: tool.EffectSafe},
		func(_ context.Context, in ordersInput) (ordersOutput, error) {
			out := ordersOutput{Orders: []order{{ID: "A-1001", Status: "open"}, {ID: "A-1002", Status: "shipped"}}}
			if in.Status != "" {
				out.Orders = []order{{ID: "A-1001", Status: in.Status}}
			}
			return out, nil
		})
	require.NoError(t, err)
	lookup, err := tool.NewFunc(tool.FuncConfig{Name: "flaky_lookup", Description: "Stock level of a product.", Effect: tool.EffectSafe},
		func(context.Context, lookupInput) (int, error) {
			return 0, errors.New("warehouse API: connection refused")
		})
	require.NoError(t, err)
	chart, err := tool.NewFunc(tool.FuncConfig{Name: "render_chart", Description: "Render a sales chart.", Effect: tool.EffectSafe},
		func(_ context.Context, in chartInput) (tool.Output, error) {
			return tool.Output{Content: []tool.Block{
				tool.NewTextBlock("Chart: " + in.Title),
				tool.NewMediaBlock("image/png", PNG),
				tool.NewMediaBlock("text/csv", []byte("month,total\n2026-11,1012.40\n")),
			}}, nil
		})
	require.NoError(t, err)
	var bindings []tool.Binding
	for _, x := range []tool.Tool{weather, orders, lookup, chart} {
		b, err := tool.Bind(x, tool.Recover)
		require.NoError(t, err)
		bindings = append(bindings, b)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	return reg
}

// Dispatcher returns a dispatcher over reg with fixed idempotency keys
// and a fixed seal key. Its claim store is store, or a new MemoryStore
// when none is given.
func Dispatcher(t testing.TB, reg *tool.Registry, store ...dispatch.Store) *dispatch.Dispatcher {
	t.Helper()
	var mu sync.Mutex
	n := 0
	var s dispatch.Store
	if len(store) > 0 {
		s = store[0]
	} else {
		m, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
		require.NoError(t, err)
		s = m
	}
	d, err := dispatch.New(dispatch.Config{
		Registry: reg,
		Store:    s,
		SealKeys: []dispatch.SealKey{{ID: "test", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		NewKey: func() (tool.IdempotencyKey, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			return tool.IdempotencyKey(fmt.Sprintf("key-%d", n)), nil
		},
	})
	require.NoError(t, err)
	return d
}

// Server is a replay server: the i-th request to Path is answered with the
// i-th fixture, and every request body is recorded.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	requests []json.RawMessage
}

// NewServer starts a replay server for requests to path answered from
// responses, and closes it when t ends. A request beyond the fixtures, or
// to another path, gets a 500 and fails t.
func NewServer(t testing.TB, path string, responses []json.RawMessage) *Server {
	t.Helper()
	s := &Server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		s.mu.Lock()
		i := len(s.requests)
		s.requests = append(s.requests, body)
		s.mu.Unlock()
		if err != nil || r.URL.Path != path || i >= len(responses) {
			t.Errorf("unexpected request %d to %s", i, r.URL.Path)
			http.Error(w, "unexpected request", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(responses[i])
	}))
	t.Cleanup(s.Close)
	return s
}

// Requests returns the bodies the client sent, in order.
func (s *Server) Requests() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.requests...)
}

// Fixtures reads testdata/name: a JSON array of response bodies.
func Fixtures(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	var out []json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &out))
	return out
}

// Replay is what a replayed conversation starts from: the tools of
// Registry, a Dispatcher over them, and a Server answering from fixtures.
type Replay struct {
	Registry   *tool.Registry
	Dispatcher *dispatch.Dispatcher
	Server     *Server
}

// NewReplay returns the tools of [Registry], a [Dispatcher] over them and
// a replay server ([NewServer]) for requests to path, answered with the
// fixtures of testdata/fixtures ([Fixtures]).
func NewReplay(t testing.TB, path, fixtures string) Replay {
	t.Helper()
	reg := Registry(t)
	return Replay{Registry: reg, Dispatcher: Dispatcher(t, reg), Server: NewServer(t, path, Fixtures(t, fixtures))}
}

// Prompt is the user's first message in the replayed conversations.
const Prompt = "Weather in Lisbon, Ana's open orders, stock of K-1 and the November chart, please."

// Converse plays the conversation the fixtures script, at most five
// turns. turn asks the model, through the adapter's SDK client, for its
// next reply and returns the reply's calls, or its text when it has none,
// which ends the conversation; the calls are dispatched on r.Dispatcher
// and answer adds their outcomes, as the adapter renders them, to the next
// request. Converse checks that the turns ended as scripted (a rejected
// and a completed call; a completed one; a failed and a completed one) and
// that the final text gives Lisbon's weather, compares the four request
// bodies the client sent with testdata/golden ([Golden]), and returns
// them.
func (r Replay) Converse(t *testing.T, golden string, turn func() ([]dispatch.Call, string), answer func([]dispatch.Outcome)) []json.RawMessage {
	t.Helper()
	var kinds [][]dispatch.Kind
	var final string
	for range 5 {
		calls, text := turn()
		if len(calls) == 0 {
			final = text
			break
		}
		outcomes := r.Dispatcher.RunAll(context.Background(), calls)
		k := make([]dispatch.Kind, len(outcomes))
		for i, o := range outcomes {
			k[i] = o.Kind
		}
		kinds = append(kinds, k)
		answer(outcomes)
	}
	require.Equal(t, [][]dispatch.Kind{
		{dispatch.KindRejected, dispatch.KindCompleted},
		{dispatch.KindCompleted},
		{dispatch.KindFailed, dispatch.KindCompleted},
	}, kinds)
	require.Contains(t, final, "Lisbon is 21°C")
	reqs := r.Server.Requests()
	require.Len(t, reqs, 4)
	Golden(t, golden, reqs)
	return reqs
}

// Golden compares got, indented, with testdata/name, or writes it there
// when -update is given.
func Golden(t testing.TB, name string, got any) {
	t.Helper()
	raw, err := json.Marshal(got)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, json.Indent(&b, raw, "", "  "))
	b.WriteByte('\n')
	path := filepath.Join("testdata", name)
	if *Update {
		require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run the test with -update to create %s", path)
	require.Equal(t, string(want), b.String())
}

// Field decodes the member at the dotted path of a JSON document, with
// numeric path elements indexing arrays.
func Field(t testing.TB, doc json.RawMessage, path string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal(doc, &v))
	for _, p := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[p]
		case []any:
			var i int
			_, err := fmt.Sscan(p, &i)
			require.NoError(t, err)
			require.Less(t, i, len(x), path)
			v = x[i]
		default:
			t.Fatalf("no %s in %s", path, doc)
		}
	}
	return v
}

type benchAddress struct {
	Street string  `json:"street" jsonschema:"description=Street and number"`
	Zip    *string `json:"zip,omitempty"`
	Kind   string  `json:"kind,omitempty" jsonschema:"enum=home,enum=work"`
}

type benchItem struct {
	SKU   string   `json:"sku" jsonschema:"minLength=2,maxLength=8"`
	Count int      `json:"count" jsonschema:"minimum=1,maximum=99"`
	Tags  []string `json:"tags,omitempty" jsonschema:"maxItems=3"`
}

type benchInput struct {
	Customer string        `json:"customer" jsonschema:"format=email"`
	Items    []benchItem   `json:"items" jsonschema:"minItems=1"`
	Ship     *benchAddress `json:"ship,omitempty"`
	Bill     benchAddress  `json:"bill" jsonschema:"description=Billing address"`
	Notes    string        `json:"notes,omitempty" jsonschema:"maxLength=500"`
	Express  bool          `json:"express,omitempty"`
}

// Tools returns a registry of n tools named tool_000, tool_001, …, each
// made by NewFunc on a realistic order form (nested objects in $defs,
// optional members, enums, bounds): what a projection benchmark projects.
func Tools(t testing.TB, n int) *tool.Registry {
	t.Helper()
	bindings := make([]tool.Binding, n)
	for i := range bindings {
		f, err := tool.NewFunc(tool.FuncConfig{Name: fmt.Sprintf("tool_%03d", i), Description: "Place an order for a customer."},
			func(context.Context, benchInput) (string, error) { return "placed", nil })
		require.NoError(t, err)
		bindings[i], err = tool.Bind(f)
		require.NoError(t, err)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	return reg
}

// DistinctTools is Tools with every input schema different: the
// description of one member names the tool, so that nothing a projection
// learns from one schema serves another.
func DistinctTools(t testing.TB, n int) *tool.Registry {
	t.Helper()
	base := Tools(t, n).Definitions()
	bindings := make([]tool.Binding, n)
	for i, d := range base {
		schema := strings.Replace(string(d.InputSchema), `"Billing address"`, `"Billing address of `+d.Name+`"`, 1)
		require.NotEqual(t, string(d.InputSchema), schema)
		d.InputSchema = json.RawMessage(schema)
		var err error
		bindings[i], err = tool.Bind(rawTool{d})
		require.NoError(t, err)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	return reg
}

// rawTool is a tool of a given definition that answers "placed".
type rawTool struct{ def tool.Definition }

func (r rawTool) Definition() tool.Definition { return r.def }

func (rawTool) Call(context.Context, tool.Invocation) (tool.Result, error) {
	return tool.Result{Output: tool.NewTextOutput("placed")}, nil
}

// DispatchBase dispatches call on d once, fails b unless it completes,
// and returns the outcome and a function that dispatches call again,
// failing b the same way: the base of Overhead.
func DispatchBase(b *testing.B, d *dispatch.Dispatcher, call dispatch.Call) (dispatch.Outcome, func()) {
	b.Helper()
	ctx := context.Background()
	outcome := d.Run(ctx, call)
	require.Equal(b, dispatch.KindCompleted, outcome.Kind, "%v", outcome.Err)
	return outcome, func() {
		if o := d.Run(ctx, call); o.Kind != dispatch.KindCompleted {
			b.Fatal(o.Kind, o.Err)
		}
	}
}

// Overhead measures what extra (an adapter's work on one call: the
// provider's call turned into a dispatch call, the outcome into the
// provider's result) adds to base (the dispatch of that call), the way a
// runtime pays for it: each call dispatched, then handled by the adapter.
//
// After the benchmark loop (which runs base and extra in turn, so that
// ns/op is the time of the pair), it runs six rounds of b.N/4 calls (at
// least 1,024) of base alone and then as many of base followed by extra,
// and compares the two. Every cost extra causes counts: its own work, the
// garbage collection of what it allocates, wherever that runs, and the
// caches it takes from the dispatch that follows. Rounds alternate so that
// both see the same machine load. It reports
//
//   - "overhead-%": the wall time base and extra take beyond base's, in
//     percent of base's (the figure the adapters' targets are stated in);
//   - "overhead-cpu-%": the same in CPU time of the process, user and
//     system, garbage collection on every thread included; other processes
//     on a shared machine do not inflate it;
//   - "dispatch-ns/call" and "adapter-ns/call": base's wall time per call,
//     and what extra adds to it;
//   - "adapter-allocs/call" and "adapter-B/call": the heap allocations and
//     bytes extra makes on its own.
func Overhead(b *testing.B, base, extra func()) {
	for b.Loop() {
		base()
		extra()
	}
	n := max(b.N/4, 1024)
	var baseWall, pairWall, baseCPU, pairCPU time.Duration
	cpuOK := true
	for range 6 {
		c0, ok0 := cpuTime()
		t0 := time.Now()
		for range n {
			base()
		}
		t1 := time.Now()
		c1, ok1 := cpuTime()
		for range n {
			base()
			extra()
		}
		t2 := time.Now()
		c2, ok2 := cpuTime()
		cpuOK = cpuOK && ok0 && ok1 && ok2
		baseWall += t1.Sub(t0)
		pairWall += t2.Sub(t1)
		baseCPU += c1 - c0
		pairCPU += c2 - c1
	}
	calls := float64(6 * n)
	b.ReportMetric(100*float64(pairWall-baseWall)/float64(baseWall), "overhead-%")
	if cpuOK {
		b.ReportMetric(100*float64(pairCPU-baseCPU)/float64(baseCPU), "overhead-cpu-%")
	}
	b.ReportMetric(float64(baseWall.Nanoseconds())/calls, "dispatch-ns/call")
	b.ReportMetric(float64((pairWall-baseWall).Nanoseconds())/calls, "adapter-ns/call")
	b.ReportMetric(testing.AllocsPerRun(100, extra), "adapter-allocs/call")
	b.ReportMetric(bytesPerRun(100, extra), "adapter-B/call")
}

// bytesPerRun is the heap bytes one call of f allocates, the mean of runs
// calls.
func bytesPerRun(runs int, f func()) float64 {
	f() // warm up, as testing.AllocsPerRun does
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range runs {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(runs)
}

// LoopCPU runs body in b.Loop and reports, besides the wall time, the CPU
// time the process spent per iteration ("cpu-ns/op", garbage collection
// included), which other work on a shared machine does not inflate.
func LoopCPU(b *testing.B, body func()) {
	start, ok := cpuTime()
	for b.Loop() {
		body()
	}
	if end, ok2 := cpuTime(); ok && ok2 {
		b.ReportMetric(float64((end-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
