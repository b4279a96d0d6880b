// Package toolopenai offers the tools of a [tool.Registry] to OpenAI models
// through the official Go SDK (github.com/openai/openai-go/v3), in both the
// Chat Completions and the Responses API, and brings the model's calls back
// through [dispatch]. The name reads at the call site as what it converts
// between: toolopenai.New, tools.ChatTools(), toolopenai.ChatResults(…).
//
// The provider adapters of this repository (toolopenai, toolanthropic,
// toolgemini) share one shape: [New] from one [Config] (a Registry or
// Definitions, and Strict), the tools to advertise, the calls of the
// model's reply, the results for the outcomes, [Tools.Lints] and
// [Tools.Relaxed] as [Lint] values, and the error sentinels
// [ErrInvalidConfig], [ErrInvalidReply] and [ErrInvalidOutcome]. OpenAI has
// two wire APIs, so each step comes in a pair: Chat… for Chat Completions,
// Response… for Responses.
//
// # One turn
//
//	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: true})
//	params.Tools = tools.ChatTools()
//	completion, err := client.Chat.Completions.New(ctx, params)
//	msg := completion.Choices[0].Message
//	calls, err := tools.ChatCalls(msg)
//	outcomes := dispatcher.RunAll(ctx, calls)
//	answers, err := toolopenai.ChatResults(outcomes)
//	params.Messages = append(params.Messages, msg.ToParam())
//	params.Messages = append(params.Messages, answers...)
//
// With Responses, [Tools.ResponseTools], [Tools.ResponseCalls] and
// [ResponseResults] play the same parts.
//
// # Strict mode
//
// With [Config].Strict, each tool's canonical input schema is lowered to the
// subset OpenAI enforces while the model writes arguments: every object
// closed with additionalProperties false, every member required, an optional
// member made nullable, default dropped, and a $ref whose member has its own
// description inlined. A tool without arguments is sent closed with no
// members. A schema declaring draft-07 is lowered when nothing in it means
// otherwise in 2020-12 (definitions become $defs); a keyword beside $ref,
// items as an array, additionalItems or dependencies keep it non-strict,
// with a lint naming the keyword. Constraints OpenAI does not enforce
// (string lengths, formats it does not know, uniqueItems, …) are moved into
// the member's description and listed by [Tools.Relaxed]:
// [tool.Contract.Prepare] still enforces them. What cannot be lowered at all
// (a free-form object, a map, allOf, a oneOf whose branches' JSON types
// overlap (one whose types are disjoint means anyOf and is sent as one),
// not, a schema that admits any value, the size limits of Structured Outputs
// counted per tool, …) makes that tool non-strict, and [Tools.Lints] says,
// per JSON pointer of the canonical schema, which rule blocks it. strict is
// always sent explicitly, false included, because the APIs disagree on its
// default.
//
// When a strict tool is called, a null the model sent for a member that is
// optional in the canonical schema is removed before Prepare sees the
// arguments; nothing else is changed, and the argument text of any other
// call reaches Prepare as the model wrote it, malformed or not: Prepare,
// under the canonical schema, is the only judge. A member whose own schema
// admits null therefore cannot be sent as an explicit null strictly (a null
// reads as "not given"); [Tools.Relaxed] lists each such member, so that a
// tool for which "null" and "absent" differ can be sent non-strict.
//
// # Streaming
//
// [Tools.ChatStream] and [Tools.ResponseStream] read a streamed reply
// event by event and check each function call's arguments while the model
// writes them, with [dispatch.Stream] against the contract of
// [Config].Registry: Add returns a [*dispatch.RefusedCall] as soon as a
// call's text can no longer be admitted (a member the schema does not
// have, a value of the wrong type, invalid JSON…), so that a runtime can
// stop the stream and answer the call with the refusal. Nothing is
// admitted early: Calls returns the calls only once the reply is
// complete, and Prepare judges each whole text.
//
//	s := tools.ChatStream()
//	stream := client.Chat.Completions.NewStreaming(ctx, params)
//	for stream.Next() {
//		if err := s.Add(stream.Current()); err != nil {
//			// a *dispatch.RefusedCall, or ErrInvalidReply
//		}
//	}
//	calls, err := s.Calls()
//
// Chat Completions streams the arguments of each call as deltas by tool
// call index, and no event carries a call's whole text: the calls are
// complete when the choice finishes with "tool_calls" or "stop".
// Responses streams them as response.function_call_arguments.delta
// events; the function_call_arguments.done event, the output_item.done
// item and the response.completed response each carry the whole text
// again, which must equal the deltas, or the reply is refused
// ([ErrInvalidReply], wrapping [dispatch.ErrInvalidStream]); the calls
// are complete at response.completed. A stream cut short, a choice that
// finished with "length", a response that ended incomplete: no calls,
// even when the text received parses. A strict tool's arguments are
// checked only whole, by Prepare: the nulls strict mode makes the model
// send for absent members are removed first.
//
// # Results
//
// OpenAI has no error flag: the text of a result the model should read as
// an error (failed, rejected, unknown tool, unknown) starts with
// [ErrorMarker], "[tool error] ", followed by the public text
// [dispatch.Outcome] holds for the model; a success's text never carries
// it. Chat Completions tool messages carry text only, so images and PDF
// files follow in a user message, and the tool message says where each
// went ("[delivered: image/png, attachment 1, in the user message after the
// tool results]"); Responses function_call_output items carry images and
// PDF files themselves. Every other media block is replaced by a note that
// it was not delivered ("[not delivered: attachment text/csv, 28 bytes]")
// rather than dropped.
package toolopenai
