package dispatch

import (
	"context"
	"sync"
	"time"
)

// maxHeldOutcomes bounds how many outcomes that a Store did not record a
// Dispatcher keeps, to record them late when their answer is sent again.
// Beyond it the oldest is dropped; its call then ends as a call whose
// outcome is lost (see Dispatcher.Resume).
const maxHeldOutcomes = 256

// flights is what one Dispatcher knows of the checkpoints it claimed: the
// calls it runs now, and the outcomes it could not record. It is what
// tells a resend of an answer, in this process, a call that still runs
// from one whose outcome the store lost. Another process knows none of
// it: there, a claim without an outcome is a call whose fate is unknown.
//
// A flight is keyed by checkpoint ID and belongs to the claim of its
// nonce: the claim this process wrote.
type flights struct {
	mu   sync.Mutex
	m    map[string]*flight
	held int // flights whose outcome was not recorded
}

// flight is one claimed checkpoint whose outcome is not recorded yet.
type flight struct {
	nonce   string
	expires time.Time
	// outcome is nil while the call runs; then the outcome the store
	// did not record, kept until a resend records it.
	outcome *Outcome
	heldAt  time.Time
	// settling is made when the call has returned and its outcome is
	// being recorded, and closed when the flight ends or holds that
	// outcome: a request that finds the flight then waits for the
	// record rather than call the call in flight.
	settling chan struct{}
}

// end closes fl's settling, if it has one: whatever the flight is now,
// its outcome is no longer being recorded.
func (fl *flight) end() {
	if fl.settling != nil {
		close(fl.settling)
		fl.settling = nil
	}
}

// start marks the checkpoint id as running here for the claim of nonce,
// before that claim is written or when a call of a claim found without
// an outcome runs again. It reports false when this process already has
// a flight of that checkpoint (a call that is being claimed, runs, or
// could not record its outcome): the caller starts nothing.
func (f *flights) start(id, nonce string, expires time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*flight{}
	}
	if _, ok := f.m[id]; ok {
		return false
	}
	f.m[id] = &flight{nonce: nonce, expires: expires}
	return true
}

// own marks the checkpoint id as running here for the claim of nonce,
// which the store just recorded: a flight another request of this
// process started for a claim that then lost gives way to it.
func (f *flights) own(id, nonce string, expires time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*flight{}
	}
	if old, ok := f.m[id]; ok {
		if old.outcome != nil {
			f.held--
		}
		old.end()
	}
	f.m[id] = &flight{nonce: nonce, expires: expires}
}

// drop ends the flight of id started for the claim of nonce, which was
// not recorded: the store refused it, or had another claim.
func (f *flights) drop(id, nonce string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.m[id]; ok && fl.nonce == nonce && fl.outcome == nil {
		fl.end()
		delete(f.m, id)
	}
}

// settle marks the flight of id, whose call has returned, as recording
// its outcome, until done ends it.
func (f *flights) settle(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.m[id]; ok && fl.outcome == nil && fl.settling == nil {
		fl.settling = make(chan struct{})
	}
}

// settling returns a channel closed when the flight of id, whose call
// has returned, is done recording its outcome; nil when id has no
// flight of a call that returned.
func (f *flights) settling(id string) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if fl, ok := f.m[id]; ok {
		return fl.settling
	}
	return nil
}

// lookup returns what this process knows of the claim of id with nonce:
// running when its call runs here now, and held, the outcome it ran to,
// when that was not recorded. Both are false for a claim this process
// did not write, or whose flight it has forgotten.
func (f *flights) lookup(id, nonce string) (running bool, held *Outcome) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.m[id]
	if !ok || fl.nonce != nonce {
		return false, nil
	}
	if fl.outcome == nil {
		return true, nil
	}
	o := *fl.outcome
	return false, &o
}

// done ends the flight of id: recorded says that its outcome o is in the
// store; otherwise o is held until a resend records it, or until the
// checkpoint expires, or until maxHeldOutcomes newer ones push it out.
func (f *flights) done(id string, o Outcome, recorded bool, now time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fl, ok := f.m[id]
	if !ok {
		return
	}
	fl.end()
	if recorded {
		if fl.outcome != nil {
			f.held--
		}
		delete(f.m, id)
		return
	}
	if fl.outcome == nil {
		f.held++
	}
	fl.outcome, fl.heldAt = &o, now
	f.evict(now)
}

// evict drops the held outcomes of expired checkpoints, then the oldest
// ones beyond maxHeldOutcomes. f.mu is held.
func (f *flights) evict(now time.Time) {
	for id, fl := range f.m {
		if fl.outcome != nil && fl.expires.Add(MaxClockSkew).Before(now) {
			delete(f.m, id)
			f.held--
		}
	}
	for f.held > maxHeldOutcomes {
		oldest := ""
		for id, fl := range f.m {
			if fl.outcome != nil && (oldest == "" || fl.heldAt.Before(f.m[oldest].heldAt)) {
				oldest = id
			}
		}
		delete(f.m, oldest)
		f.held--
	}
}

// settled waits until the flight of id is done recording the outcome of
// its call, when that call has returned: it reports true once it is,
// and false at once when id has no such flight, or when ctx ends or
// claimTimeout passes first. A request that finds a call in flight here
// calls it so only while the call runs, not while its outcome is being
// written.
func (d *Dispatcher) settled(ctx context.Context, id string) bool {
	ch := d.flights.settling(id)
	if ch == nil {
		return false
	}
	timer := time.NewTimer(claimTimeout)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-ctx.Done():
	case <-timer.C:
	}
	return false
}
