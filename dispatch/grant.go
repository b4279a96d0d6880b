package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// The errors of grants and their receipts. Every error of this file and
// of the GrantStore methods wraps one of them, or one of the Store's
// (ErrStore, ErrNotFound, ErrInvalidRecord).
var (
	// ErrInvalidGrant: a grant that cannot be made as asked (a call
	// sealed for nobody, a predicate the engine refuses or that does not
	// accept the call it was minted from, a widening of a member that is
	// not a number, uses out of range), or a grant record a GrantStore
	// cannot keep.
	ErrInvalidGrant = errprefix.New("invalid grant")
	// ErrGrantNotLive: a grant that cannot be spent or revoked because it
	// is spent (no use left), expired, or revoked already.
	ErrGrantNotLive = errprefix.New("grant not live")
	// ErrInvalidReceipt: a receipt that does not decode, or whose HMAC
	// does not verify under the keys given.
	ErrInvalidReceipt = errprefix.New("invalid receipt")
)

// DefaultMaxGrantTTL is the Config.MaxGrantTTL of a Config that sets
// none: a grant lasts a week at most.
const DefaultMaxGrantTTL = 7 * 24 * time.Hour

// MaxGrantUses bounds Mint.Uses: a standing approval is counted in uses,
// not made unlimited by a large number.
const MaxGrantUses = 10_000

// OpGrant is the CallInfo.Op of a call a grant answered (see
// Config.Grants): the call the model proposed asked, and a live grant
// gave its answer through the same claim as Resume.
const OpGrant Op = "grant"

// Grant is a standing approval: a person's answer, given once, to the
// calls of one principal, to one tool under one contract, whose admitted
// arguments satisfy a predicate, until an expiry, a number of times (see
// "Grants" in the package documentation). It is a record: a Dispatcher
// makes it (Dispatcher.Mint), a GrantStore keeps it, spends its uses and
// revokes it. Stores copy it; the zero Grant is not valid.
type Grant struct {
	// ID is 32 lowercase hex digits, drawn at random when it is made.
	ID string `json:"id"`
	// GrantedBy is the person who made it: one who may answer the calls
	// it covers (Answer.Principal's rule: the principal they are sealed
	// for).
	GrantedBy string `json:"granted_by"`
	// Principal is the principal whose calls it covers: the one sealed
	// in their checkpoints (Call.Principal), never empty. A call sealed
	// for nobody always asks.
	Principal string `json:"principal"`
	// Tool is the name of the tool whose calls it covers.
	Tool string `json:"tool"`
	// ContractSHA256 is the digest of the tool's contract (name,
	// schemas, effect) the calls it covers are admitted under, as the
	// checkpoint's stamp carries it: a release that changes a schema or
	// the effect voids every grant made before it.
	ContractSHA256 string `json:"contract_sha256"`
	// Predicate is a JSON Schema checked on the admitted argument bytes
	// of each call, by the engine that checks them for Prepare, under
	// the same cost bounds. Mint pins every member to its approved value
	// and closes the object, except the members it widened.
	Predicate json.RawMessage `json:"predicate"`
	// Widened lists the members the person widened on purpose, as the
	// predicate admits them; nil when every member is pinned. It is what
	// a desk shows; the predicate is what is checked.
	Widened []Widening `json:"widened,omitempty"`
	// Answer is the answer the grant gives: a JSON document that must
	// satisfy the response schema of each call it covers, or the call
	// asks.
	Answer json.RawMessage `json:"answer"`
	// CheckpointID is the checkpoint of the approved call the grant was
	// minted from.
	CheckpointID string `json:"checkpoint_id,omitempty"`
	// CreatedAt is when it was made, and ExpiresAt when it stops
	// covering calls, on the clock of the Dispatcher that made it (the
	// expiry is judged on the clock of the one that spends it).
	CreatedAt time.Time `json:"created_at"`
	ExpiresAt time.Time `json:"expires_at"`
	// Uses is how many calls it may answer, 1 to MaxGrantUses; Used how
	// many it has answered. A GrantStore counts Used.
	Uses int `json:"uses"`
	Used int `json:"used"`
	// RevokedBy and RevokedAt say who revoked it and when; empty and
	// zero while it is not revoked.
	RevokedBy string    `json:"revoked_by,omitempty"`
	RevokedAt time.Time `json:"revoked_at,omitzero"`
}

// Widening is one member of a call's arguments that a grant admits
// beyond its approved value: a number (a top-level member whose approved
// value is a JSON number) down to Minimum, up to Maximum, or both. The
// bounds are JSON numbers as text ("5000", "12.5"); an empty one leaves
// that side as open as the tool's own input schema. The approved value
// must lie within them. Only numbers can be widened: every other member
// stays pinned to its approved value.
type Widening struct {
	// Member is the name of a top-level member of the arguments.
	Member string `json:"member"`
	// Minimum and Maximum are inclusive bounds, JSON numbers as text.
	Minimum string `json:"minimum,omitempty"`
	Maximum string `json:"maximum,omitempty"`
	// Approved is the member's approved value, as the call carried it;
	// Mint sets it.
	Approved string `json:"approved,omitempty"`
}

// Live reports whether g covers calls at now: not revoked, not expired,
// a use left.
func (g Grant) Live(now time.Time) bool {
	return g.RevokedAt.IsZero() && now.Before(g.ExpiresAt) && g.Used < g.Uses
}

// Validate reports whether g is a grant a GrantStore can keep: an ID of
// 32 lowercase hex digits, a person and a principal of 1 to 1024 bytes of
// UTF-8, a tool name, a contract digest of 64 lowercase hex digits, a
// predicate and an answer that are each one JSON document of at most
// tool.MaxInputBytes, times in order, 1 to MaxGrantUses uses of which 0
// to all are used, and a revocation with both who and when or neither.
// It does not compile the predicate: the Dispatcher does when it makes
// the grant and when it checks a call. Errors wrap ErrInvalidGrant.
func (g Grant) Validate() error {
	bad := func(format string, args ...any) error {
		return errprefix.Errorf("%w: grant %s: %s", ErrInvalidGrant, truncate(g.ID, 80), fmt.Sprintf(format, args...))
	}
	switch {
	case !validID(g.ID):
		return bad("the ID is not 32 lowercase hex digits")
	case g.Principal == "":
		return bad("no principal: a call sealed for nobody always asks")
	case g.GrantedBy == "":
		return bad("nobody granted it")
	case g.Tool == "":
		return bad("no tool name")
	case !validHex(g.ContractSHA256, 64):
		return bad("the contract digest %q is not 64 lowercase hex digits", truncate(g.ContractSHA256, 80))
	case g.CheckpointID != "" && !validID(g.CheckpointID):
		return bad("the checkpoint ID is not 32 lowercase hex digits")
	case g.CreatedAt.IsZero() || !g.ExpiresAt.After(g.CreatedAt):
		return bad("it expires at %s, not after it was made at %s", g.ExpiresAt.Format(time.RFC3339), g.CreatedAt.Format(time.RFC3339))
	case g.Uses < 1 || g.Uses > MaxGrantUses:
		return bad("%d uses, want 1 to %d", g.Uses, MaxGrantUses)
	case g.Used < 0 || g.Used > g.Uses:
		return bad("%d of %d uses used", g.Used, g.Uses)
	case (g.RevokedBy == "") != g.RevokedAt.IsZero():
		return bad("a revocation names who and when, or neither")
	}
	if err := checkTimes(g.CreatedAt, g.ExpiresAt); err != nil {
		return bad("%v", err)
	}
	for name, v := range map[string]string{"principal": g.Principal, "person who granted it": g.GrantedBy, "tool": g.Tool, "person who revoked it": g.RevokedBy} {
		if len(v) > maxRecordText || !utf8.ValidString(v) {
			return bad("the %s is not at most %d bytes of UTF-8", name, maxRecordText)
		}
	}
	for name, v := range map[string]json.RawMessage{"predicate": g.Predicate, "answer": g.Answer} {
		if len(v) > tool.MaxInputBytes || !jsontext.Value(v).IsValid() {
			return bad("the %s is not one JSON document of at most %d bytes", name, tool.MaxInputBytes)
		}
	}
	for _, w := range g.Widened {
		if w.Member == "" || len(w.Member) > maxRecordText || !utf8.ValidString(w.Member) {
			return bad("a widened member's name is not 1 to %d bytes of UTF-8", maxRecordText)
		}
		for _, n := range []string{w.Minimum, w.Maximum, w.Approved} {
			if n != "" && !isNumber(n) {
				return bad("member %q: %q is not a JSON number", truncate(w.Member, 80), truncate(n, 80))
			}
		}
	}
	return nil
}

// isNumber reports whether s is one JSON number of at most 64 bytes.
func isNumber(s string) bool {
	v := jsontext.Value(s)
	return len(s) <= 64 && v.IsValid() && v.Kind() == '0'
}

// GrantStore keeps grants and their receipts, for a Dispatcher's
// Config.Grants and for an audit: MemoryStore and the SQL store implement
// it, and the package storetest holds its conformance tests
// (storetest.GrantStore). What Store says of failing closed, of copies
// and of concurrent use holds here too; a shared store is shared by
// processes, and its Spend is atomic across them.
//
// A receipt goes with each change of a grant and is recorded in the same
// atomic write as the change (AddGrant, SpendGrant, RevokeGrant), so that
// no change is kept without its receipt; AddReceipt records the receipt
// of a covered call, after it ran. Receipts are never deleted by this
// interface: they are the audit.
type GrantStore interface {
	// AddGrant records g, a new grant, with made, its receipt
	// (ReceiptMade). A grant of the same ID is an error wrapping
	// ErrInvalidGrant; so is a grant that is not valid (Grant.Validate),
	// or that is revoked or used already. A receipt that is not valid
	// (Receipt.Validate) is an error wrapping ErrInvalidReceipt.
	AddGrant(ctx context.Context, g Grant, made Receipt) error
	// Grants lists grants: see GrantQuery.
	Grants(ctx context.Context, q GrantQuery) ([]Grant, error)
	// SpendGrant takes one use of grant id, atomically, only if the
	// grant is live at now (see Grant.Live), and records spent, its
	// receipt (ReceiptSpent), in the same write. Of any number of
	// SpendGrant calls on one grant, in any number of processes, at most
	// its remaining uses succeed. It returns the grant as it now stands
	// (Used one more). A grant that is spent, expired or revoked is an
	// error wrapping ErrGrantNotLive, and nothing is recorded; an ID
	// without a grant is ErrNotFound.
	//
	// A SpendGrant that returns an error for another reason may have
	// taken its use (a reply lost after the write committed): the use is
	// then spent, with its receipt, and nothing answers the call. A
	// use may be lost that way; it is never taken twice.
	SpendGrant(ctx context.Context, id string, now time.Time, spent Receipt) (Grant, error)
	// RevokeGrant records that by revoked grant id at at, with revoked,
	// its receipt (ReceiptRevoked), in the same write, and returns the
	// grant as it now stands. A grant revoked already is an error
	// wrapping ErrGrantNotLive, and nothing is recorded; a grant spent
	// or expired can still be revoked. An ID without a grant is
	// ErrNotFound.
	RevokeGrant(ctx context.Context, id, by string, at time.Time, revoked Receipt) (Grant, error)
	// AddReceipt records r, a receipt that goes with no change of a
	// grant (ReceiptCovered). A receipt of the same ID is an error
	// wrapping ErrInvalidReceipt.
	AddReceipt(ctx context.Context, r Receipt) error
	// Receipts lists receipts for an audit: see ReceiptQuery. Each
	// verifies with VerifyReceipt (after MarshalJSON) as it was sealed.
	Receipts(ctx context.Context, q ReceiptQuery) ([]Receipt, error)
}

// GrantQuery selects grants for GrantStore.Grants: those whose ID,
// Principal, Tool and ContractSHA256 equal the query's, each when it is
// not empty, and that are live at LiveAt when it is not the zero time
// (see Grant.Live); in the order they were made (then by ID), or with
// NewestFirst the reverse; the first Offset skipped (0 or less for
// none), at most Limit returned (0 or less for all).
type GrantQuery struct {
	ID             string
	Principal      string
	Tool           string
	ContractSHA256 string
	LiveAt         time.Time
	NewestFirst    bool
	Offset         int
	Limit          int
}

// Matches reports whether g is selected by q's filters (not by its order,
// offset or limit): what a GrantStore applies.
func (q GrantQuery) Matches(g Grant) bool {
	return (q.ID == "" || q.ID == g.ID) && (q.Principal == "" || q.Principal == g.Principal) &&
		(q.Tool == "" || q.Tool == g.Tool) && (q.ContractSHA256 == "" || q.ContractSHA256 == g.ContractSHA256) &&
		(q.LiveAt.IsZero() || g.Live(q.LiveAt))
}

// ReceiptQuery selects receipts for GrantStore.Receipts: those of the
// grant GrantID (every grant when empty), made at or after Since (the zero
// time for all), in the order of their times (then by ID), at most Limit
// of them (0 or less for all).
type ReceiptQuery struct {
	GrantID string
	Since   time.Time
	Limit   int
}
