package toolopenai

import (
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/adapters/internal/adapterkit"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ResponseTools returns the tools as Responses function tools
// ([responses.FunctionToolParam], each in a [responses.ToolUnionParam] for
// [responses.ResponseNewParams].Tools), in the order of the definitions (a
// [tool.Registry] lists its own sorted by name), each with strict set
// explicitly, and with the tool's output schema
// ([tool.Definition].OutputSchema), when it has one, as output_schema: the
// schema of the JSON a completed call's text holds.
func (t *Tools) ResponseTools() []responses.ToolUnionParam {
	return adapterkit.ToolParams(&t.projection, func(p adapterkit.Param) responses.ToolUnionParam {
		return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name:         p.Name,
			Description:  adapterkit.NonEmpty(p.Description, openai.String),
			Parameters:   p.Input,
			Strict:       openai.Bool(p.Strict),
			OutputSchema: p.Output(),
		}}
	})
}

// ResponseCalls returns the function_call items of a response as
// [dispatch.Call] values, in order, with call_id as the correlation ID.
// Arguments are handled as by [Tools.ChatCalls]. A nil response, or a
// function_call item without a call_id, is an error wrapping
// [ErrInvalidReply], and no calls are returned.
func (t *Tools) ResponseCalls(response *responses.Response) ([]dispatch.Call, error) {
	if response == nil {
		return nil, errprefix.Errorf("%w: nil response", ErrInvalidReply)
	}
	calls, missing := adapterkit.Calls(response.Output, func(item *responses.ResponseOutputItemUnion) (dispatch.Call, bool) {
		if item.Type != "function_call" {
			return dispatch.Call{}, false
		}
		// The union's own fields, not AsFunctionCall, which decodes the
		// item again.
		return dispatch.Call{ID: item.CallID, Request: t.request(item.Name, item.Arguments.OfString)}, true
	})
	if missing >= 0 {
		return nil, errprefix.Errorf("%w: function_call item %d (%q) has no call_id", ErrInvalidReply, missing, response.Output[missing].Name)
	}
	return calls, nil
}

// ResponseResults returns one function_call_output input item per
// outcome, in order, answering its call_id. An output of text only (or
// details, as JSON) is sent as a string; one with media as a list of
// input_text, input_image (images, by URL or data URL) and input_file (PDF
// files) items, every other media block replaced by an input_text note that
// it was not delivered ("[not delivered: attachment text/csv, 28 bytes]").
// Responses has no error flag: the output of an outcome the model should
// read as an error starts with [ErrorMarker] (its first input_text item,
// when it is a list).
//
// Errors wrap [ErrInvalidOutcome], as for [ChatResults].
func ResponseResults(outcomes []dispatch.Outcome) ([]responses.ResponseInputItemUnionParam, error) {
	if err := checkOutcomes(outcomes); err != nil {
		return nil, err
	}
	items, outputs := callOutputs(len(outcomes))
	for i := range outcomes {
		o, out := &outcomes[i], &outputs[i]
		if hasMedia(o.Output) {
			out.Output.OfResponseFunctionCallOutputItemArray = outputItems(o)
		} else {
			out.Output.OfString = openai.String(marked(o, o.Text()))
		}
		out.CallID = openai.String(o.CallID)
		items[i].OfFunctionCallOutput = out
	}
	return items, nil
}

// callOutputs returns n input items and n function_call_output items for
// them: one allocation for the common answer to one call.
func callOutputs(n int) ([]responses.ResponseInputItemUnionParam, []responses.ResponseInputItemFunctionCallOutputParam) {
	if n == 1 {
		one := &struct {
			items   [1]responses.ResponseInputItemUnionParam
			outputs [1]responses.ResponseInputItemFunctionCallOutputParam
		}{}
		return one.items[:], one.outputs[:]
	}
	return make([]responses.ResponseInputItemUnionParam, n), make([]responses.ResponseInputItemFunctionCallOutputParam, n)
}

func hasMedia(out tool.Output) bool {
	for _, b := range out.Content {
		if b.Kind == tool.BlockMedia {
			return true
		}
	}
	return false
}

// outputItems renders an output with media as function_call_output items.
func outputItems(o *dispatch.Outcome) responses.ResponseFunctionCallOutputItemListParam {
	list := make(responses.ResponseFunctionCallOutputItemListParam, 0, len(o.Output.Content)+1)
	text := func(s string) responses.ResponseFunctionCallOutputItemUnionParam {
		return responses.ResponseFunctionCallOutputItemUnionParam{OfInputText: &responses.ResponseInputTextContentParam{Text: s}}
	}
	if o.IsError {
		list = append(list, text(strings.TrimSuffix(ErrorMarker, " ")))
	}
	for i, b := range o.Output.Content {
		switch {
		case b.Kind != tool.BlockMedia:
			list = append(list, text(b.Text))
		case isImage(b.MediaType):
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputImage: &responses.ResponseInputImageContentParam{
				ImageURL: openai.String(mediaURL(b)),
			}})
		case b.MediaType == "application/pdf":
			f := &responses.ResponseInputFileContentParam{Filename: openai.String(fileName(o.Tool, i+1, b.MediaType))}
			if b.URI != "" {
				f.FileURL = openai.String(b.URI)
			} else {
				f.FileData = openai.String(dataURL(b))
			}
			list = append(list, responses.ResponseFunctionCallOutputItemUnionParam{OfInputFile: f})
		default:
			list = append(list, text(undelivered(b)))
		}
	}
	return list
}
