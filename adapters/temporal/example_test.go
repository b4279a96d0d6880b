package tooltemporal_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	tooltemporal "github.com/agentcontract/tool/adapters/temporal"
	"github.com/agentcontract/tool/dispatch"
)

type stockInput struct {
	Item string `json:"item"`
}

// A workflow runs one model turn: both calls are admitted in workflow
// code; the admitted one runs as an activity, the other is refused before
// anything runs. Temporal's in-process test environment plays the worker
// here; in production it is worker.New(c, "agent", worker.Options{}).
func Example() {
	stock, err := tool.NewFunc(tool.FuncConfig{Name: "get_stock", Description: "Units in stock.", Effect: tool.EffectSafe},
		func(_ context.Context, in stockInput) (string, error) {
			return fmt.Sprintf("12 %s in stock", in.Item), nil
		})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(stock)
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	rt, err := tooltemporal.New(tooltemporal.Config{
		Registry:        registry,
		SealKeys:        []dispatch.SealKey{{ID: "k1", Secret: []byte("read 32 or more random bytes from a secret store")}},
		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute},
	})
	if err != nil {
		panic(err)
	}

	agent := func(ctx workflow.Context, calls []dispatch.Call) ([]string, error) {
		session, err := rt.NewSession(ctx)
		if err != nil {
			return nil, err
		}
		var lines []string
		for _, o := range session.Run(ctx, calls) {
			lines = append(lines, fmt.Sprintf("%s %s: %s", o.CallID, o.Kind, o.Text()))
		}
		return lines, nil
	}

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(log.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	rt.Register(env)
	env.RegisterWorkflowWithOptions(agent, workflow.RegisterOptions{Name: "agent"})
	env.ExecuteWorkflow("agent", []dispatch.Call{
		{ID: "call_1", Request: tool.Request{Name: "get_stock", Arguments: `{"item":"kettle"}`}},
		{ID: "call_2", Request: tool.Request{Name: "get_stock", Arguments: `{"item":7}`}},
	})
	var lines []string
	if err := env.GetWorkflowResult(&lines); err != nil {
		panic(err)
	}
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// call_1 completed: 12 kettle in stock
	// call_2 rejected: arguments of "get_stock" do not match its input schema at /item: got number, want string
}
