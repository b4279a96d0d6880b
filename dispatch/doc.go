// Package dispatch runs the tool calls of one model turn against a
// [tool.Registry] and says, for each, what happened and what the model may
// see.
//
// Every agent runtime repeats the same steps for a proposed call: find the
// tool, choose an idempotency key, Prepare, Call, classify the error, and
// turn the result into a message for the model. [Dispatcher.Run] does all
// of them and returns one [Outcome] of exactly one [Kind]:
//
//	kind          when                                   the model sees                    error for the model
//	completed     the tool returned an Output            the Output                        no
//	suspended     the tool returned an InputRequest      nothing yet: a person is asked    no
//	failed        a *tool.Failure                        the Failure's public Output       yes
//	rejected      a *tool.InputRejection                 its public Message                yes
//	unknown_tool  no tool of that name                   the names of the available tools  yes
//	unknown       any other error, or a panic            a fixed sentence                  yes
//
// The private error (a Failure's cause, a validator defect, a panic and its
// stack) is kept in [Outcome.Err] for logs and never appears in
// [Outcome.Output]. Whether the same call may be retried is decided from
// the tool's [tool.Effect] and the kind only, never from error text: see
// [Outcome.Retryable].
//
// # Idempotency keys
//
// The runtime, never the model, names each logical call. A [Call] may carry
// the key the runtime chose; otherwise the Dispatcher asks
// [Config.NewKey], whose default is a random 128-bit key. The key is kept
// across the call's suspension and resumption.
//
// # Suspending and resuming
//
// A suspended Outcome carries a [Checkpoint]: the original Request, the
// idempotency key, the correlation ID and the stamped [tool.InputRequest].
// It is JSON, so a runtime can store it in a database, put it on a queue or
// hand it to an approval page, and call [Dispatcher.Resume] with the answer
// in another process, after the registry was rebuilt from scratch.
//
// Because a checkpoint leaves the process, it is sealed: an HMAC-SHA-256
// over all of its content, with a secret key the runtime supplies
// ([Config.SealKeys]; the first key seals, every key opens, so keys can be
// rotated by key ID). Resume refuses, before anything runs, a checkpoint
// whose seal does not verify — edited, forged from public data, or sealed
// with a key this Dispatcher does not hold —, one that does not decode,
// one whose tool is gone or whose definition changed, and an answer that
// breaks the request's response schema.
//
// The seal proves that this runtime issued the checkpoint and that nothing
// in it changed. It does not hide anything (the prompt, state and arguments
// are readable by whoever holds the checkpoint), and it does not stop a
// genuine checkpoint from being resumed twice: deduplicating replays is the
// runtime's job, by idempotency key, and the tool's, through the key its
// backend deduplicates on.
//
// # Several calls in one turn
//
// [Dispatcher.RunAll] runs the calls of one turn concurrently, at most
// [Config.MaxConcurrency] at a time, and returns the outcomes in call order.
// A panic or error in one call becomes that call's Outcome and touches no
// other.
//
// # Text-only providers
//
// [Text] renders an Output as the text a model reads: the text blocks, the
// Details as JSON when there are no blocks, and a short note for each media
// block, which is never dropped silently. Adapters for providers that carry
// media use the blocks themselves.
package dispatch
