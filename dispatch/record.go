package dispatch

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/go-json-experiment/json/jsontext"
)

// Claim is a call record: the record of a checkpoint that was answered
// or declined — the claim a Store keeps so that the checkpoint is
// answered once —, or the record of a call Run ran under an idempotency
// key (AnswerSHA256 is RunSHA256; see "Exactly once" in the package
// documentation); with the state of the call it let run (see State),
// and the audit of who did it. Stores copy it; it holds no answer, only
// its digest, unless the runtime asked for the answer (Response).
type Claim struct {
	// CheckpointID is the claimed Checkpoint's ID, or, in the record of
	// a call Run ran, the RunRecordID of its tool, principal and key.
	CheckpointID string `json:"checkpoint_id"`
	// CallID, Tool and IdempotencyKey are the checkpoint's (or the
	// call's, in the record of a call Run ran), for the audit; a call ID
	// or key longer than 1024 bytes, or not UTF-8, is kept cut to fit,
	// its whole value being in the record's ID.
	CallID         string              `json:"call_id,omitempty"`
	Tool           string              `json:"tool"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key,omitempty"`
	// Nonce is 32 lowercase hex digits drawn afresh for each claim a
	// Dispatcher makes: it tells the claim a caller wrote from another
	// caller's claim with the same answer (two submits of one approval),
	// so that a store that must read back an uncertain write knows whose
	// it found. It is no secret and no part of the audit.
	Nonce string `json:"nonce,omitempty"`
	// Principal is who answered: Answer.Principal, which is the
	// checkpoint's principal when it names one. Empty when the runtime
	// gave none, and in the record of a call Run ran (nobody answered).
	Principal string `json:"principal,omitempty"`
	// Declined is true for a claim made by Decline.
	Declined bool `json:"declined,omitempty"`
	// AnswerSHA256 is the SHA-256, in lowercase hex, of the answer's
	// canonical JSON (compact, members sorted by name, strings and
	// numbers as written), DeclineSHA256 for a decline, or RunSHA256
	// in the record of a call Run ran. Two claims of one checkpoint are
	// the same answer exactly when it is equal.
	AnswerSHA256 string `json:"answer_sha256"`
	// ClaimedAt is when the claim was made, on the claiming process's
	// clock.
	ClaimedAt time.Time `json:"claimed_at"`
	// ExpiresAt is the checkpoint's expiry (in the record of a call Run
	// ran, ClaimedAt plus Config.KeyTTL: how long its key deduplicates):
	// the Store keeps the claim at least until MaxClockSkew after it.
	ExpiresAt time.Time `json:"expires_at"`
	// Response is the answer itself, kept only when the runtime asked for
	// it (Answer.Record): what the person answered, for the audit. Nil
	// for a decline, a superseding claim, and an answer not recorded.
	Response json.RawMessage `json:"response,omitempty"`
	// Edit is set on a claim that superseded the checkpoint: the person
	// corrected the call's arguments, and the corrected call ran as a new
	// call under a new idempotency key (see Dispatcher.Supersede). Nil
	// otherwise.
	Edit *EditRecord `json:"edit,omitempty"`
	// SealedPrincipal is the principal the checkpoint was sealed for
	// (Call.Principal; in the record of a call Run ran, the call's
	// Principal), empty when it named none: with Principal, the record
	// says both whose call it is and who answered it.
	SealedPrincipal string `json:"sealed_principal,omitempty"`
	// ContractSHA256 is the digest of the tool's contract the call was
	// admitted under (its name, schemas and effect), and ArgumentsSHA256
	// the SHA-256, in lowercase hex, of the canonical JSON of the
	// arguments it runs with: what a reconciliation compares before the
	// call runs again. Empty in records made before they were kept. In
	// the record of a call Run ran, a call under the same key whose
	// digests differ is another call, and is refused (ErrConflict).
	ContractSHA256  string `json:"contract_sha256,omitempty"`
	ArgumentsSHA256 string `json:"arguments_sha256,omitempty"`
	// TurnID and CallIndex place the call in the saved turn whose pending
	// call the checkpoint was: a Store that keeps turns sets them when it
	// records the claim, from its own record of the turn (never from what
	// the caller says). TurnID is empty for a checkpoint of no saved turn.
	TurnID    string `json:"turn_id,omitempty"`
	CallIndex int    `json:"call_index,omitempty"`
	// GrantID is set on the claim of a call a grant answered (see
	// Config.Grants): the grant whose answer it was given, by whose
	// person (Principal). Empty for an answer a person gave.
	GrantID string `json:"grant_id,omitempty"`

	// State is where the call stands: StateClaimed when recorded (or
	// StateRunning, for a call whose tool starts at once), then as
	// CallStore.Advance and Finish move it (see State). Empty in a
	// record made before states were kept: it reads as StateFinished
	// when the record has an Outcome and StateRunning, with a lease long
	// expired, when it has none (see Claim.Stage).
	State State `json:"state,omitempty"`
	// Version counts the record's writes: 1 when claimed, one more with
	// each Advance and Finish. A Store sets it; CallStore.Advance applies
	// a Step only to the version it was decided on.
	Version int64 `json:"version,omitempty"`
	// Attempt is how many times the call's tool was started: 0 while
	// claimed, 1 once running, one more for each run a recovery made.
	// (A call recorded unknown with an outcome of ErrorClassNotStarted
	// counts the attempt that did not start its tool.)
	Attempt int `json:"attempt,omitempty"`
	// LeaseOwner names the Dispatcher that holds the call (a random ID
	// each Dispatcher draws), and LeaseExpires is when its hold ends
	// unless renewed: while it holds, no other process runs or judges
	// the call. Judged on the clock of the process that reads the record.
	LeaseOwner   string    `json:"lease_owner,omitempty"`
	LeaseExpires time.Time `json:"lease_expires,omitzero"`

	// Outcome is the outcome recorded by Finish, or by the Advance that
	// finished the call or recorded it unknown; nil until then, and again
	// while a call recorded unknown runs its next attempt. It is nil in a
	// claim passed to Store.Claim.
	Outcome *SavedOutcome `json:"outcome,omitempty"`
	// Reconciled is true for a record finished by a reconciliation: the
	// tool's Reconciler said the call's earlier attempt, whose outcome
	// was unknown, was done, and the Outcome is the completed one it
	// gave (see Reconciler). Set by the step that finished it
	// (Step.Reconciled).
	Reconciled bool `json:"reconciled,omitempty"`
}

// Superseded reports whether the claim superseded its checkpoint with an
// edited call (c.Edit is set).
func (c Claim) Superseded() bool { return c.Edit != nil }

// Edit is a person's correction of a suspended call's arguments: see
// Dispatcher.Supersede.
type Edit struct {
	// Arguments are the corrected arguments, a JSON object as a model
	// would write them. They are untrusted: they are admitted as the
	// model's are.
	Arguments string
	// Principal is who edited, as Answer.Principal: a checkpoint that
	// names a principal accepts an edit from that principal only. It is
	// recorded in the claim.
	Principal string
	// Progress, when not nil, receives the progress the new call's tool
	// reports.
	Progress tool.ProgressReporter
}

// EditRecord is what a superseding claim records of an edit, keeping the
// three sets of arguments apart: those the model proposed, those the
// person approved, and those the new call was admitted and run with.
// Stores copy it.
type EditRecord struct {
	// Proposed are the arguments of the superseded checkpoint, as the
	// model wrote them.
	Proposed string `json:"proposed"`
	// Approved are the arguments the person approved, as they sent them.
	Approved string `json:"approved"`
	// Executed are the arguments the new call was admitted with, which
	// its tool ran with.
	Executed string `json:"executed"`
	// IdempotencyKey is the new call's key.
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
}

// DeclineSHA256 is the AnswerSHA256 of every decline: the SHA-256 of the
// bytes "decline", which are not a JSON document and so no answer's
// canonical form.
const DeclineSHA256 = "fd5f8cbed3d05d63b3076b2d1fb011a3d1dbefed44211503bde4de377258b395"

// RunSHA256 is the AnswerSHA256 of every record of a call Run ran
// without a question (see "Exactly once" in the package documentation):
// the SHA-256 of the bytes "run", which are not a JSON document and so
// no answer's canonical form. A desk or an audit that lists answers
// leaves such records out.
const RunSHA256 = "acba25512100f80b56fc3ccd14c65be55d94800cda77585c5f41a887e398f9be"

// Validate reports whether c is a claim a Store can record: a checkpoint
// ID and a Nonce of 32 lowercase hex digits, an AnswerSHA256 of 64,
// non-zero times,
// a tool name, and text fields of at most 1024 bytes of UTF-8. Errors wrap
// ErrInvalidRecord.
func (c Claim) Validate() error {
	switch {
	case !validID(c.CheckpointID):
		return errprefix.Errorf("%w: claim: checkpoint ID %q is not 32 lowercase hex digits", ErrInvalidRecord, truncate(c.CheckpointID, 80))
	case !validHex(c.Nonce, 32):
		return errprefix.Errorf("%w: claim %s: nonce %q is not 32 lowercase hex digits", ErrInvalidRecord, c.CheckpointID, truncate(c.Nonce, 80))
	case !validHex(c.AnswerSHA256, 64):
		return errprefix.Errorf("%w: claim %s: answer digest %q is not 64 lowercase hex digits", ErrInvalidRecord, c.CheckpointID, truncate(c.AnswerSHA256, 80))
	case c.Declined != (c.AnswerSHA256 == DeclineSHA256):
		return errprefix.Errorf("%w: claim %s: a decline has DeclineSHA256 as its digest, and only a decline has it", ErrInvalidRecord, c.CheckpointID)
	case c.AnswerSHA256 == RunSHA256 && c.Edit != nil:
		return errprefix.Errorf("%w: claim %s: the record of a call Run ran holds no edit", ErrInvalidRecord, c.CheckpointID)
	case c.Reconciled && c.State != StateFinished:
		return errprefix.Errorf("%w: claim %s: only a finished record can be reconciled", ErrInvalidRecord, c.CheckpointID)
	case c.ClaimedAt.IsZero() || c.ExpiresAt.IsZero():
		return errprefix.Errorf("%w: claim %s: ClaimedAt and ExpiresAt are required", ErrInvalidRecord, c.CheckpointID)
	case c.Tool == "":
		return errprefix.Errorf("%w: claim %s: no tool name", ErrInvalidRecord, c.CheckpointID)
	}
	for name, v := range map[string]string{"call ID": c.CallID, "tool": c.Tool, "idempotency key": string(c.IdempotencyKey), "principal": c.Principal,
		"sealed principal": c.SealedPrincipal, "turn ID": c.TurnID, "lease owner": c.LeaseOwner} {
		if len(v) > maxRecordText || !utf8.ValidString(v) {
			return errprefix.Errorf("%w: claim %s: the %s is not at most %d bytes of UTF-8", ErrInvalidRecord, c.CheckpointID, name, maxRecordText)
		}
	}
	for name, v := range map[string]string{"contract digest": c.ContractSHA256, "arguments digest": c.ArgumentsSHA256} {
		if v != "" && !validHex(v, 64) {
			return errprefix.Errorf("%w: claim %s: the %s %q is not 64 lowercase hex digits", ErrInvalidRecord, c.CheckpointID, name, truncate(v, 80))
		}
	}
	if c.GrantID != "" && !validID(c.GrantID) {
		return errprefix.Errorf("%w: claim %s: the grant ID %q is not 32 lowercase hex digits", ErrInvalidRecord, c.CheckpointID, truncate(c.GrantID, 80))
	}
	if err := c.checkLife(); err != nil {
		return err
	}
	if len(c.Response) > 0 {
		digest, err := AnswerSHA256(c.Response)
		switch {
		case len(c.Response) > tool.MaxInputBytes:
			return errprefix.Errorf("%w: claim %s: the recorded response is %d bytes, more than %d", ErrInvalidRecord, c.CheckpointID, len(c.Response), tool.MaxInputBytes)
		case err != nil || digest != c.AnswerSHA256:
			return errprefix.Errorf("%w: claim %s: the recorded response is not the answer of its digest", ErrInvalidRecord, c.CheckpointID)
		}
	}
	if c.Edit != nil {
		e := c.Edit
		switch {
		case c.Declined || len(c.Response) > 0:
			return errprefix.Errorf("%w: claim %s: a superseding claim is no decline and records no response", ErrInvalidRecord, c.CheckpointID)
		case e.IdempotencyKey == "" || e.IdempotencyKey == c.IdempotencyKey:
			return errprefix.Errorf("%w: claim %s: an edit runs under a new idempotency key", ErrInvalidRecord, c.CheckpointID)
		}
		for name, v := range map[string]string{"proposed": e.Proposed, "approved": e.Approved, "executed": e.Executed} {
			if len(v) > tool.MaxInputBytes || !utf8.ValidString(v) {
				return errprefix.Errorf("%w: claim %s: the %s arguments are not at most %d bytes of UTF-8", ErrInvalidRecord, c.CheckpointID, name, tool.MaxInputBytes)
			}
		}
		if len(e.IdempotencyKey) > maxRecordText || !utf8.ValidString(string(e.IdempotencyKey)) {
			return errprefix.Errorf("%w: claim %s: the edit's idempotency key is not at most %d bytes of UTF-8", ErrInvalidRecord, c.CheckpointID, maxRecordText)
		}
	}
	if c.Outcome != nil {
		if err := c.Outcome.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// withOutcome returns c with the outcome o recorded.
func (c Claim) withOutcome(o SavedOutcome) Claim {
	c.Outcome = &o
	return c
}

// checkNewClaim refuses what CallStore.Claim may not record: a claim
// that is not valid, or that has an outcome or a version, or that is
// neither claimed at no attempt nor running at attempt 1 with a lease.
func checkNewClaim(c Claim) error {
	if err := c.Validate(); err != nil {
		return err
	}
	claimed := (c.State == "" || c.State == StateClaimed) && c.Attempt == 0
	running := c.State == StateRunning && c.Attempt == 1 && c.LeaseOwner != "" && !c.LeaseExpires.IsZero()
	if c.Outcome != nil || c.Version != 0 || c.Reconciled || !(claimed || running) {
		return errprefix.Errorf("%w: claim %s: a new claim is claimed at no attempt, or running at attempt 1 with a lease, at no version, without an outcome", ErrInvalidRecord, c.CheckpointID)
	}
	return nil
}

// AnswerSHA256 returns the digest a claim records for answer: the SHA-256,
// in lowercase hex, of its canonical JSON — compact, object members sorted
// by name, strings and numbers as written (so 1.0 and 1 differ, and no
// number is rounded). Errors wrap ErrInvalidAnswer.
func AnswerSHA256(answer json.RawMessage) (string, error) {
	v := jsontext.Value(slices.Clone(answer))
	if err := v.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return "", errprefix.Errorf("%w: the answer is not one JSON document: %v", ErrInvalidAnswer, err)
	}
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:]), nil
}

// AnsweredError is the error of a resume or decline of a checkpoint that
// was claimed before: by a different answer, by a decline, or by the same
// answer whose outcome is not recorded yet (its run is still going, or
// ended without recording one). It wraps ErrAlreadyAnswered; errors.As
// finds it. A Store's Claim returns it for a different answer; Resume and
// Decline return it for every refused second claim.
//
// A nil *AnsweredError is safe to call methods on.
type AnsweredError struct {
	// Claim is the claim that was recorded first: who answered, when,
	// with which answer digest, and its outcome once recorded.
	Claim Claim

	state answerState
}

// answerState is what a Dispatcher knows of a claim of the same answer
// without an outcome.
type answerState int

const (
	answerOther   answerState = iota // another answer, or nothing known
	answerRunning                    // its call runs in this process now
	answerHeld                       // another process holds its call until its lease ends
)

// Error says which checkpoint was answered, how and when, without the
// answer.
func (e *AnsweredError) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project quotes e.
func (e *AnsweredError) errorBody() string {
	if e == nil {
		return errprefix.Body(ErrAlreadyAnswered)
	}
	how := "answered"
	switch {
	case e.Claim.Declined:
		how = "declined"
	case e.Claim.Superseded():
		how = "superseded by an edit"
	}
	recorded := "its outcome is not recorded yet"
	switch {
	case e.Claim.Outcome != nil:
		recorded = "outcome " + string(e.Claim.Outcome.Kind)
	case e.state == answerRunning:
		recorded = "its call is still running; send the same answer again later to learn its outcome"
	case e.state == answerHeld:
		recorded = fmt.Sprintf("another process holds its call until %s; send the same answer again after that to learn its outcome, or to recover a call that process left",
			e.Claim.LeaseExpires.UTC().Format("2006-01-02T15:04:05Z07:00"))
	}
	return fmt.Sprintf("%s: checkpoint %s was %s at %s; %s", errprefix.Body(ErrAlreadyAnswered), e.Claim.CheckpointID, how,
		e.Claim.ClaimedAt.UTC().Format("2006-01-02T15:04:05Z07:00"), recorded)
}

// Unwrap returns ErrAlreadyAnswered.
func (e *AnsweredError) Unwrap() error { return ErrAlreadyAnswered }

// Outcome returns the outcome recorded for the first claim, marked as
// replayed, and false when none is recorded yet. The outcome's private
// error is the reduced one a Store keeps (see SavedOutcome).
func (e *AnsweredError) Outcome() (Outcome, bool) {
	if e == nil || e.Claim.Outcome == nil {
		return Outcome{}, false
	}
	o, err := e.Claim.Outcome.Outcome()
	if err != nil {
		return Outcome{}, false
	}
	o.Replayed = true
	return o, true
}

// State is where the call of a record stands. A record moves one
// compare-and-set write at a time (CallStore.Advance, Finish; see
// Claim.Apply for each step):
//
//	claimed ──▶ running ──▶ finished
//	   │         │  ▲            ▲
//	   │         └──┘ the lease renewed, or the call run again
//	   │         │  ▲            │
//	   │         ▼  │ next       │ reconciled: done
//	   │        unknown ─────────┘
//	   └────────────────▶ finished   (a decline: nothing runs)
//
// A record is written claimed, or running when its tool starts at once
// (Run, and a resumed call). finished is final: the record keeps its
// outcome. unknown keeps its outcome until a reconciliation decides:
// done finishes it, not done (or an outcome that says the tool never
// started) runs its next attempt; nothing else moves it.
type State string

const (
	// StateClaimed: the record was written and the call has provably
	// not started; the claimer is about to start it. A claimed record
	// whose lease expired can be carried on by any process.
	StateClaimed State = "claimed"
	// StateRunning: the call's tool was started, by the lease's owner,
	// who renews the lease while it runs. One whose lease expired was
	// left by a process that died or lost its store: a resend of the
	// same answer recovers it (see Dispatcher.Resume).
	StateRunning State = "running"
	// StateFinished: the outcome is recorded.
	StateFinished State = "finished"
	// StateUnknown: whether the call had its effect is not known — its
	// outcome was unknown (a panic, a timeout), or it ran in a process
	// that was lost —, and nothing may run it again before somebody
	// finds out what happened: the tool's Reconciler (see Reconciler),
	// the backend or a person. The record holds an unknown outcome
	// that says so. One whose outcome is of ErrorClassNotStarted is a
	// call whose tool provably never started: its next attempt runs
	// without asking.
	StateUnknown State = "unknown"
)

// checkLife reports whether c's life fields are usable: a known state
// or none, a positive version or none, an attempt that is not negative,
// a lease owner and expiry together, and an outcome exactly when the
// state is final.
func (c Claim) checkLife() error {
	id := c.CheckpointID
	switch c.State {
	case "", StateClaimed, StateRunning, StateFinished, StateUnknown:
	default:
		return errprefix.Errorf("%w: claim %s: unknown state %q", ErrInvalidRecord, id, truncate(string(c.State), 80))
	}
	switch {
	case c.Version < 0 || c.Attempt < 0 || c.CallIndex < 0:
		return errprefix.Errorf("%w: claim %s: a negative version, attempt or call index", ErrInvalidRecord, id)
	case (c.LeaseOwner == "") != c.LeaseExpires.IsZero():
		return errprefix.Errorf("%w: claim %s: a lease has an owner and an expiry, or neither", ErrInvalidRecord, id)
	case c.State != "" && (c.Outcome != nil) != (c.State == StateFinished || c.State == StateUnknown):
		return errprefix.Errorf("%w: claim %s: a %s record %s an outcome", ErrInvalidRecord, id, c.State, map[bool]string{true: "has", false: "lacks"}[c.Outcome != nil])
	}
	return nil
}
