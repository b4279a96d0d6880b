package adaptertest_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adaptertest"
	"github.com/agentcontract/tool/dispatch"
)

// An Approval with two states asks twice, then completes with the last
// answer and state; one without states asks once, with no state.
func TestApproval(t *testing.T) {
	var calls atomic.Int32
	twice := adaptertest.Approval{Name: "approve", Prompt: `"Refund?"`, Form: `{"type":"boolean"}`, States: []string{`{"step":1}`, `{"step":2}`}, Calls: &calls}
	once := adaptertest.Approval{Name: "refund", Prompt: `"Refund?"`, Form: `{"type":"boolean"}`,
		Done: func(c tool.Continuation) string { return "refunded: " + string(c.Response()) }}
	var bindings []tool.Binding
	for _, a := range []tool.Tool{twice, once} {
		b, err := tool.Bind(a)
		require.NoError(t, err)
		bindings = append(bindings, b)
	}
	d := adaptertest.Dispatcher(t, mustRegistry(t, bindings...))
	ctx := context.Background()

	o := d.Run(ctx, dispatch.Call{Request: tool.Request{Name: "approve", Arguments: `{"order":"7"}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	require.JSONEq(t, `{"step":1}`, string(o.Checkpoint.InputRequest().State()))
	o, err := d.Resume(ctx, *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	require.JSONEq(t, `{"step":2}`, string(o.Checkpoint.InputRequest().State()))
	o, err = d.Resume(ctx, *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`false`)})
	require.NoError(t, err)
	require.Equal(t, `answer false state {"step":2}`, o.Text())
	require.Equal(t, int32(3), calls.Load())

	o = d.Run(ctx, dispatch.Call{Request: tool.Request{Name: "refund", Arguments: `{"order":"7"}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	require.Empty(t, o.Checkpoint.InputRequest().State())
	o, err = d.Resume(ctx, *o.Checkpoint, dispatch.Answer{Response: json.RawMessage(`true`)})
	require.NoError(t, err)
	require.Equal(t, "refunded: true", o.Text())
}

// A Func without a function has only its definition: its Call returns
// the zero Result.
func TestFuncWithoutFunction(t *testing.T) {
	f := adaptertest.Func{Def: adaptertest.Def("t", `{"type":"object"}`)}
	require.Equal(t, "t", f.Definition().Name)
	res, err := f.Call(context.Background(), tool.Invocation{})
	require.NoError(t, err)
	require.Equal(t, tool.Result{}, res)
}

func mustRegistry(t testing.TB, bindings ...tool.Binding) *tool.Registry {
	t.Helper()
	reg, err := tool.NewRegistry(bindings...)
	require.NoError(t, err)
	return reg
}
