package dispatch

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/errprefix"
)

// The MemoryStore as an EventStore: the event logs of one process.
//
// Each scope has a mutex of its own, held while a decision reads the
// scope's log and its event is appended, so that scopes do not wait for
// each other. A scope keeps its events by ID and, for each tool, in the
// order of their times, with the indexes the rules read (scope_index.go):
// running totals for each window asked about, and the latest time of an
// event of each outcome (and of each value of a member asked about), so
// that a decision reads neither the whole log nor a copy of it.
//
// The logs are bounded by MemoryStoreConfig.MaxBytes, counted apart from
// the claims and turns: each event as the size of its arguments, names
// and a fixed overhead. An event that does not fit once the expired ones
// are deleted is refused with an error wrapping ErrStore, and its call
// does not run.

var _ EventStore = (*MemoryStore)(nil)

// eventLogs is the event logs of a MemoryStore. Its zero value is empty
// and ready.
type eventLogs struct {
	mu     sync.Mutex
	scopes map[string]*memScope
	used   atomic.Int64 // the bytes the events hold
}

// memScope is the log of one scope. Its fields are guarded by mu.
type memScope struct {
	mu sync.Mutex
	// dead is set when the scope was deleted from eventLogs.scopes, empty:
	// whoever locked it after that looks it up again.
	dead   bool
	events map[string]*memEvent
	tools  map[string]*toolLog
}

// memEvent is one event of a scope, its Arguments its own.
type memEvent struct {
	Event
	size int
	// numbers caches the numbers at the members the totals asked about.
	numbers []cachedNumber
}

// cachedNumber is the number at one member of an event's arguments.
type cachedNumber struct {
	member string
	value  float64
	ok     bool
}

// eventOverhead is what an event costs besides its text.
const eventOverhead = 256

func eventSize(e Event) int {
	return len(e.Scope) + len(e.ID) + len(e.Tool) + len(e.Arguments) + eventOverhead
}

// held reports whether e's reservation counts.
func (e *memEvent) held() bool { return e.State != EventReleased }

// number returns the number at member (whose path is path) of e's
// arguments.
func (e *memEvent) number(member string, path []string) (float64, bool) {
	for _, c := range e.numbers {
		if c.member == member {
			return c.value, c.ok
		}
	}
	v, ok := memberNumber(e.Arguments, path)
	e.numbers = append(e.numbers, cachedNumber{member: member, value: v, ok: ok})
	return v, ok
}

// beginEvents checks the store and ctx before an event method starts.
func (s *MemoryStore) beginEvents(ctx context.Context) error {
	if s == nil || s.claims == nil {
		return errprefix.Errorf("%w: the zero MemoryStore keeps nothing; use NewMemoryStore", ErrStore)
	}
	if err := ctx.Err(); err != nil {
		return errprefix.Errorf("%w: %w", ErrStore, err)
	}
	return nil
}

// lockScope returns the log of scope, locked, made when create is set
// and it has none; nil when it has none and create is not set.
func (l *eventLogs) lockScope(scope string, create bool) *memScope {
	for {
		l.mu.Lock()
		sc := l.scopes[scope]
		if sc == nil && create {
			if l.scopes == nil {
				l.scopes = map[string]*memScope{}
			}
			sc = &memScope{events: map[string]*memEvent{}, tools: map[string]*toolLog{}}
			l.scopes[scope] = sc
		}
		l.mu.Unlock()
		if sc == nil {
			return nil
		}
		sc.mu.Lock()
		if !sc.dead {
			return sc
		}
		sc.mu.Unlock()
	}
}

// ReserveEvent implements EventStore.ReserveEvent: decide runs under the
// scope's mutex.
func (s *MemoryStore) ReserveEvent(ctx context.Context, e Event, decide func(ScopeLog) (bool, error)) (bool, error) {
	e.State = EventReserved
	if err := e.Validate(); err != nil {
		return false, err
	}
	if err := s.beginEvents(ctx); err != nil {
		return false, err
	}
	size := eventSize(e)
	if err := s.roomForEvent(size); err != nil {
		return false, err
	}
	sc := s.scopeEvents.lockScope(e.Scope, true)
	defer sc.mu.Unlock()
	prior := sc.events[e.ID]
	if prior != nil && prior.held() {
		s.scopeEvents.used.Add(-int64(size))
		return true, nil
	}
	ok, err := decide(&memLog{scope: sc})
	if err != nil || !ok {
		s.scopeEvents.used.Add(-int64(size))
		if len(sc.events) == 0 {
			s.scopeEvents.forget(e.Scope, sc)
		}
		return false, err
	}
	if prior != nil {
		// Reserved again: the released event leaves the log.
		sc.remove(prior)
		s.scopeEvents.used.Add(-int64(prior.size))
	}
	args := jsontext.Value(slices.Clone(e.Arguments))
	if err := args.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return false, errprefix.Errorf("%w: event %q of scope %q: its arguments: %v", ErrInvalidRecord, truncate(e.ID, 80), truncate(e.Scope, 80), err)
	}
	e.Arguments = json.RawMessage(args)
	sc.insert(&memEvent{Event: e, size: size})
	return true, nil
}

// roomForEvent counts size more bytes of events, deleting the expired
// events first when they would not fit; it holds no scope's lock.
func (s *MemoryStore) roomForEvent(size int) error {
	limit := int64(s.maxBytes)
	if s.scopeEvents.used.Add(int64(size)) <= limit {
		return nil
	}
	s.scopeEvents.used.Add(-int64(size))
	s.scopeEvents.deleteExpired(s.clock())
	if s.scopeEvents.used.Add(int64(size)) <= limit {
		return nil
	}
	s.scopeEvents.used.Add(-int64(size))
	return errprefix.Errorf("%w: the memory store is full: %d of %d bytes hold scope events that have not expired", ErrStore, s.scopeEvents.used.Load(), limit)
}

// SettleEvent implements EventStore.SettleEvent.
func (s *MemoryStore) SettleEvent(ctx context.Context, scope, id string, outcome Kind, release bool) error {
	if err := s.beginEvents(ctx); err != nil {
		return err
	}
	sc := s.scopeEvents.lockScope(scope, false)
	if sc == nil {
		return noEvent(scope, id)
	}
	defer sc.mu.Unlock()
	ev := sc.events[id]
	if ev == nil {
		return noEvent(scope, id)
	}
	next, err := ev.Settle(outcome, release)
	if err != nil {
		return err
	}
	sc.settle(ev, next.State, next.Outcome)
	return nil
}

// noEvent is the error of an event a scope does not hold.
func noEvent(scope, id string) error {
	return errprefix.Errorf("%w: no event %q in scope %q", ErrNotFound, truncate(id, 80), truncate(scope, 80))
}

// Events implements EventStore.Events.
func (s *MemoryStore) Events(ctx context.Context, q EventQuery) ([]Event, error) {
	if err := s.beginEvents(ctx); err != nil {
		return nil, err
	}
	out := []Event{}
	sc := s.scopeEvents.lockScope(q.Scope, false)
	if sc == nil {
		return out, nil
	}
	defer sc.mu.Unlock()
	for _, ev := range sc.events {
		if !ev.At.Before(q.Since) {
			e := ev.Event
			e.Arguments = slices.Clone(e.Arguments)
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b Event) int { return cmp.Or(a.At.Compare(b.At), cmp.Compare(a.ID, b.ID)) })
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}

// DeleteExpiredEvents implements EventStore.DeleteExpiredEvents.
func (s *MemoryStore) DeleteExpiredEvents(ctx context.Context, now time.Time) (int, error) {
	if err := s.beginEvents(ctx); err != nil {
		return 0, err
	}
	return s.scopeEvents.deleteExpired(now), nil
}

// deleteExpired deletes the events whose KeepUntil is before now, and
// the scopes it leaves empty. It locks one scope at a time.
func (l *eventLogs) deleteExpired(now time.Time) int {
	l.mu.Lock()
	scopes := make([]string, 0, len(l.scopes))
	for name := range l.scopes {
		scopes = append(scopes, name)
	}
	l.mu.Unlock()
	n := 0
	for _, name := range scopes {
		sc := l.lockScope(name, false)
		if sc == nil {
			continue
		}
		for id, ev := range sc.events {
			if ev.KeepUntil.Before(now) {
				delete(sc.events, id)
				l.used.Add(-int64(ev.size))
				n++
			}
		}
		sc.prune()
		if len(sc.events) == 0 {
			l.forget(name, sc)
		}
		sc.mu.Unlock()
	}
	return n
}

// forget takes sc, the locked and empty log of scope, out of l: whoever
// waits for its lock looks the scope up again.
func (l *eventLogs) forget(scope string, sc *memScope) {
	l.mu.Lock()
	defer l.mu.Unlock()
	sc.dead = true
	if l.scopes[scope] == sc {
		delete(l.scopes, scope)
	}
}
