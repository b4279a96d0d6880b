package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/contractschema"
	"github.com/agentcontract/tool/internal/errprefix"
)

// runRecords is what the call records of Run need beyond the rest of the
// suspension layer: how long a key deduplicates, and the tools'
// reconcilers.
type runRecords struct {
	keyTTL      time.Duration
	reconcilers map[string]Reconciler
}

// newRunRecords checks and copies Config.KeyTTL and Config.Reconcilers.
func newRunRecords(config Config) (runRecords, error) {
	if config.KeyTTL < 0 || config.KeyTTL > MaxKeyTTL {
		return runRecords{}, errprefix.Errorf("%w: KeyTTL is %s, want 0 (the default) to MaxKeyTTL (%s)", ErrInvalidConfig, config.KeyTTL, MaxKeyTTL)
	}
	r := runRecords{keyTTL: config.KeyTTL, reconcilers: make(map[string]Reconciler, len(config.Reconcilers))}
	if r.keyTTL == 0 {
		r.keyTTL = DefaultKeyTTL
	}
	// In the order of the names, so that a Config with several faults
	// is refused for the same one every time (a workflow makes its
	// Dispatcher in replayed code).
	for _, name := range slices.Sorted(maps.Keys(config.Reconcilers)) {
		f := config.Reconcilers[name]
		switch {
		case name == "":
			return runRecords{}, errprefix.Errorf("%w: Reconcilers has a reconciler for the empty tool name", ErrInvalidConfig)
		case f == nil:
			return runRecords{}, errprefix.Errorf("%w: the reconciler of %s is nil", ErrInvalidConfig, quoteName(name))
		}
		r.reconcilers[name] = f
	}
	return r, nil
}

// runRecordDomain keeps the ID of a call record apart from every other
// digest the package computes.
const runRecordDomain = "github.com/agentcontract/tool/dispatch run record v1\x00"

// RunRecordID returns the ID of the call record of a call Run runs of the
// tool named name, for principal (Call.Principal, "" for none), under
// key: 32 lowercase hex digits of a SHA-256 over the three, each
// length-prefixed, after a label of this package. The same three always
// give the same ID, and any other three (another principal's call under
// the same key, say) another ID, so that a key is deduplicated per tool
// and principal. An operator reads a call's record with
// CallStore.Claimed(ctx, RunRecordID(…)).
func RunRecordID(name, principal string, key tool.IdempotencyKey) string {
	h := sha256.New()
	h.Write([]byte(runRecordDomain))
	for _, f := range []string{name, principal, string(key)} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// recordedCall is one call Run runs under a call record.
type recordedCall struct {
	call       Call
	o          Outcome // what the call settles into: its ID, tool, effect and key
	binding    tool.Binding
	invocation tool.Invocation
	arguments  []byte // canonical, for a reconciler
	rec        Claim  // the record this Run writes: running, attempt 1
}

// runRecorded runs call, admitted as invocation of binding, under its
// call record (o is the outcome it settles into), and returns its
// outcome and the verdict of the Reconciler it asked, if any. See
// "Exactly once" in the package documentation for what it does; in
// order:
//
//  1. a call that may not start (its ctx ended, MaxAbandoned reached)
//     gets the outcome Run gives it, and no record;
//  2. the record is written, running attempt 1 under this Dispatcher's
//     lease, in one Claim: a Store that fails runs nothing;
//  3. when it is won, the tool runs, the lease is renewed while it
//     does, and the outcome is recorded once (recordRun);
//  4. when the key has a record already, again decides from it.
func (d *Dispatcher) runRecorded(ctx context.Context, call Call, o Outcome, binding tool.Binding, invocation tool.Invocation) (Outcome, VerdictKind) {
	if err := d.notStarted(ctx); err != nil {
		return d.settle(o, call, tool.Result{}, err), ""
	}
	rc, err := d.newRecordedCall(call, o, binding, invocation)
	if err != nil {
		return unknown(o, err), ""
	}
	id, nonce := rc.rec.CheckpointID, rc.rec.Nonce
	// As in claimAndRun: the flight starts before the record is written,
	// so that another call of this process that finds the record knows
	// that its tool is about to run here.
	d.flights.start(id, nonce, rc.rec.ExpiresAt)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	prior, err := d.store.Claim(cctx, rc.rec)
	cancel()
	if err != nil || prior != nil {
		d.flights.drop(id, nonce)
	}
	var answered *AnsweredError
	switch {
	case errors.As(err, &answered):
		return rc.conflict("its record's ID holds another kind of record"), ""
	case err != nil:
		return unknown(o, storeError(fmt.Sprintf("the record of the call under idempotency key %s was not written, so the call did not run", quoteKey(rc.o.IdempotencyKey)), err)), ""
	case prior == nil:
		d.flights.own(id, nonce, rc.rec.ExpiresAt)
		won := rc.rec
		won.Version = 1
		return d.attempt(ctx, rc, won), ""
	}
	return d.again(ctx, rc, *prior, 0)
}

// newRecordedCall returns the call of runRecorded with the record it
// writes. Errors wrap ErrStore: nothing was written, and nothing runs.
func (d *Dispatcher) newRecordedCall(call Call, o Outcome, binding tool.Binding, invocation tool.Invocation) (*recordedCall, error) {
	fail := func(what string, err error) error {
		return errprefix.Errorf("%w: the record of the call was not written, so the call did not run: %s: %w", ErrStore, what, err)
	}
	contract, ok := contractschema.Digest(binding.Contract())
	if !ok {
		return nil, fail("the tool's contract", errors.New("it has no digest"))
	}
	arguments := jsontext.Value(invocation.Arguments())
	if err := arguments.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return nil, fail("the arguments", err)
	}
	argumentsSum := sha256.Sum256(arguments)
	nonce, err := newCheckpointID()
	if err != nil {
		return nil, fail("drawing its nonce", err)
	}
	owner, err := d.holder()
	if err != nil {
		return nil, fail("drawing the name of this dispatcher's leases", err)
	}
	now := d.clock().UTC()
	return &recordedCall{
		call: call, o: o, binding: binding, invocation: invocation, arguments: arguments,
		rec: Claim{
			CheckpointID:    RunRecordID(o.Tool, call.Principal, o.IdempotencyKey),
			CallID:          recordText(call.ID),
			Tool:            o.Tool,
			IdempotencyKey:  tool.IdempotencyKey(recordText(string(o.IdempotencyKey))),
			Nonce:           nonce,
			SealedPrincipal: call.Principal,
			AnswerSHA256:    RunSHA256,
			ClaimedAt:       now,
			ExpiresAt:       now.Add(d.runs.keyTTL),
			ContractSHA256:  hex.EncodeToString(contract[:]),
			ArgumentsSHA256: hex.EncodeToString(argumentsSum[:]),
			State:           StateRunning,
			Attempt:         1,
			LeaseOwner:      owner,
			LeaseExpires:    now.Add(d.lease),
		},
	}, nil
}

// recordText is s as a record keeps an audit text: valid UTF-8, cut to
// maxRecordText bytes.
func recordText(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	if len(s) <= maxRecordText {
		return s
	}
	return truncate(s, maxRecordText-len("…"))
}

// quoteKey quotes an idempotency key for a message, cut to 128 bytes.
func quoteKey(key tool.IdempotencyKey) string {
	return fmt.Sprintf("%q", truncate(string(key), 128))
}

// attempt runs the tool of rc under rec, its record, running and held by
// this Dispatcher, and records the outcome. A tool abandoned at the end
// of its ctx keeps the record running, and its lease renewed, until it
// returns: what it returns then is recorded (a later run of the key
// learns it), and until then the key's call is in flight.
func (d *Dispatcher) attempt(ctx context.Context, rc *recordedCall, rec Claim) Outcome {
	stop := d.hold(rec.CheckpointID, rec)
	late := func(result tool.Result, err error) {
		o := d.settle(rc.o, rc.call, result, err)
		d.recordRun(context.Background(), rc, stop(), o)
	}
	result, abandoned, err := d.callTool(ctx, rc.binding, rc.invocation, rc.call.Progress, late)
	o := d.settle(rc.o, rc.call, result, err)
	if abandoned {
		return o
	}
	return d.recordRun(ctx, rc, stop(), o)
}

// recordRun records o, the outcome of the attempt of rec, rc's record as
// this Dispatcher last wrote it, and returns the outcome of the call: a
// definite outcome with Finish, an unknown one with an Advance to
// StateUnknown. When another process recorded an outcome first (it
// recovered the call after this Dispatcher's lease ended), that outcome
// is returned, as replayed. When the store fails, o is returned all the
// same, the failure logged, and o kept in this process: a later run of
// the same key records it (the record stays running, and another
// process recovers it once the lease has ended).
func (d *Dispatcher) recordRun(ctx context.Context, rc *recordedCall, rec Claim, o Outcome) Outcome {
	id := rec.CheckpointID
	d.flights.settle(id)
	saved := NewSavedOutcome(o)
	var err error
	if o.Kind == KindUnknown {
		err = d.recordRunUnknown(ctx, rec, saved)
	} else {
		err = d.finish(ctx, id, saved)
	}
	if err == nil {
		d.flights.done(id, o, true, d.clock())
		return o
	}
	if errors.Is(err, ErrInvalidRecord) || errors.Is(err, ErrConflict) {
		if now, rerr := d.claimed(ctx, id); rerr == nil && now.Stage() == StateFinished {
			if recorded, rerr := now.Outcome.Outcome(); rerr == nil {
				d.flights.done(id, recorded, true, d.clock())
				recorded.Replayed, recorded.CallID = true, rc.call.ID
				return recorded
			}
		}
	}
	d.flights.done(id, o, false, d.clock())
	if d.logger != nil {
		err = storeError(fmt.Sprintf("the call ran (outcome %s) but its outcome was not recorded in the record of idempotency key %s", o.Kind, quoteKey(rc.o.IdempotencyKey)), err)
		d.logger.ErrorContext(ctx, "tool call outcome not recorded", "tool", truncate(o.Tool, 128), "call_id", o.CallID, "kind", string(o.Kind), "error", err.Error())
	}
	return o
}

// recordRunUnknown moves rec, running under this Dispatcher's lease, to
// StateUnknown with saved. A record this Dispatcher still holds at a
// later version (a renewal whose reply was lost landed) is moved from
// that version.
func (d *Dispatcher) recordRunUnknown(ctx context.Context, rec Claim, saved SavedOutcome) error {
	for range maxRounds {
		_, err := d.advance(ctx, rec.CheckpointID, Step{Version: rec.Version, State: StateUnknown, Attempt: rec.Attempt, Outcome: &saved})
		if !errors.Is(err, ErrConflict) {
			return err
		}
		now, rerr := d.claimed(ctx, rec.CheckpointID)
		if rerr != nil || now.Stage() != StateRunning || now.LeaseOwner != rec.LeaseOwner || now.Attempt != rec.Attempt {
			return err
		}
		rec = now
	}
	return errprefix.Errorf("%w: claim %s kept moving", ErrConflict, rec.CheckpointID)
}

// finish records saved as the outcome of record id, detached from the
// caller's cancellation and bounded by claimTimeout.
func (d *Dispatcher) finish(ctx context.Context, id string, saved SavedOutcome) error {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	return d.store.Finish(fctx, id, saved)
}

// maxRounds bounds how many times a run of a key decides anew when
// another process moved its record in between.
const maxRounds = 4

// again decides a run of rc's key that found prior, the record of an
// earlier call of the same key (round counts the times it decided anew):
//
//   - another contract or other arguments: nothing runs; the outcome is
//     unknown, its Err wraps ErrConflict;
//   - finished: the recorded outcome, replayed;
//   - running here, or under another process's lease that has not
//     ended: nothing runs; the outcome is unknown, its Err wraps
//     ErrConflict and says until when;
//   - run here, its outcome not recorded: that outcome, recorded now
//     (an unknown one is then reconciled, as below);
//   - claimed, or unknown with an outcome that says its tool never
//     started: its next attempt runs;
//   - stranded (its lease ended, or it is this Dispatcher's and no
//     longer runs here) or unknown: reconcileRun.
func (d *Dispatcher) again(ctx context.Context, rc *recordedCall, prior Claim, round int) (Outcome, VerdictKind) {
	if prior.ContractSHA256 != rc.rec.ContractSHA256 {
		return rc.conflict("of another contract of the tool"), ""
	}
	if prior.ArgumentsSHA256 != rc.rec.ArgumentsSHA256 {
		return rc.conflict("with other arguments"), ""
	}
	id := prior.CheckpointID
	switch prior.Stage() {
	case StateFinished:
		return d.replayRun(rc, prior), ""
	case StateUnknown:
		if !d.flights.start(id, prior.Nonce, prior.ExpiresAt) {
			return d.busy(ctx, rc, prior, round)
		}
		if prior.Outcome != nil && prior.Outcome.ErrorClass == ErrorClassNotStarted {
			return d.nextAttempt(ctx, rc, prior, round), ""
		}
		return d.reconcileRun(ctx, rc, prior, round)
	}
	running, held := d.flights.lookup(id, prior.Nonce)
	switch {
	case running:
		return d.busy(ctx, rc, prior, round)
	case held != nil:
		o := d.recordRun(ctx, rc, prior, *held)
		o.Replayed, o.CallID = true, rc.call.ID
		if held.Kind == KindUnknown && round+1 < maxRounds {
			// Recorded unknown now: reconciled as any other.
			if now, err := d.claimed(ctx, id); err == nil && now.Stage() == StateUnknown {
				return d.again(ctx, rc, now, round+1)
			}
		}
		return o, ""
	case prior.LeaseOwner != d.leaseOwner() && !prior.Stranded(d.clock()):
		return rc.inFlight(prior, false), ""
	}
	if !d.flights.start(id, prior.Nonce, prior.ExpiresAt) {
		return d.busy(ctx, rc, prior, round)
	}
	if prior.Stage() == StateClaimed {
		return d.nextAttempt(ctx, rc, prior, round), ""
	}
	return d.reconcileRun(ctx, rc, prior, round)
}

// busy decides a run of rc's key whose record, prior, has a flight in
// this process. While that flight's call runs, nothing runs and the
// call is in flight; once it has returned, the run waits for its outcome
// to be recorded and decides anew on the record as it is then.
func (d *Dispatcher) busy(ctx context.Context, rc *recordedCall, prior Claim, round int) (Outcome, VerdictKind) {
	if round+1 < maxRounds && d.settled(ctx, prior.CheckpointID) {
		if now, err := d.claimed(ctx, prior.CheckpointID); err == nil {
			return d.again(ctx, rc, now, round+1)
		}
	}
	return rc.inFlight(prior, true), ""
}

// reconcileRun decides a run of rc's key whose earlier attempt, prior,
// has an unknown outcome (recorded unknown, or stranded running): the
// tool's Reconciler, when it has one, is asked first. Done finishes the
// record with its output; not done runs the next attempt; cannot tell,
// or no Reconciler, runs the next attempt when the tool's Effect makes
// a replay under its key safe, and otherwise leaves the outcome unknown
// (stayUnknown). The caller started the flight of prior.
func (d *Dispatcher) reconcileRun(ctx context.Context, rc *recordedCall, prior Claim, round int) (Outcome, VerdictKind) {
	r := d.runs.reconcilers[rc.o.Tool]
	if r == nil {
		if rc.o.Effect.Replayable() {
			return d.nextAttempt(ctx, rc, prior, round), ""
		}
		return d.stayUnknown(ctx, rc, prior, "it has no Reconciler", round), ""
	}
	v := ask(ctx, r, rc.binding.Contract(), Reconciliation{
		Tool: rc.o.Tool, IdempotencyKey: rc.o.IdempotencyKey, Principal: rc.call.Principal,
		Arguments: append([]byte(nil), rc.arguments...), Record: prior,
	})
	switch v.Kind() {
	case VerdictDone:
		return d.reconciledDone(ctx, rc, prior, v.output, round), VerdictDone
	case VerdictNotDone:
		return d.nextAttempt(ctx, rc, prior, round), VerdictNotDone
	}
	if d.logger != nil {
		d.logger.WarnContext(ctx, "tool call not reconciled", "tool", truncate(rc.o.Tool, 128), "call_id", rc.call.ID, "idempotency_key", string(rc.o.IdempotencyKey), "error", cannotTellWhy(v))
	}
	if rc.o.Effect.Replayable() {
		return d.nextAttempt(ctx, rc, prior, round), VerdictCannotTell
	}
	return d.stayUnknown(ctx, rc, prior, "its Reconciler could not tell: "+cannotTellWhy(v), round), VerdictCannotTell
}

// nextAttempt runs the next attempt of the call of prior, rc's record:
// the record moves to running under this Dispatcher's lease (compare and
// set, from prior's version), then the tool runs. A record another
// process moved in between is decided anew. The caller started the
// flight of prior.
func (d *Dispatcher) nextAttempt(ctx context.Context, rc *recordedCall, prior Claim, round int) Outcome {
	id := prior.CheckpointID
	if err := d.notStarted(ctx); err != nil {
		d.flights.drop(id, prior.Nonce)
		return d.settle(rc.o, rc.call, tool.Result{}, err)
	}
	started, err := d.advance(ctx, id, d.held(prior.Version, prior.Attempt+1))
	if err != nil {
		d.flights.drop(id, prior.Nonce)
		if o, ok := d.decideAnew(ctx, rc, err, round); ok {
			return o
		}
		return unknown(rc.o, storeError(fmt.Sprintf("the call under idempotency key %s was not started again (attempt %d), so it did not run", quoteKey(rc.o.IdempotencyKey), prior.Attempt+1), err))
	}
	return d.attempt(ctx, rc, started)
}

// decideAnew reads rc's record again after a step of it failed with err
// and decides the run anew, when err says another process moved it
// (ErrConflict, or a step the record it moved to cannot take) and
// rounds remain; ok is false otherwise.
func (d *Dispatcher) decideAnew(ctx context.Context, rc *recordedCall, err error, round int) (Outcome, bool) {
	if round+1 >= maxRounds || !(errors.Is(err, ErrConflict) || errors.Is(err, ErrInvalidRecord)) {
		return Outcome{}, false
	}
	now, rerr := d.claimed(ctx, rc.rec.CheckpointID)
	if rerr != nil {
		return Outcome{}, false
	}
	o, _ := d.again(ctx, rc, now, round+1)
	return o, true
}

// reconciledDone finishes prior, rc's record, with the completed outcome
// of output, which the tool's Reconciler said the call produced, marked
// as reconciled, and returns that outcome, as replayed: nothing ran. A
// store that fails to record it does not change what the call did: the
// outcome is returned, and the record is reconciled again by a later run
// of the key.
func (d *Dispatcher) reconciledDone(ctx context.Context, rc *recordedCall, prior Claim, output tool.Output, round int) Outcome {
	id := prior.CheckpointID
	o := rc.o
	o.Kind, o.Output, o.Replayed = KindCompleted, output, true
	saved := NewSavedOutcome(o)
	_, err := d.advance(ctx, id, Step{Version: prior.Version, State: StateFinished, Attempt: prior.Attempt, Outcome: &saved, Reconciled: true})
	if err != nil {
		d.flights.drop(id, prior.Nonce)
		if again, ok := d.decideAnew(ctx, rc, err, round); ok {
			return again
		}
		if d.logger != nil {
			d.logger.ErrorContext(ctx, "reconciled tool call not recorded", "tool", truncate(o.Tool, 128), "call_id", o.CallID, "error",
				storeError(fmt.Sprintf("the record of idempotency key %s was not finished", quoteKey(rc.o.IdempotencyKey)), err).Error())
		}
		return o
	}
	d.flights.done(id, o, true, d.clock())
	return o
}

// stayUnknown ends a run of rc's key whose earlier attempt, prior, has an
// unknown outcome that nothing may resolve here (why says what was
// missing): nothing runs, the record is recorded unknown when it was
// stranded running, and the unknown outcome is returned, as replayed.
func (d *Dispatcher) stayUnknown(ctx context.Context, rc *recordedCall, prior Claim, why string, round int) Outcome {
	id := prior.CheckpointID
	o := unknown(rc.o, errprefix.Part("the call under idempotency key %s ran before (%s) and whether it had its effect is not known: %s, and its tool's effect does not allow running it again: nothing ran; ask the backend or a person",
		quoteKey(rc.o.IdempotencyKey), earlierAttempt(prior), why))
	o.Replayed = true
	if prior.Stage() != StateRunning {
		d.flights.drop(id, prior.Nonce)
		return o
	}
	saved := NewSavedOutcome(o)
	_, err := d.advance(ctx, id, Step{Version: prior.Version, State: StateUnknown, Attempt: prior.Attempt, Outcome: &saved})
	d.flights.drop(id, prior.Nonce)
	if err != nil {
		if again, ok := d.decideAnew(ctx, rc, err, round); ok {
			return again
		}
	}
	return o
}

// replayRun returns the outcome recorded in rec, the finished record of
// rc's key, as replayed, with the CallID of rc's call.
func (d *Dispatcher) replayRun(rc *recordedCall, rec Claim) Outcome {
	o, err := rec.Outcome.Outcome()
	if err != nil {
		return unknown(rc.o, storeError(fmt.Sprintf("the outcome recorded for idempotency key %s does not read back, so nothing ran", quoteKey(rc.o.IdempotencyKey)), err))
	}
	o.Replayed, o.CallID = true, rc.call.ID
	return o
}

// conflict is the outcome of a run of rc's key that found the record of
// another call under it (why says how it differs): nothing ran.
func (rc *recordedCall) conflict(why string) Outcome {
	o := unknown(rc.o, errprefix.Errorf("%w: idempotency key %s of tool %s names another call (%s): nothing ran; give each logical call a key of its own",
		ErrConflict, quoteKey(rc.o.IdempotencyKey), quoteName(rc.o.Tool), why))
	o.Retryable = false
	return o
}

// inFlight is the outcome of a run of rc's key whose call runs now, in
// this process (here) or under another's lease (prior's): nothing ran.
func (rc *recordedCall) inFlight(prior Claim, here bool) Outcome {
	where := "in this process"
	if !here {
		where = "in another process, which holds it until " + prior.LeaseExpires.UTC().Format(time.RFC3339)
	}
	return unknown(rc.o, errprefix.Errorf("%w: the call under idempotency key %s is in flight (attempt %d, %s): nothing ran; run it again later to learn its outcome",
		ErrConflict, quoteKey(rc.o.IdempotencyKey), prior.Attempt, where))
}

// earlierAttempt says what became of the attempt of prior, a record
// whose outcome is unknown, for a message.
func earlierAttempt(prior Claim) string {
	if prior.Stage() == StateUnknown {
		return fmt.Sprintf("attempt %d ended with an unknown outcome", prior.Attempt)
	}
	return fmt.Sprintf("attempt %d was left by a process that no longer holds it, with no outcome recorded", prior.Attempt)
}
