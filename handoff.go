package tool

import "sync/atomic"

// This file holds the hand-off of a [Func]'s typed input from Prepare to Call.
// Prepare decodes the admitted arguments of a Func into In in the read
// that checks them against the schema (or, where that read cannot decode
// them, with the codec right after it); instead of throwing that value
// away and decoding the same bytes again at Call, Prepare keeps it in the
// [Invocation] and the first Call of that Invocation takes it. Every later
// Call of the same Invocation (a copy of it included) decodes afresh, so
// no two calls ever share a value that the function may modify.

// decoded is the header of a decodedBox: a pointer to the decoded value
// (a *In, in the box that holds this header), and whether a Call has taken
// it. The value is found by its type: decoding depends on In alone, so a
// value of the Func's own In, decoded from the Invocation's arguments, is
// the one the Func's own decode would produce.
type decoded struct {
	value any
	taken atomic.Bool
}

// decodedBox holds one decoded input with its header, in one allocation.
type decodedBox[In any] struct {
	decoded
	in In
}

// takeDecoded returns the In decoded at Prepare, to the first caller only;
// false when there is none of that type. The box lets go of the value, so
// that it lives only as long as the call that took it needs it.
func takeDecoded[In any](h *decoded) (In, bool) {
	var zero In
	if h == nil {
		return zero, false
	}
	p, ok := h.value.(*In)
	if !ok || !h.taken.CompareAndSwap(false, true) {
		return zero, false
	}
	in := *p
	*p = zero
	return in, true
}
