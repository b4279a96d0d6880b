package toolgemini

import (
	"iter"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
	"google.golang.org/genai"
)

// Turn is one model turn of a Gemini conversation: the model's content as
// it came back, and the function calls it holds, in order.
//
// The content must go back to Gemini unchanged in the next request, thought
// signatures included (Gemini 3 refuses a function call replayed without
// its thoughtSignature), so Turn keeps the [*genai.Content] the SDK decoded
// and [Turn.Next] appends that very pointer to the history. Do not modify it.
//
// A Turn is immutable after [NewTurn] and safe for concurrent use. The zero
// Turn has no content and no calls.
type Turn struct {
	content *genai.Content
	// n counts the function calls among the content's parts.
	n int
}

// NewTurn reads the first candidate of resp, the one the SDK's
// [genai.GenerateContentResponse.FunctionCalls] and
// [genai.GenerateContentResponse.Text] read too. It fails, with an error
// wrapping [ErrInvalidReply], when resp is nil or its first candidate has no
// content (a blocked prompt, say: resp.PromptFeedback says why).
func NewTurn(resp *genai.GenerateContentResponse) (Turn, error) {
	if resp == nil || len(resp.Candidates) == 0 || resp.Candidates[0] == nil || resp.Candidates[0].Content == nil {
		return Turn{}, errprefix.Errorf("%w: no candidate content", ErrInvalidReply)
	}
	t := Turn{content: resp.Candidates[0].Content}
	for range t.calls() {
		t.n++
	}
	return t, nil
}

// calls yields the function calls of the turn's content, in order, with
// their index among the calls.
func (t Turn) calls() iter.Seq2[int, *genai.FunctionCall] {
	return func(yield func(int, *genai.FunctionCall) bool) {
		if t.content == nil {
			return
		}
		i := 0
		for _, part := range t.content.Parts {
			if part == nil || part.FunctionCall == nil {
				continue
			}
			if !yield(i, part.FunctionCall) {
				return
			}
			i++
		}
	}
}

// NewStreamTurn reads a model turn from the chunks of
// [genai.Models.GenerateContentStream], in the order they came: the parts of
// each chunk's first candidate, concatenated into one content, unchanged
// (text split over chunks stays split, and thought signatures stay on the
// parts that carried them), which is the content to replay. chunks is not
// retained, its parts are shared.
//
// It fails, with an error wrapping [ErrInvalidReply], when no chunk has candidate
// content, and when a function call is incomplete (its arguments streamed
// as partialArgs, or willContinue set): leave the stream's function-call
// argument streaming off.
func NewStreamTurn(chunks []*genai.GenerateContentResponse) (Turn, error) {
	content := &genai.Content{Role: genai.RoleModel}
	found := false
	for _, c := range chunks {
		if c == nil || len(c.Candidates) == 0 || c.Candidates[0] == nil || c.Candidates[0].Content == nil {
			continue
		}
		found = true
		if r := c.Candidates[0].Content.Role; r != "" {
			content.Role = r
		}
		content.Parts = append(content.Parts, c.Candidates[0].Content.Parts...)
	}
	if !found {
		return Turn{}, errprefix.Errorf("%w: no candidate content in %d chunks", ErrInvalidReply, len(chunks))
	}
	for _, p := range content.Parts {
		if p == nil {
			continue
		}
		if fc := p.FunctionCall; fc != nil && (len(fc.PartialArgs) > 0 || (fc.WillContinue != nil && *fc.WillContinue)) {
			return Turn{}, errprefix.Errorf("%w: function call %q has streamed arguments, which this package does not assemble", ErrInvalidReply, fc.Name)
		}
	}
	return NewTurn(&genai.GenerateContentResponse{Candidates: []*genai.Candidate{{Content: content}}})
}

// Content returns the model's content as the SDK decoded it: the value to
// replay, unchanged. It is shared, not copied.
func (t Turn) Content() *genai.Content { return t.content }

// Calls returns the function calls of the turn as [dispatch.Call] values, in
// the order the model wrote them, for [dispatch.Dispatcher.RunAll]. Each
// Call's ID is the [genai.FunctionCall]'s ID, which may be empty (Gemini
// leaves it out on some models and endpoints; [Turn.Reply] then correlates by
// name and order). The Dispatcher chooses the idempotency keys. An empty
// slice means the model answered without calling a tool.
//
// The SDK decodes args into a map[string]any before this package sees them,
// so the argument text given to [tool.Contract.Prepare] is that map encoded
// again: members
// sorted by name, numbers as float64 write them (an integer beyond 2^53 is
// already rounded, 1.50 reads 1.5), and of duplicate member names only the
// last survives. Missing args become {}.
func (t Turn) Calls() []dispatch.Call {
	calls := make([]dispatch.Call, t.n)
	for i, fc := range t.calls() {
		calls[i] = dispatch.Call{ID: fc.ID, Request: tool.Request{Name: fc.Name, Arguments: argumentText(fc.Args)}}
	}
	return calls
}
