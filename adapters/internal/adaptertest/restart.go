package adaptertest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// publishInput is what publish_draft takes.
type publishInput struct {
	Draft int `json:"draft"`
}

// ApprovalRegistry returns get_weather and publish_draft, which asks a
// person (a boolean answer) before it publishes.
func ApprovalRegistry(t testing.TB) *tool.Registry {
	t.Helper()
	weather, ok := Registry(t).Resolve("get_weather")
	require.True(t, ok)
	publish, err := tool.Bind(publisher{}, tool.Recover)
	require.NoError(t, err)
	reg, err := tool.NewRegistry(weather, publish)
	require.NoError(t, err)
	return reg
}

// publisher is publish_draft: it asks before it publishes.
type publisher struct{}

func (publisher) Definition() tool.Definition {
	return tool.Definition{
		Name:        "publish_draft",
		Description: "Publish a draft once an editor approved it.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"draft":{"type":"integer","minimum":1}},"required":["draft"],"additionalProperties":false}`),
		Effect:      tool.EffectIdempotent,
	}
}

func (publisher) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	var in publishInput
	if err := json.Unmarshal(inv.Arguments(), &in); err != nil {
		return tool.Result{}, err
	}
	c, resumed := inv.Continuation()
	if !resumed {
		schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
		if err != nil {
			return tool.Result{}, err
		}
		request, err := tool.NewInputRequest(tool.InputRequestConfig{
			Prompt:         json.RawMessage(fmt.Sprintf(`"Publish draft %d?"`, in.Draft)),
			ResponseSchema: schema,
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &request}, nil
	}
	var approved bool
	if err := json.Unmarshal(c.Response(), &approved); err != nil {
		return tool.Result{}, err
	}
	if !approved {
		return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("Draft %d stays a draft.", in.Draft))}, nil
	}
	return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("Draft %d is published.", in.Draft))}, nil
}

// RestartedTurn runs calls, the calls of one model turn over
// ApprovalRegistry, of which exactly one suspends; saves the turn in a
// store; then, as a new process would after a restart (a new registry and
// dispatcher sharing only the store and the seal key), reads the turn back,
// resumes the suspended call with an approval from the checkpoint's JSON,
// and returns the turn's outcomes, complete, in call order.
func RestartedTurn(t testing.TB, calls []dispatch.Call) []dispatch.Outcome {
	t.Helper()
	ctx := context.Background()
	// The one thing that survives the restart, as a database would.
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	before := Dispatcher(t, ApprovalRegistry(t), store)
	outcomes := before.RunAll(ctx, calls)
	var suspended []int
	for i, o := range outcomes {
		if o.Kind == dispatch.KindSuspended {
			suspended = append(suspended, i)
		}
	}
	require.Len(t, suspended, 1, "exactly one call of the turn waits for a person")
	require.NoError(t, before.SaveTurn(ctx, "turn-1", outcomes))

	after := Dispatcher(t, ApprovalRegistry(t), store)
	pending, err := after.Turn(ctx, "turn-1")
	require.NoError(t, err)
	require.Equal(t, dispatch.KindSuspended, pending[suspended[0]].Kind, "the turn waits until the call is resumed")
	// The checkpoint travels as JSON: to a person's screen and back.
	sent, err := json.Marshal(pending[suspended[0]].Checkpoint)
	require.NoError(t, err)
	var cp dispatch.Checkpoint
	require.NoError(t, json.Unmarshal(sent, &cp))
	resumed, err := after.Resume(ctx, cp, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, resumed.Kind, "%v", resumed.Err)

	done, err := after.Turn(ctx, "turn-1")
	require.NoError(t, err)
	require.Len(t, done, len(calls))
	for i, o := range done {
		require.NotEqual(t, dispatch.KindSuspended, o.Kind, "call %d", i)
		require.Equal(t, calls[i].ID, o.CallID, "call %d", i)
	}
	require.Equal(t, "Draft 7 is published.", done[suspended[0]].Text())
	return done
}
