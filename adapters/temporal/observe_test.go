package tooltemporal_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/workflow"

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
