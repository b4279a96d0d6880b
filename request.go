package tool

import (
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/strictjson"
)

// Request is a call proposed by a model: the name of a tool and the JSON
// text of its arguments. It is untrusted; only [Contract.Prepare] turns it
// into an [Invocation]. A provider's correlation id for the call belongs to
// the transport and has no place here.
type Request struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Validate checks the envelope only: a non-empty name and argument text of
// at most [MaxInputBytes]. Errors wrap [ErrInvalidRequest]. A runtime may
// call it before it resolves a tool. [Contract.Prepare] applies the same
// two rules, classified as its documentation says, and checks the argument
// text itself.
func (r Request) Validate() error {
	if r.Name == "" {
		return errorf("%w: empty tool name", ErrInvalidRequest)
	}
	if len(r.Arguments) > MaxInputBytes {
		return errorf("%w: arguments are %d bytes, more than the limit of %d", ErrInvalidRequest, len(r.Arguments), MaxInputBytes)
	}
	return nil
}

// IdempotencyKey names one logical call across its retries and
// continuations, so that a backend with effects can deduplicate them. It is
// opaque and may be passed on to third parties, so it should not encode
// anything about the runtime. The zero value means the call has no durable
// identity. Because a key travels in the call stamp of a persisted
// [InputRequest], Prepare refuses one that JSON cannot carry: invalid UTF-8,
// a Unicode noncharacter, or more than [MaxInputBytes] once written as a JSON
// string.
type IdempotencyKey string

// checkIdempotencyKey refuses a key that a call stamp could not carry
// through storage: one that is not valid UTF-8, holds a Unicode
// noncharacter, or is longer than [MaxInputBytes] written as a JSON string.
// Prepare applies it to every call, before anything runs, so that no
// suspended call is left with a checkpoint that cannot be restored.
func checkIdempotencyKey(key IdempotencyKey) error {
	if key == "" {
		return nil
	}
	if !utf8.ValidString(string(key)) {
		return errorf("%w: the idempotency key is not valid UTF-8", ErrInvalidInvocation)
	}
	for _, r := range string(key) {
		if strictjson.IsNoncharacter(r) {
			return errorf("%w: the idempotency key holds the Unicode noncharacter U+%04X", ErrInvalidInvocation, r)
		}
	}
	if len(key) <= (MaxInputBytes-2)/6 {
		return nil // even escaped as \u00XX throughout, it fits
	}
	quoted, err := jsontext.AppendQuote(nil, string(key))
	if err == nil {
		quoted, err = jsontext.AppendFormat(nil, quoted, wireOptions)
	}
	if err != nil {
		return errorf("%w: the idempotency key cannot be written as JSON: %v", ErrInvalidInvocation, err)
	}
	if len(quoted) > MaxInputBytes {
		return errorf("%w: the idempotency key is %d bytes written as JSON, more than the limit of %d", ErrInvalidInvocation, len(quoted), MaxInputBytes)
	}
	if _, err := strictjson.Parse(quoted); err != nil {
		return errorf("%w: the idempotency key is not I-JSON text: %v", ErrInvalidInvocation, err)
	}
	return nil
}
