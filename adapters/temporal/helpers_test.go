package tooltemporal_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// Every private error of the test tools holds a fake secret that starts
// with planted: a Failure's and an InputRejection's cause, a panic's
// value, a backend's error. None may reach the workflow's history.
const planted = "SECRET-"

// secret is a test seal key; real ones come from crypto/rand.
var secret = []byte("0123456789abcdef0123456789abcdef")

// backend stands for the systems behind the tools: it outlives any worker
// and registry, records every attempt with the key it carried, and makes
// the first attempts of a tool fail when told to.
type backend struct {
	mu        sync.Mutex
	keys      map[string][]tool.IdempotencyKey
	failFirst map[string]int
}

func newBackend() *backend {
	return &backend{keys: map[string][]tool.IdempotencyKey{}, failFirst: map[string]int{}}
}

// attempt records an attempt of name with key and says whether it fails.
func (b *backend) attempt(name string, key tool.IdempotencyKey) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.keys[name] = append(b.keys[name], key)
	if len(b.keys[name]) <= b.failFirst[name] {
		return fmt.Errorf("SECRET-backend-error: %s backend at 10.0.3.7: connection reset (attempt %d)", name, len(b.keys[name]))
	}
	return nil
}

// attempts returns the keys of every attempt of name, in order.
func (b *backend) attempts(name string) []tool.IdempotencyKey {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]tool.IdempotencyKey(nil), b.keys[name]...)
}

const itemSchema = `{"type":"object","properties":{"item":{"type":"string","minLength":1}},"required":["item"],"additionalProperties":false}`

// recording is a tool of effect that records each attempt with b and
// completes with the key it saw.
func recording(b *backend, name string, effect tool.Effect) adaptertest.Func {
	return adaptertest.Func{
		Def: tool.Definition{Name: name, InputSchema: json.RawMessage(itemSchema), Effect: effect},
		Fn: func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
			if err := b.attempt(name, inv.IdempotencyKey()); err != nil {
				return tool.Result{}, err
			}
			return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("%s done with key %s", name, inv.IdempotencyKey()))}, nil
		},
	}
}

// lookupInput is the input of the safe lookup tool.
type lookupInput struct {
	Item string `json:"item" jsonschema:"minLength=1"`
}

// newRegistry builds every tool of the tests from scratch; only b, the
// backend, is shared with any earlier registry.
func newRegistry(t testing.TB, b *backend) *tool.Registry {
	t.Helper()
	lookup, err := tool.NewFunc(tool.FuncConfig{Name: "lookup", Description: "stock of an item", Effect: tool.EffectSafe},
		func(_ context.Context, in lookupInput) (string, error) {
			return fmt.Sprintf("%d in stock of %s", len(in.Item), in.Item), nil
		})
	require.NoError(t, err)
	refund := adaptertest.Func{
		Def: tool.Definition{Name: "refund", Description: "refund an order once a person approves", InputSchema: json.RawMessage(itemSchema), Effect: tool.EffectIdempotent},
		Fn: func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
			if err := b.attempt("refund", inv.IdempotencyKey()); err != nil {
				return tool.Result{}, err
			}
			c, resumed := inv.Continuation()
			if !resumed {
				return adaptertest.Ask(`{"question":"Refund the order?"}`,
					`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"],"additionalProperties":false}`, `{"asked":1}`)
			}
			var answer struct{ Approved bool }
			if err := json.Unmarshal(c.Response(), &answer); err != nil {
				return tool.Result{}, err
			}
			if !answer.Approved {
				return tool.Result{}, adaptertest.Failure(tool.FailureKindRejected, "The refund was declined.", nil)
			}
			return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("refunded with key %s after %s", inv.IdempotencyKey(), c.State()))}, nil
		},
	}
	report := adaptertest.Func{
		Def: tool.Definition{Name: "report", Description: "a report with an attachment", InputSchema: json.RawMessage(itemSchema), Effect: tool.EffectSafe},
		Fn: func(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
			for i := range 3 {
				if err := tool.ReportProgress(ctx, tool.Progress{Completed: float64(i + 1), Total: 3, Message: fmt.Sprintf("step %d", i+1)}); err != nil {
					return tool.Result{}, err
				}
			}
			return tool.Result{Output: tool.Output{
				Content: []tool.Block{tool.NewTextBlock("the report"), tool.NewMediaBlock("text/csv", []byte("a,b\n1,2\n"))},
			}}, nil
		},
	}
	// cancel ends every call with a definite Failure whose public output
	// has text, media and details, and whose cause is private.
	cancel := adaptertest.Func{
		Def: tool.Definition{Name: "cancel", Description: "cancel an order", InputSchema: json.RawMessage(itemSchema)},
		Fn: func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
			return tool.Result{}, mustFailure(tool.FailureConfig{
				Kind:   tool.FailureKindFailed,
				Output: cancelOutput,
				Cause:  errors.New("SECRET-failure-cause: orders DB: row locked by txn 7741"),
			})
		},
	}
	// picky refuses its input in Call, after admission. (A safe tool's
	// errors become Failures at the binding; picky makes no promise.)
	picky := adaptertest.Func{
		Def: tool.Definition{Name: "picky", Description: "refuses every item when called", InputSchema: json.RawMessage(itemSchema)},
		Fn: func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
			rejection, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "item is out of range", Cause: errors.New("SECRET-rejection-cause: catalogue row 7 says no")})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{}, rejection
		},
	}
	// explode panics with a private value; it makes no replay promise,
	// so it runs once.
	explode := adaptertest.Func{
		Def: tool.Definition{Name: "explode", Description: "panics", InputSchema: json.RawMessage(itemSchema)},
		Fn: func(context.Context, tool.Invocation) (tool.Result, error) {
			panic("SECRET-panic-value: session token abc123")
		},
	}
	var bindings []tool.Binding
	for _, t0 := range []tool.Tool{
		lookup, refund, report, cancel, picky, explode,
		recording(b, "reserve", tool.EffectIdempotent),
		recording(b, "charge", ""),
	} {
		bound, err := tool.Bind(t0, tool.Recover)
		require.NoError(t, err)
		bindings = append(bindings, bound)
	}
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	return reg
}

var cancelOutput = tool.Output{
	Content: []tool.Block{tool.NewTextBlock("The order could not be cancelled."), tool.NewMediaURIBlock("image/png", "https://example.com/receipt.png")},
	Details: json.RawMessage(`{"order":"A-1","state":"locked","amount":12345678901234567890}`),
}

func mustFailure(config tool.FailureConfig) *tool.Failure {
	f, err := tool.NewFailure(config)
	if err != nil {
		panic(err)
	}
	return f
}

// retry is the policy of replayable tools in the tests: quick, and enough
// attempts for a tool that fails twice.
var retry = &temporal.RetryPolicy{InitialInterval: time.Millisecond, BackoffCoefficient: 1, MaximumAttempts: 5}

func newRuntime(t testing.TB, reg *tool.Registry) *tooltemporal.Runtime {
	t.Helper()
	rt, err := tooltemporal.New(tooltemporal.Config{
		Registry:        reg,
		SealKeys:        []dispatch.SealKey{{ID: "k1", Secret: secret}},
		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: retry},
	})
	require.NoError(t, err)
	return rt
}

// outcome is what the test workflow returns of a dispatch.Outcome: its
// serialisable part.
type outcome struct {
	CallID    string              `json:"call_id"`
	Tool      string              `json:"tool"`
	Kind      dispatch.Kind       `json:"kind"`
	Output    tool.Output         `json:"output"`
	IsError   bool                `json:"is_error"`
	Retryable bool                `json:"retryable"`
	Key       tool.IdempotencyKey `json:"key"`
	Err       string              `json:"err,omitempty"`
}

func view(outcomes []dispatch.Outcome) []outcome {
	out := make([]outcome, len(outcomes))
	for i, o := range outcomes {
		out[i] = outcome{CallID: o.CallID, Tool: o.Tool, Kind: o.Kind, Output: o.Output, IsError: o.IsError, Retryable: o.Retryable, Key: o.IdempotencyKey}
		if o.Err != nil {
			out[i].Err = o.Err.Error()
		}
		if f, ok := tool.ClassifyFailure(o.Err); ok && f.Cause() != nil {
			out[i].Err += "; cause: " + f.Cause().Error()
		}
	}
	return out
}

// turnWorkflowName is the test workflow: it runs each turn it is given,
// one after the other, in one Session, and returns every outcome.
const turnWorkflowName = "turns"

func turnWorkflow(rt *tooltemporal.Runtime) func(workflow.Context, [][]dispatch.Call) ([][]outcome, error) {
	return func(ctx workflow.Context, turns [][]dispatch.Call) ([][]outcome, error) {
		session, err := rt.NewSession(ctx)
		if err != nil {
			return nil, err
		}
		var all [][]outcome
		for _, calls := range turns {
			all = append(all, view(session.Run(ctx, calls)))
		}
		return all, nil
	}
}

// newEnv is a test environment whose worker has the test workflow of rt
// and the activity of rt, or of activities[0] when given.
func newEnv(t *testing.T, rt *tooltemporal.Runtime, activities ...*tooltemporal.Runtime) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	if len(activities) > 0 {
		activities[0].Register(env)
	} else {
		rt.Register(env)
	}
	env.RegisterWorkflowWithOptions(turnWorkflow(rt), workflow.RegisterOptions{Name: turnWorkflowName})
	return env
}

// call is a proposed call with a correlation ID.
func call(id, name, args string) dispatch.Call {
	return dispatch.Call{ID: id, Request: tool.Request{Name: name, Arguments: args}}
}

// runTurns runs the test workflow to its end and returns its outcomes.
func runTurns(t *testing.T, env *testsuite.TestWorkflowEnvironment, turns ...[]dispatch.Call) [][]outcome {
	t.Helper()
	env.ExecuteWorkflow(turnWorkflowName, turns)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var got [][]outcome
	require.NoError(t, env.GetWorkflowResult(&got))
	return got
}
