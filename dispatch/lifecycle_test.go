package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

// dying is a store that dies once a call was started through it: every
// call after the step to running (an Advance, or a Claim that starts its
// call at once) fails, as a process killed between the claim and the
// outcome (or cut from its database) would leave it.
type dying struct {
	dispatch.Store
	dead atomic.Bool
}

var errDead = errors.New("read tcp 10.0.0.5:5432: connection reset by peer")

func (s *dying) Advance(ctx context.Context, id string, step dispatch.Step) (dispatch.Claim, error) {
	if s.dead.Load() {
		return dispatch.Claim{}, errDead
	}
	c, err := s.Store.Advance(ctx, id, step)
	if err == nil && step.State == dispatch.StateRunning {
		s.dead.Store(true)
	}
	return c, err
}

// Claim dies once it recorded a claim that starts its call at once.
func (s *dying) Claim(ctx context.Context, c dispatch.Claim) (*dispatch.Claim, error) {
	if s.dead.Load() {
		return nil, errDead
	}
	prior, err := s.Store.Claim(ctx, c)
	if err == nil && prior == nil && c.State == dispatch.StateRunning {
		s.dead.Store(true)
	}
	return prior, err
}

func (s *dying) Finish(ctx context.Context, id string, o dispatch.SavedOutcome) error {
	if s.dead.Load() {
		return errDead
	}
	return s.Store.Finish(ctx, id, o)
}

// A process that dies between the claim and the outcome leaves a call
// that the stranded query lists once its lease has ended, and that a
// resend of the same answer in another process resolves: run once more
// for a tool whose effect makes that safe, recorded unknown for another.
func TestProcessDeathRecovered(t *testing.T) {
	for _, tt := range []struct {
		effect tool.Effect
		redo   bool
	}{{tool.EffectIdempotent, true}, {"", false}} {
		t.Run(fmt.Sprintf("replay safe %t", tt.redo), func(t *testing.T) {
			shared := memoryStore(t)
			store := &dying{Store: shared}
			stuck := &gated{name: "refund", effect: tt.effect, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
			clock := newClock()
			a := gatedDispatcher(t, store, stuck, clock.config)
			cp := suspended(t, a, stuck)
			left := make(chan error, 1)
			go func() {
				_, err := a.Resume(context.Background(), cp, yes(""))
				left <- err
			}()
			t.Cleanup(func() {
				close(stuck.gate)
				require.ErrorIs(t, <-left, dispatch.ErrStore, "the dead process records nothing")
			})
			<-stuck.entered

			stranded, err := shared.Stranded(context.Background(), dispatch.StrandedQuery{Now: clock.time()})
			require.NoError(t, err)
			require.Empty(t, stranded, "a call whose lease holds is not stranded")
			clock.advance(dispatch.DefaultLease + time.Second)
			stranded, err = shared.Stranded(context.Background(), dispatch.StrandedQuery{Now: clock.time()})
			require.NoError(t, err)
			require.Len(t, stranded, 1)
			require.Equal(t, cp.ID(), stranded[0].CheckpointID)
			require.Equal(t, dispatch.StateRunning, stranded[0].State)
			require.Equal(t, 1, stranded[0].Attempt)

			fresh := &gated{name: "refund", effect: tt.effect}
			b := gatedDispatcher(t, shared, fresh, clock.config)
			for resend := range 3 {
				o, err := b.Resume(context.Background(), cp, yes(""))
				require.NoError(t, err)
				require.Equal(t, resend > 0, o.Replayed)
				if tt.redo {
					require.Equal(t, dispatch.KindCompleted, o.Kind)
					require.Equal(t, int32(1), fresh.runs.Load(), "run once more, and once only")
				} else {
					require.Equal(t, dispatch.KindUnknown, o.Kind)
					require.Zero(t, fresh.runs.Load(), "never run again")
				}
			}
			c, err := shared.Claimed(context.Background(), cp.ID())
			require.NoError(t, err)
			if tt.redo {
				require.Equal(t, dispatch.StateFinished, c.State)
				require.Equal(t, 2, c.Attempt)
			} else {
				require.Equal(t, dispatch.StateUnknown, c.State)
				require.Equal(t, 1, c.Attempt)
			}
			stranded, err = shared.Stranded(context.Background(), dispatch.StrandedQuery{Now: clock.time()})
			require.NoError(t, err)
			require.Empty(t, stranded, "recovered")
		})
	}
}

// A call that runs longer than its lease keeps it: the Dispatcher renews
// its hold while the tool runs, so another process is told that it is
// held, and does not take it over.
func TestLeaseRenewedWhileRunning(t *testing.T) {
	const lease = 3 * time.Second
	store := memoryStore(t)
	long := &gated{name: "refund", effect: tool.EffectIdempotent, gate: make(chan struct{}), entered: make(chan struct{}, 1)}
	a := gatedDispatcher(t, store, long, func(c *dispatch.Config) { c.Lease = lease })
	cp := suspended(t, a, long)
	done := make(chan error, 1)
	go func() {
		_, err := a.Resume(context.Background(), cp, yes(""))
		done <- err
	}()
	<-long.entered
	started, err := store.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.Equal(t, dispatch.StateRunning, started.State)
	// Wait for a renewal: the record moves on while the call runs.
	var renewed dispatch.Claim
	for renewed.Version <= started.Version {
		time.Sleep(50 * time.Millisecond)
		renewed, err = store.Claimed(context.Background(), cp.ID())
		require.NoError(t, err)
	}
	require.True(t, renewed.LeaseExpires.After(started.LeaseExpires), "a renewal extends the lease")
	require.Equal(t, started.Attempt, renewed.Attempt)
	require.Equal(t, started.LeaseOwner, renewed.LeaseOwner)

	other := gatedDispatcher(t, store, &gated{name: "refund", effect: tool.EffectIdempotent}, func(c *dispatch.Config) { c.Lease = lease })
	_, err = other.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrAlreadyAnswered)
	require.ErrorContains(t, err, "another process holds its call")

	close(long.gate)
	require.NoError(t, <-done)
	c, err := store.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.Equal(t, dispatch.StateFinished, c.State)
	require.Equal(t, int32(1), long.runs.Load())
}

// A checkpoint sealed with a key that was retired cannot be answered nor
// declined; Dismiss clears it, once, as a decline by the person who did,
// and nothing runs. A checkpoint this Dispatcher can open is declined
// instead.
func TestDismissRetiredKey(t *testing.T) {
	store := memoryStore(t)
	g := &gated{name: "refund", effect: tool.EffectIdempotent}
	old := gatedDispatcher(t, store, g)
	cp := suspended(t, old, g)
	rotated := gatedDispatcher(t, store, g, func(c *dispatch.Config) {
		c.SealKeys = []dispatch.SealKey{{ID: "k2", Secret: []byte("another secret of thirty-two b!!")}}
	})
	_, err := rotated.Resume(context.Background(), cp, yes(""))
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)
	_, err = rotated.Decline(context.Background(), cp, dispatch.Answer{Principal: "ann"})
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint)

	_, err = old.Dismiss(context.Background(), cp, dispatch.Answer{Principal: "ann"})
	require.ErrorIs(t, err, dispatch.ErrInvalidCheckpoint, "a checkpoint its dispatcher can open is declined, not dismissed")
	require.ErrorContains(t, err, "decline it instead")

	o, err := rotated.Dismiss(context.Background(), cp, dispatch.Answer{Principal: "ann"})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindFailed, o.Kind)
	require.Equal(t, `The person declined the call to "refund".`, o.Text())
	c, err := store.Claimed(context.Background(), cp.ID())
	require.NoError(t, err)
	require.True(t, c.Declined)
	require.Equal(t, "ann", c.Principal)
	require.Equal(t, dispatch.StateFinished, c.State)
	again, err := rotated.Dismiss(context.Background(), cp, dispatch.Answer{Principal: "ann"})
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.Zero(t, g.runs.Load())
}
