package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/agentcontract/tool/dispatch"
)

// testSameNonce: a claim sent again with the same nonce (a caller that
// could not tell whether its first write landed) is told it won; with
// another nonce and the same answer it gets the recorded claim.
func testSameNonce(t *testing.T, s dispatch.CallStore) {
	ctx := t.Context()
	c := claim(0, 0)
	prior, err := s.Claim(ctx, c)
	check(t, err, "first claim")
	if prior != nil {
		t.Fatalf("the first claim must win; got %+v", *prior)
	}
	prior, err = s.Claim(ctx, c)
	check(t, err, "the same claim again")
	if prior != nil {
		t.Fatalf("the same claim (the same nonce) again must be told it won (nil, nil); got the recorded claim %+v", *prior)
	}
	other := claim(0, 0)
	prior, err = s.Claim(ctx, other)
	check(t, err, "the same answer with another nonce")
	if prior == nil || prior.Nonce != c.Nonce {
		t.Fatalf("the same answer with another nonce must get the recorded claim; got %+v", prior)
	}
}

// contextRounds is how many points of a claim's work
// testClaimWhateverTheContext ends its context at.
const contextRounds = 48

// testClaimWhateverTheContext ends the context of a claim at each point
// where the store looks at it (the n-th call of Done or Err), and at
// moments while it runs: whatever Claim returns must be what the store
// then holds. An error means nothing was recorded; a win means the
// caller's own claim (its nonce) was.
func testClaimWhateverTheContext(t *testing.T, s dispatch.CallStore) {
	verify := func(n int, c dispatch.Claim, prior *dispatch.Claim, err error) {
		t.Helper()
		got, gerr := s.Claimed(context.Background(), c.CheckpointID)
		switch {
		case err != nil && !errors.Is(gerr, dispatch.ErrNotFound):
			t.Fatalf("round %d: Claim returned %v, yet the store holds a claim (%v): a claim that returns an error must have recorded nothing", n, err, gerr)
		case err == nil && prior != nil:
			t.Fatalf("round %d: the only claim of a new ID was told it was claimed before: %+v", n, *prior)
		case err == nil && gerr != nil:
			t.Fatalf("round %d: Claim won, yet the store holds no claim: %v", n, gerr)
		case err == nil && got.Nonce != c.Nonce:
			t.Fatalf("round %d: Claim won, yet the store holds a claim of nonce %q, not the caller's %q", n, got.Nonce, c.Nonce)
		}
	}
	// A won claim is finished, so that a store that holds room for the
	// outcome of each open claim does not fill up.
	finish := func(n int, c dispatch.Claim, err error) {
		t.Helper()
		if err == nil {
			if ferr := s.Finish(context.Background(), c.CheckpointID, completed(c.CallID, "done")); ferr != nil {
				t.Fatalf("round %d: finishing the claim: %v", n, ferr)
			}
		}
	}
	for n := range contextRounds {
		c := claim(n, 0)
		ctx := newCountdown(n)
		prior, err := s.Claim(ctx, c)
		ctx.cancel()
		verify(n, c, prior, err)
		finish(n, c, err)
	}
	for n := range contextRounds {
		c := claim(contextRounds+n, 0)
		ctx, cancel := context.WithCancel(context.Background())
		stop := time.AfterFunc(time.Duration(n)*50*time.Microsecond, cancel)
		prior, err := s.Claim(ctx, c)
		stop.Stop()
		cancel()
		verify(contextRounds+n, c, prior, err)
		finish(contextRounds+n, c, err)
	}
}

// countdown is a context that ends at the n-th call of its Done or Err
// (0: at once), so that a test can end a store's context at each point of
// its work where the store looks at it, without timing.
type countdown struct {
	context.Context
	mu    sync.Mutex
	left  int
	done  chan struct{}
	ended bool
}

func newCountdown(n int) *countdown {
	c := &countdown{Context: context.Background(), left: n, done: make(chan struct{})}
	if n == 0 {
		c.cancel()
	}
	return c
}

func (c *countdown) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return
	}
	c.left--
	if c.left < 0 {
		c.ended = true
		close(c.done)
	}
}

func (c *countdown) cancel() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.ended {
		c.ended = true
		close(c.done)
	}
}

func (c *countdown) Done() <-chan struct{} {
	c.tick()
	return c.done
}

func (c *countdown) Err() error {
	c.tick()
	select {
	case <-c.done:
		return context.Canceled
	default:
		return nil
	}
}
