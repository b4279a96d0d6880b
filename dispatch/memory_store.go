package dispatch

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	jsonv2 "github.com/go-json-experiment/json"
)

// DefaultMemoryStoreBytes is the bound of a MemoryStore whose
// MemoryStoreConfig.MaxBytes is zero: 64 MiB.
const DefaultMemoryStoreBytes = 64 << 20

// MemoryStoreConfig configures NewMemoryStore.
type MemoryStoreConfig struct {
	// MaxBytes bounds the records the store keeps, counted as the size of
	// their JSON. 0 means DefaultMemoryStoreBytes; a negative value is
	// refused. When a new record would not fit, the store first deletes
	// the records that expired (as DeleteExpired does, on Clock); if it
	// still does not fit, it refuses the record with ErrStore and evicts
	// nothing: a claim must outlive its checkpoint.
	//
	// A claim holds room for its outcome from the moment it is recorded
	// until Finish records one: a sixty-fourth of MaxBytes (1 MiB in the
	// default store), at most 10 MiB (an Output of tool.MaxOutputBytes
	// with room to spare). The record of every call Run runs under a key
	// (see "Exactly once" in the package documentation) is such a claim
	// while its tool runs, so a store holds room for 64 calls that run at
	// once, as many as DefaultMaxAbandoned. A claim that does not fit
	// with that room is refused before its call runs, so that the store
	// does not run a call whose outcome it then cannot keep. An outcome
	// larger than its room is kept if the store has room for the rest;
	// otherwise Finish fails (see Dispatcher.Resume, and "Exactly once",
	// for what becomes of a call whose outcome was not recorded): give a
	// store whose tools return large outputs a MaxBytes 64 times the
	// largest.
	MaxBytes int
	// Clock tells the time the store deletes expired records at when it
	// is full. nil means time.Now.
	Clock func() time.Time
}

// MemoryStore is a Store in the memory of one process: the store of a
// runtime that runs as one process, and of tests. WaitTurn wakes at the
// save it waits for. Its claims are seen by
// that process only, so it stops nothing behind a load balancer: replicas
// need a shared Store. Its records are lost when the process ends.
//
// It keeps every record as its JSON, so what it returns is always a copy
// and round-trips as a database's would. It is bounded (see
// MemoryStoreConfig). A MemoryStore is safe for concurrent use; its
// methods honour ctx only before they start. Make one with
// NewMemoryStore; the zero MemoryStore is not usable.
type MemoryStore struct {
	maxBytes int
	reserve  int // the room a claim without an outcome holds for it
	clock    func() time.Time

	mu      sync.Mutex
	used    int
	seq     int
	claims  map[string]*memRecord
	turns   map[string]*memRecord
	places  map[string]place // the pending calls of saved turns, by checkpoint ID
	changed chan struct{}    // closed, and made anew, when a turn is saved
	grants  memGrants        // the grants and their receipts (grant_memory.go)

	// scopeEvents are the scopes' event logs (EventStore), locked scope
	// by scope apart from mu: see scope_memory.go.
	scopeEvents eventLogs
}

// place is where a pending call stands: its turn and position.
type place struct {
	turn  string
	index int
}

// memRecord is one record: its JSON and what the store sorts and expires
// by.
type memRecord struct {
	data    []byte
	at      time.Time // ClaimedAt of a claim, first SavedAt of a turn
	seq     int       // insertion order, to break ties
	expires time.Time
	// reserved is the room a claim without an outcome holds for it;
	// the store's used bytes count it besides data.
	reserved int
	// version is a turn's Version; waiting are the summaries of its
	// suspended calls, made when it was saved, so that a list reads no
	// turn's JSON.
	version int64
	waiting []Pending
}

// maxOutcomeReserve bounds the room a claim holds for its outcome: an
// Output of tool.MaxOutputBytes and a checkpoint of two arguments' worth.
const maxOutcomeReserve = tool.MaxOutputBytes + 2*tool.MaxInputBytes

// NewMemoryStore returns an empty MemoryStore. Errors wrap
// ErrInvalidConfig: a negative MaxBytes.
func NewMemoryStore(config MemoryStoreConfig) (*MemoryStore, error) {
	if config.MaxBytes < 0 {
		return nil, errprefix.Errorf("%w: MemoryStoreConfig.MaxBytes is %d, want 0 (the default) or more", ErrInvalidConfig, config.MaxBytes)
	}
	clock := config.Clock
	if clock == nil {
		clock = time.Now
	}
	maxBytes := cmp.Or(config.MaxBytes, DefaultMemoryStoreBytes)
	s := &MemoryStore{
		maxBytes: maxBytes,
		reserve:  min(maxBytes/64, maxOutcomeReserve),
		clock:    clock,
		claims:   map[string]*memRecord{},
		turns:    map[string]*memRecord{},
		places:   map[string]place{},
		changed:  make(chan struct{}),
	}
	return s, nil
}

// begin checks ctx and the store, and locks it.
func (s *MemoryStore) begin(ctx context.Context) error {
	if s == nil || s.claims == nil {
		return errprefix.Errorf("%w: the zero MemoryStore keeps nothing; use NewMemoryStore", ErrStore)
	}
	if err := ctx.Err(); err != nil {
		return errprefix.Errorf("%w: %w", ErrStore, err)
	}
	s.mu.Lock()
	return nil
}

// Claim implements Store.Claim.
func (s *MemoryStore) Claim(ctx context.Context, c Claim) (*Claim, error) {
	if err := checkNewClaim(c); err != nil {
		return nil, err
	}
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	if r, ok := s.claims[c.CheckpointID]; ok {
		prior, err := decodeRecord[Claim](r.data, "claim")
		if err != nil {
			return nil, err
		}
		switch {
		case prior.AnswerSHA256 != c.AnswerSHA256:
			return nil, &AnsweredError{Claim: prior}
		case prior.Nonce == c.Nonce:
			return nil, nil
		}
		return &prior, nil
	}
	if c.State == "" {
		c.State = StateClaimed
	}
	c.Version = 1
	c.TurnID, c.CallIndex = "", 0
	if p, ok := s.places[c.CheckpointID]; ok {
		c.TurnID, c.CallIndex = p.turn, p.index
	}
	data, err := jsonv2.Marshal(c)
	if err != nil {
		return nil, errprefix.Errorf("%w: claim %s: %v", ErrInvalidRecord, c.CheckpointID, err)
	}
	if err := s.makeRoom(len(data) + s.reserve); err != nil {
		return nil, err
	}
	s.seq++
	s.claims[c.CheckpointID] = &memRecord{data: data, at: c.ClaimedAt, seq: s.seq, expires: c.ExpiresAt, reserved: s.reserve}
	s.used += len(data) + s.reserve
	return nil, nil
}

// Finish implements Store.Finish.
func (s *MemoryStore) Finish(ctx context.Context, id string, outcome SavedOutcome) error {
	if err := outcome.Validate(); err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	r, ok := s.claims[id]
	if !ok {
		return errprefix.Errorf("%w: no claim of checkpoint %q", ErrNotFound, truncate(id, 80))
	}
	c, err := decodeRecord[Claim](r.data, "claim")
	if err != nil {
		return err
	}
	if c.Outcome != nil {
		old, err1 := jsonv2.Marshal(c.Outcome)
		now, err2 := jsonv2.Marshal(outcome)
		if err1 == nil && err2 == nil && bytes.Equal(old, now) {
			return nil
		}
		return errprefix.Errorf("%w: claim %s already has outcome %s", ErrInvalidRecord, id, c.Outcome.Kind)
	}
	next, err := c.Apply(Step{Version: c.Version, State: StateFinished, Attempt: c.Attempt, Outcome: &outcome})
	if err != nil {
		return err
	}
	return s.rewrite(id, r, next)
}

// Advance implements Store.Advance.
func (s *MemoryStore) Advance(ctx context.Context, id string, step Step) (Claim, error) {
	if err := s.begin(ctx); err != nil {
		return Claim{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.claims[id]
	if !ok {
		return Claim{}, errprefix.Errorf("%w: no claim of checkpoint %q", ErrNotFound, truncate(id, 80))
	}
	c, err := decodeRecord[Claim](r.data, "claim")
	if err != nil {
		return Claim{}, err
	}
	next, err := c.Apply(step)
	if err != nil {
		return Claim{}, err
	}
	if err := s.rewrite(id, r, next); err != nil {
		return Claim{}, err
	}
	return next, nil
}

// rewrite replaces the record r of claim id with c, which releases the
// room r held for its outcome once c has one. s.mu is held.
func (s *MemoryStore) rewrite(id string, r *memRecord, c Claim) error {
	data, err := jsonv2.Marshal(c)
	if err != nil {
		return errprefix.Errorf("%w: claim %s: %v", ErrInvalidRecord, id, err)
	}
	reserved := r.reserved
	if c.Outcome != nil {
		reserved = 0
	}
	grow := len(data) + reserved - len(r.data) - r.reserved
	if err := s.makeRoom(grow); err != nil {
		return err
	}
	if s.claims[id] != r { // makeRoom deleted it: it expired
		return errprefix.Errorf("%w: no claim of checkpoint %q", ErrNotFound, truncate(id, 80))
	}
	s.used += grow
	r.data, r.reserved = data, reserved
	return nil
}

// Claimed implements Store.Claimed.
func (s *MemoryStore) Claimed(ctx context.Context, id string) (Claim, error) {
	if err := s.begin(ctx); err != nil {
		return Claim{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.claims[id]
	if !ok {
		return Claim{}, errprefix.Errorf("%w: no claim of checkpoint %q", ErrNotFound, truncate(id, 80))
	}
	return decodeRecord[Claim](r.data, "claim")
}

// Claims implements Store.Claims.
func (s *MemoryStore) Claims(ctx context.Context, q ClaimQuery) ([]Claim, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	rs := inOrder(s.claims, func(_ string, r *memRecord) bool { return !r.at.Before(q.Since) })
	if q.Limit > 0 && len(rs) > q.Limit {
		rs = rs[:q.Limit]
	}
	out := make([]Claim, 0, len(rs))
	for _, k := range rs {
		c, err := decodeRecord[Claim](k.r.data, "claim")
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Stranded implements Store.Stranded.
func (s *MemoryStore) Stranded(ctx context.Context, q StrandedQuery) ([]Claim, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	out := []Claim{}
	for _, k := range inOrder(s.claims, func(string, *memRecord) bool { return true }) {
		c, err := decodeRecord[Claim](k.r.data, "claim")
		if err != nil {
			return nil, err
		}
		if !c.Stranded(q.Now) {
			continue
		}
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
		out = append(out, c)
	}
	return out, nil
}

// SaveTurn implements Store.SaveTurn.
func (s *MemoryStore) SaveTurn(ctx context.Context, t Turn) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if err := s.begin(ctx); err != nil {
		return err
	}
	defer s.mu.Unlock()
	old, replaced := s.turns[t.ID]
	if stored := cmp.Or(old, &memRecord{}).version; stored != t.Version {
		return errprefix.Errorf("%w: turn %q is at version %d; the save was decided on version %d", ErrConflict, truncate(t.ID, 80), stored, t.Version)
	}
	t.Version++
	data, err := jsonv2.Marshal(t)
	if err != nil {
		return errprefix.Errorf("%w: turn %q: %v", ErrInvalidRecord, truncate(t.ID, 80), err)
	}
	grow := len(data)
	if replaced {
		grow -= len(old.data)
	}
	if err := s.makeRoom(grow); err != nil {
		return err
	}
	if old, replaced = s.turns[t.ID]; replaced { // makeRoom may have deleted it
		s.used -= len(old.data)
		s.unplace(old)
		old.data, old.expires, old.version = data, t.ExpiresAt, t.Version
	} else {
		s.seq++
		old = &memRecord{data: data, at: t.SavedAt, seq: s.seq, expires: t.ExpiresAt, version: t.Version}
		s.turns[t.ID] = old
	}
	s.used += len(data)
	for i, o := range t.Outcomes {
		if o.Kind == KindSuspended && o.Checkpoint != nil {
			s.places[o.Checkpoint.id] = place{turn: t.ID, index: i}
			old.waiting = append(old.waiting, NewPending(t.ID, i, o, false))
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// unplace forgets the pending calls of turn r. s.mu is held.
func (s *MemoryStore) unplace(r *memRecord) {
	for _, p := range r.waiting {
		delete(s.places, p.CheckpointID)
	}
	r.waiting = nil
}

// WaitTurn implements Store.WaitTurn: a save wakes it at once.
func (s *MemoryStore) WaitTurn(ctx context.Context, id string, after int64) (Turn, error) {
	for {
		if err := s.begin(ctx); err != nil {
			return Turn{}, err
		}
		r, ok := s.turns[id]
		changed := s.changed
		var data []byte
		if ok && r.version > after {
			data = r.data
		}
		s.mu.Unlock()
		if data != nil {
			return decodeRecord[Turn](data, "turn")
		}
		select {
		case <-ctx.Done():
			return Turn{}, errprefix.Errorf("%w: waiting for turn %q: %w", ErrStore, truncate(id, 80), context.Cause(ctx))
		case <-changed:
		}
	}
}

// Turn implements Store.Turn.
func (s *MemoryStore) Turn(ctx context.Context, id string) (Turn, error) {
	if err := s.begin(ctx); err != nil {
		return Turn{}, err
	}
	defer s.mu.Unlock()
	r, ok := s.turns[id]
	if !ok {
		return Turn{}, errprefix.Errorf("%w: no turn %q", ErrNotFound, truncate(id, 80))
	}
	return decodeRecord[Turn](r.data, "turn")
}

// Pending implements Store.Pending.
func (s *MemoryStore) Pending(ctx context.Context, q PendingQuery) ([]Pending, error) {
	if err := s.begin(ctx); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	rs := inOrder(s.turns, func(id string, _ *memRecord) bool { return q.TurnID == "" || q.TurnID == id })
	if q.NewestFirst {
		slices.Reverse(rs)
	}
	out := []Pending{}
	skip := q.Offset
	for _, k := range rs {
		var t *Turn // decoded when a whole outcome is asked for
		for _, p := range k.r.waiting {
			if _, claimed := s.claims[p.CheckpointID]; claimed {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			if q.Limit > 0 && len(out) == q.Limit {
				return out, nil
			}
			if q.Full {
				if t == nil {
					decoded, err := decodeRecord[Turn](k.r.data, "turn")
					if err != nil {
						return nil, err
					}
					t = &decoded
				}
				p.Outcome = t.Outcomes[p.Index]
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// keyedRecord is a record with its ID.
type keyedRecord struct {
	id string
	r  *memRecord
}

// inOrder returns the records of m that keep selects, by time, then by ID.
func inOrder(m map[string]*memRecord, keep func(id string, r *memRecord) bool) []keyedRecord {
	var rs []keyedRecord
	for id, r := range m {
		if keep(id, r) {
			rs = append(rs, keyedRecord{id, r})
		}
	}
	slices.SortFunc(rs, func(a, b keyedRecord) int {
		return cmp.Or(a.r.at.Compare(b.r.at), cmp.Compare(a.id, b.id))
	})
	return rs
}

// DeleteExpired implements Store.DeleteExpired.
func (s *MemoryStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := s.begin(ctx); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	return s.deleteExpired(now), nil
}

// deleteExpired deletes what expired more than MaxClockSkew before now.
// s.mu is held.
func (s *MemoryStore) deleteExpired(now time.Time) int {
	n := 0
	for _, m := range []map[string]*memRecord{s.claims, s.turns} {
		for id, r := range m {
			if r.expires.Add(MaxClockSkew).Before(now) {
				s.used -= len(r.data) + r.reserved
				s.unplace(r)
				delete(m, id)
				n++
			}
		}
	}
	return n
}

// makeRoom makes sure grow more bytes fit, deleting expired records if
// needed; it evicts nothing else. s.mu is held.
func (s *MemoryStore) makeRoom(grow int) error {
	if s.used+grow <= s.maxBytes {
		return nil
	}
	s.deleteExpired(s.clock())
	if s.used+grow <= s.maxBytes {
		return nil
	}
	return errprefix.Errorf("%w: the memory store is full: %d of %d bytes hold records that have not expired, and room that claims hold for their outcomes", ErrStore, s.used, s.maxBytes)
}

// decodeRecord decodes a record the store kept as JSON, strictly; what
// names the kind of record ("claim", "turn") in the error, which wraps
// ErrInvalidRecord.
func decodeRecord[T Claim | Turn](data []byte, what string) (T, error) {
	var v T
	if err := jsonv2.Unmarshal(data, &v, jsonv2.RejectUnknownMembers(true)); err != nil {
		var zero T
		return zero, errprefix.Errorf("%w: a stored %s does not decode: %v", ErrInvalidRecord, what, err)
	}
	return v, nil
}
