package toolanthropic

import (
	"encoding/base64"
	"fmt"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/adapterkit"
)

// Results returns the user message that answers the tool_use blocks of one
// assistant message: one tool_result block per outcome, in order, with
// is_error set for every outcome the model should read as an error
// (failed, rejected, unknown tool, unknown). Text blocks become text,
// images (JPEG, PNG, GIF, WebP) image blocks and PDF files document
// blocks, by data or by URL; every other media block is announced by a
// text note (dispatch.MediaNote). An output of details only is sent as
// its JSON text. Text the user adds after the results goes at the end of
// the message's Content, as the API requires.
//
// Errors wrap ErrInvalidOutcome: a suspended or zero outcome, or one
// without a call ID. The zero MessageParam is returned then.
func Results(outcomes []dispatch.Outcome) (anthropic.MessageParam, error) {
	if problem := adapterkit.OutcomeProblem(outcomes); problem != "" {
		return anthropic.MessageParam{}, fmt.Errorf("%w: %s", ErrInvalidOutcome, problem)
	}
	blocks := make([]anthropic.ContentBlockParamUnion, len(outcomes))
	for i, o := range outcomes {
		r := anthropic.ToolResultBlockParam{ToolUseID: o.CallID, Content: resultContent(o)}
		if o.IsError {
			r.IsError = anthropic.Bool(true)
		}
		blocks[i] = anthropic.ContentBlockParamUnion{OfToolResult: &r}
	}
	return anthropic.NewUserMessage(blocks...), nil
}

func resultContent(o dispatch.Outcome) []anthropic.ToolResultBlockParamContentUnion {
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
