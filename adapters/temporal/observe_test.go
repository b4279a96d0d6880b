package tooltemporal_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

// Config.Observer sees each call the activity runs, start and outcome, with
// the activity's context.
func TestObserver(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	observer := &dispatch.Observer{
		CallStart: func(ctx context.Context, info dispatch.CallInfo) context.Context {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "start "+info.Tool+" in activity "+activity.GetInfo(ctx).ActivityType.Name)
			return ctx
		},
		CallDone: func(_ context.Context, info dispatch.CallInfo, o dispatch.Outcome) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, "done "+info.Tool+" "+string(o.Kind))
		},
	}
	rt, err := tooltemporal.New(tooltemporal.Config{
		Registry:        newRegistry(t, newBackend()),
		SealKeys:        []dispatch.SealKey{{ID: "k1", Secret: secret}},
		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute, RetryPolicy: retry},
		Observer:        observer,
	})
	require.NoError(t, err)
	got := runTurns(t, newEnv(t, rt), []dispatch.Call{call("c1", "lookup", `{"item":"kettle"}`)})
	require.Equal(t, dispatch.KindCompleted, got[0][0].Kind)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	require.Contains(t, seen[0], "start lookup in activity ")
	require.Equal(t, "done lookup completed", seen[1])
}

// validating is a tool whose own input validator judges the item in
// admission, which runs in workflow code: "sold-out" is refused with a
// public message and a private cause, "broken" makes the validator fail
// with a private error of its own (a defect).
type validating struct{ adaptertest.Func }

func (validating) InputValidator() func([]byte) error {
	return func(args []byte) error {
		var in struct{ Item string }
		if err := json.Unmarshal(args, &in); err != nil {
			return err
		}
		switch in.Item {
		case "sold-out":
			r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "the item is sold out", Cause: errors.New("SECRET-admission-cause: supplier 42 stopped")})
			if err != nil {
				return err
			}
			return r
		case "broken":
			return errors.New("SECRET-validator-defect: price table unreadable")
		}
		return nil
	}
}

// A call refused in workflow code (its admission: a tool's own validator
// refusing, or failing) leaves its private cause in the workflow's log,
// through the workflow logger, with the call's ID and key; the outcome
// and everything the workflow returns have only public text.
func TestWorkflowSideLogsRefusals(t *testing.T) {
	bound, err := tool.Bind(validating{adaptertest.Func{
		Def: tool.Definition{Name: "order", Description: "orders an item", InputSchema: json.RawMessage(itemSchema), Effect: tool.EffectIdempotent},
		Fn: func(context.Context, tool.Invocation) (tool.Result, error) {
			return tool.Result{Output: tool.NewTextOutput("ordered")}, nil
		},
	}})
	require.NoError(t, err)
	reg, err := tool.NewRegistry(bound)
	require.NoError(t, err)

	var mu sync.Mutex
	var logged bytes.Buffer
	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &logged}, nil))))
	env := suite.NewTestWorkflowEnvironment()
	rt := newRuntime(t, reg)
	rt.Register(env)
	env.RegisterWorkflowWithOptions(turnWorkflow(rt), workflow.RegisterOptions{Name: turnWorkflowName})
	got := runTurns(t, env, []dispatch.Call{
		call("c1", "order", `{"item":"sold-out"}`),
		call("c2", "order", `{"item":"broken"}`),
		call("c3", "order", `{"item":"kettle"}`),
	})[0]
	require.Equal(t, []dispatch.Kind{dispatch.KindRejected, dispatch.KindUnknown, dispatch.KindCompleted}, []dispatch.Kind{got[0].Kind, got[1].Kind, got[2].Kind})
	result, err := json.Marshal(got)
	require.NoError(t, err)
	require.NotContains(t, string(result), planted, "the outcomes carry no private cause")

	mu.Lock()
	defer mu.Unlock()
	type record struct {
		Msg            string `json:"msg"`
		CallID         string `json:"call_id"`
		IdempotencyKey string `json:"idempotency_key"`
		Kind           string `json:"kind"`
		Cause          string `json:"cause"`
	}
	var refusals []record
	dec := json.NewDecoder(&logged)
	for dec.More() {
		var r record
		require.NoError(t, dec.Decode(&r))
		if r.Msg == "tool call not admitted" {
			refusals = append(refusals, r)
		}
	}
	require.ElementsMatch(t, []record{
		{Msg: "tool call not admitted", CallID: "c1", IdempotencyKey: keyPrefix + "1", Kind: "rejected", Cause: "SECRET-admission-cause: supplier 42 stopped"},
		{Msg: "tool call not admitted", CallID: "c2", IdempotencyKey: keyPrefix + "2", Kind: "unknown", Cause: "SECRET-validator-defect: price table unreadable"},
	}, refusals)
}

// lockedWriter serialises writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
