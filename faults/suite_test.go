package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// point is a point of a call's life where the suite injects a fault.
type point int

const (
	beforeRecord point = iota
	afterRecord
	toolBeforeEffect
	toolAfterEffect
	afterToolBeforeOutcome
	whileOutcome
)

var points = []point{beforeRecord, afterRecord, toolBeforeEffect, toolAfterEffect, afterToolBeforeOutcome, whileOutcome}

func (p point) String() string {
	return [...]string{"before the record", "after the record", "in the tool, before the effect", "in the tool, after the effect", "after the tool, before the outcome", "while the outcome is written"}[p]
}

// kind is how a tool is made safe to call again.
type kind int

const (
	reconciled kind = iota
	idempotent
	unmarked
)

var kinds = []kind{reconciled, idempotent, unmarked}

func (k kind) String() string { return [...]string{"reconciler", "idempotent", "neither"}[k] }

// ledger is the backend the tools act on: a file every process appends a
// line to per real effect, so that a killed worker's effects are counted.
type ledger struct {
	path string
	mu   sync.Mutex
}

// apply has the effect of key; dedupe (an idempotent backend) skips a
// key it has.
func (l *ledger) apply(key string, dedupe bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if dedupe && l.count(key) > 0 {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// count is the number of effects key had.
func (l *ledger) count(key string) int {
	f, err := os.Open(l.path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		if s.Text() == key {
			n++
		}
	}
	return n
}

// reconciler asks the ledger: done when it has the key's effect.
func (l *ledger) reconciler(_ context.Context, r dispatch.Reconciliation) dispatch.Verdict {
	if l.count(string(r.IdempotencyKey)) > 0 {
		return dispatch.Done(refunded(r.IdempotencyKey))
	}
	return dispatch.NotDone()
}

func refunded(key tool.IdempotencyKey) tool.Output {
	return tool.NewTextOutput(fmt.Sprintf("refunded under %s", key))
}

// injector fires the fault of a case once, at its point, in its first
// attempt only.
type injector struct {
	at    point
	armed atomic.Bool
	fire  func(ctx context.Context)
}

func newInjector(at point, fire func(ctx context.Context)) *injector {
	in := &injector{at: at, fire: fire}
	in.armed.Store(true)
	return in
}

// hit fires the fault when p is its point and it is still armed.
func (in *injector) hit(ctx context.Context, p point) {
	if in == nil || p != in.at || !in.armed.CompareAndSwap(true, false) {
		return
	}
	in.fire(ctx)
}

// refundTool is the tool of the suite: it refunds on the ledger under its
// key, honouring its ctx before the effect.
type refundTool struct {
	kind kind
	l    *ledger
	in   *injector
}

func (rt *refundTool) Definition() tool.Definition {
	effect := tool.Effect("")
	if rt.kind == idempotent {
		effect = tool.EffectIdempotent
	}
	return tool.Definition{Name: "refund", Description: "refunds an order", Effect: effect,
		InputSchema: []byte(`{"type":"object","properties":{"cents":{"type":"integer"}},"required":["cents"]}`)}
}

func (rt *refundTool) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	rt.in.hit(ctx, toolBeforeEffect)
	if err := ctx.Err(); err != nil {
		return tool.Result{}, context.Cause(ctx)
	}
	key := inv.IdempotencyKey()
	if err := rt.l.apply(string(key), rt.kind == idempotent); err != nil {
		return tool.Result{}, err
	}
	rt.in.hit(ctx, toolAfterEffect)
	return tool.Result{Output: refunded(key)}, nil
}

// hookStore fires an injector around the writes of Run's call records.
type hookStore struct {
	dispatch.CallStore
	in *injector
}

func (h *hookStore) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	if c.AnswerSHA256 != dispatch.RunSHA256 {
		return h.CallStore.Claim(ctx, c)
	}
	h.in.hit(ctx, beforeRecord)
	prior, err := h.CallStore.Claim(ctx, c)
	if err == nil && prior == nil {
		h.in.hit(ctx, afterRecord)
	}
	return prior, err
}

func (h *hookStore) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	h.in.hit(ctx, afterToolBeforeOutcome)
	err := h.CallStore.Finish(ctx, id, o)
	h.in.hit(ctx, whileOutcome)
	return err
}

func (h *hookStore) Advance(ctx context.Context, id string, s dispatch.Step) (dispatch.Claim, error) {
	if s.State == dispatch.StateUnknown {
		h.in.hit(ctx, afterToolBeforeOutcome)
		c, err := h.CallStore.Advance(ctx, id, s)
		h.in.hit(ctx, whileOutcome)
		return c, err
	}
	return h.CallStore.Advance(ctx, id, s)
}

// secret is the suite's seal key.
var secret = []byte("0123456789abcdef0123456789abcdef")

// dispatcher returns a Dispatcher of the refund tool of kind k on store,
// with the clock moved on by skew (another process, later: the first
// attempt's lease has ended).
func dispatcher(t testing.TB, k kind, l *ledger, in *injector, store dispatch.CallStore, skew time.Duration, observer *dispatch.Observer) *dispatch.Dispatcher {
	t.Helper()
	b, err := tool.Bind(&refundTool{kind: k, l: l, in: in})
	require.NoError(t, err)
	reg := &tool.Registry{}
	require.NoError(t, reg.Register(b))
	config := dispatch.Config{
		Registry: reg, Store: &hookStore{CallStore: store, in: in},
		SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}},
		Lease:    time.Minute, Observer: observer,
		Clock: func() time.Time { return time.Now().Add(skew) },
	}
	if k == reconciled {
		config.Reconcilers = map[string]dispatch.Reconciler{"refund": l.reconciler}
	}
	d, err := dispatch.New(config)
	require.NoError(t, err)
	return d
}

// later is the clock skew of a retry in another process: past the first
// attempt's lease.
const later = 2 * time.Minute

// result is what one case of the matrix saw.
type result struct {
	path    string
	at      point
	kind    kind
	effects int
	// unknownShown: the retry's outcome is unknown and its record says so.
	unknownShown bool
	stranded     bool
	// baseline: a case of the baseline (no records, no keys).
	baseline bool
}

// check asserts the package's promise on a case: a tool with a
// reconciler or an idempotent effect has its effect exactly once, a
// completed retry and a record that is not stranded; one with neither
// has it at most once, and a retry that did not complete shows its
// outcome as unknown.
func check(t *testing.T, r result, retry dispatch.Outcome, state dispatch.State) result {
	t.Helper()
	r.stranded = state == dispatch.StateRunning || state == dispatch.StateClaimed
	r.unknownShown = retry.Kind == dispatch.KindUnknown && state == dispatch.StateUnknown
	require.False(t, r.stranded, "stranded record (%s)", state)
	switch r.kind {
	case reconciled, idempotent:
		require.Equal(t, 1, r.effects, "effects")
		require.Equal(t, dispatch.KindCompleted, retry.Kind, "retry: %v", retry.Err)
	default:
		require.LessOrEqual(t, r.effects, 1, "effects")
		if retry.Kind != dispatch.KindCompleted {
			require.True(t, r.unknownShown, "a retry of %s that did not complete is shown as unknown (%s, record %s): %v", r.kind, retry.Kind, state, retry.Err)
		} else {
			require.Equal(t, 1, r.effects)
		}
	}
	return r
}

// recordState is the state of the record of key's refund call for
// principal, "" when there is none.
func recordState(t testing.TB, store dispatch.CallStore, principal string, key tool.IdempotencyKey) dispatch.State {
	t.Helper()
	c, err := store.Claimed(context.Background(), dispatch.RunRecordID("refund", principal, key))
	if errors.Is(err, dispatch.ErrNotFound) {
		return ""
	}
	require.NoError(t, err)
	return c.Stage()
}

// uniqueKey is a key no earlier run of the suite used (the PostgreSQL
// tables outlive a run).
func uniqueKey(t testing.TB) tool.IdempotencyKey {
	return tool.IdempotencyKey(fmt.Sprintf("order-7/%s/%d", strings.NewReplacer("/", "-", " ", "_", ",", "").Replace(t.Name()), time.Now().UnixNano()))
}

func refundCall(key tool.IdempotencyKey) dispatch.Call {
	return dispatch.Call{Request: tool.Request{Name: "refund", Arguments: `{"cents":1250}`}, IdempotencyKey: key}
}

// countPrefix is the number of effects of keys that start with prefix.
func (l *ledger) countPrefix(prefix string) int {
	f, err := os.Open(l.path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), prefix) {
			n++
		}
	}
	return n
}
