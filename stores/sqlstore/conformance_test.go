package sqlstore_test

import (
	"testing"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/dispatch/storetest"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// Each backend passes the conformance tests of dispatch.Store: through
// one Store, and through three Stores on three *sql.DB handles of the
// same database taking turns (three replicas).
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) dispatch.Store {
				return b.new(t).store(t, sqlstore.Config{})
			})
		})
		t.Run(b.name+"/Replicas", func(t *testing.T) {
			storetest.Run(t, func(t *testing.T) dispatch.Store {
				return replicas(t, b.new(t), 3)
			})
		})
	}
}
