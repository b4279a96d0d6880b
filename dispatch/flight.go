package dispatch

import (
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
}

// start marks the checkpoint id, claimed with nonce, as running here. It
// reports false when a call of that checkpoint already runs in this
// process: the caller runs nothing.
func (f *flights) start(id, nonce string, expires time.Time) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[string]*flight{}
	}
	if old, ok := f.m[id]; ok {
		if old.outcome == nil {
			return false
		}
		f.held--
	}
	f.m[id] = &flight{nonce: nonce, expires: expires}
	return true
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
