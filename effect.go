package tool

// Effect is a tool's promise about running the same call again. It takes
// one of three values, each letting a runtime do more:
//
//   - the zero value, "", promises nothing: a call is never run again.
//     Binding.Call returns the tool's errors as they are, and a runtime
//     that cannot tell whether a call ran (an unknown outcome: a lost
//     process, a deadline) reports it unknown rather than retry it
//     (dispatch.Outcome.Retryable is false);
//   - [EffectSafe]: a call changes nothing, so it may be run again; also,
//     Binding.Call turns an ordinary error of the tool into a definite
//     [Failure];
//   - [EffectIdempotent]: the backend deduplicates calls by their
//     [IdempotencyKey], so a call may be run again under the same key.
//
// [Effect.Replayable] is true for the last two. An Effect is a statement
// about replay, not about concurrency: a replayable tool may still need its
// calls serialised.
type Effect string

const (
	// EffectSafe promises that a call asks for no change to application
	// state, so running it again is harmless. Incidental accounting and
	// telemetry do not count as changes. Binding.Call turns an ordinary
	// error from a safe tool into a definite Failure.
	EffectSafe Effect = "safe"
	// EffectIdempotent promises that the backend durably deduplicates calls
	// that carry the same non-zero IdempotencyKey, including calls that
	// interleave with other calls; writing the same value twice is not
	// enough to qualify.
	EffectIdempotent Effect = "idempotent"
)

// Replayable reports whether a call with this effect may be run again: true
// for [EffectSafe] and [EffectIdempotent].
func (e Effect) Replayable() bool {
	return e == EffectSafe || e == EffectIdempotent
}

// validate accepts the zero value and the two named effects.
func (e Effect) validate() error {
	switch e {
	case "", EffectSafe, EffectIdempotent:
		return nil
	}
	return errorf("%w: unknown effect %q", ErrInvalidDefinition, string(e))
}
