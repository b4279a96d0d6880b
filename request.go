package tool

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
