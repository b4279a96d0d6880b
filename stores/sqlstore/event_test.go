package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/dispatch/storetest"
	"github.com/agentcontract/tool/stores/sqlstore"
)

// Each backend passes the conformance tests of dispatch.EventStore:
// through one Store, and through three Stores on three *sql.DB handles
// of the same database taking turns (three replicas).
func TestEventStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			storetest.Events(t, func(t *testing.T) dispatch.EventStore {
				return b.new(t).store(t, sqlstore.Config{})
			})
		})
		t.Run(b.name+"/Replicas", func(t *testing.T) {
			storetest.Events(t, func(t *testing.T) dispatch.EventStore {
				return replicas(t, b.new(t), 3)
			})
		})
	}
}

// The roundRobin of helpers_test.go is an EventStore too: each call goes
// to the next replica.

func (r *roundRobin) ReserveEvent(ctx context.Context, e dispatch.Event, decide func(dispatch.ScopeLog) (bool, error)) (bool, error) {
	return r.next().ReserveEvent(ctx, e, decide)
}

func (r *roundRobin) SettleEvent(ctx context.Context, scope, id string, outcome dispatch.Kind, release bool) error {
	return r.next().SettleEvent(ctx, scope, id, outcome, release)
}

func (r *roundRobin) Events(ctx context.Context, q dispatch.EventQuery) ([]dispatch.Event, error) {
	return r.next().Events(ctx, q)
}

func (r *roundRobin) DeleteExpiredEvents(ctx context.Context, now time.Time) (int, error) {
	return r.next().DeleteExpiredEvents(ctx, now)
}
