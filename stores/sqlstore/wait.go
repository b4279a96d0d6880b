package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// WaitTurn implements [dispatch.Store]'s WaitTurn by looking: a database
// cannot tell this process of a save another process made in a way that
// every driver and dialect shares, so WaitTurn reads the turn's version
// (one primary-key read of one row) at once and then every
// [Config].WaitInterval (default [DefaultWaitInterval]), and reads the
// whole turn once its version is above after. A save is seen within one
// interval. It waits while no turn of the ID is saved, and for a turn
// deleted between the two reads. When ctx ends first, the error wraps
// [dispatch.ErrStore] and ctx's error; an error of the database ends the
// wait too, wrapping ErrStore.
func (s *Store) WaitTurn(ctx context.Context, id string, after int64) (dispatch.Turn, error) {
	if err := s.begin(ctx); err != nil {
		return dispatch.Turn{}, err
	}
	what := fmt.Sprintf("waiting for turn %q", truncate(id, 80))
	timer := time.NewTimer(s.interval)
	defer timer.Stop()
	for {
		var version int64
		err := s.db.QueryRowContext(ctx, s.turnVersion, []byte(id)).Scan(&version)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return dispatch.Turn{}, s.fail(ctx, what, err)
		case version > after:
			t, err := s.Turn(ctx, id)
			switch {
			case err == nil && t.Version > after:
				return t, nil
			case err != nil && !errors.Is(err, dispatch.ErrNotFound):
				return dispatch.Turn{}, err
			}
		}
		timer.Reset(s.interval)
		select {
		case <-ctx.Done():
			return dispatch.Turn{}, errprefix.Errorf("%w: sqlstore: %s: %w", dispatch.ErrStore, what, ctx.Err())
		case <-timer.C:
		}
	}
}
