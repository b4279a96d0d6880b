package dispatch

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"slices"
	"time"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ReceiptKind says what a Receipt records.
type ReceiptKind string

// The kinds of receipt: one for each change of a grant, and one for each
// call a grant covered.
const (
	// ReceiptMade: a person made the grant (Receipt.Grant holds it as
	// made).
	ReceiptMade ReceiptKind = "made"
	// ReceiptSpent: one use of the grant was taken for a call, which it
	// names with its arguments, before the call was answered.
	ReceiptSpent ReceiptKind = "spent"
	// ReceiptCovered: the call a use was taken for was answered with the
	// grant's answer and ran: which use it was, and its outcome's kind.
	ReceiptCovered ReceiptKind = "covered"
	// ReceiptRevoked: a person revoked the grant.
	ReceiptRevoked ReceiptKind = "revoked"
)

// Receipt is the audit record of a grant's change or of a call it
// covered: JSON with an HMAC-SHA-256 under the Dispatcher's seal keys (the
// first key seals; KeyID, inside what the HMAC covers, names it), so that
// an audit can tell a receipt this runtime wrote from one edited or
// forged in the store. VerifyReceipt checks one. A GrantStore keeps
// receipts and lists them (GrantStore.Receipts); they travel as JSON:
//
//	{"id":"<32 hex>","kind":"spent","at":"<RFC 3339>","grant_id":"<32 hex>",
//	 "checkpoint_id":"…","call_id":"…","principal":"…","tool":"…",
//	 "arguments":"{…}","key_id":"…","hmac_sha256":"<base64>"}
//
// with the members that do not apply to its kind left out. The HMAC
// covers the canonical JSON of every other member (compact, members
// sorted by name, strings and numbers as written), after a label that
// keeps it apart from every other MAC made with the same keys. Stores
// copy it; the zero Receipt is not valid.
type Receipt struct {
	// ID is 32 lowercase hex digits, drawn at random.
	ID string `json:"id"`
	// Kind says what it records.
	Kind ReceiptKind `json:"kind"`
	// At is when, on the clock of the Dispatcher that wrote it.
	At time.Time `json:"at"`
	// GrantID is the grant's ID.
	GrantID string `json:"grant_id"`
	// By is the person who made or revoked the grant (ReceiptMade,
	// ReceiptRevoked).
	By string `json:"by,omitempty"`
	// Grant is the grant as it was made (ReceiptMade).
	Grant *Grant `json:"grant,omitempty"`
	// CheckpointID, CallID, Principal, Tool and Arguments name the call a
	// use was spent on (ReceiptSpent: the arguments are its admitted
	// arguments; ReceiptCovered: without them).
	CheckpointID string `json:"checkpoint_id,omitempty"`
	CallID       string `json:"call_id,omitempty"`
	Principal    string `json:"principal,omitempty"`
	Tool         string `json:"tool,omitempty"`
	Arguments    string `json:"arguments,omitempty"`
	// Use is which use of Uses the covered call took (ReceiptCovered),
	// and Outcome the kind of its outcome.
	Use     int  `json:"use,omitempty"`
	Uses    int  `json:"uses,omitempty"`
	Outcome Kind `json:"outcome,omitempty"`
	// KeyID names the seal key whose HMAC follows.
	KeyID string `json:"key_id"`
	// HMACSHA256 is the HMAC-SHA-256 of the receipt's other members.
	HMACSHA256 []byte `json:"hmac_sha256,omitzero"`
}

// Validate reports whether r is a receipt a GrantStore can keep: an ID
// and a grant ID of 32 lowercase hex digits, a known kind with the
// members it needs, a time, a key ID and an HMAC of 32 bytes, and texts
// within bounds. It does not verify the HMAC (see VerifyReceipt). Errors
// wrap ErrInvalidReceipt.
func (r Receipt) Validate() error {
	bad := func(format string, args ...any) error {
		return errprefix.Errorf("%w: receipt %s: %s", ErrInvalidReceipt, truncate(r.ID, 80), fmt.Sprintf(format, args...))
	}
	switch {
	case !validID(r.ID):
		return bad("the ID is not 32 lowercase hex digits")
	case !validID(r.GrantID):
		return bad("the grant ID %q is not 32 lowercase hex digits", truncate(r.GrantID, 80))
	case r.At.IsZero():
		return bad("no time")
	case len(r.HMACSHA256) != sha256.Size:
		return bad("the HMAC is %d bytes, want %d", len(r.HMACSHA256), sha256.Size)
	case r.Use < 0 || r.Uses < 0 || r.Use > r.Uses:
		return bad("use %d of %d", r.Use, r.Uses)
	case r.CheckpointID != "" && !validID(r.CheckpointID):
		return bad("the checkpoint ID is not 32 lowercase hex digits")
	case len(r.Arguments) > tool.MaxInputBytes || !utf8.ValidString(r.Arguments):
		return bad("the arguments are not at most %d bytes of UTF-8", tool.MaxInputBytes)
	}
	if err := checkKeyID(r.KeyID); err != nil {
		return bad("%v", err)
	}
	if err := checkTimes(r.At, r.At.Add(time.Nanosecond)); err != nil {
		return bad("%v", err)
	}
	for name, v := range map[string]string{"person": r.By, "call ID": r.CallID, "principal": r.Principal, "tool": r.Tool} {
		if len(v) > maxRecordText || !utf8.ValidString(v) {
			return bad("the %s is not at most %d bytes of UTF-8", name, maxRecordText)
		}
	}
	switch r.Kind {
	case ReceiptMade:
		if r.Grant == nil || r.Grant.ID != r.GrantID || r.By == "" {
			return bad("a receipt of a grant made holds the grant and who made it")
		}
		if err := r.Grant.Validate(); err != nil {
			return bad("%v", errprefix.Body(err))
		}
	case ReceiptRevoked:
		if r.By == "" || r.Grant != nil {
			return bad("a receipt of a revocation names who revoked, and holds no grant")
		}
	case ReceiptSpent, ReceiptCovered:
		if r.CheckpointID == "" || r.Principal == "" || r.Tool == "" || r.Grant != nil {
			return bad("a receipt of a use names the call's checkpoint, principal and tool, and holds no grant")
		}
		if r.Kind == ReceiptCovered && (r.Use < 1 || r.Outcome == "") {
			return bad("a receipt of a covered call says which use it took and how the call ended")
		}
	default:
		return bad("unknown kind %q", truncate(string(r.Kind), 80))
	}
	return nil
}

// receiptDomain keeps a receipt's HMAC from ever equalling one the same
// key makes for a checkpoint or another purpose.
const receiptDomain = "github.com/agentcontract/tool/dispatch grant receipt v1\x00"

// receiptMAC computes the HMAC of r (its HMACSHA256 not read) with
// secret.
func receiptMAC(secret []byte, r Receipt) ([]byte, error) {
	r.HMACSHA256 = nil
	data, err := jsonv2.Marshal(r)
	if err != nil {
		return nil, errprefix.Errorf("%w: receipt %s: %v", ErrInvalidReceipt, truncate(r.ID, 80), err)
	}
	v := jsontext.Value(data)
	if err := v.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return nil, errprefix.Errorf("%w: receipt %s: %v", ErrInvalidReceipt, truncate(r.ID, 80), err)
	}
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(receiptDomain))
	h.Write(v)
	return h.Sum(nil), nil
}

// sealReceipt returns r sealed with key: its KeyID and HMAC set.
func sealReceipt(r Receipt, key SealKey) (Receipt, error) {
	r.KeyID = key.ID
	r.At = r.At.UTC()
	mac, err := receiptMAC(key.Secret, r)
	if err != nil {
		return Receipt{}, err
	}
	r.HMACSHA256 = mac
	return r, r.Validate()
}

// VerifyReceipt decodes data, one receipt as MarshalJSON writes it (and
// as a GrantStore lists it), strictly, and verifies its HMAC with the key
// of keys its KeyID names: the runtime's seal keys, every one of which
// verifies. It returns the receipt. Errors wrap ErrInvalidReceipt: data
// that does not decode or is not a valid receipt, a key ID none of keys
// has, or an HMAC that does not match (the receipt was altered, or not
// written with that key).
func VerifyReceipt(data []byte, keys []SealKey) (Receipt, error) {
	var r Receipt
	if err := jsonv2.Unmarshal(data, &r, jsonv2.RejectUnknownMembers(true)); err != nil {
		return Receipt{}, errprefix.Errorf("%w: does not decode: %v", ErrInvalidReceipt, err)
	}
	if err := r.Validate(); err != nil {
		return Receipt{}, err
	}
	i := slices.IndexFunc(keys, func(k SealKey) bool { return k.ID == r.KeyID })
	if i < 0 {
		return Receipt{}, errprefix.Errorf("%w: receipt %s was sealed with key %q, which is not among the keys given", ErrInvalidReceipt, r.ID, truncate(r.KeyID, 80))
	}
	want, err := receiptMAC(keys[i].Secret, r)
	if err != nil {
		return Receipt{}, err
	}
	if !hmac.Equal(want, r.HMACSHA256) {
		return Receipt{}, errprefix.Errorf("%w: receipt %s: the HMAC does not match its content: it was altered, or not written with key %q", ErrInvalidReceipt, r.ID, r.KeyID)
	}
	return r, nil
}
