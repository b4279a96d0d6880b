package tool

import (
	"bytes"
)

// Invocation is a call admitted by one [Contract]: JSON object arguments that
// passed its schema and input validator, and the runtime's [Admission].
//
// Only [Contract.Prepare] makes a non-zero Invocation, and only the [Binding]
// whose [Contract] prepared it will run it. The zero Invocation is refused by
// every Binding. An Invocation is immutable and safe for concurrent use:
// every accessor returns a copy. It holds data only, no function, interface
// or channel, so it can be stored, logged or handed to a scheduler without
// handing over the power to run anything. For a [Func] that data includes
// the input decoded at Prepare, which the first Call of the invocation
// takes (see [Func.Call]).
type Invocation struct {
	core         *contractCore
	arguments    []byte // never empty once admitted; read only (see Contract.Prepare)
	key          IdempotencyKey
	continuation *Continuation
	// decoded is allocated by the call of Prepare that made the
	// Invocation, so its address is the Invocation's identity. For a Func
	// it holds the input decoded at Prepare, for the first Call.
	decoded *decoded
}

// Arguments returns a copy of the admitted JSON object, exactly as
// proposed (blank argument text is admitted as {}).
func (i Invocation) Arguments() []byte {
	return bytes.Clone(i.arguments)
}

// Definition returns a copy of the frozen definition that admitted the
// call; the zero Definition for the zero [Invocation].
func (i Invocation) Definition() Definition {
	if i.core == nil {
		return Definition{}
	}
	return i.core.frozen.definition()
}

// IdempotencyKey returns the key the runtime admitted the call with.
func (i Invocation) IdempotencyKey() IdempotencyKey { return i.key }

// Continuation returns the answer and state with which this call resumes,
// and false when it is a new call. The tool's own code decides what the
// answer means; Prepare has already checked that it matches the response
// schema and belongs to this very call.
func (i Invocation) Continuation() (Continuation, bool) {
	if i.continuation == nil {
		return Continuation{}, false
	}
	return *i.continuation, true
}

// same reports whether i and other come from the same call of Prepare. Each
// call of Prepare allocates the decoded header of its [Invocation], shared
// with no other call, so its address identifies the call: equal argument
// text prepared twice makes two invocations. Comparing it writes nothing
// shared, unlike a counter.
func (i Invocation) same(other Invocation) bool {
	return i.core == other.core && i.decoded != nil && i.decoded == other.decoded
}
