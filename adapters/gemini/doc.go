// Package toolgemini offers the tools of a [tool.Registry] to Gemini through
// its official Go SDK, google.golang.org/genai, and carries the model's
// function calls to a [dispatch.Dispatcher] and the outcomes back, in the SDK's
// own types. The name reads as "tool, for Gemini" at the call site:
// toolgemini.New, tools.Tools(), toolgemini.Results(…).
//
// The provider adapters of this repository (toolopenai, toolanthropic,
// toolgemini) share one shape: [New] from one [Config] (a Registry or
// Definitions; here OpenAPI, as Gemini has no strict mode), the tools to
// advertise ([Tools.Tools]), the calls of the model's reply ([Tools.Calls]),
// the results for the outcomes ([Results]), [Tools.Relaxed] as [Lint]
// values, and the error sentinels [ErrInvalidConfig], [ErrInvalidReply] and
// [ErrInvalidOutcome]. Gemini adds turn threading: [NewTurn] keeps the
// model's content, which must be replayed unchanged, and [Turn.Next] builds
// the next request's contents.
//
// A loop with the SDK reads (see the package example):
//
//	tools, err := toolgemini.New(toolgemini.Config{Registry: registry})
//	config := &genai.GenerateContentConfig{Tools: tools.Tools()}
//	resp, err := client.Models.GenerateContent(ctx, model, contents, config)
//	turn, err := toolgemini.NewTurn(resp)
//	outcomes := dispatcher.RunAll(ctx, turn.Calls())
//	contents, err = turn.Next(contents, outcomes) // then GenerateContent again
//
// # Tools out
//
// [New] turns definitions ([tool.Definition]) into one [genai.Tool] of
// function declarations ([genai.FunctionDeclaration]), which [Tools.Tools]
// returns. By default the input schema goes to parametersJsonSchema and the
// output schema to responseJsonSchema, the JSON Schema path Gemini prefers;
// [Config].OpenAPI selects the older parameters and response fields (a
// [*genai.Schema], an OpenAPI 3.0 subset).
//
// Gemini does not take every keyword of JSON Schema 2020-12, so each schema
// is lowered to what it documents. A rewrite that keeps the meaning is silent
// (const becomes a one-value enum, a $ref with siblings moves into a
// one-branch anyOf, annotations are dropped, and on the OpenAPI path $refs
// are inlined and null branches become nullable). A keyword Gemini cannot
// express is dropped, written into the description so that the model still
// reads it, and reported by [Tools.Relaxed] as a [Lint] naming the tool, the JSON pointer and
// the rule: the schema Gemini receives is then looser than the canonical one,
// never stricter. [tool.Contract.Prepare] checks the canonical schema
// whatever Gemini enforced, so a value that breaks a dropped constraint is
// rejected there and the model told why. A schema Gemini cannot take at all
// (recursion through required members only, dynamic references; on the
// OpenAPI path any recursion and parameter names outside
// ^[A-Za-z_][A-Za-z0-9_]{0,63}$), and a name Gemini refuses (it must start
// with a letter or an underscore), make [New] fail when the tools are
// projected, not when Gemini answers with a 400: the error, wrapping
// [ErrInvalidConfig], names every problem.
//
// The two paths lose different keywords, and the choice is a trade-off: the
// JSON path keeps additionalProperties (closed objects stay closed) but
// drops pattern, minLength, maxLength, minProperties, maxProperties and
// allOf; the OpenAPI path keeps those but drops additionalProperties, false
// included (the proto Schema cannot close an object). Each loss is a lint,
// with the constraint written into the description, and Prepare enforces it
// either way; the JSON path is the default.
//
// The JSON path moves draft-07's definitions at the root into $defs, the
// only name Gemini documents, and rewrites the $refs that point into them.
//
// Gemini has no strict flag: nothing is sent to switch validation on or off.
//
// # Calls in
//
// [NewTurn] reads the model's turn from a response ([NewStreamTurn] from the
// chunks of a streamed one) and [Turn.Calls] turns its function calls
// ([genai.FunctionCall]) into calls for dispatch ([dispatch.Call]), in order,
// with the call's ID as the correlation ID (it may be empty). Gemini sends
// args as an object, which the SDK decodes into a map[string]any before this
// package sees it: the argument text [tool.Contract.Prepare] gets is that map
// encoded again, members sorted by name. So the number text the model wrote
// is gone (1.50 arrives as 1.5, an integer beyond 2^53 already rounded to a
// float64), and of duplicate member names only the last survives where
// Prepare would have refused the text. Missing args are {}. Nothing of the
// lowering needs undoing on this path: no member was made nullable or
// renamed.
//
// [Stream] reads a streamed turn chunk by chunk: Gemini sends each
// function call whole, its arguments an object (a map in the SDK), so
// [Stream.Add] returns every call the moment its chunk arrives, and a
// runtime may run it while the model goes on; [Stream.Turn] gives the turn
// to answer and replay once the candidate finished with STOP (a stream
// cut short, or a turn that finished with MAX_TOKENS or
// MALFORMED_FUNCTION_CALL, has none). The partial arguments the Vertex AI
// API can stream (path and value pairs, their numbers floats, with
// willContinue) are refused: they cannot keep the number text the model
// wrote.
//
// # Results back
//
// [Results] renders each [dispatch.Outcome] as a functionResponse part echoing the
// call's ID and name ([genai.FunctionResponse]): {"output": …} for a
// completed call (the text of its content, or its [tool.Output].Details as
// JSON when it has no content), {"error": …} with the public text otherwise.
// Inline images (PNG, JPEG, WebP) and documents (PDF, plain text) travel in
// the function response's parts; other media, and media given by URI, is
// announced in the text ([dispatch.MediaNote]) rather than dropped.
//
// [Turn.Reply] builds the user content that answers every call of a turn,
// matching outcomes to calls by ID, or by name and order when Gemini sent no
// IDs; [Turn.Next] appends the model's turn, unchanged, and that reply to the
// history. The model's content must go back as it came: Gemini 3 refuses a
// function call replayed without its thoughtSignature.
//
// The SDK encodes a request by way of map[string]any, so numbers in what it
// sends (schema bounds, Details) are written as float64: a bound such as
// 18446744073709551615 reaches Gemini as 1.8446744073709552e+19.
//
// # Concurrency and ownership
//
// [New] and [Results] are safe for concurrent use, and so is a [Tools]. What
// [Tools.Tools] returns shares no memory with the Definitions or with another
// call's; Results copies the media and Details it sends. A [Turn] is immutable and safe for concurrent
// use; it shares the model's content with the response it was read from,
// because that content is what must be replayed.
package toolgemini
