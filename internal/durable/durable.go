// Package durable gives the runtimes of this repository whose own durable
// history records every answer (the Temporal adapter, where workflow
// history is the claim) the two paths of package dispatch they need and
// its public API does not offer:
//
//   - SettleAt: Dispatcher.Settle with the checkpoint ID and issue time of
//     a suspension chosen by the caller, so that workflow code, which must
//     replay the same way on any worker, draws no random number and reads
//     no clock;
//   - ResumeUnclaimed: Dispatcher.Resume without a claim, an expiry or a
//     principal check, for a call whose answer the history accepted once
//     already and which may have waited longer than any TTL.
//
// Package dispatch sets both in its init function; their types are given
// next to each. They are not for use outside this repository's adapters:
// without a history that accepts each answer once, ResumeUnclaimed is the
// replay the claim store exists to stop.
package durable

// SettleAt is
//
//	func(d *dispatch.Dispatcher, call dispatch.Call, key tool.IdempotencyKey,
//	    effect tool.Effect, result tool.Result, err error,
//	    id string, issued time.Time) dispatch.Outcome
//
// id must be 32 lowercase hex digits.
var SettleAt any

// ResumeUnclaimed is
//
//	func(d *dispatch.Dispatcher, ctx context.Context, cp dispatch.Checkpoint,
//	    answer json.RawMessage, progress tool.ProgressReporter) (dispatch.Outcome, error)
//
// It verifies the seal and the answer, and re-admits the call, as Resume
// does; it claims nothing and checks no expiry or principal.
var ResumeUnclaimed any
