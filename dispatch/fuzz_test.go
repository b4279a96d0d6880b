package dispatch_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool/dispatch"
)

// FuzzCheckpoint feeds arbitrary bytes to Checkpoint.UnmarshalJSON and
// Resume. Decoding never panics; what decodes encodes again and decodes to
// the same checkpoint; and nothing runs unless the seal verifies, which
// only the genuine checkpoint's content can do.
func FuzzCheckpoint(f *testing.F) {
	var calls atomic.Int32
	reg := registry(f, &calls)
	d := newDispatcher(f, reg)
	c := call("toolu_1", "refund", `{"order":"A-1"}`)
	c.IdempotencyKey = "key-1"
	o := d.Run(context.Background(), c)
	genuine, err := json.Marshal(o.Checkpoint)
	require.NoError(f, err)
	f.Add(genuine)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var cp dispatch.Checkpoint
		if err := cp.UnmarshalJSON(data); err != nil {
			require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
			return
		}
		again, err := cp.MarshalJSON()
		require.NoError(t, err)
		var cp2 dispatch.Checkpoint
		require.NoError(t, cp2.UnmarshalJSON(again))
		again2, err := cp2.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(again), string(again2))

		before := calls.Load()
		if err := d.Open(cp); err != nil {
			require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
			_, err := d.Resume(context.Background(), cp, dispatch.Answer{Response: json.RawMessage(`true`)})
			require.Error(t, err)
			require.Equal(t, before, calls.Load(), "a checkpoint whose seal failed ran the tool")
			return
		}
		require.JSONEq(t, string(genuine), string(again), "a checkpoint other than the genuine one opened")
	})
}
