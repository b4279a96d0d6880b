package dispatch_test

import (
	"testing"

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
