package tool

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
)

// This file holds suspension and resumption: the [Admission] a runtime
// resumes a call with, the [Continuation] it carries, the call stamp that ties
// a Continuation to the call that asked, and where the stamp is made
// ([Binding.Call], through [Contract].stamp). It is checked where the call is
// admitted, in contract.go ([Contract.Prepare], through
// Contract.admitContinuation). The wire form of the stamp is in
// input_request.go, with the rest of the [InputRequest].

// Admission is what the runtime, never the model, asserts about a call. It
// is kept apart from [Request] because a model can write any arguments but
// must not choose the identity that external systems deduplicate on. The
// zero Admission starts a new call without an idempotency key.
type Admission struct {
	// IdempotencyKey identifies the logical call; empty for none.
	IdempotencyKey IdempotencyKey
	// Continuation answers the InputRequest that this same call returned
	// earlier; nil starts a new call. Prepare copies it.
	Continuation *Continuation
}

// Continuation is the validated answer to an [InputRequest], with the state
// the tool saved when it asked and the stamp of the call that asked. It is
// made only by [InputRequest.Continuation], is immutable and safe for
// concurrent use; its accessors return copies. The zero Continuation has no
// stamp, so [Contract.Prepare] refuses it.
type Continuation struct {
	state    []byte
	response []byte
	stamp    callStamp
}

// State returns a copy of the state the tool saved in its [InputRequest], or
// nil when it saved none.
func (c Continuation) State() json.RawMessage { return bytes.Clone(c.state) }

// Response returns a copy of the answer, which matched the request's
// response schema.
func (c Continuation) Response() json.RawMessage { return bytes.Clone(c.response) }

// Continuation checks response, which must be one RFC 7493 document of at
// most [MaxInputBytes] satisfying the response schema, and returns the
// Continuation that resumes the call: the state, a copy of the answer and
// r's call stamp. Pass it to [Contract.Prepare] in
// [Admission.Continuation] for the same call. Errors wrap
// [ErrInvalidInputRequest]; an answer that breaks the schema is described
// in the error's text.
func (r InputRequest) Continuation(response json.RawMessage) (Continuation, error) {
	if !r.Valid() {
		return Continuation{}, errorf("%w: the zero InputRequest takes no answer", ErrInvalidInputRequest)
	}
	if err := r.schema.Validate(response); err != nil {
		msg, verdict := err.Error(), "does not match"
		if rej, ok := err.(*InputRejection); ok {
			msg, verdict = rej.Message(), rej.against(verdict)
		}
		return Continuation{}, errorf("%w: the answer %s the response schema: %s", ErrInvalidInputRequest, verdict, msg)
	}
	return Continuation{state: bytes.Clone(r.state), response: bytes.Clone(response), stamp: r.stamp}, nil
}

// callStamp identifies the call an [InputRequest] was returned by: the tool's
// name, the digest of its canonical definition (its contract), the digest of
// the admitted argument bytes, and the idempotency key.
type callStamp struct {
	set       bool
	tool      string
	contract  [sha256.Size]byte
	arguments [sha256.Size]byte
	key       IdempotencyKey
}

// stamp returns a copy of request stamped with the call of invocation, as
// [Binding.Call] does to every [InputRequest] a tool returns.
func (c Contract) stamp(request InputRequest, invocation Invocation) *InputRequest {
	stamped := request.clone()
	stamped.stamp = callStamp{
		set:       true,
		tool:      c.core.frozen.def.Name,
		contract:  c.core.digest,
		arguments: sha256.Sum256(invocation.arguments),
		key:       invocation.key,
	}
	return &stamped
}
