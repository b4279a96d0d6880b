package dispatch

import (
	"cmp"
	"crypto/hmac"
	"slices"
	"sync"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	jsonv2 "github.com/go-json-experiment/json"
)

// suspension is a dispatcher's suspension layer: what it takes to seal
// the checkpoint of a call that asks a person, to open it again, and to
// claim it once. A dispatcher made without a Store and seal keys has
// none, and suspends no call.
type suspension struct {
	store   CallStore
	keys    []SealKey
	newID   func(Call) (string, error)
	ttl     time.Duration
	clock   func() time.Time
	lease   time.Duration
	flights flights    // claimed calls that run, or lost their outcome
	runs    runRecords // what Run's call records need: see runrecord.go

	// owner is this dispatcher's name in the leases it holds, drawn at
	// its first claim: New reads no random source, so that a workflow
	// may make a Dispatcher in its replayed code.
	ownerOnce sync.Once
	owner     string
	ownerErr  error
}

// holder returns the name of this dispatcher's leases, drawing it the
// first time.
func (s *suspension) holder() (string, error) {
	s.ownerOnce.Do(func() { s.owner, s.ownerErr = newCheckpointID() })
	return s.owner, s.ownerErr
}

// leaseOwner is holder's name, once a claim has drawn it.
func (s *suspension) leaseOwner() string {
	owner, _ := s.holder()
	return owner
}

// newSuspension checks the suspension layer's part of a Config: a Store,
// seal keys, the TTL. It returns nil, nil for a Config that sets neither
// a Store nor a seal key: a dispatcher of a registry alone.
func newSuspension(config Config) (*suspension, error) {
	hasStore := config.Store != nil && !isTypedNil(config.Store)
	switch {
	case !hasStore && len(config.SealKeys) == 0 && len(config.Reconcilers) > 0:
		return nil, errprefix.Errorf("%w: Reconcilers without a Store: a dispatcher of a registry alone keeps no call records, so it has nothing to reconcile and promises no exactly-once", ErrInvalidConfig)
	case !hasStore && len(config.SealKeys) == 0:
		return nil, nil
	case !hasStore:
		return nil, errprefix.Errorf("%w: seal keys but no Store: a checkpoint must be claimed in a store every replica shares (NewMemoryStore for one process)", ErrInvalidConfig)
	case len(config.SealKeys) == 0:
		return nil, errprefix.Errorf("%w: a Store but no seal key: checkpoints of suspended calls must be sealed", ErrInvalidConfig)
	}
	keys := make([]SealKey, len(config.SealKeys))
	for i, k := range config.SealKeys {
		if err := checkKeyID(k.ID); err != nil {
			return nil, errprefix.Errorf("%w: seal key %d: %v", ErrInvalidConfig, i, err)
		}
		if len(k.Secret) < minSecret {
			return nil, errprefix.Errorf("%w: seal key %q: the secret is %d bytes, want at least %d", ErrInvalidConfig, k.ID, len(k.Secret), minSecret)
		}
		if slices.ContainsFunc(keys[:i], func(o SealKey) bool { return o.ID == k.ID }) {
			return nil, errprefix.Errorf("%w: seal key ID %q appears twice", ErrInvalidConfig, k.ID)
		}
		keys[i] = SealKey{ID: k.ID, Secret: slices.Clone(k.Secret)}
	}
	if config.Lease < 0 {
		return nil, errprefix.Errorf("%w: Lease is %s, want 0 (the default) or more", ErrInvalidConfig, config.Lease)
	}
	if config.CheckpointTTL < 0 || config.CheckpointTTL > MaxCheckpointTTL {
		return nil, errprefix.Errorf("%w: CheckpointTTL is %s, want 0 (the default) to MaxCheckpointTTL (%s)", ErrInvalidConfig, config.CheckpointTTL, MaxCheckpointTTL)
	}
	// The defaults are function values, not calls, so that nothing a
	// dispatcher with a deterministic NewCheckpointID and Clock runs
	// reaches a clock or a random source.
	runs, err := newRunRecords(config)
	if err != nil {
		return nil, err
	}
	s := &suspension{store: config.Store, keys: keys, newID: config.NewCheckpointID, ttl: config.CheckpointTTL, clock: config.Clock,
		lease: cmp.Or(config.Lease, DefaultLease), runs: runs}
	if s.newID == nil {
		s.newID = randomCheckpointID
	}
	if s.ttl == 0 {
		s.ttl = DefaultCheckpointTTL
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	return s, nil
}

// randomCheckpointID is the default Config.NewCheckpointID: 128 random
// bits in lowercase hex.
func randomCheckpointID(Call) (string, error) { return newCheckpointID() }

// suspend makes o the suspended outcome of call, whose tool asked a
// person ir: it seals ir into a checkpoint under an ID from
// Config.NewCheckpointID, issued at Config.Clock's time. A dispatcher
// without a suspension layer cannot: the outcome is unknown, with an
// error wrapping ErrInvalidConfig that says so, and nobody is asked.
func (s *suspension) suspend(o Outcome, call Call, ir tool.InputRequest) Outcome {
	if s == nil {
		return unknown(o, errprefix.Errorf("%w: tool %s asked a person (it returned an InputRequest), and this dispatcher has no Store and seal keys to suspend the call with: nobody was asked, and the call cannot be resumed", ErrInvalidConfig, quoteName(o.Tool)))
	}
	call.IdempotencyKey = o.IdempotencyKey
	id, err := s.newID(call)
	if err != nil {
		return unknown(o, errprefix.Errorf("%w: choosing a checkpoint ID: %w", ErrInvalidCheckpoint, err))
	}
	cp, err := s.seal(call, o.IdempotencyKey, ir, id, s.clock())
	if err != nil {
		return unknown(o, err)
	}
	o.Kind = KindSuspended
	o.Checkpoint = &cp
	return o
}

// seal makes the checkpoint of a suspended call, sealed with the first key:
// id names it, issued is when it was made, and it expires the TTL later.
func (s *suspension) seal(call Call, key tool.IdempotencyKey, ir tool.InputRequest, id string, issued time.Time) (Checkpoint, error) {
	encoded, err := ir.MarshalJSON()
	if err != nil {
		return Checkpoint{}, errprefix.Errorf("%w: %w", ErrInvalidCheckpoint, err)
	}
	if err := checkPrincipal(call.Principal); err != nil {
		return Checkpoint{}, errprefix.Errorf("%w: Call.%v", ErrInvalidConfig, err)
	}
	if err := checkStamp(encoded, call.Request.Name, key); err != nil {
		return Checkpoint{}, err
	}
	// Whole seconds: the wire form has a fixed length, and no expiry
	// needs more precision.
	issued = issued.UTC().Truncate(time.Second)
	cp := Checkpoint{
		id:           id,
		issuedAt:     issued,
		expiresAt:    issued.Add(s.ttl),
		principal:    call.Principal,
		callID:       call.ID,
		request:      call.Request,
		key:          key,
		inputRequest: ir,
	}
	if !validID(id) {
		return Checkpoint{}, errprefix.Errorf("%w: ID %q is not 32 lowercase hex digits", ErrInvalidCheckpoint, truncate(id, 80))
	}
	if err := checkTimes(cp.issuedAt, cp.expiresAt); err != nil {
		return Checkpoint{}, errprefix.Errorf("%w: %v", ErrInvalidCheckpoint, err)
	}
	k := s.keys[0]
	cp.keyID = k.ID
	cp.mac = mac(k.Secret, k.ID, &cp, encoded)
	return cp, nil
}

// checkStamp refuses to seal an input request that Binding.Call stamped
// for another call than the one settled: another tool, or another
// idempotency key (a runtime that settles with a key other than the one
// the call ran with, as a workflow that derived its keys from a run ID
// did after a reset). Resume would refuse such a checkpoint once the
// person had answered; refusing it now makes the call's outcome unknown
// instead, before anyone is asked. An unstamped request has nothing to
// compare.
func checkStamp(encoded []byte, name string, key tool.IdempotencyKey) error {
	w, err := decodeStamp(encoded)
	switch {
	case err != nil:
		return errprefix.Errorf("%w: the input request does not decode: %v", ErrInvalidCheckpoint, err)
	case w == nil:
		return nil
	case w.Tool != name:
		return errprefix.Errorf("%w: the input request was stamped for tool %s, not %s", ErrInvalidCheckpoint, quoteName(w.Tool), quoteName(name))
	case w.IdempotencyKey != string(key):
		return errprefix.Errorf("%w: the input request was stamped for idempotency key %q, not the call's %q: its answer could never resume the call",
			ErrInvalidCheckpoint, truncate(w.IdempotencyKey, 128), truncate(string(key), 128))
	}
	return nil
}

// stamp is the call stamp of an input request: what Binding.Call wrote
// of the call that asked.
type stamp struct {
	Tool            string `json:"tool"`
	ContractSHA256  string `json:"contract_sha256"`
	ArgumentsSHA256 string `json:"arguments_sha256"`
	IdempotencyKey  string `json:"idempotency_key"`
}

// decodeStamp returns the stamp of the encoded input request, nil when
// it has none.
func decodeStamp(encoded []byte) (*stamp, error) {
	var w struct {
		Call *stamp `json:"call"`
	}
	if err := jsonv2.Unmarshal(encoded, &w); err != nil {
		return nil, err
	}
	return w.Call, nil
}

// readStamp returns the stamp of ir, the zero stamp when it has none or
// does not encode.
func readStamp(ir tool.InputRequest) (stamp, error) {
	encoded, err := ir.MarshalJSON()
	if err != nil {
		return stamp{}, err
	}
	s, err := decodeStamp(encoded)
	if err != nil || s == nil {
		return stamp{}, err
	}
	return *s, nil
}

// checkTime refuses a checkpoint that expired by now, on this process's
// clock, or that was issued more than MaxClockSkew after now.
func (s *suspension) checkTime(cp Checkpoint, now time.Time) error {
	if !now.Before(cp.expiresAt) {
		return errprefix.Errorf("%w: checkpoint %s expired at %s (now %s)", ErrExpired, cp.id,
			cp.expiresAt.Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if cp.issuedAt.After(now.Add(MaxClockSkew)) {
		return errprefix.Errorf("%w: checkpoint %s was issued at %s, more than %s after this process's clock (%s)", ErrInvalidCheckpoint, cp.id,
			cp.issuedAt.Format(time.RFC3339), MaxClockSkew, now.UTC().Format(time.RFC3339))
	}
	return nil
}

// open verifies the seal of cp with the layer's keys.
func (s *suspension) open(cp Checkpoint) error {
	if cp.keyID == "" {
		return errprefix.Errorf("%w: the zero Checkpoint", ErrInvalidCheckpoint)
	}
	i := slices.IndexFunc(s.keys, func(k SealKey) bool { return k.ID == cp.keyID })
	if i < 0 {
		return errprefix.Errorf("%w: sealed with key %q, which this dispatcher does not hold", ErrInvalidCheckpoint, cp.keyID)
	}
	encoded, err := cp.inputRequest.MarshalJSON()
	if err != nil {
		return errprefix.Errorf("%w: %w", ErrInvalidCheckpoint, err)
	}
	want := mac(s.keys[i].Secret, cp.keyID, &cp, encoded)
	if !hmac.Equal(want, cp.mac) {
		return errprefix.Errorf("%w: the seal does not match its content: the checkpoint was altered or not issued with key %q", ErrInvalidCheckpoint, cp.keyID)
	}
	return nil
}
