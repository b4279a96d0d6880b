package toolanthropic

import (
	"encoding/base64"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Results returns the user message ([anthropic.MessageParam]) that answers
// the tool_use blocks of one assistant message: one tool_result block per
// outcome, in order, with is_error set for every outcome the model should
// read as an error (failed, rejected, unknown tool, unknown). Text blocks
// become text, images (JPEG, PNG, GIF, WebP) image blocks and PDF files
// document blocks, by data or by URL; every other media block is announced by
// a text note ([dispatch.MediaNote]). An output of details only is sent as
// its JSON text. Text the user adds after the results goes at the end of the
// message's Content, as the API requires.
//
// Errors wrap [ErrInvalidOutcome]: a suspended or zero outcome, or one
// without a call ID. The zero MessageParam is returned then.
func Results(outcomes []dispatch.Outcome) (anthropic.MessageParam, error) {
	if problem := adapterkit.OutcomeProblem(outcomes); problem != "" {
		return anthropic.MessageParam{}, errprefix.Errorf("%w: %s", ErrInvalidOutcome, problem)
	}
	msg, blocks, boxes := newResults(len(outcomes))
	for i := range outcomes {
		o, box := &outcomes[i], &boxes[i]
		box.result.ToolUseID = o.CallID
		if o.IsError {
			box.result.IsError = anthropic.Bool(true)
		}
		if s, ok := onlyText(o); ok {
			box.text.Text = s
			box.content[0].OfText = &box.text
			box.result.Content = box.content[:]
		} else {
			box.result.Content = resultContent(o)
		}
		blocks[i].OfToolResult = &box.result
	}
	msg.Content = blocks
	return anthropic.MessageParam{OfUser: msg}, nil
}

// resultBox is one tool_result block with room for content of one text
// block, the common answer, so that it takes no allocation of its own.
type resultBox struct {
	result  anthropic.ToolResultBlockParam
	content [1]anthropic.ToolResultBlockParamContentUnion
	text    anthropic.TextBlockParam
}

// newResults returns the user message, its n content blocks and n result
// boxes: one allocation for the common answer to one call.
func newResults(n int) (*anthropic.UserMessageParam, []anthropic.ContentBlockParamUnion, []resultBox) {
	if n == 1 {
		one := &struct {
			msg    anthropic.UserMessageParam
			blocks [1]anthropic.ContentBlockParamUnion
			boxes  [1]resultBox
		}{}
		return &one.msg, one.blocks[:], one.boxes[:]
	}
	return &anthropic.UserMessageParam{}, make([]anthropic.ContentBlockParamUnion, n), make([]resultBox, n)
}

// onlyText returns the one non-empty text an outcome's result is, when it
// is: details only, or a single text block.
func onlyText(o *dispatch.Outcome) (string, bool) {
	switch c := o.Output.Content; {
	case len(c) == 0:
		s := o.Text()
		return s, s != ""
	case len(c) == 1 && c[0].Kind != tool.BlockMedia:
		return c[0].Text, c[0].Text != ""
	}
	return "", false
}

func resultContent(o *dispatch.Outcome) []anthropic.ToolResultBlockParamContentUnion {
	text := func(s string) anthropic.ToolResultBlockParamContentUnion {
		return anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: s}}
	}
	if len(o.Output.Content) == 0 {
		if s := o.Text(); s != "" {
			return []anthropic.ToolResultBlockParamContentUnion{text(s)}
		}
		return nil
	}
	var out []anthropic.ToolResultBlockParamContentUnion
	for _, b := range o.Output.Content {
		switch {
		case b.Kind != tool.BlockMedia:
			if b.Text != "" {
				out = append(out, text(b.Text))
			}
		case isImage(b.MediaType):
			src := anthropic.ImageBlockParamSourceUnion{}
			if b.URI != "" {
				src.OfURL = &anthropic.URLImageSourceParam{URL: b.URI}
			} else {
				src.OfBase64 = &anthropic.Base64ImageSourceParam{
					Data:      base64.StdEncoding.EncodeToString(b.Data),
					MediaType: anthropic.Base64ImageSourceMediaType(b.MediaType),
				}
			}
			out = append(out, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{Source: src}})
		case b.MediaType == "application/pdf":
			src := anthropic.DocumentBlockParamSourceUnion{}
			if b.URI != "" {
				src.OfURL = &anthropic.URLPDFSourceParam{URL: b.URI}
			} else {
				src.OfBase64 = &anthropic.Base64PDFSourceParam{Data: base64.StdEncoding.EncodeToString(b.Data)}
			}
			out = append(out, anthropic.ToolResultBlockParamContentUnion{OfDocument: &anthropic.DocumentBlockParam{Source: src}})
		default:
			out = append(out, text(dispatch.MediaNote(b)))
		}
	}
	return out
}

// isImage reports whether Anthropic accepts images of mediaType.
func isImage(mediaType string) bool {
	switch mediaType {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		return true
	}
	return false
}
