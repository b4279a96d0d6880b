package tooltemporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// ledger stands for the system a tool acts on: it counts the real
// effects of each key. A backend that honours keys (dedup) applies a
// key's effect once, however often it is asked.
type ledger struct {
	mu      sync.Mutex
	effects map[tool.IdempotencyKey]int
	calls   int
}

func newLedger() *ledger { return &ledger{effects: map[tool.IdempotencyKey]int{}} }

func (l *ledger) apply(key tool.IdempotencyKey, dedup bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if dedup && l.effects[key] > 0 {
		return
	}
	l.effects[key]++
}

// total is the number of real effects, of every key, and of calls.
func (l *ledger) total() (effects, calls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, n := range l.effects {
		effects += n
	}
	return effects, l.calls
}

func (l *ledger) applied(key tool.IdempotencyKey) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.effects[key] > 0
}

// The points at which the first attempt of a call's activity is cut.
type faultPoint string

const (
	// The worker dies inside the tool, before it acts: the attempt
	// never completes.
	diesBefore faultPoint = "worker dies before the effect"
	// The worker dies inside the tool, after it acted and before its
	// result returns.
	diesAfter faultPoint = "worker dies after the effect"
	// The attempt completes, and its result is lost (it times out
	// before the server takes it).
	resultLost faultPoint = "result lost (attempt timed out)"
	// The tool panics before it acts: the attempt fails, unknown.
	panicsBefore faultPoint = "tool panics before the effect"
	// The tool panics after it acted: the attempt fails, unknown.
	panicsAfter faultPoint = "tool panics after the effect"
)

var faultPoints = []faultPoint{diesBefore, diesAfter, resultLost, panicsBefore, panicsAfter}

// before reports whether the fault cuts the attempt before the effect.
func (f faultPoint) before() bool { return f == diesBefore || f == panicsBefore }

// What a tool offers about a retry of its call.
type toolKind struct {
	name       string
	effect     tool.Effect
	dedup      bool // its backend honours the key
	reconciler string
}

const (
	reconcileLedger = "asks the ledger"
	reconcileUnsure = "cannot tell"
)

var toolKinds = []toolKind{
	{name: "plain", effect: ""},
	{name: "plain_reconciled", effect: "", reconciler: reconcileLedger},
	{name: "plain_unsure", effect: "", reconciler: reconcileUnsure},
	{name: "idempotent", effect: tool.EffectIdempotent, dedup: true},
	{name: "idempotent_reconciled", effect: tool.EffectIdempotent, dedup: true, reconciler: reconcileLedger},
}

// protected says whether the kind promises no duplicate: a reconciler
// that can tell, or a replay under the key that is safe.
func (k toolKind) protected() bool { return k.reconciler == reconcileLedger || k.dedup }

// faultScript is one case's state: the fault to inject, once, and the
// signal the tool gives when the worker is to die.
type faultScript struct {
	fault faultPoint
	mu    sync.Mutex
	fired bool
	died  chan struct{}
}

// fire reports whether this invocation of the tool is the one the
// fault cuts: the first.
func (s *faultScript) fire() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	first := !s.fired
	s.fired = true
	return first
}

// faultTool acts on the ledger under the call's key, and is cut by the
// script at its fault point on its first invocation.
type faultTool struct {
	kind   toolKind
	ledger *ledger
	script *faultScript
}

func (f faultTool) Definition() tool.Definition {
	return tool.Definition{Name: f.kind.name, InputSchema: json.RawMessage(`{"type":"object"}`), Effect: f.kind.effect}
}

func (f faultTool) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	cut := f.script.fire()
	if cut && f.script.fault.before() {
		f.cut(ctx)
	}
	f.ledger.apply(inv.IdempotencyKey(), f.kind.dedup)
	if cut && !f.script.fault.before() {
		f.cut(ctx)
	}
	return tool.Result{Output: tool.NewTextOutput("applied")}, nil
}

// cut injects the fault inside the tool: a panic, or the worker's death
// (the tool stops at this point, and the attempt never returns).
func (f faultTool) cut(ctx context.Context) {
	switch f.script.fault {
	case panicsBefore, panicsAfter:
		panic("the tool broke at its fault point")
	case diesBefore, diesAfter:
		close(f.script.died)
		<-ctx.Done()
		panic(errWorkerDied)
	}
}

var errWorkerDied = errors.New("this goroutine stands for a worker that died")

// errLost is what Temporal reports of an attempt whose worker died or
// whose result did not arrive in time: a retryable failure that holds
// nothing of the call's outcome.
func errLost() error {
	return temporal.NewApplicationError("the attempt timed out: its worker is gone, or its result was lost", "test.AttemptLost")
}

// faultyActivity is the call activity of rt with the script's fault
// injected into its first attempt: a worker death returns errLost
// without the activity's result once the tool signals it (the abandoned
// attempt is then cancelled, as a dead worker does nothing more), and a
// lost result returns errLost after the activity completed. The later
// attempts run on another worker, next, which knows nothing of the
// first: its process is gone.
func faultyActivity(rt, next *Runtime, s *faultScript) func(context.Context, callInput) (callResult, error) {
	return func(ctx context.Context, in callInput) (callResult, error) {
		if activity.GetInfo(ctx).Attempt > 1 {
			return next.callActivity(ctx, in)
		}
		switch s.fault {
		case resultLost:
			_, _ = rt.callActivity(ctx, in)
			return callResult{}, errLost()
		case diesBefore, diesAfter:
			actx, cancel := context.WithCancel(ctx)
			done := make(chan struct{})
			var res callResult
			var err error
			go func() {
				defer close(done)
				res, err = rt.callActivity(actx, in)
			}()
			select {
			case <-s.died:
				cancel()
				<-done
				return callResult{}, errLost()
			case <-done:
				cancel()
				return res, err
			}
		}
		return rt.callActivity(ctx, in)
	}
}

// faultCase is one scripted case, and what it must show.
type faultCase struct {
	fault       faultPoint
	kind        toolKind
	wantEffects int
	wantKind    dispatch.Kind
}

// faultCases are every fault point × every tool kind: a kind that
// promises no duplicate has the effect once and completes; any other
// shows its outcome as unknown, with the effect of the first attempt
// only.
func faultCases() []faultCase {
	var cases []faultCase
	for _, k := range toolKinds {
		for _, f := range faultPoints {
			c := faultCase{fault: f, kind: k, wantEffects: 1, wantKind: dispatch.KindCompleted}
			if !k.protected() {
				c.wantKind = dispatch.KindUnknown
				if f.before() {
					c.wantEffects = 0
				}
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// faultSeen is what a case showed.
type faultSeen struct {
	Kind     dispatch.Kind `json:"kind"`
	Text     string        `json:"text"`
	Effects  int           `json:"-"`
	Calls    int           `json:"-"`
	Asked    int           `json:"-"`
	Attempts int           `json:"-"`
}

// runFaultCase runs c's call in a workflow of the test environment,
// with its first attempt cut at c's fault point, and returns what it
// showed.
func runFaultCase(t *testing.T, c faultCase) faultSeen {
	t.Helper()
	l := newLedger()
	script := &faultScript{fault: c.fault, died: make(chan struct{})}
	b, err := tool.Bind(faultTool{kind: c.kind, ledger: l, script: script})
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	var mu sync.Mutex
	var asked []dispatch.Reconciliation
	var reconcilers map[string]dispatch.Reconciler
	if c.kind.reconciler != "" {
		reconcilers = map[string]dispatch.Reconciler{c.kind.name: func(_ context.Context, r dispatch.Reconciliation) dispatch.Verdict {
			mu.Lock()
			asked = append(asked, r)
			mu.Unlock()
			switch {
			case c.kind.reconciler == reconcileUnsure:
				return dispatch.CannotTell(errors.New("the ledger is down"))
			case l.applied(r.IdempotencyKey):
				return dispatch.Done(tool.NewTextOutput("applied"))
			}
			return dispatch.NotDone()
		}}
	}
	config := Config{
		Registry:    reg,
		SealKeys:    []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}},
		Reconcilers: reconcilers,
		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 5}},
	}
	rt, err := New(config)
	require.NoError(t, err)
	next, err := New(config)
	require.NoError(t, err)

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	attempts := 0
	env.SetOnActivityStartedListener(func(*activity.Info, context.Context, converter.EncodedValues) { attempts++ })
	env.RegisterActivityWithOptions(faultyActivity(rt, next, script), activity.RegisterOptions{Name: ActivityName})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, call dispatch.Call) (faultSeen, error) {
		session, err := rt.NewSession(ctx)
		if err != nil {
			return faultSeen{}, err
		}
		o := session.Run(ctx, []dispatch.Call{call})[0]
		return faultSeen{Kind: o.Kind, Text: o.Text()}, nil
	}, workflow.RegisterOptions{Name: "faults"})
	env.ExecuteWorkflow("faults", dispatch.Call{ID: "c1", Principal: "alice",
		Request: tool.Request{Name: c.kind.name, Arguments: `{ "order": "A-7", "cents": 1250 }`}})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var seen faultSeen
	require.NoError(t, env.GetWorkflowResult(&seen))
	seen.Effects, seen.Calls = l.total()
	seen.Asked, seen.Attempts = len(asked), attempts
	for _, r := range asked {
		require.Equal(t, c.kind.name, r.Tool)
		require.Equal(t, "alice", r.Principal)
		require.True(t, strings.HasSuffix(string(r.IdempotencyKey), "/1"), "the key workflow state chose: %s", r.IdempotencyKey)
		require.JSONEq(t, `{"cents":1250,"order":"A-7"}`, string(r.Arguments))
		require.Equal(t, `{"cents":1250,"order":"A-7"}`, string(r.Arguments), "canonical")
		require.Equal(t, dispatch.StateRunning, r.Record.State)
		require.Equal(t, 1, r.Record.Attempt, "the attempt that was cut")
	}
	return seen
}

// Every fault point × every tool kind: an attempt of the call's activity
// is cut, then Temporal retries it. A tool with a reconciler that can
// tell, or one whose backend honours its key, has its effect once and
// completes; any other's outcome is shown as unknown, and its effect is
// never repeated. Under -short, one case per fault point and per kind.
func TestFaultsRetriedActivityReconciles(t *testing.T) {
	cases := faultCases()
	require.GreaterOrEqual(t, len(cases), 20)
	var table strings.Builder
	table.WriteString("| fault | tool | effects expected | effects seen | backend calls | attempts | reconciler asked | outcome |\n|---|---|---|---|---|---|---|---|\n")
	for i, c := range cases {
		// The smoke subset: the diagonal, which has every fault point
		// and every kind once.
		if testing.Short() && i/len(faultPoints) != i%len(faultPoints) {
			continue
		}
		t.Run(fmt.Sprintf("%s/%s", c.kind.name, c.fault), func(t *testing.T) {
			seen := runFaultCase(t, c)
			fmt.Fprintf(&table, "| %s | %s | %d | %d | %d | %d | %d | %s |\n", c.fault, c.kind.name, c.wantEffects, seen.Effects, seen.Calls, seen.Attempts, seen.Asked, seen.Kind)
			require.Equal(t, c.wantEffects, seen.Effects, "real effects")
			require.Equal(t, c.wantKind, seen.Kind, "%s", seen.Text)
			if c.wantKind == dispatch.KindUnknown {
				require.Equal(t, `The call to "`+c.kind.name+`" did not complete and its outcome is unknown.`, seen.Text)
			}
			switch {
			case c.kind.reconciler != "":
				require.Equal(t, 1, seen.Asked, "the retry asks the reconciler once")
				require.Equal(t, 2, seen.Attempts)
			case c.kind.dedup:
				require.Equal(t, 2, seen.Attempts)
			default:
				require.Equal(t, 1, seen.Attempts, "a tool that cannot be reconciled runs once")
			}
		})
	}
	t.Log("\n" + table.String())
}

// A Reconciler that is nil, or registered for the empty name, is refused
// by New, as dispatch.New refuses it.
func TestNewRefusesBadReconcilers(t *testing.T) {
	reg, err := tool.NewRegistry()
	require.NoError(t, err)
	for _, r := range []map[string]dispatch.Reconciler{
		{"refund": nil},
		{"": func(context.Context, dispatch.Reconciliation) dispatch.Verdict { return dispatch.NotDone() }},
	} {
		rt, err := New(Config{Registry: reg, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}},
			ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute}, Reconcilers: r})
		require.Nil(t, rt)
		require.ErrorIs(t, err, dispatch.ErrInvalidConfig)
	}
}
