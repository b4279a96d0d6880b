package dispatch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

func TestRunKinds(t *testing.T) {
	d := newDispatcher(t, registry(t, nil))
	tests := []struct {
		name      string
		call      dispatch.Call
		kind      dispatch.Kind
		isError   bool
		retryable bool
		text      string // what the model reads
		private   string // in Err, never in text; "" for no error
	}{
		{name: "completed", call: call("c1", "add", `{"a":2,"b":3}`), kind: dispatch.KindCompleted, text: "5"},
		{name: "blank arguments are {} and rejected by the schema", call: call("c2", "add", ` `), kind: dispatch.KindRejected, isError: true,
			text: `arguments of "add" do not match its input schema`, private: "missing"},
		{name: "rejected: malformed JSON is the model's to correct", call: call("c3", "add", `{"a":2,`), kind: dispatch.KindRejected, isError: true,
			text: `arguments of "add" are not valid JSON`, private: "not valid JSON"},
		{name: "failed: the Failure's public output, not its cause", call: call("c4", "fail", `{}`), kind: dispatch.KindFailed, isError: true,
			text: "the order is closed", private: "the order is closed"},
		{name: "unknown: an unmarked tool's error may have had effects", call: call("c5", "flaky", `{}`), kind: dispatch.KindUnknown, isError: true,
			text: `The call to "flaky" did not complete and its outcome is unknown.`, private: "10.0.3.7"},
		{name: "unknown: a panic past the binding ends this call only, replayable tool", call: call("c6", "boom", `{}`), kind: dispatch.KindUnknown, isError: true, retryable: true,
			text: `The call to "boom" did not complete and its outcome is unknown.`, private: "secret detail at 10.0.0.1"},
		{name: "unknown tool lists the tools", call: call("c7", "cancel", `{}`), kind: dispatch.KindUnknownTool, isError: true,
			text: `There is no tool named "cancel". Available tools: add, boom, fail, flaky, picture, refund.`, private: "no tool named"},
		{name: "suspended: nothing for the model yet", call: call("c8", "refund", `{"order":"A-1"}`), kind: dispatch.KindSuspended},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := d.Run(context.Background(), tt.call)
			require.Equal(t, tt.kind, o.Kind)
			require.Equal(t, tt.call.ID, o.CallID)
			require.Equal(t, tt.call.Request.Name, o.Tool)
			require.Equal(t, tt.isError, o.IsError)
			require.Equal(t, tt.retryable, o.Retryable)
			require.True(t, strings.HasPrefix(o.Text(), tt.text), "model sees %q", o.Text())
			if tt.private == "" {
				require.NoError(t, o.Err)
			} else {
				require.ErrorContains(t, o.Err, tt.private)
			}
			if tt.kind == dispatch.KindUnknown || tt.kind == dispatch.KindFailed {
				require.NotContains(t, o.Text(), "10.0", "a private detail reached the model")
			}
			require.Equal(t, tt.kind == dispatch.KindSuspended, o.Checkpoint != nil)
			if tt.kind != dispatch.KindUnknownTool {
				require.NotEmpty(t, o.IdempotencyKey)
			}
		})
	}
}

func TestRunPanicIsPanicError(t *testing.T) {
	o := newDispatcher(t, registry(t, nil)).Run(context.Background(), call("", "boom", `{}`))
	var p *tool.PanicError
	require.ErrorAs(t, o.Err, &p)
	require.Equal(t, "secret detail at 10.0.0.1", p.Value)
	require.NotEmpty(t, p.Stack)
}

// Retryable comes from the Effect and the kind only.
func TestRetryable(t *testing.T) {
	// The call's context ends while the tool runs: whatever the effect,
	// the outcome is unknown.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	failing := func(effect tool.Effect) tool.Binding {
		b, err := tool.Bind(objectTool("t", effect, func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
			cancel()
			return tool.Result{}, ctx.Err()
		}))
		require.NoError(t, err)
		return b
	}
	for _, tt := range []struct {
		effect    tool.Effect
		retryable bool
	}{
		{tool.EffectSafe, true},       // safe: nothing to repeat
		{tool.EffectIdempotent, true}, // the backend deduplicates on the key
		{"", false},                   // unmarked: a retry may repeat an effect
	} {
		reg, err := tool.NewRegistry(failing(tt.effect))
		require.NoError(t, err)
		o := newDispatcher(t, reg).Run(ctx, call("", "t", `{}`))
		require.Equal(t, dispatch.KindUnknown, o.Kind, "effect %q", tt.effect)
		require.Equal(t, tt.retryable, o.Retryable, "effect %q", tt.effect)
		require.Equal(t, tt.effect, o.Effect)
	}
}

func TestRunMedia(t *testing.T) {
	o := newDispatcher(t, registry(t, nil)).Run(context.Background(), call("", "picture", `{}`))
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Len(t, o.Output.Content, 4, "the Output keeps its media for adapters that carry it")
	require.Equal(t, "Here it is.\n[attachment image/png, 3 bytes]\n[attachment text/csv at https://example.com/r.csv]\nDone.", o.Text())
}

func TestText(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  tool.Output
		want string
	}{
		{"empty", tool.Output{}, ""},
		{"text blocks concatenate as Output.Text does", tool.Output{Content: []tool.Block{tool.NewTextBlock("a"), tool.NewTextBlock("b")}}, "ab"},
		{"details when no content", tool.Output{Details: json.RawMessage(`{"n":1}`)}, `{"n":1}`},
		{"media alone", tool.Output{Content: []tool.Block{tool.NewMediaBlock("image/png", make([]byte, 10))}}, "[attachment image/png, 10 bytes]"},
		{"text ending in a newline", tool.Output{Content: []tool.Block{tool.NewTextBlock("a\n"), tool.NewMediaBlock("audio/ogg", nil)}}, "a\n[attachment audio/ogg, 0 bytes]"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, dispatch.Text(tt.out))
		})
	}
}

func TestIdempotencyKeys(t *testing.T) {
	reg := registry(t, nil)
	t.Run("default: 128 random bits, one per call", func(t *testing.T) {
		d := newDispatcher(t, reg)
		seen := map[tool.IdempotencyKey]bool{}
		for range 100 {
			o := d.Run(context.Background(), call("", "add", `{"a":1,"b":1}`))
			require.Len(t, string(o.IdempotencyKey), 32)
			require.False(t, seen[o.IdempotencyKey])
			seen[o.IdempotencyKey] = true
		}
	})
	t.Run("the runtime's generator", func(t *testing.T) {
		var n atomic.Int32
		d := newDispatcher(t, reg, func(c *dispatch.Config) {
			c.NewKey = func() (tool.IdempotencyKey, error) { n.Add(1); return "turn-7-call", nil }
		})
		o := d.Run(context.Background(), call("", "add", `{"a":1,"b":1}`))
		require.Equal(t, tool.IdempotencyKey("turn-7-call"), o.IdempotencyKey)
		require.Equal(t, int32(1), n.Load())
	})
	t.Run("a key the call carries wins", func(t *testing.T) {
		d := newDispatcher(t, reg, func(c *dispatch.Config) {
			c.NewKey = func() (tool.IdempotencyKey, error) { t.Fatal("generator called"); return "", nil }
		})
		c := call("", "add", `{"a":1,"b":1}`)
		c.IdempotencyKey = "chosen"
		require.Equal(t, tool.IdempotencyKey("chosen"), d.Run(context.Background(), c).IdempotencyKey)
	})
	t.Run("a generator error runs nothing", func(t *testing.T) {
		var calls atomic.Int32
		d := newDispatcher(t, registry(t, &calls), func(c *dispatch.Config) {
			c.NewKey = func() (tool.IdempotencyKey, error) { return "", errors.New("entropy exhausted") }
		})
		o := d.Run(context.Background(), call("", "refund", `{"order":"A-1"}`))
		require.Equal(t, dispatch.KindUnknown, o.Kind)
		require.ErrorContains(t, o.Err, "entropy exhausted")
		require.Zero(t, calls.Load())
	})
	t.Run("a key JSON cannot carry is refused before the tool runs", func(t *testing.T) {
		var calls atomic.Int32
		d := newDispatcher(t, registry(t, &calls))
		c := call("", "refund", `{"order":"A-1"}`)
		c.IdempotencyKey = "\xff"
		o := d.Run(context.Background(), c)
		require.Equal(t, dispatch.KindUnknown, o.Kind)
		require.ErrorIs(t, o.Err, tool.ErrInvalidInvocation)
		require.Zero(t, calls.Load())
	})
}

func TestRunAll(t *testing.T) {
	reg := registry(t, nil)
	calls := []dispatch.Call{
		call("1", "add", `{"a":1,"b":2}`),
		call("2", "boom", `{}`),
		call("3", "add", `{"a":"x"}`),
		call("4", "nope", `{}`),
		call("5", "fail", `{}`),
		call("6", "add", `{"a":40,"b":2}`),
	}
	want := []dispatch.Kind{dispatch.KindCompleted, dispatch.KindUnknown, dispatch.KindRejected, dispatch.KindUnknownTool, dispatch.KindFailed, dispatch.KindCompleted}
	for _, limit := range []int{0, 1, 2, 6, 100} {
		d := newDispatcher(t, reg, func(c *dispatch.Config) { c.MaxConcurrency = limit })
		outcomes := d.RunAll(context.Background(), calls)
		require.Len(t, outcomes, len(calls))
		for i, o := range outcomes {
			require.Equal(t, calls[i].ID, o.CallID, "limit %d: outcomes in call order", limit)
			require.Equal(t, want[i], o.Kind, "limit %d, call %s", limit, o.CallID)
		}
		require.Equal(t, "3", outcomes[0].Text())
		require.Equal(t, "42", outcomes[5].Text())
	}
	require.Empty(t, newDispatcher(t, reg).RunAll(context.Background(), nil))
}

// The bound holds: never more calls in flight than MaxConcurrency, and with
// a bound of 3 the calls do overlap.
func TestRunAllBound(t *testing.T) {
	var inFlight, peak atomic.Int32
	var mu sync.Mutex
	release := make(chan struct{})
	slow := objectTool("slow", tool.EffectSafe, func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		mu.Lock()
		peak.Store(max(peak.Load(), n))
		mu.Unlock()
		select {
		case <-release:
		case <-time.After(20 * time.Millisecond):
		}
		return tool.Result{Output: tool.NewTextOutput("ok")}, nil
	})
	reg := registryOf(t, slow)
	d := newDispatcher(t, reg, func(c *dispatch.Config) { c.MaxConcurrency = 3 })
	calls := make([]dispatch.Call, 12)
	for i := range calls {
		calls[i] = call("", "slow", `{}`)
	}
	for _, o := range d.RunAll(context.Background(), calls) {
		require.Equal(t, dispatch.KindCompleted, o.Kind)
	}
	close(release)
	require.LessOrEqual(t, peak.Load(), int32(3))
	require.Greater(t, peak.Load(), int32(1))
}

func TestLogger(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey || a.Key == "duration" {
			return slog.Attr{}
		}
		return a
	}}))
	d := newDispatcher(t, registry(t, nil), func(c *dispatch.Config) {
		c.Logger = logger
		c.NewKey = func() (tool.IdempotencyKey, error) { return "k", nil }
	})
	d.RunAll(context.Background(), []dispatch.Call{call("1", "add", `{"a":1,"b":1}`), call("2", "fail", `{}`), call("3", "flaky", `{}`), call("4", "x", `{}`)})
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Equal(t, []string{
		`{"level":"INFO","msg":"tool call","tool":"add","call_id":"1","idempotency_key":"k","kind":"completed"}`,
		`{"level":"WARN","msg":"tool call","tool":"fail","call_id":"2","idempotency_key":"k","kind":"failed","error":"tool: failed: the order is closed","cause":"db: row 7 locked"}`,
		`{"level":"ERROR","msg":"tool call","tool":"flaky","call_id":"3","idempotency_key":"k","kind":"unknown","error":"dial tcp 10.0.3.7:443: connection refused"}`,
		`{"level":"WARN","msg":"tool call","tool":"x","call_id":"4","idempotency_key":"","kind":"unknown_tool","error":"no tool named \"x\" in the registry"}`,
	}, lines)
}

func TestNewConfig(t *testing.T) {
	reg := &tool.Registry{}
	store := memoryStore(t)
	key := dispatch.SealKey{ID: "k", Secret: secret}
	for _, tt := range []struct {
		name   string
		config dispatch.Config
		want   string
	}{
		{"no store", dispatch.Config{Registry: reg, SealKeys: []dispatch.SealKey{key}}, "tool: invalid dispatch config: seal keys but no Store: a checkpoint must be claimed in a store every replica shares (NewMemoryStore for one process)"},
		{"typed nil store", dispatch.Config{Registry: reg, Store: (*dispatch.MemoryStore)(nil), SealKeys: []dispatch.SealKey{key}}, "tool: invalid dispatch config: seal keys but no Store: a checkpoint must be claimed in a store every replica shares (NewMemoryStore for one process)"},
		{"no registry", dispatch.Config{Store: store, SealKeys: []dispatch.SealKey{key}}, "tool: invalid dispatch config: the registry is nil"},
		{"no key", dispatch.Config{Store: store, Registry: reg}, "tool: invalid dispatch config: a Store but no seal key: checkpoints of suspended calls must be sealed"},
		{"short secret", dispatch.Config{Store: store, Registry: reg, SealKeys: []dispatch.SealKey{{ID: "k", Secret: []byte("short")}}}, `tool: invalid dispatch config: seal key "k": the secret is 5 bytes, want at least 32`},
		{"empty ID", dispatch.Config{Store: store, Registry: reg, SealKeys: []dispatch.SealKey{{Secret: secret}}}, `tool: invalid dispatch config: seal key 0: key ID "" must be 1 to 64 characters`},
		{"ID with a space", dispatch.Config{Store: store, Registry: reg, SealKeys: []dispatch.SealKey{{ID: "a b", Secret: secret}}}, `tool: invalid dispatch config: seal key 0: key ID "a b" must be printable ASCII without spaces`},
		{"ID twice", dispatch.Config{Store: store, Registry: reg, SealKeys: []dispatch.SealKey{key, key}}, `tool: invalid dispatch config: seal key ID "k" appears twice`},
		{"negative concurrency", dispatch.Config{Store: store, Registry: reg, SealKeys: []dispatch.SealKey{key}, MaxConcurrency: -1}, "tool: invalid dispatch config: MaxConcurrency is -1, want 0 or more"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := dispatch.New(tt.config)
			require.Nil(t, d)
			require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
			require.EqualError(t, err, tt.want)
		})
	}
}

// New copies the secrets: changing the caller's slice changes nothing.
func TestNewCopiesSecrets(t *testing.T) {
	mine := bytes.Clone(secret)
	d, err := dispatch.New(dispatch.Config{Registry: registry(t, nil), Store: memoryStore(t), SealKeys: []dispatch.SealKey{{ID: "k1", Secret: mine}}})
	require.NoError(t, err)
	o := d.Run(context.Background(), call("", "refund", `{"order":"A-1"}`))
	mine[0] ^= 1
	_, err = d.Resume(context.Background(), *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
}

func TestZeroDispatcher(t *testing.T) {
	var d *dispatch.Dispatcher
	o := d.Run(context.Background(), call("1", "add", `{}`))
	require.Equal(t, dispatch.KindUnknown, o.Kind)
	require.ErrorIs(t, o.Err, dispatch.ErrInvalidConfig)
	require.ErrorIs(t, (&dispatch.Dispatcher{}).Open(dispatch.Checkpoint{}), dispatch.ErrInvalidConfig)
	require.Len(t, d.RunAll(context.Background(), []dispatch.Call{call("1", "add", `{}`)}), 1)
}

func TestProgress(t *testing.T) {
	reporting := objectTool("long", tool.EffectSafe, func(ctx context.Context, _ tool.Invocation) (tool.Result, error) {
		for i := 1; i <= 3; i++ {
			if err := tool.ReportProgress(ctx, tool.Progress{Completed: float64(i), Total: 3}); err != nil {
				return tool.Result{}, err
			}
		}
		return tool.Result{Output: tool.NewTextOutput("done")}, nil
	})
	reg := registryOf(t, reporting)
	var got []float64
	c := call("", "long", `{}`)
	c.Progress = tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		got = append(got, p.Completed)
		return nil
	})
	o := newDispatcher(t, reg).Run(context.Background(), c)
	require.Equal(t, dispatch.KindCompleted, o.Kind)
	require.Equal(t, []float64{1, 2, 3}, got)
}

// A tool that decodes its own arguments inside Call and finds them wrong
// returns an InputRejection: rejected, with its message for the model.
func TestRunRejectedByCall(t *testing.T) {
	strict := objectTool("strict", tool.EffectSafe, func(context.Context, tool.Invocation) (tool.Result, error) {
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "at /city: not a city we deliver to", Cause: errors.New("lookup table v7")})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{}, r
	})
	reg := registryOf(t, strict, tool.Recover)
	o := newDispatcher(t, reg).Run(context.Background(), call("", "strict", `{}`))
	require.Equal(t, dispatch.KindRejected, o.Kind)
	require.True(t, o.IsError)
	require.Equal(t, "at /city: not a city we deliver to", o.Text())
	require.False(t, o.Retryable)
}
