// Package toolotel records the calls of a [dispatch.Dispatcher] as
// OpenTelemetry spans and metrics, following the OpenTelemetry GenAI
// semantic conventions as published in the semantic-conventions-genai
// repository at v0.1.0 (status: development): an execute_tool span for
// every call and the gen_ai.execute_tool.duration histogram.
//
// It plugs into the Dispatcher's [dispatch.Observer]:
//
//	telemetry, err := toolotel.New(toolotel.Config{TracerProvider: tp, MeterProvider: mp})
//	…
//	d, err := dispatch.New(dispatch.Config{…, Observer: telemetry.Observer()})
//
// Beside the runtime's own hooks (an Answered that tells it a person
// answered, say), combine them: Observer: dispatch.Observers(
// telemetry.Observer(), yours). The context the tracer's CallStart puts
// its span in is the one the hooks after it see.
//
// # What is recorded
//
// Every call is one span named "execute_tool {gen_ai.tool.name}", of kind
// INTERNAL, a child of the span in the call's context; a tool the
// registry does not have names it "execute_tool _OTHER" ([OtherToolName]),
// so that the names a model invents make no new span names (see
// [Config.Registry] for when that is decided). It has
// gen_ai.operation.name ("execute_tool"), gen_ai.tool.name (the name as
// requested, on an _OTHER span too), gen_ai.tool.call.id (when the provider gave one), gen_ai.tool.type
// ("function") and gen_ai.tool.description (when [Config.Registry] is
// set). What only this library knows is recorded under the
// agentcontract. namespace: the outcome kind
// ([AttrOutcome]), the retry verdict ([AttrRetryable]), whether the
// outcome was a replay ([AttrReplayed]), the method that ran the call
// ([AttrOp]), and the checkpoint of a suspension or a resumption
// ([AttrCheckpointID]).
//
// What a model or a client sent is recorded within a bound: the requested
// tool name within [MaxToolNameBytes], the call and checkpoint IDs within
// [MaxAttributeBytes], captured content within [MaxContentBytes]. A longer
// value is cut at a UTF-8 boundary and ends with "…"; invalid UTF-8 is
// mended.
//
// A call that ends in error sets error.type to one of the values of
// [ErrorType] and the span's status to Error, with that same value as the
// description; a refusal (arguments refused at Prepare, a policy's or a
// person's refusal, an unknown tool) adds the event [EventRefused], an
// unknown outcome the event [EventOutcomeUnknown], a suspension the
// event [EventSuspended]. The private error of an Outcome (a Failure's
// cause, a panic and its stack) is never recorded anywhere: only its
// class, as error.type. Each scope rule decided for a call
// (dispatch.Config.Rules) adds the event [EventRuleDecided], with the
// rule's name, its decision and whether it runs in shadow mode: never
// the call's arguments, its scope or the rule's reason.
//
// The histogram gen_ai.execute_tool.duration records each call's
// duration in seconds with gen_ai.operation.name, gen_ai.tool.name
// ([OtherToolName] for a tool the registry does not have, as in the span
// name, so that what a model invents cannot grow the number of series), gen_ai.tool.type, error.type
// and [AttrOutcome].
//
// # Suspension and resumption
//
// A suspended call's span ends when the call suspends. The span of its
// resumption (Resume or Decline) carries a span link to it, with
// [AttrLinkType] "resumes". The link's context (trace and span IDs) is
// kept by [Config.Links] under the checkpoint's ID, never in the
// checkpoint itself: a checkpoint may travel through a client (as MCP's
// requestState does), and its seal proves integrity but does not hide
// what it holds. [MemoryLinks], the default, links within one process; a
// runtime whose resumptions run in another process gives a [Links] that
// every process shares.
//
// A refused resume (a forged or altered seal, an expired checkpoint, a
// wrong principal, an answer to a checkpoint already answered) is a span
// named "resume_refused" with status Error and the event
// [EventResumeRefused], whose [AttrRefusal] says which check refused it,
// and counts in the agentcontract.resume.refusals counter.
//
// # Content
//
// The call's arguments and result (gen_ai.tool.call.arguments,
// gen_ai.tool.call.result) are sensitive, and recorded only when
// [Config.CaptureContent] is set, after [Config.Redact].
//
// # Propagation
//
// [Telemetry.ExtractMeta] and [Telemetry.InjectMeta] read and write the
// trace context of an MCP request's _meta (traceparent and tracestate, as
// the MCP semantic conventions say); the MCP adapter's TraceContext hooks
// take them, so that a call through the bridge is one trace from the
// client's execute_tool span to the server's. For Temporal, add the Temporal
// SDK's own OpenTelemetry interceptor to the client options; see the
// README.
package toolotel
