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
	arguments    []byte // never empty once admitted; its memory is the identity
	key          IdempotencyKey
	continuation *Continuation
	decoded      *decoded // a Func's input decoded at Prepare, for the first Call
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
// call of Prepare admits its own copy of the argument text, never empty
// and never shared with another [Invocation], so the address of that copy
// identifies the call: equal argument bytes from two calls are two
// invocations. Comparing it writes nothing shared, unlike a counter.
func (i Invocation) same(other Invocation) bool {
	return i.core == other.core && len(i.arguments) > 0 && len(i.arguments) == len(other.arguments) &&
		&i.arguments[0] == &other.arguments[0]
}
