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
// A registry is all a Dispatcher needs: New(Config{Registry: r}) runs
// every call whose tool does not ask a person (see the first example).
// The package is built in two layers, and this runner is the lower one;
// the suspension layer above it, for tools that ask a person, is added by
// configuration (see "The suspension layer").
//
// # Idempotency keys
//
// The runtime, never the model, names each logical call. A [Call] may carry
// the key the runtime chose; otherwise the Dispatcher asks
// [Config.NewKey], whose default is a random 128-bit key. The key is kept
// across the call's suspension and resumption. On a dispatcher with a
// store, the key is also what makes a call run once (see "Exactly once").
//
// # Several calls in one turn
//
// [Dispatcher.RunAll] runs the calls of one turn and returns the outcomes
// in call order: one after the other by default, concurrently when
// [Config.MaxConcurrency] is 2 or more, at most that many at a time. A
// panic or error in one call becomes that call's Outcome and touches no
// other.
//
// # Deadlines
//
// A tool is expected to stop when its ctx ends. One that does not is
// abandoned: Run, RunAll and Resume return when the call's ctx ends
// (the caller's, or [Config.CallTimeout] after the call started) with an
// unknown outcome — the tool may have done all, some or none of its work,
// and may still be doing it — while its goroutine goes on until the tool
// returns. The later calls of a RunAll run; a cancelled caller's ctx
// returns RunAll at once, and a call whose ctx ended before its tool
// started does not start it. [Config.MaxAbandoned] bounds how many
// abandoned tools may still run; beyond it, calls end unknown without
// starting. The deadline is off by default: a default would turn today's
// long tools into unknown outcomes that did complete. An unknown outcome
// is retried only when [Outcome.Retryable] says so (a tool.EffectSafe or
// tool.EffectIdempotent tool); otherwise the runtime finds out from the
// backend or a person what happened — or, on a dispatcher with a store,
// retries under the same key and lets the tool's Reconciler find out
// (see "Exactly once").
//
// # Text-only providers
//
// [Text] renders an Output as the text a model reads: the text blocks, the
// Details as JSON when there are no blocks, and a short note for each media
// block, which is never dropped silently. Adapters for providers that carry
// media use the blocks themselves.
//
// # Streaming admission
//
// Models stream a call's arguments in pieces. A [Stream], made by
// [NewStream] for one call, reads them delta by delta against the compiled
// input schema of the tool's contract, and refuses the call as soon as its
// text cannot become arguments Prepare admits: more than
// tool.MaxInputBytes, nesting or syntax that breaks RFC 7493, invalid
// UTF-8, a duplicate member, a first value that is not an object, a member
// the schema closes out, a value of the wrong type or one that already
// breaks its subschema. The refusal is the *tool.InputRejection Prepare
// would return, naming the JSON pointer and the byte. Its memory does not
// grow with the text: a Stream keeps only a digest of it.
//
// A Stream never admits. The end of a call is the provider's own
// completion event: End when that event carries no text, EndWith when it
// carries the whole arguments, which must equal the deltas
// (ErrInvalidStream otherwise). Admission stays Prepare on the whole text,
// through Run; a prefix that happens to parse is never run. The provider
// adapters read their SDKs' streams this way and return a *RefusedCall
// for a call refused while it streamed; Settle of its Call and Err gives
// the rejected Outcome.
//
// # Policies over a scope
//
// A [tool.Guard] decides one call by itself. The rules of [Config.Rules]
// decide a call from what came before it in its scope: [Call.Scope],
// which the runtime sets (a conversation, a user, a tenant) and never
// takes from the model. A call without a Scope is subject to no scope
// rule. Four rules come with the package, and a runtime may write its
// own ([Rule]):
//
//   - [RateLimit]: at most so many calls of some tools per window ("10
//     emails an hour per customer");
//   - [SumLimit]: a running sum of a numeric argument per window ("$5,000
//     of refunds per hour");
//   - [RequiresPrior]: a call only after a completed call of another tool,
//     correlated on an argument ("no transfer before that account's
//     balance was read");
//   - [Taint]: after a call of a tool that reads untrusted content, the
//     tools the rule names are refused ("after reading a web page,
//     nothing that sends data out"). The marks live in the rule, never in
//     a tool's Definition or Effect.
//
// Each scope has an append-only log of its calls, kept by an [EventStore]
// ([Config.Events]: a [MemoryStore] for one process, the SQL store for
// replicas): each admitted call with its canonical arguments, whether it
// is still in flight, and its outcome. The rules that name a call's tool
// are decided after the call was admitted and before its tool runs,
// while the store holds the scope's lock, and the call's event is
// appended in the same step: that is its reservation. Calls in flight
// count, and calls that arrive at the same moment, on any number of
// replicas, cannot all take the last place: of three concurrent $2,000
// transfers under a $5,000 limit, two run. A reservation is released
// when the call fails definitely or is rejected (its effect did not
// happen), and kept for a completed, suspended or unknown outcome; a
// call left in flight by a process that died keeps it, however long,
// until a recovery, a reconciler or an operator says that its effect
// did not happen ([Dispatcher.ReleaseReservation]). A call sent again
// under its idempotency key is the same call, counted once.
//
// A call a rule denies does not run: its Outcome is KindFailed, a
// *tool.Failure of kind rejected whose public Output is the rule's
// reason, which the model reads. A call whose rules cannot be decided
// (the store failed, a rule erred or panicked) does not run either
// ([PolicyUnavailableText]): a policy fails closed. A rule wrapped in
// [Shadow] is decided and observed but refuses nothing, so that a team
// can try a policy on live traffic before enforcing it. Each decision,
// with the rule's name and never the call's data, reaches
// [Observer].RuleDecided and, through the OpenTelemetry adapter, the
// call's span.
//
// A decision reads indexes, not the log: a MemoryStore keeps running
// totals for each window asked about and the latest time of each outcome
// and value, so that a decision in a scope of 10,000 events takes
// microseconds; the SQL store reads the events of the rule's tools in
// its window through an index on scope, tool and time. Events are kept
// for [Config.EventRetention], by default the longest window of the
// rules plus MaxClockSkew; [EventStore].DeleteExpiredEvents, which a
// runtime calls from time to time, deletes the older ones.
//
// Run and RunAll decide the scope rules. Resume, Decline and Supersede
// decide none: the call was decided, and its place reserved, when Run
// admitted it, and a call that suspended keeps its reservation whatever
// the answer brings.
//
// # The suspension layer
//
// A tool that asks a person returns a tool.InputRequest; the call then
// waits, and is resumed with the answer, perhaps in another process. That
// takes what a registry alone does not have: a key to seal the
// checkpoint with, and a store in which each checkpoint is claimed once.
// [Config.Store] and [Config.SealKeys], set together, add the suspension
// layer: sealing, [Dispatcher.Resume], [Dispatcher.Decline],
// [Dispatcher.Supersede], the call records (of Run's calls too: see
// "Exactly once") and the saved turns. On a
// dispatcher without it, a tool that asks a person gets an unknown
// outcome whose Err wraps [ErrInvalidConfig] and says why (logged as an
// error): nobody was asked, and the call cannot be resumed; the methods
// of the layer return ErrInvalidConfig.
//
// The store is split into small interfaces, each with the conformance
// tests of the package storetest: a [CallStore] keeps the claims and
// their outcomes, and is all Resume needs; a [TurnStore] keeps the turns
// that wait; a [Lister] lists pending calls and claims for a desk and an
// audit; a [Sweeper] deletes what expired. [Store] joins them, and
// [MemoryStore] and the SQL store implement it whole.
//
// # Exactly once
//
// A dispatcher without a store ([Config.Store]) promises no exactly-once:
// every Run runs its tool, and a call retried after a lost reply, a
// timeout or a crash may have its effect twice. With the suspension
// layer (a Store and seal keys), Run and RunAll keep a call record of
// every call whose tool is not [tool.EffectSafe] (an idempotent tool's
// included), so that one logical call has its effect once across the
// runtime's retries, its replicas and its crashes:
//
//   - Intent before effect. Once the call is admitted (Prepare passed)
//     and before its tool starts, the record is written, in one write,
//     running under this Dispatcher's lease ([Config.Lease], renewed
//     while the tool runs): its ID derived from the tool, the principal
//     and the key ([RunRecordID]), the digests of the contract and of
//     the canonical arguments, [RunSHA256] as its answer digest. The
//     outcome is recorded once when the tool returns: two writes in all
//     when nothing fails. A store that refuses the record, or is full,
//     runs nothing (the outcome is unknown, its Err wraps [ErrStore]).
//     A call that may not start (its ctx ended, [Config.MaxAbandoned]
//     reached) before its record is written gets none; one that may not
//     start after it is recorded with an outcome of
//     [ErrorClassNotStarted], which the next attempt runs without asking.
//   - The same key returns the first recorded outcome. A call of the same
//     tool, principal and key finds the record: a finished one gives its
//     outcome back with [Outcome.Replayed] set, and nothing runs (a
//     suspended one gives its checkpoint back); one still running, here
//     or under another process's live lease, runs nothing and is unknown,
//     in flight (Err wraps [ErrConflict], and says until when); one of
//     other arguments or another contract is another call, and runs
//     nothing (Err wraps ErrConflict). A call whose tool has returned
//     here, its outcome not yet written, is no longer in flight: the
//     call of the same key waits for that write (bounded by a minute)
//     and is answered from the record. The promise lasts as long as the
//     record: [Config.KeyTTL], a day by default.
//   - An unknown outcome is reconciled before anything runs again. A call
//     whose earlier attempt's outcome is unknown (a panic, a timeout, a
//     process that died while it ran, an outcome the store did not take)
//     is run again only once somebody says that is safe: the tool's
//     [Reconciler], registered by tool name in [Config.Reconcilers],
//     which is asked what became of the attempt (done, with the output
//     the call produced: the record is finished with it, marked as
//     reconciled, and nothing runs; not done: the call runs again, as its
//     next attempt, under the same key; cannot tell); else its Effect,
//     when a replay under its key is safe ([tool.EffectIdempotent]).
//     Otherwise its outcome stays unknown, is returned as unknown, and
//     the record says so ([StateUnknown]): somebody must find out from
//     the backend or a person. Resume's recovery of a call a lost
//     process left running asks the same Reconciler. The Observer sees
//     each verdict ([CallInfo].Reconciled).
//   - A tool abandoned at the end of its ctx keeps its record running,
//     and its lease renewed, until it really returns: its late outcome
//     is then recorded, and a call of the same key meanwhile is in
//     flight.
//
// How a runtime keeps one key across its own retries: it sets
// [Call.IdempotencyKey] from its own durable ID of the call — a workflow
// activity's ID, the provider's tool call ID stored with the
// conversation, a job's ID in its queue —, never from anything the model
// wrote, and sends the same key every time it retries that call. A call
// without a key gets a fresh one from [Config.NewKey], so it is never
// deduplicated: a retry of it is a new call.
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
// in it changed. It does not hide anything: the prompt, state and
// arguments are readable by whoever holds the checkpoint.
//
// What the checkpoint is bound to: the call (its Request, idempotency key
// and correlation ID), its sealed ID, times and principal, and, through
// the stamp of its input request, the tool's contract — its name, input
// and output schemas and effect. Not the tool's description: a release
// that only rewords what the model reads keeps every pending checkpoint
// valid, while a release that changes a schema or the effect makes Resume
// refuse the checkpoints issued before it (ErrInvalidCheckpoint).
//
// # Answered once
//
// A checkpoint carries a unique ID (random, or chosen by
// [Config.NewCheckpointID]), the time it was issued, an expiry
// ([Config.CheckpointTTL], [DefaultCheckpointTTL] by default) and,
// optionally, the principal who may answer ([Call.Principal]), all inside
// the seal. [Dispatcher.Resume] claims the ID in the [Store] before it
// runs anything, so a checkpoint is answered once, whatever the number of
// replicas, sessions or resends; Resume documents the order of its
// checks, which is the same everywhere. The same answer sent again
// returns the outcome recorded the first time ([Outcome.Replayed]);
// another answer is refused with an [*AnsweredError]
// ([ErrAlreadyAnswered]) that carries it. An expired checkpoint
// ([ErrExpired], on the resuming process's clock, with [MaxClockSkew] of
// tolerance) and an answer from the wrong principal ([ErrWrongPrincipal])
// are refused before the claim; the refusal names no principal.
//
// [Dispatcher.Decline] is a claim too, with a final outcome the model
// sees: KindFailed, a Failure of kind rejected, and [DeclinedText]. A
// request dismissed without a choice (MCP's "cancel", a closed window) is
// not a decline: the runtime does not call Decline, and the checkpoint can
// still be answered until it expires.
//
// The layer's Store is never a default ([Config.Store]): a silent one
// would work in one process and let every other replica behind a load
// balancer answer the same checkpoint again. [MemoryStore] is the store of
// one process; replicas share a store in a database. A Store that fails
// or is full refuses the resume (ErrStore): it fails closed. The package
// storetest holds the conformance tests every Store passes.
//
// Checkpoints of version 1, issued before checkpoints were single-use,
// have no ID and no expiry: they are refused with an error that says so,
// and the suspended call must be run again.
//
// # Turns that wait
//
// While one call of a turn waits for a person, the turn cannot be
// answered to the model. [Dispatcher.SaveTurn] keeps its outcomes in the
// Store in a storable form ([SavedOutcome]: the public parts, the sealed
// checkpoints, and the private errors reduced to a class a log needs);
// [Lister.Pending] lists the calls that wait, as bounded summaries; after
// a restart, [Dispatcher.Turn] reads the turn back with each resumed
// call's recorded outcome in place, ready for an adapter to answer the
// provider. Calls that carry a [Call.TurnID] need no step of their own:
// RunAll saves their turn when one of them waits. The runtime then waits
// for the turn with [Dispatcher.WaitTurn], which returns once no call of
// it waits, whichever replica the person answered on: each answer moves
// the turn's [Turn.Version] on, and the Store wakes whoever waits
// ([TurnWaiter]). In the process that took the answer, the Observer's
// Answered hook says so at once; [Observers] puts several Observers on
// one Dispatcher. A call whose arguments a person corrected
// ([Dispatcher.Supersede]) ends with an outcome that begins with a note
// saying so, and what they became ([EditedText]).
//
// # Grants
//
// A person who approves the same call all day may approve its like in
// advance, for a while: a [Grant], made with [Dispatcher.Mint] from a
// call they may answer, with the answer they give it. A grant covers the
// calls of one principal (the one sealed in the checkpoint,
// [Call.Principal]; a call sealed for nobody always asks), to one tool
// under one contract (the digest its checkpoint's stamp carries: a
// release that changes a schema or the effect voids every grant made
// before it), whose admitted arguments satisfy a predicate, until it
// expires ([Config.MaxGrantTTL] caps how long), a number of times
// (Mint.Uses).
//
// The predicate is a JSON Schema over the admitted argument bytes,
// checked by the engine that checks them for Prepare, under the same cost
// bounds. Mint pins every member of the approved arguments to its value
// (const) and closes the object (additionalProperties false, every member
// required), except the members the person widens on purpose
// ([Widening]: a number, down to a minimum, up to a maximum, or both;
// nothing else can be widened). A grant minted for
// {"order":"A-7","cents":1250} with cents widened to at most 5000 covers
// {"order":"A-7","cents":4000}, and never {"order":"B-9","cents":1250}
// nor a call with a member more. A predicate written by hand
// (Mint.Predicate) must compile within the engine's static cost bounds,
// or Mint refuses it: no timer bounds a check.
//
// Where a grant acts: in the suspension layer, when a call that Run or
// RunAll ran asks and its checkpoint is sealed, before the suspended
// Outcome is returned. The live grants of the checkpoint's principal,
// tool and contract ([Config.Grants] lists them; the oldest 64 are
// tried, oldest first) are checked in turn; the first whose predicate
// accepts the arguments and whose answer passes the call's response
// schema has one use spent ([GrantStore]'s SpendGrant: atomic across
// replicas, a compare and set in the SQL store), and the call is answered
// with the grant's answer through the claim Resume makes: it runs once,
// its [Claim] records the grant (Claim.GrantID) and who granted it, the
// Observer sees it as [OpGrant], and Run returns the answered call's
// Outcome. A grant that is spent, expired or revoked covers nothing; a
// spend another replica won, an answer the response schema refuses, or
// any failure on the way leaves the call to ask, as it would have
// without grants (a use spent on a call whose answer then failed is lost,
// never taken twice). A call that asks again after it was answered, by a
// person or a grant, asks: a grant answers the question a model's call
// asks first. Settle, which runs no tool, applies no grant. A revocation
// ([Dispatcher.Revoke]) takes effect on the next call.
//
// Each grant change (made, revoked) and each use (spent, with the call's
// arguments, and covered, with its outcome's kind) leaves a [Receipt]:
// JSON sealed with an HMAC-SHA-256 under the seal keys (the first key
// seals, its ID inside; every key verifies, see [VerifyReceipt]). The
// receipt of a change is written in the same atomic write as the change;
// that of a covered call once it ran. GrantStore.Receipts lists them for
// an audit. [MemoryStore] and the SQL store keep grants;
// the package storetest tests every GrantStore.
//
// # Decisions
//
// What this package decides about a call a person approved, where a
// simpler rule would lose it or run it twice:
//
//   - A claim's result is what the Store holds. The claim is written on
//     a context detached from the request, with a bound of its own, and a
//     store resolves a write whose result it cannot tell by reading back
//     the claim's nonce ([Store.Claim]). The claimed call then runs
//     detached from the request too, bounded by [Config.CallTimeout]: a
//     dropped request neither strands the claim nor cancels the approved
//     call.
//   - An outcome the Store did not record is not lost while its process
//     lives: the Dispatcher that ran the call keeps it and records it
//     when the same answer is sent again. Every claim is a call record
//     with a lease (Config.Lease, a minute by default, renewed while the
//     call runs): another process is told the call is held until the
//     lease ends, and then recovers it on a resend — a claim that never
//     started is started, a call whose tool's Effect makes a replay under
//     its key safe runs again under that key, and any other is recorded
//     unknown, never run again silently nor reported completed
//     ([Dispatcher.Resume], "Uncertain paths"). This replaces the earlier
//     rules that another process ran a replayable call again at once and
//     reported any other as answered without an outcome until its
//     checkpoint expired. Lister.Stranded lists what waits for recovery.
//   - Recovery runs in the resend, not in a background sweeper: the
//     package starts no goroutine that outlives a call, and a call is
//     recovered where somebody asks for it. An operator who wants every
//     stranded call resolved lists them (Lister.Stranded) and resends.
//   - The outcome of an answered call takes its place in its saved turn
//     itself, a new question included (the store placed the claim in the
//     turn from its own record, never from the request), so that a
//     runtime or desk need not read, change and save the turn, which lost
//     one of two questions asked at the same moment; each answer moves
//     the turn's version on, which is what wakes a runtime that waits
//     for it. Turns are saved at a version (compare and set).
//   - A store runs nothing it cannot record when it can foresee it: a
//     [MemoryStore] holds room for each open claim's outcome, and refuses
//     a claim that does not fit before the call runs. A failure nobody
//     can foresee (an outage at Finish) takes the path above. Every
//     effectful call Run runs holds such room while its tool runs (an
//     abandoned one until its tool returns), so the room is a
//     sixty-fourth of the store (the default store runs 64 such calls at
//     once, with room for an outcome of 1 MiB each): an outcome larger
//     than its room is recorded only if the store has room to spare.
//   - The record of a call Run runs is written running, with its intent:
//     one write, not two (claimed, then running), because nothing can
//     happen between the two that a process could later tell apart; a
//     resumed call is claimed running the same way. Its ID is derived,
//     not drawn, so that a retry finds it with no index on the key.
//   - A call whose tool provably did not start after its record was
//     written is recorded unknown with an outcome that says so, not
//     deleted and not finished: the store keeps no delete, a finished
//     record would be replayed, and the next attempt then runs it
//     without asking anybody.
//   - A tool that ignores its context does not hold up the calls after
//     it: it is abandoned, within [Config.MaxAbandoned].
//   - A refusal of the wrong principal names neither the checkpoint's
//     principal nor the one that answered: the answerer learns nothing of
//     whose call it is.
//   - A dispatcher needs a registry alone. A Store and seal keys are
//     asked for only by a runtime whose tools ask a person, and then
//     together; without them, a tool that asks a person is an unknown
//     outcome that says why, never a default store of one process that
//     would let another replica answer the same checkpoint again, and
//     never a call dropped in silence. Config.Store takes a CallStore,
//     the one interface Resume needs; SaveTurn and Turn ask the same
//     store for a TurnStore.
package dispatch
