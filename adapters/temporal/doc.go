// Package tooltemporal runs the tool calls of an agent on Temporal, so
// that a call survives the crash of the process that started it, an
// approval can wait for days, and calls run on any worker of a task queue.
// The name reads as "tool calls on Temporal" at the call site:
// tooltemporal.New, rt.NewSession, session.Run.
//
// [New] builds a [Runtime] from a [Config]; [Runtime.Register] installs its
// activity on a worker, and [Runtime.NewSession] opens a [Session] in
// workflow code, whose [Session.Run] runs the calls of one model turn.
// [ListPending], [SendAnswer] and [ReadReceipt] are the client's side of a
// call that waits for a person.
//
// # What runs where
//
//	workflow code (deterministic, replayed)      activity (runs once per attempt)
//	---------------------------------------      --------------------------------
//	choose the idempotency key from what
//	  history records: workflow ID /
//	  original run ID / call number
//	resolve the tool, Prepare (admission)  ----> Prepare again, Binding.Call
//	                                             (middlewares, the tool; its
//	                                             progress becomes heartbeats)
//	Settle: classify as dispatch does     <---- Output, stamped InputRequest,
//	                                             or an error: Failure and
//	                                             InputRejection as non-retryable
//	                                             application errors with details
//	suspended: keep the sealed checkpoint
//	  as workflow state, wait for the
//	  UpdateAnswer update (validated
//	  against the response schema)
//	resume with the same key            ----> Resume: Prepare with the
//	                                             Continuation, Binding.Call
//
// Admission runs in workflow code because it is deterministic and pure:
// [tool.Contract.Prepare] reads only the request, the admission and the
// frozen contract, and uses no clock, no randomness and no I/O. A tool's
// own input validator runs there too, so it must be as pure (those made by
// [tool.NewSignature] and [tool.NewFunc] are, if the input type's Validate
// method is). The tool itself runs only in the activity. A pattern that
// only the backtracking engine compiles (lookaround or backreferences, see
// the tool package's "What one call may cost") is charged a static bound
// of the pattern and the string's length before it runs, so its verdict
// is the same on every worker. That engine still holds a clock, as a
// safety net only: a match running past 5 s, which the bound never admits,
// fails the check with an error rather than a verdict. The package's
// determinism test lists this exception.
//
// # Retries
//
// A replayable tool ([tool.EffectSafe], [tool.EffectIdempotent]) runs with
// the retry policy of [Config].ActivityOptions: running it again with the
// same key cannot repeat its effect. A tool with a [dispatch.Reconciler]
// ([Config].Reconcilers) runs with that policy too (see "Exactly once").
// Any other tool runs at most once; when that attempt ends without a
// known result (an error that is not a [tool.Failure], a timeout, a lost
// worker) the call's [dispatch.Outcome] is [dispatch.KindUnknown], as it
// would be in one process. A Failure and a [tool.InputRejection] are
// definite outcomes and are never retried.
//
// # Exactly once
//
// Temporal retries an activity whose attempt failed, timed out, or ran on
// a worker that died, and whose result the workflow therefore never got:
// the attempt may have had its effect, or not. A retried attempt (its
// number, activity.GetInfo(ctx).Attempt, is more than one) of a tool that
// is not [tool.EffectSafe] does not simply run the tool again. It takes
// the earlier attempts as a call a lost process left running, and
// decides as a [dispatch.Dispatcher] with a store does ("Exactly once" in
// package dispatch):
//
//   - The tool's Reconciler, when [Config].Reconcilers has one, is asked
//     what became of them, with the call's key (the one every attempt
//     ran under), tool, principal ([dispatch.Call].Principal) and
//     canonical arguments, and a record of state running at the
//     attempt before ([dispatch.Reconciliation]). Done: its output is
//     the call's result, and the tool does not run. Not done: the tool
//     runs. Cannot tell: the tool runs again only if it is
//     tool.EffectIdempotent; otherwise the outcome is unknown, shown as
//     unknown, and not retried.
//   - Without a Reconciler, a replayable tool runs again under its key
//     (the backend deduplicates on it), and any other never gets a
//     second attempt (MaximumAttempts 1): its outcome is unknown.
//
// An unknown outcome of an attempt that ran a tool with a Reconciler (a
// panic, a tool's own error) is retried, so that the next attempt asks
// it; so is a call an earlier attempt still runs in the same worker (its
// activity timed out while the tool went on), which the attempt after
// that reconciles once the tool returns. Nothing is recorded outside the
// history: the attempt's number is the record. A resumed call's
// attempts are reconciled the same way, with the principal the
// checkpoint holds (none: a Session seals its checkpoints for nobody).
// What a Reconciler is given is bounded as in package dispatch
// ([dispatch.ReconcileTimeout], a panic is cannot tell, a done output
// the contract refuses is cannot tell).
//
// # What goes into failure messages
//
// The message of an activity error is written to the workflow's history in
// plain text, whatever payload codec the worker has: a codec encrypts
// payloads (inputs, results, details), not messages. So the call activity
// never puts private text in one. A Failure ends the activity with the
// message `the call to "cancel" failed (class failure)` and the Failure's
// kind and public Output as details; an InputRejection with its public
// message; an unknown outcome with `the outcome of the call to "charge" is
// unknown (class error)` (or panic, canceled, deadline_exceeded,
// invalid_result: the class of [dispatch.SavedOutcome]); a refused resume
// with the check that refused it. A Failure's or an InputRejection's cause,
// a panic's value and stack, a tool's own error and a refusal's detailed
// reason go nowhere in the history, not even into details, which are as
// plain as messages without a codec: they go to [Config].Logger on the
// worker that ran the call, with the call's ID and key. The workflow side
// therefore sees, in [dispatch.Outcome].Err, the class and not the cause.
//
// A payload codec alone does not cover the details either: Temporal
// encodes an error's details with the failure converter's data
// converter, and the default one has no codec, so a Failure's public
// Output and an InputRejection's message would reach the history in
// plain text. A client with a codec takes the failure converter
// [NewFailureConverter] makes of its DataConverter: it encodes the
// details with the codec, and every failure's message and stack trace
// too, so that a failure message of your own (a workflow's error, an
// activity of yours) is covered as well.
//
// Workflow code logs too: a call refused there (its admission, or the
// result its activity returned) is recorded, with its private cause,
// through the workflow's logger ([go.temporal.io/sdk/workflow.GetLogger]:
// the log of the worker's client, silent while a worker replays), never
// in the history.
//
// # Where state lives
//
// The key, the suspended calls' sealed checkpoints, the accepted answers
// and their receipts are workflow state, rebuilt from the workflow's history
// by replay. Nothing is kept in the worker: a worker (and its registry) can
// be replaced while a call waits for its answer, and the workflow goes on on
// another one, as long as the new registry has the same tools and the new
// worker holds the seal key.
//
// Keys are made of values the history records: the workflow ID, the
// original run ID (which the first event of the history records) and the
// call's number in the run. The original run ID survives a reset and
// differs after continue-as-new; the first run ID would not do (every run
// of a continue-as-new chain shares it, and a reset changes it), nor would
// the run ID (a reset changes it). A replay must be given the workflow ID
// ([go.temporal.io/sdk/worker.ReplayWorkflowHistoryOptions].OriginalExecution,
// its ID; the run ID may stay empty, since the original run ID comes from
// the history itself): under the replayer's made-up workflow ID the
// recorded answers find no call waiting with their key, and the replay
// fails as nondeterministic. The same holds for a run made by a reset.
//
// # What a reset means for a call
//
// `temporal workflow reset` makes a new run that replays the history up to
// the reset point and goes on from there. Each call is the same logical
// call in the new run, with the same key:
//
//   - a call that ran before the reset point is not run again: its
//     recorded result is replayed;
//   - a call that waits for an answer (it asked before the reset point)
//     waits again, listed by [ListPending] under the same key;
//   - a call that ran after the reset point runs again, under the same
//     key: a tool that honours its key (a replayable one, or one whose
//     backend deduplicates on the key) does not repeat its effect; an
//     unmarked tool may.
//
// Answers accepted after the reset point are not in the new run's
// history. By default the reset reapplies their updates: an answer to a
// call that waits at the reset point is accepted again (a new Receipt,
// with the same key and answer digest) and resumes the call, under its
// key; an answer to a call that had not asked yet at the reset point
// finds no call waiting, and the new run refuses it. Temporal then keeps
// that update's ID in the new run as unusable (every later update under
// it fails with an internal error), which is why [SendAnswer] derives the
// update's ID from the run's ID as well as the answer's: after a reset,
// send each answer again, under its ID, once [ListPending] lists its
// call. It is accepted once, whether the reset reapplied it or not; if
// it was, the resend gets its Receipt. With `temporal workflow reset
// --reapply-exclude Update` no answer is reapplied, and every call that
// waited before the reset waits again, to be answered anew: choose it
// when the reset is meant to undo a decision.
//
// A result that the tool stamped for another key is never sealed
// ([dispatch.Dispatcher.Settle] refuses it), and an answer is accepted
// only for a checkpoint that carries the call's key: a call can end
// unknown, but an answer is never accepted for a call it cannot resume.
//
// # Answers and receipts
//
// Every [Answer] carries an ID its sender chooses, one per answer: an ID
// names one answer to one call. [SendAnswer] derives the update's ID
// from it (and from the run's ID), so Temporal gives a resend the result
// of the first, even after the workflow completed; the workflow also
// remembers every answer
// it accepted, so a resend under the same ID gets the same [Receipt],
// changes nothing and resumes nothing. The same ID with another answer,
// or for another call, is refused: by SendAnswer, which compares the
// Receipt Temporal hands it with what it sent (an [*AnswerIDError]: the
// server answered for the first update and the workflow never saw this
// one), or by the workflow's validator, when the update came under
// another ID. A sender that gave up waiting (no worker ran, its context
// ended) has not withdrawn its answer: it sends it again under the same
// ID, or asks [ReadReceipt] ([QueryReceipt]), which tells whether the
// answer was accepted and, once the resumed call ended, its outcome's
// kind. An ID the run never accepted is [ErrUnknownAnswer]. Receipts are
// the run's state: a run started by continue-as-new has none of the
// earlier run's.
//
// # Answered once: history is the claim
//
// A [dispatch.Dispatcher] claims each checkpoint in a [dispatch.Store] so
// that it is answered once. Here the workflow history does that: the
// UpdateAnswer handler gives an answer to the one call waiting with that
// key and takes the call off the waiting list, so a second answer finds
// no call waiting and is refused by the validator, without a trace in the
// history (the same answer again, under its ID, gets its receipt). The activity resumes the call with [dispatch.Dispatcher.Resume]
// through a store of this package whose every first attempt's claim
// wins (a retried attempt finds the earlier one's record: see "Exactly
// once"), and which nothing else may use: you configure no dispatch.Store. A workflow may
// wait for an answer as long as it likes: its checkpoints expire after
// [dispatch.MaxCheckpointTTL]. The checkpoints made in workflow code take
// their ID from the session and the call ([dispatch.Config].NewCheckpointID:
// deterministic, unique, not secret) and their issue time from workflow
// time ([dispatch.Config].Clock). A suspended Outcome returned when ctx is
// cancelled carries a checkpoint that a [dispatch.Dispatcher] elsewhere can
// resume; there it is claimed in that Dispatcher's store, as any
// checkpoint is.
//
// # Tracing
//
// Trace context crosses from the client that starts a workflow to its
// activities the way Temporal carries it: in workflow and activity
// headers, written and read by Temporal's own OpenTelemetry interceptor
// (the module go.temporal.io/sdk/contrib/opentelemetry), which the user
// adds to the client options; a worker made from that client uses it too.
// This package needs no tracing library of its own: with
// [Config].Observer set to the Observer of the module
// github.com/agentcontract/tool/adapters/otel, each call the activity runs
// is an execute_tool span, a child of the activity's span, in the trace of
// the request that started the workflow:
//
//	tracing, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("temporal")})
//	// handle err
//	c, err := client.Dial(client.Options{Interceptors: []interceptor.ClientInterceptor{tracing}})
//	// handle err
//	telemetry, err := toolotel.New(toolotel.Config{TracerProvider: tp, MeterProvider: mp})
//	// handle err
//	rt, err := tooltemporal.New(tooltemporal.Config{Registry: reg, SealKeys: keys,
//		ActivityOptions: workflow.ActivityOptions{StartToCloseTimeout: time.Minute},
//		Observer:        telemetry.Observer()})
//	// handle err
//	w := worker.New(c, "agent", worker.Options{})
//	rt.Register(w)
package tooltemporal
