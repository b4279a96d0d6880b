package tooltemporal

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// planted marks the fake secrets the tools of this test hide in every
// private place an error has: none may reach what the workflow's history
// stores of an activity error.
const planted = "SECRET-"

type plantedTool struct {
	name   string
	effect tool.Effect
	fn     func(tool.Invocation) (tool.Result, error)
}

func (p plantedTool) Definition() tool.Definition {
	return tool.Definition{Name: p.name, InputSchema: json.RawMessage(`{"type":"object"}`), Effect: p.effect}
}

func (p plantedTool) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	return p.fn(inv)
}

func plantedRegistry(t *testing.T) *tool.Registry {
	t.Helper()
	approval, err := tool.ParseSchema([]byte(`{"type":"object","properties":{"approved":{"type":"boolean"}},"required":["approved"],"additionalProperties":false}`))
	require.NoError(t, err)
	reg := &tool.Registry{}
	for _, p := range []plantedTool{
		{name: "fails", fn: func(tool.Invocation) (tool.Result, error) {
			f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: tool.NewTextOutput("The order could not be cancelled."),
				Cause: errors.New("SECRET-failure-cause: password=hunter2")})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{}, f
		}},
		{name: "rejects", fn: func(tool.Invocation) (tool.Result, error) {
			r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "item is out of range", Cause: errors.New("SECRET-rejection-cause: row 7 of customers")})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{}, r
		}},
		{name: "panics", effect: tool.EffectSafe, fn: func(tool.Invocation) (tool.Result, error) { panic("SECRET-panic-value: token abc123") }},
		{name: "errs", fn: func(tool.Invocation) (tool.Result, error) {
			return tool.Result{}, errors.New("SECRET-raw-error: dial tcp 10.0.3.7:5432")
		}},
		{name: "flaky", effect: tool.EffectIdempotent, fn: func(tool.Invocation) (tool.Result, error) {
			return tool.Result{}, errors.New("SECRET-unknown-outcome: upstream said 'card 4111 declined'")
		}},
		{name: "asks", effect: tool.EffectIdempotent, fn: func(tool.Invocation) (tool.Result, error) {
			ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: approval})
			if err != nil {
				return tool.Result{}, err
			}
			return tool.Result{InputRequest: &ir}, nil
		}},
	} {
		b, err := tool.Bind(p)
		require.NoError(t, err)
		require.NoError(t, reg.Register(b))
	}
	return reg
}

// The messages the call activity builds carry public text and a class
// only: every fake secret planted in a Failure's cause, an
// InputRejection's cause, a panic's value, a tool's own error, an unknown
// outcome's error, a model-written tool name and an answer is absent from
// the activity error, its message and its details, as the failure
// converter writes them into history. The worker's log has them.
func TestActivityMessagesHoldNoSecrets(t *testing.T) {
	keys := []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}
	reg := plantedRegistry(t)
	var log bytes.Buffer
	rt, err := New(Config{Registry: reg, SealKeys: keys, Logger: slog.New(slog.NewTextHandler(&log, nil)),
		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute}})
	require.NoError(t, err)

	// A checkpoint of "asks", sealed as the workflow seals it, to resume
	// with an answer that names a secret member the schema refuses.
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	sealer, err := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: keys})
	require.NoError(t, err)
	asked := sealer.Run(context.Background(), dispatch.Call{Request: tool.Request{Name: "asks", Arguments: `{}`}, IdempotencyKey: "wf/run/6"})
	require.Equal(t, dispatch.KindSuspended, asked.Kind)

	request := func(name string) tool.Request { return tool.Request{Name: name, Arguments: `{}`} }
	for _, tt := range []struct {
		name, why string
		in        callInput
		errType   string
		msg       string
		secret    string // planted where the error came from, and found in the log
	}{
		{name: "failure", why: "a Failure's cause is private; its public Output goes in the details",
			in: callInput{Request: request("fails"), IdempotencyKey: "wf/run/1"}, errType: errTypeFailure,
			msg: `the call to "fails" failed (class failure)`, secret: "SECRET-failure-cause"},
		{name: "rejection", why: "an InputRejection's cause is private; its message is public",
			in: callInput{Request: request("rejects"), IdempotencyKey: "wf/run/2"}, errType: errTypeRejection,
			msg: `the call to "rejects" was rejected (class input_rejection): item is out of range`, secret: "SECRET-rejection-cause"},
		{name: "panic", why: "a panic's value and stack are private",
			in: callInput{Request: request("panics"), IdempotencyKey: "wf/run/3"}, errType: errTypeUnknown,
			msg: `the outcome of the call to "panics" is unknown (class panic)`, secret: "SECRET-panic-value"},
		{name: "raw tool error", why: "a tool's own error is private",
			in: callInput{Request: request("errs"), IdempotencyKey: "wf/run/4"}, errType: errTypeUnknown,
			msg: `the outcome of the call to "errs" is unknown (class error)`, secret: "SECRET-raw-error"},
		{name: "unknown outcome, retryable", why: "the error of an unknown outcome is private, retried or not",
			in: callInput{Request: request("flaky"), IdempotencyKey: "wf/run/5"}, errType: errTypeUnknown,
			msg: `the outcome of the call to "flaky" is unknown (class error)`, secret: "SECRET-unknown-outcome"},
		{name: "unknown tool", why: "the name is the model's text",
			in: callInput{Request: request("SECRET-tool-name"), IdempotencyKey: "wf/run/7"}, errType: errTypeUnknownTool,
			msg: `the tool is not in this worker's registry (class unknown_tool)`, secret: "SECRET-tool-name"},
		{name: "resume refused", why: "the reason may quote the answer",
			in: callInput{Request: request("asks"), IdempotencyKey: "wf/run/6", Checkpoint: asked.Checkpoint,
				Answer: json.RawMessage(`{"approved":true,"SECRET-answer-member":1}`)}, errType: errTypeNotResumed,
			msg: `the call to "asks" was not resumed: tool: invalid answer`, secret: "SECRET-answer-member"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log.Reset()
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivityWithOptions(rt.callActivity, activity.RegisterOptions{Name: ActivityName})
			_, err := env.ExecuteActivity(ActivityName, tt.in)
			require.Error(t, err)
			var appErr *temporal.ApplicationError
			require.ErrorAs(t, err, &appErr)
			require.Equal(t, tt.errType, appErr.Type())
			require.Equal(t, tt.msg, appErr.Message(), tt.why)

			// What history stores of it: the failure, message and
			// details, as the default converters write it.
			recorded, merr := protojson.Marshal(temporal.GetDefaultFailureConverter().ErrorToFailure(appErr))
			require.NoError(t, merr)
			for _, text := range []string{err.Error(), appErr.Error(), string(recorded)} {
				require.NotContains(t, text, planted, tt.why)
			}
			require.Contains(t, log.String(), tt.secret, "the worker's log keeps the private error")
		})
	}
}
