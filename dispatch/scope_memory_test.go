package dispatch_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/dispatch/storetest"
)

// The MemoryStore passes the conformance tests of an EventStore.
func TestMemoryEventStore(t *testing.T) {
	storetest.Events(t, func(t *testing.T) dispatch.EventStore {
		s, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// A MemoryStore whose events fill MaxBytes deletes the expired ones, and
// refuses an event that still does not fit: the call does not run.
func TestMemoryEventsFull(t *testing.T) {
	clk := newClock()
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{MaxBytes: 2000, Clock: clk.time})
	require.NoError(t, err)
	b := &bank{}
	d := scopedDispatcher(t, b, store, clk, []dispatch.Rule{
		dispatch.RateLimit{Name: "r", Tools: []string{"transfer"}, Limit: 100, Window: time.Minute},
	})
	ran := 0
	for range 20 {
		o := d.Run(t.Context(), scoped("s", "transfer", `{"account":"A","amount":1}`))
		if o.Kind == dispatch.KindFailed {
			require.Equal(t, fmt.Sprintf(dispatch.PolicyUnavailableText, `"transfer"`), o.Text())
			f, _ := tool.ClassifyFailure(o.Err)
			require.ErrorIs(t, f.Cause(), dispatch.ErrStore)
			break
		}
		require.Equal(t, dispatch.KindCompleted, o.Kind)
		ran++
	}
	require.Less(t, ran, 20, "the store filled up")
	require.Equal(t, ran, b.ran("transfer"))
	clk.advance(time.Hour) // the events expired: the store makes room
	require.Equal(t, dispatch.KindCompleted, d.Run(t.Context(), scoped("s", "transfer", `{"account":"A","amount":1}`)).Kind)
}
