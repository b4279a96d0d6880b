package dispatch

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// SealKey is one secret key for sealing checkpoints, named by an ID that
// travels in the checkpoint so that the right key opens it after keys
// rotate. The ID is not secret; the Secret is, and must be at least 32
// bytes of high-entropy data (for example from crypto/rand), shared by
// every process that resumes the runtime's checkpoints.
type SealKey struct {
	// ID names the key: 1 to 64 printable ASCII characters.
	ID string
	// Secret is the HMAC-SHA-256 key: at least 32 bytes. New copies it.
	Secret []byte
}

// minSecret is the shortest Secret New accepts: the output size of
// SHA-256, below which the key, not the MAC, is the weak part.
const minSecret = 32

// checkpointVersion is the only wire version this package writes and reads.
// Version 1 had no ID and no expiry: it could be resumed any number of
// times, so it is refused (see UnmarshalJSON).
const checkpointVersion = 2

// DefaultCheckpointTTL is how long a checkpoint can be answered when
// Config.CheckpointTTL is zero: a day, long enough for a person to see
// the request, and far beyond MaxClockSkew.
const DefaultCheckpointTTL = 24 * time.Hour

// MaxCheckpointTTL is the longest Config.CheckpointTTL that New accepts:
// 100 years of 365 days. The seal covers a checkpoint's times as Unix
// nanoseconds, which end in the year 2262; with this bound, every
// checkpoint issued before the year 2162 can carry its expiry. A runtime
// whose own record makes each answer count once (a durable workflow's
// history, say) and that lets a call wait as long as it likes uses it.
const MaxCheckpointTTL = 100 * 365 * 24 * time.Hour

// MaxClockSkew is how far apart the clocks of the processes that issue and
// resume checkpoints may be. Expiry is judged on the clock of the process
// that claims the checkpoint, so with clocks that far apart a checkpoint
// lives its TTL give or take MaxClockSkew; the default TTL tolerates that
// easily. A checkpoint issued more than MaxClockSkew in the future of the
// resuming process's clock is refused: the clocks disagree more than this
// package allows, or the checkpoint was not made as it claims.
const MaxClockSkew = 5 * time.Minute

// maxCheckpointBytes bounds an encoded checkpoint: the request and the
// input request, each bounded by tool.MaxInputBytes several times over,
// and room for the rest.
const maxCheckpointBytes = 8*tool.MaxInputBytes + 1<<12

// Checkpoint is a suspended call: everything [Dispatcher.Resume] needs to
// continue it in another process, and the seal that proves this runtime
// issued it. It is made only by a Dispatcher, and travels as JSON
// (MarshalJSON, UnmarshalJSON):
//
//	{"version":2,"id":"<32 hex digits>","issued_at":"<RFC 3339>",
//	 "expires_at":"<RFC 3339>","principal":"…",
//	 "call_id":"…","request":{"name":"…","arguments":"…"},
//	 "idempotency_key":"…","input_request":{…},
//	 "seal":{"key_id":"…","hmac_sha256":"<base64>"}}
//
// The seal covers every member. The ID names this one suspension
// (random, unless the runtime chose it: see Config.NewCheckpointID):
// answering it claims the ID in the [Store], so it can be answered once. The principal (omitted when empty) is who may answer.
//
// Decoding checks the form only; the seal is verified by Resume, which
// holds the keys. A Checkpoint is immutable and safe for concurrent use;
// its accessors return copies. The zero Checkpoint is invalid: it has no
// wire form and Resume refuses it.
type Checkpoint struct {
	id           string
	issuedAt     time.Time
	expiresAt    time.Time
	principal    string
	callID       string
	request      tool.Request
	key          tool.IdempotencyKey
	inputRequest tool.InputRequest
	keyID        string
	mac          []byte
}

// ID returns the checkpoint's unique ID: 32 lowercase hex digits (128
// random bits, or what Config.NewCheckpointID chose), the key its answer
// is claimed under.
func (c Checkpoint) ID() string { return c.id }

// IssuedAt returns when the call suspended, on the clock of the process
// that sealed the checkpoint (Config.Clock), in UTC, to the second.
func (c Checkpoint) IssuedAt() time.Time { return c.issuedAt }

// ExpiresAt returns when the checkpoint stops being answerable: IssuedAt
// plus the issuing Dispatcher's Config.CheckpointTTL, in UTC.
func (c Checkpoint) ExpiresAt() time.Time { return c.expiresAt }

// Principal returns who may answer the checkpoint (Call.Principal when the
// call ran), or "" when anyone the runtime lets answer may.
func (c Checkpoint) Principal() string { return c.principal }

// CallID returns the correlation ID of the call that suspended.
func (c Checkpoint) CallID() string { return c.callID }

// Request returns the call as the model proposed it.
func (c Checkpoint) Request() tool.Request { return c.request }

// IdempotencyKey returns the key the call ran with, which Resume keeps.
func (c Checkpoint) IdempotencyKey() tool.IdempotencyKey { return c.key }

// InputRequest returns what the tool asked: its prompt, the schema of an
// acceptable answer, and its state.
func (c Checkpoint) InputRequest() tool.InputRequest { return c.inputRequest }

// KeyID returns the ID of the key that sealed the checkpoint.
func (c Checkpoint) KeyID() string { return c.keyID }

// CheckAnswer reports whether answer satisfies the response schema of the
// checkpoint's input request, as Resume checks it before anything runs, so
// that a runtime can refuse an answer to its sender before it accepts it.
// It does not verify the seal (see Dispatcher.Open). Errors wrap
// ErrInvalidAnswer and say why, in the words of the schema's rejection.
func (c Checkpoint) CheckAnswer(answer json.RawMessage) error {
	_, err := c.continuation(answer)
	return err
}

// continuation answers the checkpoint's input request with answer.
func (c Checkpoint) continuation(answer json.RawMessage) (tool.Continuation, error) {
	continuation, err := c.inputRequest.Continuation(answer)
	if err != nil {
		return tool.Continuation{}, errprefix.Errorf("%w: %s", ErrInvalidAnswer, answerProblem(err))
	}
	return continuation, nil
}

// answerProblem says why an answer was refused, without the sentinels of
// the core package.
func answerProblem(err error) string {
	if rejection, ok := tool.ClassifyInputRejection(err); ok {
		return rejection.Message()
	}
	return errprefix.Detail(err, tool.ErrInvalidInputRequest)
}

// checkpointWire is the JSON form of a Checkpoint.
type checkpointWire struct {
	Version        int                 `json:"version"`
	ID             string              `json:"id"`
	IssuedAt       time.Time           `json:"issued_at,omitzero"`
	ExpiresAt      time.Time           `json:"expires_at,omitzero"`
	Principal      string              `json:"principal,omitempty"`
	CallID         string              `json:"call_id"`
	Request        tool.Request        `json:"request"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
	InputRequest   jsontext.Value      `json:"input_request"`
	Seal           sealWire            `json:"seal"`
}

type sealWire struct {
	KeyID      string `json:"key_id"`
	HMACSHA256 []byte `json:"hmac_sha256"`
}

// MarshalJSON writes the wire form shown on Checkpoint. The zero Checkpoint
// is an error wrapping ErrInvalidCheckpoint.
func (c Checkpoint) MarshalJSON() ([]byte, error) {
	if c.keyID == "" {
		return nil, errprefix.Errorf("%w: the zero Checkpoint has no wire form", ErrInvalidCheckpoint)
	}
	ir, err := c.inputRequest.MarshalJSON()
	if err != nil {
		return nil, errprefix.Errorf("%w: %w", ErrInvalidCheckpoint, err)
	}
	return jsonv2.Marshal(checkpointWire{
		Version:        checkpointVersion,
		ID:             c.id,
		IssuedAt:       c.issuedAt,
		ExpiresAt:      c.expiresAt,
		Principal:      c.principal,
		CallID:         c.callID,
		Request:        c.request,
		IdempotencyKey: c.key,
		InputRequest:   ir,
		Seal:           sealWire{KeyID: c.keyID, HMACSHA256: c.mac},
	})
}

// UnmarshalJSON decodes the wire form strictly: one I-JSON document with
// no unknown or duplicate members, version 2, an ID of 32 lowercase hex
// digits, an expiry after the issue time, a principal of at most 1024
// bytes of UTF-8, a valid input request and a seal of the right size. It
// does not verify the seal; Resume does. Errors wrap ErrInvalidCheckpoint,
// and c is unchanged on error.
//
// A checkpoint of version 1, written before checkpoints were single-use,
// is refused with an error that says so: it has no ID to claim and no
// expiry, and it cannot be resumed. The suspended call must be run again,
// which suspends it anew with a version 2 checkpoint.
func (c *Checkpoint) UnmarshalJSON(data []byte) error {
	if len(data) > maxCheckpointBytes {
		return errprefix.Errorf("%w: %d bytes, more than the limit of %d", ErrInvalidCheckpoint, len(data), maxCheckpointBytes)
	}
	var head struct {
		Version int `json:"version"`
	}
	if err := jsonv2.Unmarshal(data, &head); err == nil && head.Version == 1 {
		return errprefix.Errorf("%w: version 1 predates single-use checkpoints (it has no ID and no expiry) and cannot be resumed: run the suspended call again to suspend it with a new checkpoint", ErrInvalidCheckpoint)
	}
	var w checkpointWire
	if err := jsonv2.Unmarshal(data, &w, jsonv2.RejectUnknownMembers(true)); err != nil {
		return errprefix.Errorf("%w: does not decode: %v", ErrInvalidCheckpoint, err)
	}
	if w.Version != checkpointVersion {
		return errprefix.Errorf("%w: version %d, want %d", ErrInvalidCheckpoint, w.Version, checkpointVersion)
	}
	if !validID(w.ID) {
		return errprefix.Errorf("%w: ID %q is not 32 lowercase hex digits", ErrInvalidCheckpoint, truncate(w.ID, 80))
	}
	if err := checkTimes(w.IssuedAt, w.ExpiresAt); err != nil {
		return errprefix.Errorf("%w: %v", ErrInvalidCheckpoint, err)
	}
	if err := checkPrincipal(w.Principal); err != nil {
		return errprefix.Errorf("%w: %v", ErrInvalidCheckpoint, err)
	}
	if err := checkKeyID(w.Seal.KeyID); err != nil {
		return errprefix.Errorf("%w: seal: %v", ErrInvalidCheckpoint, err)
	}
	if len(w.Seal.HMACSHA256) != sha256.Size {
		return errprefix.Errorf("%w: seal: the MAC is %d bytes, want %d", ErrInvalidCheckpoint, len(w.Seal.HMACSHA256), sha256.Size)
	}
	if err := w.Request.Validate(); err != nil {
		return errprefix.Errorf("%w: request: %w", ErrInvalidCheckpoint, err)
	}
	var ir tool.InputRequest
	if err := ir.UnmarshalJSON(w.InputRequest); err != nil {
		return errprefix.Errorf("%w: input request: %w", ErrInvalidCheckpoint, err)
	}
	*c = Checkpoint{
		id:           w.ID,
		issuedAt:     w.IssuedAt.UTC(),
		expiresAt:    w.ExpiresAt.UTC(),
		principal:    w.Principal,
		callID:       w.CallID,
		request:      w.Request,
		key:          w.IdempotencyKey,
		inputRequest: ir,
		keyID:        w.Seal.KeyID,
		mac:          w.Seal.HMACSHA256,
	}
	return nil
}

// sealContent is the byte string the MAC covers: a domain label, then every
// field of the checkpoint, each prefixed with its length so that no two
// checkpoints share a content. Times are their Unix nanoseconds in
// decimal.
func sealContent(keyID string, c *Checkpoint, inputRequest []byte) []byte {
	fields := []string{
		keyID, c.id,
		strconv.FormatInt(c.issuedAt.UnixNano(), 10), strconv.FormatInt(c.expiresAt.UnixNano(), 10),
		c.principal, c.callID, c.request.Name, c.request.Arguments, string(c.key), string(inputRequest),
	}
	n := len(sealDomain)
	for _, f := range fields {
		n += 8 + len(f)
	}
	b := make([]byte, 0, n)
	b = append(b, sealDomain...)
	for _, f := range fields {
		b = binary.BigEndian.AppendUint64(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

// sealDomain keeps a checkpoint's MAC from ever equalling a MAC the same
// key computes for another purpose, or for a checkpoint of version 1.
const sealDomain = "github.com/agentcontract/tool/dispatch checkpoint v2\x00"

// mac computes the seal of c's fields with secret; c.keyID and c.mac are
// not read.
func mac(secret []byte, keyID string, c *Checkpoint, inputRequest []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write(sealContent(keyID, c, inputRequest))
	return h.Sum(nil)
}

// minTime and maxTime bound the times a checkpoint may carry: the range of
// Unix nanoseconds in an int64, which the seal covers.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// checkTimes reports whether issued and expires are usable times of a
// checkpoint: both in the range of Unix nanoseconds, expires after issued.
func checkTimes(issued, expires time.Time) error {
	for _, t := range []time.Time{issued, expires} {
		if t.Before(minTime) || t.After(maxTime) {
			return fmt.Errorf("time %s is outside the years 1678 to 2262", t.Format(time.RFC3339))
		}
	}
	if !expires.After(issued) {
		return fmt.Errorf("expires at %s, not after it was issued at %s", expires.Format(time.RFC3339Nano), issued.Format(time.RFC3339Nano))
	}
	return nil
}

// checkKeyID reports whether id is a usable key ID.
func checkKeyID(id string) error {
	if id == "" || len(id) > 64 {
		return fmt.Errorf("key ID %q must be 1 to 64 characters", truncate(id, 80))
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x21 || id[i] > 0x7e {
			return fmt.Errorf("key ID %q must be printable ASCII without spaces", truncate(id, 80))
		}
	}
	return nil
}
