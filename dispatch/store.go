package dispatch

import (
	"context"
	"time"
	"unicode/utf8"

	"github.com/agentcontract/tool/internal/errprefix"
)

// Store keeps what must outlive one process while a person decides: the
// claims that make each checkpoint answerable once, the outcome recorded
// for each claim, the turns whose calls wait for an answer, and, through
// the claims, who answered what and when. It is the union of the small
// interfaces a part of the house needs: a Dispatcher claims through a
// CallStore on every Resume and Decline and saves turns through a
// TurnStore; an approval desk lists through a Lister; a runtime sweeps
// through a Sweeper. The package storetest holds the conformance tests
// of each, which every implementation must pass.
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
	CallStore
	TurnStore
	Lister
	Sweeper
}

// CallStore keeps the call records: the claim of each checkpoint, made
// once, and the outcome recorded for it. It is all a Dispatcher needs to
// resume, decline and supersede; Config.Store takes one. See Store for
// what it may persist, how it fails and which errors it returns.
type CallStore interface {
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
}

// TurnStore keeps the turns whose calls wait for a person:
// Dispatcher.SaveTurn and Dispatcher.Turn need it, beside the CallStore
// whose claims Turn follows.
type TurnStore interface {
	// SaveTurn records t, replacing a turn of the same ID. A turn that is
	// not valid (see Turn.Validate) is an error wrapping
	// ErrInvalidRecord.
	SaveTurn(ctx context.Context, t Turn) error
	// Turn returns the turn saved under id, as saved, or an error wrapping
	// ErrNotFound.
	Turn(ctx context.Context, id string) (Turn, error)
}

// Lister lists what an approval desk and an audit show: the calls that
// wait for a person and the claims made.
type Lister interface {
	// Claims lists claims for an audit: who answered (or declined) which
	// checkpoint of which tool, when, with which answer digest, and the
	// outcome kind once recorded. See ClaimQuery.
	Claims(ctx context.Context, q ClaimQuery) ([]Claim, error)
	// Pending lists the suspended outcomes of saved turns whose checkpoint
	// has no claim. See PendingQuery.
	Pending(ctx context.Context, q PendingQuery) ([]Pending, error)
}

// Sweeper deletes what expired.
type Sweeper interface {
	// DeleteExpired deletes every claim and turn whose ExpiresAt plus
	// MaxClockSkew is before now, and returns how many it deleted. It
	// deletes nothing else. A runtime calls it from time to time, with
	// its own clock.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
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

// ClaimQuery selects claims for Store.Claims: those claimed at or after
// Since (the zero time for all), in the order they were claimed (then by
// checkpoint ID), at most Limit of them (0 or less for all).
type ClaimQuery struct {
	Since time.Time
	Limit int
}
