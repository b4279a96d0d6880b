package dispatch

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Store keeps what must outlive one process while a person decides: the
// claims that make each checkpoint answerable once, the outcome recorded
// for each claim, the turns whose calls wait for an answer, and, through
// the claims, who answered what and when. A Dispatcher claims through it
// on every Resume and Decline; an approval desk lists and answers through
// it; the package storetest holds the conformance tests every
// implementation must pass.
//
// Behind a load balancer every replica must use the same Store (and the
// same seal keys): a claim only one replica can see stops nothing.
// [MemoryStore] is for one process.
//
// # What may be persisted
//
// A Store keeps only what a log of the call would: tool names, call IDs,
// idempotency keys, principals, answer digests (answers themselves only
// when the runtime asks for them with Answer.Record), the arguments of
// an edit (Claim.Edit), times, outcome kinds, the public Output the
// model sees, and the sealed
// checkpoints of suspended calls (which hold the call's arguments and the
// tool's state, as the runtime already stores them). A private error (a
// Failure's cause, a panic and its stack) is never persisted: a
// SavedOutcome reduces it to a short class (see SavedOutcome.ErrorClass).
//
// # Failing closed
//
// A Store that cannot be reached, fails, or is full returns an error, and
// the resume that needed it runs nothing. A Store never evicts a claim
// before it expired (ExpiresAt plus MaxClockSkew): that would let the
// checkpoint be answered again. A full store refuses new records with an
// error wrapping ErrStore instead.
//
// # Errors
//
// Errors wrap ErrStore for a failure of the store itself (with the
// context's error beside it when ctx ended), ErrNotFound for an ID it has
// no record of, ErrInvalidRecord for a record it cannot keep, and
// ErrAlreadyAnswered (as an *AnsweredError) from Claim as documented
// there. Implementations must be safe for concurrent use, by goroutines
// and, for a shared store, by processes; they copy what they are given
// and return copies.
type Store interface {
	// Claim records c, the claim of checkpoint c.CheckpointID, atomically:
	// of all the claims of one ID, in any number of processes, one is
	// recorded.
	//
	//   - No claim of the ID exists: c is recorded (without an Outcome)
	//     and Claim returns nil, nil. The caller won: it runs the call and
	//     records the outcome with Finish.
	//   - A claim exists with the same Nonce (the caller's own, sent
	//     again after an error that left it unsure): Claim returns nil,
	//     nil, as when it won. Nothing is recorded.
	//   - A claim exists with the same AnswerSHA256 and another Nonce:
	//     Claim returns a copy of it (its Outcome nil until Finish) and
	//     nil. Nothing is recorded.
	//   - A claim exists with another AnswerSHA256 (another answer, or a
	//     decline): Claim returns nil and an *AnsweredError holding the
	//     recorded claim.
	//
	// A claim that is not valid (see Claim.Validate) is an error wrapping
	// ErrInvalidRecord.
	//
	// What Claim returns is what the store holds, whatever ctx does: a
	// Claim that returns an error has recorded nothing, and must not
	// record it later (when ctx ends while a database waits for a lock,
	// or after the insert committed and before its reply came back). A
	// store whose write may have landed when it sees an error (a
	// cancelled or failed statement, a lost reply) resolves it before it
	// answers: it reads back the claim of the ID, and the Nonce tells the
	// caller's own claim from another's with the same answer (a double
	// submit), or it writes again, which finds the claim of the same
	// Nonce if the first write landed. Only when the store cannot be
	// reached to resolve it may Claim return an error for a claim that
	// stands; the call it claims then does not run, and a resend of the
	// same answer finds the claim. A store may go on after ctx ended to
	// finish a write it started, within a bound of its own.
	Claim(ctx context.Context, c Claim) (*Claim, error)
	// Finish records the outcome of the claim of checkpoint id. An ID
	// without a claim is an error wrapping ErrNotFound. A claim that has
	// an outcome keeps it: finishing it again with an equal outcome
	// returns nil, with another an error wrapping ErrInvalidRecord.
	Finish(ctx context.Context, id string, outcome SavedOutcome) error
	// Claimed returns the claim of checkpoint id, with its outcome if
	// recorded, or an error wrapping ErrNotFound.
	Claimed(ctx context.Context, id string) (Claim, error)
	// Claims lists claims for an audit: who answered (or declined) which
	// checkpoint of which tool, when, with which answer digest, and the
	// outcome kind once recorded. See ClaimQuery.
	Claims(ctx context.Context, q ClaimQuery) ([]Claim, error)
	// SaveTurn records t, replacing a turn of the same ID. A turn that is
	// not valid (see Turn.Validate) is an error wrapping
	// ErrInvalidRecord.
	SaveTurn(ctx context.Context, t Turn) error
	// Turn returns the turn saved under id, as saved, or an error wrapping
	// ErrNotFound.
	Turn(ctx context.Context, id string) (Turn, error)
	// Pending lists the suspended outcomes of saved turns whose checkpoint
	// has no claim. See PendingQuery.
	Pending(ctx context.Context, q PendingQuery) ([]Pending, error)
	// DeleteExpired deletes every claim and turn whose ExpiresAt plus
	// MaxClockSkew is before now, and returns how many it deleted. It
	// deletes nothing else. A runtime calls it from time to time, with
	// its own clock.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}

// Claim is the record that a checkpoint was answered or declined: the
// claim a Store keeps so that the checkpoint is answered once, and the
// audit of who did it. Stores copy it; it holds no answer, only its
// digest.
type Claim struct {
	// CheckpointID is the claimed Checkpoint's ID.
	CheckpointID string `json:"checkpoint_id"`
	// CallID, Tool and IdempotencyKey are the checkpoint's, for the audit.
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
	// gave none.
	Principal string `json:"principal,omitempty"`
	// Declined is true for a claim made by Decline.
	Declined bool `json:"declined,omitempty"`
	// AnswerSHA256 is the SHA-256, in lowercase hex, of the answer's
	// canonical JSON (compact, members sorted by name, strings and
	// numbers as written), or DeclineSHA256 for a decline. Two claims of
	// one checkpoint are the same answer exactly when it is equal.
	AnswerSHA256 string `json:"answer_sha256"`
	// ClaimedAt is when the claim was made, on the claiming process's
	// clock.
	ClaimedAt time.Time `json:"claimed_at"`
	// ExpiresAt is the checkpoint's expiry: the Store keeps the claim at
	// least until MaxClockSkew after it.
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
	// Outcome is the outcome recorded by Finish; nil until then. It is
	// nil in a claim passed to Store.Claim.
	Outcome *SavedOutcome `json:"outcome,omitempty"`
}

// Superseded reports whether the claim superseded its checkpoint with an
// edited call (c.Edit is set).
func (c Claim) Superseded() bool { return c.Edit != nil }

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

// maxRecordText bounds the text fields of a Claim and a Turn's ID.
const maxRecordText = 1024

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
	case c.ClaimedAt.IsZero() || c.ExpiresAt.IsZero():
		return errprefix.Errorf("%w: claim %s: ClaimedAt and ExpiresAt are required", ErrInvalidRecord, c.CheckpointID)
	case c.Tool == "":
		return errprefix.Errorf("%w: claim %s: no tool name", ErrInvalidRecord, c.CheckpointID)
	}
	for name, v := range map[string]string{"call ID": c.CallID, "tool": c.Tool, "idempotency key": string(c.IdempotencyKey), "principal": c.Principal} {
		if len(v) > maxRecordText || !utf8.ValidString(v) {
			return errprefix.Errorf("%w: claim %s: the %s is not at most %d bytes of UTF-8", ErrInvalidRecord, c.CheckpointID, name, maxRecordText)
		}
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

// validHex reports whether s is n lowercase hex digits.
func validHex(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !('0' <= s[i] && s[i] <= '9' || 'a' <= s[i] && s[i] <= 'f') {
			return false
		}
	}
	return true
}

// ClaimQuery selects claims for Store.Claims: those claimed at or after
// Since (the zero time for all), in the order they were claimed (then by
// checkpoint ID), at most Limit of them (0 or less for all).
type ClaimQuery struct {
	Since time.Time
	Limit int
}

// PendingQuery selects pending calls for Store.Pending: those of the turn
// TurnID, or of every turn when it is empty, in the order their turns
// were first saved (then by turn ID, then by position), or with
// NewestFirst in the reverse order of turns (newest turn first, then by
// turn ID descending, the calls of one turn still by position); the first
// Offset of them are skipped (0 or less for none), and at most Limit are
// returned (0 or less for all), so that a list can be paged. An expired
// checkpoint is still listed, with its ExpiresAt, until DeleteExpired
// removes its turn; it can no longer be answered.
type PendingQuery struct {
	TurnID      string
	NewestFirst bool
	Offset      int
	Limit       int
}

// Pending is one suspended call of a saved turn that nobody has answered
// or declined yet.
type Pending struct {
	// TurnID is the turn it belongs to.
	TurnID string
	// Index is its position among the turn's outcomes.
	Index int
	// Outcome is the suspended outcome, with its Checkpoint.
	Outcome SavedOutcome
}

// Turn is the storable form of one model turn's outcomes, in call order:
// what a runtime keeps while some of its calls wait for a person, so that
// the turn can be answered to the model once they are resumed, in this
// process or after a restart. Dispatcher.SaveTurn makes and stores one;
// Dispatcher.Turn reads it back with the resumed outcomes in place.
type Turn struct {
	// ID is the runtime's name for the turn (a conversation ID and a turn
	// number, say): 1 to 1024 bytes of UTF-8.
	ID string `json:"id"`
	// Outcomes are the turn's outcomes, in call order.
	Outcomes []SavedOutcome `json:"outcomes"`
	// SavedAt is when the turn was first saved.
	SavedAt time.Time `json:"saved_at"`
	// ExpiresAt is when the Store may delete it (after MaxClockSkew
	// more): the latest expiry of its checkpoints, or the saving
	// Dispatcher's TTL after SavedAt when it has none.
	ExpiresAt time.Time `json:"expires_at"`
}

// Validate reports whether t is a turn a Store can record: an ID of 1 to
// 1024 bytes of UTF-8, non-zero times and valid outcomes. Errors wrap
// ErrInvalidRecord.
func (t Turn) Validate() error {
	if t.ID == "" || len(t.ID) > maxRecordText || !utf8.ValidString(t.ID) {
		return errprefix.Errorf("%w: turn ID %q is not 1 to %d bytes of UTF-8", ErrInvalidRecord, truncate(t.ID, 80), maxRecordText)
	}
	if t.SavedAt.IsZero() || t.ExpiresAt.IsZero() {
		return errprefix.Errorf("%w: turn %q: SavedAt and ExpiresAt are required", ErrInvalidRecord, truncate(t.ID, 80))
	}
	for i, o := range t.Outcomes {
		if err := o.Validate(); err != nil {
			return errprefix.Errorf("%w (outcome %d of turn %q)", err, i, truncate(t.ID, 80))
		}
	}
	return nil
}
