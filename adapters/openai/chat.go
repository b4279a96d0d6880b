package toolopenai

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ChatTools returns the tools as Chat Completions tool parameters, for
// [openai.ChatCompletionNewParams].Tools, in the order of the definitions
// (a [tool.Registry] lists its own sorted by name), each with strict set
// explicitly.
func (t *Tools) ChatTools() []openai.ChatCompletionToolUnionParam {
	return adapterkit.ToolParams(&t.projection, func(p adapterkit.Param) openai.ChatCompletionToolUnionParam {
		return openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        p.Name,
			Description: adapterkit.NonEmpty(p.Description, openai.String),
			Parameters:  shared.FunctionParameters(p.Input),
			Strict:      openai.Bool(p.Strict),
		})
	})
}

// ChatCalls returns the function calls of an assistant message as
// [dispatch.Call] values, in order, with the tool call ID as the correlation
// ID ([dispatch.Call].ID), ready for [dispatch.Dispatcher.RunAll]. The
// argument text reaches [tool.Contract.Prepare] as the model wrote it, except
// that for a strict tool a null sent for an absent optional member is
// removed. Custom tool calls are not function calls and are left out. A
// message without tool calls has none: an empty slice.
//
// A function call without an ID cannot be answered ([ChatResults] must echo
// it): it is an error wrapping [ErrInvalidReply], and no calls are
// returned.
func (t *Tools) ChatCalls(message openai.ChatCompletionMessage) ([]dispatch.Call, error) {
	calls, missing := adapterkit.Calls(message.ToolCalls, func(tc *openai.ChatCompletionMessageToolCallUnion) (dispatch.Call, bool) {
		if tc.Type != "function" {
			return dispatch.Call{}, false
		}
		return dispatch.Call{ID: tc.ID, Request: t.request(tc.Function.Name, tc.Function.Arguments)}, true
	})
	if missing >= 0 {
		return nil, errprefix.Errorf("%w: function call %d (%q) has no ID", ErrInvalidReply, missing, message.ToolCalls[missing].Function.Name)
	}
	return calls, nil
}

// ChatResults returns the messages that answer the calls of one assistant
// message: one tool message per outcome, in order, whose text is what the
// model may see. Chat Completions has no error flag, so the text of an
// outcome the model should read as an error starts with [ErrorMarker].
// Tool messages carry text only, so images and PDF files follow in one user
// message after the tool messages, each introduced by the call ID it
// belongs to; in the tool message's text each such block is replaced by a
// note that it was delivered ("[delivered: image/png, attachment 1, in the
// user message after the tool results]"), and every other media block by a
// note that it was not ("[not delivered: attachment text/csv, 28 bytes]").
//
// Errors wrap [ErrInvalidOutcome]: a suspended or zero outcome, or one
// without a call ID. Nothing is returned then.
func ChatResults(outcomes []dispatch.Outcome) ([]openai.ChatCompletionMessageParamUnion, error) {
	if err := checkOutcomes(outcomes); err != nil {
		return nil, err
	}
	msgs, tools := toolMessages(len(outcomes))
	var parts []openai.ChatCompletionContentPartUnionParam
	for i := range outcomes {
		o := &outcomes[i]
		var attached []openai.ChatCompletionContentPartUnionParam
		var text string
		if hasMedia(o.Output) {
			var b strings.Builder
			for _, block := range o.Output.Content {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				if block.Kind != tool.BlockMedia {
					b.WriteString(block.Text)
					continue
				}
				n := len(parts) + len(attached) + 1
				part, ok := chatPart(block, o.Tool, n)
				if !ok {
					b.WriteString(undelivered(block))
					continue
				}
				attached = append(attached, part)
				fmt.Fprintf(&b, "[delivered: %s, attachment %d, in the user message after the tool results]", block.MediaType, n)
			}
			text = b.String()
		} else {
			text = o.Text()
		}
		tools[i].Content.OfString = openai.String(marked(o, text))
		tools[i].ToolCallID = o.CallID
		msgs = append(msgs, openai.ChatCompletionMessageParamUnion{OfTool: &tools[i]})
		if len(attached) > 0 {
			intro := fmt.Sprintf("Attachments of tool call %s (%s):", o.CallID, o.Tool)
			parts = append(parts, openai.TextContentPart(intro))
			parts = append(parts, attached...)
		}
	}
	if len(parts) > 0 {
		msgs = append(msgs, openai.UserMessage(parts))
	}
	return msgs, nil
}

// toolMessages returns an empty slice of messages with room for n tool
// messages and a user message, and the n tool messages: one allocation for
// the common answer to one call.
func toolMessages(n int) ([]openai.ChatCompletionMessageParamUnion, []openai.ChatCompletionToolMessageParam) {
	if n == 1 {
		one := &struct {
			msgs  [2]openai.ChatCompletionMessageParamUnion
			tools [1]openai.ChatCompletionToolMessageParam
		}{}
		return one.msgs[:0], one.tools[:]
	}
	return make([]openai.ChatCompletionMessageParamUnion, 0, n+1), make([]openai.ChatCompletionToolMessageParam, n)
}

// ErrorMarker starts the result text of every outcome the model should
// read as an error (failed, rejected, unknown tool, unknown), in both
// [ChatResults] and [ResponseResults]: OpenAI's tool results have no error
// flag, and a Failure's public text could otherwise read as a success. The
// marker is part of the package's stable output: a completed call's text
// is sent as it is, without it.
const ErrorMarker = "[tool error] "

// marked is text, preceded by [ErrorMarker] when o is an error.
func marked(o *dispatch.Outcome, text string) string {
	if o.IsError {
		return ErrorMarker + text
	}
	return text
}

// undelivered notes a media block that OpenAI's tool results cannot carry:
// "[not delivered: attachment text/csv, 28 bytes]".
func undelivered(b tool.Block) string {
	return "[not delivered: " + strings.TrimPrefix(dispatch.MediaNote(b), "[")
}

// chatPart is the user-message part that carries a media block, when Chat
// Completions can carry it: images by URL or data URL, PDF files inline.
func chatPart(b tool.Block, toolName string, n int) (openai.ChatCompletionContentPartUnionParam, bool) {
	if b.Kind != tool.BlockMedia {
		return openai.ChatCompletionContentPartUnionParam{}, false
	}
	switch {
	case isImage(b.MediaType):
		return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{URL: mediaURL(b)}), true
	case b.MediaType == "application/pdf" && b.URI == "":
		return openai.FileContentPart(openai.ChatCompletionContentPartFileFileParam{
			FileData: openai.String(dataURL(b)),
			Filename: openai.String(fileName(toolName, n, b.MediaType)),
		}), true
	}
	return openai.ChatCompletionContentPartUnionParam{}, false
}

// isImage reports whether OpenAI accepts images of mediaType as input.
func isImage(mediaType string) bool {
	switch mediaType {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

// mediaURL is the block's URI, or its data as a data URL.
func mediaURL(b tool.Block) string {
	if b.URI != "" {
		return b.URI
	}
	return dataURL(b)
}

func dataURL(b tool.Block) string {
	return "data:" + b.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
}

// fileName names the n-th attachment of a call of toolName.
func fileName(toolName string, n int, mediaType string) string {
	ext := mediaType[strings.LastIndexByte(mediaType, '/')+1:]
	return fmt.Sprintf("%s-%d.%s", toolName, n, ext)
}
