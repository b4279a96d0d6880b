package tooltemporal_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/workflow"

	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

func TestNewRefusesConfigs(t *testing.T) {
	reg := newRegistry(t, newBackend())
	keys := []dispatch.SealKey{{ID: "k1", Secret: secret}}
	timeout := workflow.ActivityOptions{StartToCloseTimeout: time.Minute}
	tests := []struct {
		name   string
		config tooltemporal.Config
		want   error
		msg    string
	}{
		{"no timeout: Temporal would refuse every activity", tooltemporal.Config{Registry: reg, SealKeys: keys},
			tooltemporal.ErrInvalidConfig, "tool: invalid temporal config: ActivityOptions need a StartToCloseTimeout or a ScheduleToCloseTimeout"},
		{"no registry", tooltemporal.Config{SealKeys: keys, ActivityOptions: timeout},
			dispatch.ErrInvalidConfig, "tool: invalid dispatch config: the registry is nil"},
		{"no seal key: suspended calls could not be sealed", tooltemporal.Config{Registry: reg, ActivityOptions: timeout},
			dispatch.ErrInvalidConfig, "tool: invalid dispatch config: a Store but no seal key: checkpoints of suspended calls must be sealed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt, err := tooltemporal.New(tt.config)
			require.Nil(t, rt)
			require.ErrorIs(t, err, tt.want)
			require.EqualError(t, err, tt.msg)
		})
	}
}

// The zero Runtime opens no Session; the zero Session runs nothing and
// says so in unknown outcomes.
func TestZeroValues(t *testing.T) {
	env := newEnv(t, newRuntime(t, newRegistry(t, newBackend())))
	var sessionErr error
	var outcomes []dispatch.Outcome
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		_, sessionErr = (&tooltemporal.Runtime{}).NewSession(ctx)
		outcomes = (&tooltemporal.Session{}).Run(ctx, []dispatch.Call{call("c1", "lookup", `{"item":"kettle"}`)})
		return nil
	}, workflow.RegisterOptions{Name: "zero"})
	env.ExecuteWorkflow("zero")
	require.NoError(t, env.GetWorkflowError())
	require.ErrorIs(t, sessionErr, tooltemporal.ErrInvalidConfig)
	require.Len(t, outcomes, 1)
	require.Equal(t, dispatch.KindUnknown, outcomes[0].Kind)
	require.ErrorIs(t, outcomes[0].Err, tooltemporal.ErrInvalidConfig)
	require.Equal(t, `The call to "lookup" did not complete and its outcome is unknown.`, outcomes[0].Text())
	pending, err := (*tooltemporal.Session)(nil).Pending()
	require.NoError(t, err)
	require.Empty(t, pending)
}
