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
// CallStore on every Resume and Decline, records through it every call
// Run runs that is not tool.EffectSafe, and saves turns through a
// TurnStore (and waits for a turn's change through a TurnWaiter); an
// approval desk lists through a Lister; a runtime sweeps through a
// Sweeper. The package storetest holds the conformance tests
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
	TurnWaiter
	Lister
	Sweeper
}

// CallStore keeps the call records: the claim of each checkpoint, made
// once, the record of each call Run runs under a key (see "Exactly
// once" in the package documentation), the state of the call each lets
// run (see State), and the outcome recorded for it. It is all a
// Dispatcher needs to run calls exactly once and to resume, decline and
// supersede; Config.Store takes one. See Store for what it may persist,
// how it fails and which errors it returns.
type CallStore interface {
	// Claim records c, the claim of checkpoint c.CheckpointID (or the
	// record of a call Run runs, under its RunRecordID), atomically: of
	// all the claims of one ID, in any number of processes, one is
	// recorded.
	//
	//   - No claim of the ID exists: c is recorded at Version 1, as
	//     StateClaimed, or as StateRunning at Attempt 1 with its lease
	//     when c is so (a call whose tool starts at once: its intent and
	//     its start in one write), and Claim returns nil, nil. The caller
	//     won: it starts the call (Advance, unless it is running
	//     already) and records its outcome (Finish). A store that keeps
	//     turns sets the record's TurnID and CallIndex from the saved
	//     turn whose pending call has this checkpoint, if one does.
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
	// A claim that is not valid (see Claim.Validate), that has an
	// Outcome, a Version or Reconciled, or that is neither StateClaimed
	// (or no State) at Attempt 0 nor StateRunning at Attempt 1 with a
	// LeaseOwner and LeaseExpires, is an error wrapping ErrInvalidRecord.
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
	// Finish records the outcome of the claim of checkpoint id, whatever
	// its version: the record moves to StateFinished (its lease ended,
	// its Version one more). An ID without a claim is an error wrapping
	// ErrNotFound. A claim that has an outcome keeps it: finishing it
	// again with an equal outcome returns nil, with another an error
	// wrapping ErrInvalidRecord. When two processes ran the call (a
	// recovery replayed it), the first outcome recorded stands. A record
	// in StateUnknown has an outcome too, and keeps it: only Advance
	// moves it on (a reconciliation).
	Finish(ctx context.Context, id string, outcome SavedOutcome) error
	// Advance moves the record of checkpoint id by step s, atomically and
	// only from the version s was decided on, and returns the record as
	// it now stands (see Claim.Apply, which decides what a step may do).
	// Errors wrap ErrNotFound for an ID without a claim, ErrConflict when
	// the record is at another version (another process moved it: read
	// it again), and ErrInvalidRecord for a step the record cannot take.
	// As with Claim, what Advance returns is what the store holds: a
	// store resolves a write whose result it cannot tell before it
	// answers. A store that resolves it by finding the record as the
	// step makes it may take an equal step of another process for its
	// own, so of two equal steps decided on one version both may
	// succeed; steps that differ (another lease owner, another outcome)
	// never do.
	Advance(ctx context.Context, id string, s Step) (Claim, error)
	// Claimed returns the claim of checkpoint id, with its outcome if
	// recorded, or an error wrapping ErrNotFound.
	Claimed(ctx context.Context, id string) (Claim, error)
}

// TurnStore keeps the turns whose calls wait for a person:
// Dispatcher.SaveTurn and Dispatcher.Turn need it, beside the CallStore
// whose claims Turn follows.
type TurnStore interface {
	// SaveTurn records t, in place of the turn of the same ID, only if
	// the stored turn is at t.Version (compare and set; 0: no turn of
	// the ID is stored), and stores it at t.Version plus one. A turn
	// saved by another process in between is an error wrapping
	// ErrConflict, and nothing is recorded: two processes that each
	// read a turn and save it changed never lose each other's change. A
	// turn that is not valid (see Turn.Validate) is an error wrapping
	// ErrInvalidRecord.
	SaveTurn(ctx context.Context, t Turn) error
	// Turn returns the turn saved under id, as saved, or an error wrapping
	// ErrNotFound.
	Turn(ctx context.Context, id string) (Turn, error)
}

// TurnWaiter waits for a turn to change: what a runtime that must answer
// the model once a person has answered uses, instead of asking again and
// again.
type TurnWaiter interface {
	// WaitTurn returns the turn saved under id once its Version is above
	// after: at once when it is already, otherwise when a save makes it
	// so (a store that cannot be told of a save, as a database, looks at
	// an interval it documents). It waits while no turn of the ID is
	// saved. When ctx ends first, the error wraps ErrStore and ctx's
	// error.
	WaitTurn(ctx context.Context, id string, after int64) (Turn, error)
}

// Lister lists what an approval desk, an audit and an operator show: the
// calls that wait for a person, the claims made, and the calls left by a
// process that no longer holds them.
type Lister interface {
	// Claims lists claims for an audit: who answered (or declined) which
	// checkpoint of which tool, when, with which answer digest, and the
	// outcome kind once recorded. See ClaimQuery.
	Claims(ctx context.Context, q ClaimQuery) ([]Claim, error)
	// Pending lists the suspended outcomes of saved turns whose checkpoint
	// has no claim. See PendingQuery.
	Pending(ctx context.Context, q PendingQuery) ([]Pending, error)
	// Stranded lists the call records that wait for a process that no
	// longer holds them (see Claim.Stranded), for an operator to see and
	// a resend to recover. See StrandedQuery.
	Stranded(ctx context.Context, q StrandedQuery) ([]Claim, error)
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
// removes its turn; it can no longer be answered. Each Pending is a
// summary, bounded in size; with Full, it carries the whole suspended
// outcome too.
type PendingQuery struct {
	TurnID      string
	NewestFirst bool
	Offset      int
	Limit       int
	Full        bool
}

// Pending is one suspended call of a saved turn that nobody has answered
// or declined yet: a summary of it, what a list shows, each text cut to
// MaxSummaryBytes, and the whole outcome only when asked for. Stores make
// it with NewPending.
type Pending struct {
	// TurnID is the turn it belongs to.
	TurnID string
	// Index is its position among the turn's outcomes.
	Index int
	// CheckpointID, CallID and Tool are the suspended call's.
	CheckpointID string
	CallID       string
	Tool         string
	// Principal is the principal the checkpoint was sealed for, empty
	// when it names none.
	Principal string
	// Prompt is the input request's prompt, as JSON text.
	Prompt string
	// IssuedAt and ExpiresAt are the checkpoint's.
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Outcome is the suspended outcome, with its Checkpoint, when the
	// query asked for it (PendingQuery.Full); the zero SavedOutcome
	// otherwise.
	Outcome SavedOutcome
}

// MaxSummaryBytes bounds each text of a Pending summary: a longer one is
// cut on a rune boundary, and ends with "…".
const MaxSummaryBytes = 512

// NewPending returns the Pending of the suspended outcome o at position
// index of turn turnID: its summary, and o itself when full. o must be a
// suspended outcome with a Checkpoint; the summary of any other is empty.
func NewPending(turnID string, index int, o SavedOutcome, full bool) Pending {
	p := Pending{TurnID: turnID, Index: index, Tool: summary(o.Tool), CallID: summary(o.CallID)}
	if cp := o.Checkpoint; cp != nil {
		p.CheckpointID = cp.id
		p.Principal = summary(cp.principal)
		p.Prompt = summary(string(cp.inputRequest.Prompt()))
		p.IssuedAt, p.ExpiresAt = cp.issuedAt, cp.expiresAt
	}
	if full {
		p.Outcome = o
	}
	return p
}

// summary cuts s to at most MaxSummaryBytes, its mark of the cut
// included.
func summary(s string) string {
	if len(s) <= MaxSummaryBytes {
		return s
	}
	return truncate(s, MaxSummaryBytes-len("…"))
}

// StrandedQuery selects stranded call records for Lister.Stranded: those
// whose lease ended before Now (on the caller's clock), in the order
// they were claimed (then by checkpoint ID), at most Limit of them (0 or
// less for all).
type StrandedQuery struct {
	Now   time.Time
	Limit int
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
	// Version counts the turn's saves: 1 after the first. A turn read
	// from a Store carries the version it is at; TurnStore.SaveTurn
	// takes the version the change was decided on (0 for a new turn).
	Version int64 `json:"version,omitempty"`
}

// Validate reports whether t is a turn a Store can record: an ID of 1 to
// 1024 bytes of UTF-8, non-zero times and valid outcomes. Errors wrap
// ErrInvalidRecord.
func (t Turn) Validate() error {
	if t.Version < 0 {
		return errprefix.Errorf("%w: turn %q: version %d is negative", ErrInvalidRecord, truncate(t.ID, 80), t.Version)
	}
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
