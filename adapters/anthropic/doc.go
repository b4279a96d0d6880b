// Package toolanthropic offers the tools of a [tool.Registry] to Claude
// through the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2,
// the Messages API), and brings the model's tool_use blocks back through
// [dispatch]. The name reads at the call site as what it converts between:
// toolanthropic.New, tools.Tools(), toolanthropic.Results(…).
//
// The provider adapters of this repository (toolopenai, toolanthropic,
// toolgemini) share one shape: [New] from one [Config] (a Registry or
// Definitions, and Strict), the tools to advertise ([Tools.Tools]), the
// calls of the model's reply ([Tools.Calls]), the results for the outcomes
// ([Results]), [Tools.Lints] and [Tools.Relaxed] as [Lint] values, and the
// error sentinels [ErrInvalidConfig], [ErrInvalidReply] and
// [ErrInvalidOutcome].
//
// # One turn
//
//	tools, err := toolanthropic.New(toolanthropic.Config{Registry: reg, Strict: true})
//	params.Tools = tools.Tools()
//	message, err := client.Messages.New(ctx, params)
//	calls, err := tools.Calls(*message)
//	outcomes := dispatcher.RunAll(ctx, calls)
//	results, err := toolanthropic.Results(outcomes)
//	params.Messages = append(params.Messages, message.ToParam(), results)
//
// # Strict mode
//
// With [Config].Strict, each tool's canonical input schema is lowered to the
// subset Anthropic enforces: every object closed with additionalProperties
// false (optional members stay optional), and a $ref whose member has its
// own description inlined. A tool without arguments is sent closed with no
// members. A schema declaring draft-07 is lowered when nothing in it means
// otherwise in 2020-12 (definitions become $defs); a keyword beside $ref,
// items as an array, additionalItems or dependencies keep it non-strict,
// with a lint naming the keyword. Constraints Anthropic does not enforce
// (numeric bounds, string lengths, maxItems, minItems above 1, formats it
// does not know, patterns with backreferences, lookaround or word
// boundaries) are moved into the member's description and listed by
// [Tools.Relaxed]: [tool.Contract.Prepare] still enforces them. allOf is
// sent as Anthropic documents it, without $ref: branches that describe an
// object are merged into it (each closed on its own, they would refuse one
// another's members), provided no member is declared twice and no branch
// closes the object itself; other branches stay in allOf, given the
// node's type. What cannot be lowered (a recursive schema, a free-form
// object, a map, allOf with $ref or with object branches that cannot be
// merged, a oneOf
// whose branches' JSON types overlap (one whose types are disjoint means
// anyOf and is sent as one), not, a schema that admits any value, …) makes
// that tool non-strict, and [Tools.Lints] says, per JSON pointer of the
// canonical schema, which rule blocks it. The request-wide budgets
// ([MaxStrictTools], [MaxOptional], [MaxUnions]) are checked over the whole
// list when it is projected, not when the API answers with an error; they
// are spent first on the tools [Config].StrictFirst names (those that
// matter most), then in the order of the definitions. strict
// is always sent explicitly, false included.
//
// # Streaming
//
// [Tools.Stream] reads a streamed message event by event and checks the
// input of each tool_use block while the model writes it
// (input_json_delta), with [dispatch.Stream] against the contract of
// [Config].Registry: [Stream.Add] returns a [*dispatch.RefusedCall] as
// soon as a call's input can no longer be admitted, so that a runtime can
// stop the stream and answer the call with the refusal. Nothing is
// admitted early: [Stream.Calls] returns the calls only once the message
// stopped (message_stop), and Prepare judges each whole input.
//
//	s := tools.Stream()
//	stream := client.Messages.NewStreaming(ctx, params)
//	for stream.Next() {
//		if err := s.Add(stream.Current()); err != nil {
//			// a *dispatch.RefusedCall, or ErrInvalidReply
//		}
//	}
//	calls, err := s.Calls()
//
// A block's content_block_stop carries no input of its own: the input is
// its deltas (or, without any, the input its content_block_start carried,
// {} as a rule). A stop reason of max_tokens says the last block may be
// cut short even when its input parses, and a stream that ends before
// message_stop may be cut anywhere: Calls returns no calls then.
//
// # Results
//
// [Results] turns each [dispatch.Outcome] into a tool_result block with
// is_error set when the model should read it as an error. Images and PDF
// files travel as image and document blocks; other media are announced by a
// note ([dispatch.MediaNote]) rather than dropped.
package toolanthropic
