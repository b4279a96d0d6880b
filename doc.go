// Package tool is the trust boundary between a language model and the code
// it may run. A model proposes a call; this package decides whether the
// proposal is admitted, who may run it, what it returned, and how a call
// that must wait for a person is suspended and resumed.
//
// # The life of a call
//
// A [Tool] is bound once and called many times:
//
//	Bind(tool, middlewares...)            freeze the Definition → Binding
//	Registry.Resolve(request.Name)        find the Binding
//	Contract.Prepare(request, admission)  untrusted Request → Invocation
//	Binding.Call(ctx, invocation)         middlewares → checks → Tool.Call
//	                                      → Result, or an error
//
// [Bind] reads the tool's [Definition] exactly once, compiles its schemas
// and freezes them into a [Contract]. Nothing the tool does afterwards
// changes what its calls admit.
//
// A [Request] is what the model wrote: a tool name and argument text. It is
// untrusted. [Contract.Prepare] is the only way to make an [Invocation],
// and it runs no tool and no policy. The [Admission] beside the Request is
// what the runtime (never the model) asserts: the call's [IdempotencyKey]
// and, when resuming, a [Continuation].
//
// [Binding.Call] runs an [Invocation] through the middlewares, the first
// given outermost, to the tool. Only the [Binding] whose [Contract] prepared
// the Invocation runs it. A middleware such as [Guard] may refuse the call;
// it cannot swap the invocation, forward it twice, or forward it after
// Binding.Call returned. At the tool boundary the call's ctx is checked
// once more, the result is checked against the contract, a returned
// [InputRequest] is stamped with the call it belongs to, and, for a tool
// whose [Effect] is [EffectSafe], an ordinary error becomes a definite
// [Failure].
//
// # What Prepare admits
//
// The argument text must be exactly one RFC 7493 (I-JSON) object. Prepare
// refuses, with an [*InputRejection]:
//
//   - more than [MaxInputBytes] of text;
//   - invalid UTF-8, a byte-order mark, lone or inverted surrogate escapes
//     and Unicode noncharacters, in names and strings alike;
//   - duplicate member names;
//   - a number whose magnitude overflows a float64, or whose nonzero value
//     underflows to zero; such numbers cannot be exchanged between I-JSON
//     implementations, and the validator's exact arithmetic would spend
//     tens of milliseconds on a single 1e-999999;
//   - a number token longer than 100 characters;
//   - nesting of arrays and objects deeper than 1000 levels (the arguments
//     object itself is level 1). The bound is far above what tool
//     arguments need and far below what could strain the stack; parsing
//     stays linear in the length of the text;
//   - trailing data after the object;
//   - a value whose check against the input schema would take more than
//     [MaxValidationWork] steps of work (see "What one call may cost");
//   - a value that breaks the input schema, or that the tool's input
//     validator rejects.
//
// A rejection for the schema lists up to five violations, sorted by
// location, each with the JSON pointer of the offending value and the rule
// it breaks, then how many more there are. An unknown member that differs
// from a declared one only in case, or by one character, is named with
// the member it resembles ("did you mean 'title'?"); a null sent for an
// optional member that does not accept null is reported with the advice to
// leave the member out.
//
// Integers beyond 2^53 that fit a float64's range are admitted and
// compared exactly: numbers are never rounded. Blank argument text (JSON
// whitespace only) is admitted as {}.
//
// This list is where these bounds are stated; other docs link here. What
// a check may cost, and the bounds of a schema document, are stated once in
// "What one call may cost" below. What they cost in time is measured in
// benchmarks/README.md, not promised here.
//
// # What one call may cost
//
// Whatever a model or a client sends, one Prepare, admitting or
// rejecting, costs at most a fixed budget of work and memory, and so do
// ParseSchema of any document and the checks Binding.Call applies to any
// output. The budget is MaxValidationWork steps, a step being one short
// operation. Every keyword is charged what it costs: a subschema applied
// to a value a few steps; a string matched against a pattern its length
// times the size of the pattern's compiled program; a string looked up in
// an enum its length, any other value compared with an enum or a constant
// its size; a violation recorded a few more. A check that would spend
// more stops, and the value is refused with an *InputRejection that says
// the value cost too much to check (not that it breaks the schema, which
// it may well satisfy), names the limit and what would make the value
// cheaper: fewer or shorter values, or, for a pattern one match of which
// exceeds the budget on a short string, nothing the model can send but a
// cheaper pattern in the schema. Violations already found
// are certain, and are reported instead when there are any. A rejection's
// public message lists what it quotes from the value or the schema in
// short: long strings, locations and lists are cut, and the message stays
// within a few KiB.
//
// JSON Schema asks for ECMA-262 regular expressions; this package reads a
// pattern in one of two dialects, neither exactly ECMA-262. A pattern that
// Go's RE2 syntax accepts, as most do, is compiled by Go's regexp, matches
// in linear time and means what it means in RE2: \s is ASCII whitespace
// only ([\t\n\f\r ]: not ECMA-262's \v, no-break space, U+FEFF and other
// Unicode spaces); . matches every character but \n (ECMA-262's also
// refuses \r, U+2028 and U+2029); a character is a Unicode code point, not
// a UTF-16 unit, so ^.$ matches one emoji; \d, \w and \b are ASCII, as in
// ECMA-262. RE2's own syntax is accepted as well, where ECMA-262 refuses
// it: inline flags such as (?i), (?s) and (?m), Unicode classes such as \pL
// and \p{Greek}, POSIX classes such as [[:alpha:]], \A, \z and \Q...\E. A
// pattern that only ECMAScript syntax expresses (lookahead, lookbehind, a
// backreference, \uXXXX, \cX, [^]) is compiled by a backtracking engine in
// ECMAScript mode, where \s is ECMA-262's Unicode whitespace, . refuses \n
// and \r but not U+2028 and U+2029, and inline flags and \p classes are
// still accepted. Its matches may take time polynomial or exponential in
// the length of the string. Each of them is charged, before it runs, a static
// bound on its steps, a function of the pattern and the length of the
// string only: nested quantifiers that can split a string in many ways,
// such as (a+)+, cost exponentially, and admit only short strings;
// zod's e-mail pattern costs about the square of the length. So a value
// gets the same verdict on every machine under any load, and a workflow
// that replays the check gets the verdict it got the first time. Where a
// schema needs the full validator ($dynamicRef, unevaluatedItems,
// unevaluatedProperties, content keywords, drafts before 2020-12), which
// cannot be stopped between matches, every string of the value is charged
// against every such pattern first, and a value that does not fit is
// refused before the validator runs. The engine's clock remains only as a
// safety net: a match still running after 5 s, which a correct bound never
// admits, is stopped, and the check fails with an error wrapping
// ErrInvalidSchema (from Prepare, wrapping ErrInvalidInvocation as well),
// never with a verdict on the value.
//
// Schemas are bounded when they are parsed. ParseSchema loads nothing
// from outside the document, even from a definition nothing references,
// and refuses a document of more than MaxInputBytes, nested deeper than
// 128 levels or holding more than 4096 objects and booleans; a schema
// under which one location of a value (the value itself or any member or
// item, at any depth) could meet more than MaxSchemaVisits subschemas; a
// pattern neither engine accepts, or whose program would exceed ten
// thousand instructions; patterns whose text would take too long to parse
// (each Unicode class such as \pL costs Go's parser tens of microseconds);
// and patterns whose programs together exceed MaxSchemaPrograms
// instructions. Each refusal names the keyword and its location.
//
// Outputs are bounded by MaxOutputBytes: a tool's output, a Failure's
// public output and a CallError's evidence over it are refused before
// anything is copied or encoded.
//
// What one check costs within these bounds, in time and memory, for every
// family of attack and for ordinary arguments, is measured in
// benchmarks/README.md.
//
// # Typed tools
//
// NewFunc and NewSignature derive a tool's input schema from a Go struct,
// with SchemaFor's rules, and decode admitted arguments into it strictly.
// What the model reads is that schema, so what it says is worth checking:
//
//   - A `jsonschema` struct tag is cut at every comma. A comma inside a
//     value is escaped with a backslash before it, and in Go source,
//     between the tag's quotes, that backslash is itself written twice:
//     `jsonschema:"description=City name\\, e.g. Lisbon"`. A tag that
//     would be cut or dropped is an error at construction, naming the
//     field; a misspelt key or flag is named with the one it resembles
//     (for minimun=1, "did you mean minimum").
//   - A field whose type reads and writes its own JSON (MarshalJSON or
//     UnmarshalJSON, as *big.Int) states its form in its tag, as in
//     `jsonschema:"type=integer,minimum=0"`, or its type describes itself
//     with a JSONSchemaModel or JSONSchema method; otherwise construction
//     fails, rather than advertise a member that admits anything. A type
//     with text methods only is a string.
//   - The schema states no bound a model never needs: integers of 32 and
//     64 bits carry no range, unsigned integers only their minimum 0.
//     Prepare still refuses a number out of the field's range, with an
//     *InputRejection that names the member. The answer schema of an
//     [AskFunc] states every range instead (see below).
//
// Prepare reads a Func's arguments once: the read that checks them against
// the schema also decodes them, when the struct holds only plain structs,
// slices, maps with string keys, pointers, any, strings, numbers and
// booleans (no embedded field, no type with its own decoding methods); in
// any other case, and for any value that read is not certain of, the
// codec decodes them after the check. The value is the codec's either way.
//
// # Errors and outcomes
//
// Every call ends in exactly one of the ways below. They differ in what is
// known about the call, and in what the model may be told about it.
//
//   - A [Result] and a nil error: the call completed ([Result.Output]) or is
//     waiting for an answer (Result.InputRequest). The output is meant for
//     the model.
//   - A [*Failure]: the call is over and did not succeed, and that much is
//     certain. A Guard's refusal (kind rejected), an ordinary error from a
//     tool whose Effect is EffectSafe, a panic caught by [Recover], and a
//     Failure a tool builds itself with [NewFailure] are all Failures. Its
//     Output is public: send it to the model as the call's result. Its
//     Cause is private, for logs. Find it with [ClassifyFailure].
//   - Any other error: nothing definite is known. The tool may not have
//     started, may have done part of its work, or may have finished and
//     lost its answer. The runtime decides what to do next, for instance
//     retrying only a tool whose Effect is replayable; the error's text was
//     not written for the model. The error of a tool that is not
//     EffectSafe, a context error, an error wrapping [ErrInvalidResult]
//     (the tool's result broke its contract, whatever its Effect), and an
//     [*AuthorizationError] (the policy could not decide, and the tool did
//     not run) are such errors. A [*CallError] is one that carries evidence
//     of what happened before the error, such as rows already written. The
//     evidence is for logs and evaluation, never a result for the model,
//     and a CallError changes nothing else: errors.Is, errors.As and
//     ClassifyFailure see straight through it to the error it carries.
//   - Before any call, an [*InputRejection] from Prepare: the model's
//     arguments are wrong in a way the model can fix. Its Message is
//     public: send it back so the model can try again. Find it with
//     [ClassifyInputRejection]. An [*InputValidationError] is different:
//     the tool's own input validator is broken, and there is nothing for
//     the model to fix.
//
// A [Failure] or an [InputRejection] stays findable through fmt.Errorf with a
// single %w, at any depth. A joined error (errors.Join, or fmt.Errorf with
// two %w) is ambiguous, so the classifiers find nothing in it, even when
// only one branch holds an outcome. Private causes ([Failure.Cause],
// [InputRejection.Cause], [AuthorizationError.Cause]) are never reachable with
// errors.Is or errors.As, so that a diagnostic cannot pose as an outcome
// or as a control signal. Cancellation of the call itself stays visible:
// when the call's ctx ends while a [Guard] asks its [Authorizer], the Guard
// puts ctx.Err() beside the [AuthorizationError], so errors.Is reports
// context.Canceled or context.DeadlineExceeded. A context error the
// Authorizer returns on its own, while the call's ctx is live, is sealed
// like any other cause.
//
// # Decisions where the reference is silent
//
// This package implements a published design of the tool protocol: its
// exported names and their behaviour follow the documentation of one
// release of that design, called the reference here (the module's README
// says which). The reference leaves these open, or this package
// departs from it, and decides them so:
//
//   - Forwarding is synchronous. The next a middleware receives forwards
//     only while [Binding.Call] runs: a forward through a next kept past
//     the call, from a goroutine or for a later call, even after the
//     middleware returned a refusal, is refused with [ErrInvalidInvocation]
//     and runs nothing. A forward a middleware started on another goroutine
//     and did not wait for is waited for, so no tool code of a call runs
//     after its Binding.Call returned.
//   - The call's ctx is checked at the tool boundary, after every
//     middleware: when it ended while a Guard's [Authorizer] decided, a
//     permit runs nothing and Binding.Call returns ctx.Err().
//   - A result that breaks the output contract is an error wrapping
//     [ErrInvalidResult] whatever the tool's Effect, including a [Func]
//     whose function returned a value JSON cannot encode. The safe rule
//     turns only the tool's own errors into Failures.
//   - Argument text longer than [MaxInputBytes] is the model's to fix, like
//     every other problem with the text it wrote; only an empty tool name
//     is a bad [Request] envelope. [Contract.Prepare] states the rule.
//   - A panic in a tool's InputValidator method at [Bind] is an
//     [*InputValidationError] whose Cause is the
//     [*InputValidationPanicError]. It matches [ErrInvalidTool], not
//     ErrInvalidInvocation: no call was made, the tool cannot be bound.
//   - A tool of [EffectSafe] that returns an [*InputRejection] from its own
//     Call (say, from [Signature.Decode] of arguments it decodes itself)
//     gets the rejection back from [Binding.Call] as it is, not turned into
//     a definite [Failure] as the reference turns every other error of a
//     safe tool. A rejection tells the model what to correct in the
//     arguments it wrote, and no effect happened; a Failure would tell it
//     the call ran and failed, and the runtime would report the call as
//     failed rather than rejected.
//   - An [AskFunc]'s answer is decoded only after the call resumed, when a
//     runtime has spent the checkpoint, so what its type refuses must be
//     refused before: the answer schema states the range of every sized
//     number type (where [SchemaFor], for arguments that are decoded at
//     admission, states only those of 8 and 16 bits) and the base64 form
//     of bytes (where SchemaFor states only contentEncoding), and the
//     answer's numbers are read by value, as the schema reads them (1.0
//     is the integer 1, -0 is 0).
//   - What the answer type still refuses is the person's to correct: an
//     [*InputRejection] from its Validate (or a custom decoder), or a
//     refusal by its strict decode, makes the call ask again with a new
//     [InputRequest] whose prompt gives the reason first; the model is
//     told nothing. The reference makes Validate's other errors and panics
//     defects of the typed input; after the claim they end the call in a
//     [*Failure] whose Cause holds them, never in a public rejection.
//   - ask must have no effects (the reference: request input before
//     external effects); it runs again when the call asks again. act never
//     sees the idempotency key, so [NewAskFunc] refuses [EffectIdempotent]
//     rather than let a tool promise a deduplication it cannot do. No
//     name was added to the API for any of this.
//
// # Suspending a call
//
// A tool that needs a person's answer returns a [Result] whose [InputRequest]
// holds a prompt, the schema of an acceptable answer, and the tool's own
// checkpoint state. [Binding.Call] stamps the request with the identity of
// the call: the tool's name, the SHA-256 digest of its canonical
// [Definition] without its description (the contract), the SHA-256 digest
// of the exact admitted
// argument bytes, and the [IdempotencyKey]. The runtime then:
//
//  1. persists the request with MarshalJSON (or encoding/json), together
//     with the call's Request, unchanged, and its key, for as long as it
//     likes;
//  2. shows Prompt to a person and collects an answer;
//  3. restores the request with UnmarshalJSON, possibly in another
//     process, and calls Continuation(answer), which checks the answer
//     against the response schema;
//  4. prepares the same call again, with the same argument text and key:
//     Prepare(call, Admission{IdempotencyKey: key, Continuation: &c});
//  5. calls the [Binding]; the tool reads [Invocation.Continuation] and
//     decides what the answer means.
//
// Prepare admits a continuation only for the call that asked. It refuses,
// with a plain error wrapping [ErrInvalidInvocation] (never an
// [InputRejection]: the model cannot fix it), a continuation without a stamp
// (the zero [Continuation], or one from a request that never went through a
// [Binding]), from a tool of another name or another definition, for other
// argument bytes, or for another idempotency key (an empty key matches
// only an empty key).
//
// Identity is exact where it decides admission and what the call means.
// Two tools are the same tool exactly when their name, their canonical
// schemas and their effect are equal byte for byte, so a rebuilt
// [Binding] of the same tool after a restart accepts the continuation,
// while a tool that merely shares the name, in another [Registry] or a
// later release with another schema or effect, does not. The description
// is left out on purpose: it is text shown to the model, and editing it is
// a routine deploy that must not strand the calls waiting for an answer.
// (Text inside a schema, such as a title, is part of the schema.) The arguments are the
// same exactly when their bytes are (after blank text becomes {}): the
// same JSON value written with other whitespace or number text is other
// arguments, which is why the runtime keeps the [Request] as it was.
//
// The stamp binds a continuation to its call; it does not protect the
// checkpoint's content. The state is the tool's own business: Prepare
// hands it to the tool as it was stored, edited or not, and a tool that
// must not trust it after a round trip through storage verifies it (with
// a signature of its own, say). Likewise the answer was checked against the
// response schema stored in the checkpoint; a runtime that does not trust
// its storage protects the whole checkpoint. A call that asks again after
// resuming gets the same stamp, so the state is also what tells the tool
// which of its questions an answer belongs to.
//
// An [IdempotencyKey] travels in the stamp, so Prepare refuses, for every
// call and before anything runs, a key that is not valid UTF-8, holds a
// Unicode noncharacter, or is longer than [MaxInputBytes] written as a JSON
// string: no suspended call is left with a checkpoint that cannot be
// restored.
//
// The wire form of an [InputRequest] is one JSON object:
//
//	{
//	  "prompt": <any JSON>,             required
//	  "response_schema": <JSON Schema>, required: an object or a boolean
//	  "state": <any JSON>,              omitted when absent
//	  "call": {                         omitted when unstamped
//	    "tool": "<name>",
//	    "contract_sha256": "<64 lowercase hex digits>",
//	    "arguments_sha256": "<64 lowercase hex digits>",
//	    "idempotency_key": "<key>"      omitted when empty
//	  }
//	}
//
// Decoding is strict: it refuses anything but one RFC 7493 object, unknown
// and duplicate members, a missing prompt or schema, a schema that does
// not compile or refers outside itself, and a malformed stamp, with errors
// wrapping [ErrInvalidInputRequest]. Encoding is compact, with strings
// escaped as encoding/json escapes them, so encoding/json.Marshal writes
// the same bytes as MarshalJSON, and a request decoded from them encodes to
// the same bytes again. The prompt and state are kept in that form from
// [NewInputRequest] on, so a tool reads the same state bytes before and after
// a round trip through storage. Each of prompt, schema and state is at
// most [MaxInputBytes] encoded; [InputRequest.JSONSchemaModel] describes the
// form for [SchemaFor].
//
// # Progress
//
// A long tool reports progress with [ReportProgress]; the runtime observes
// it by calling with a context from [WithProgressReporter]. [Progress] is
// checked (finite, not negative, Completed at most a known Total, a valid
// UTF-8 message) whether or not a reporter is installed, and it is a no-op
// without one, so a tool reports unconditionally. A reporter's error is
// returned to the tool as it is and changes the call's outcome only if
// the tool decides so. A tool may report from several goroutines at once;
// the reporter must be safe for that.
//
// # Concurrency and ownership
//
// [Contract], [Binding], [Invocation], [Schema], [Failure], [InputRequest]
// and [Continuation] are immutable and safe for concurrent use; a
// [Registry] is safe for concurrent use. A Binding does not serialize
// calls: concurrent calls of one Binding, even of one Invocation, run
// [Tool.Call] concurrently, so a [Tool] must be safe for concurrent use or
// guard itself (an [Effect] promises replay safety, not exclusion). Values handed in are copied and values handed
// out are copies: a caller can never change frozen state by mutating a
// slice it passed or received. An Invocation holds data only, no function,
// interface or channel, so it can be stored or inspected without the power
// to run anything.
package tool
