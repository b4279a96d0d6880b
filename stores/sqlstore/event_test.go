package sqlstore_test

import (
	"testing"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/dispatch/storetest"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// Each backend passes the conformance tests of dispatch.EventStore. (Its
// decisions across replicas are tried by the tests of event_race_test.go,
// with a Store on its own *sql.DB for each replica.)
func TestEventStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			storetest.Events(t, func(t *testing.T) dispatch.EventStore {
				return b.new(t).store(t, sqlstore.Config{})
			})
		})
	}
}
