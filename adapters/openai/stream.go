package toolopenai

import (
	"strings"

	"github.com/openai/openai-go/v3"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// maxStreamedCalls bounds the function calls of one streamed reply.
const maxStreamedCalls = 256

// streamedCall is one function call of a streamed reply: what the deltas
// made of it so far, and its [dispatch.Stream].
type streamedCall struct {
	id, name string
	text     strings.Builder
	stream   *dispatch.Stream // nil until its arguments begin
	refused  error            // the refusal while streaming
	ended    bool             // its completion event came
	skip     bool             // not a function call
}

// stream returns the call's [dispatch.Stream], made at the first delta of
// its arguments: checked against the registry's contract, except for a
// strict tool, whose nulls for absent members are removed only at the end.
func (t *Tools) stream(c *streamedCall) *dispatch.Stream {
	if c.stream == nil {
		registry := t.registry
		if t.Strict(c.name) {
			registry = nil
		}
		c.stream = dispatch.NewStream(registry, c.name)
	}
	return c.stream
}

// write gives a delta of c's arguments to its Stream, and returns the
// refusal, the first time the arguments are refused.
func (t *Tools) write(c *streamedCall, delta string) error {
	c.text.WriteString(delta)
	if c.refused != nil {
		return nil
	}
	if _, err := t.stream(c).WriteString(delta); err != nil {
		c.refused = err
		return &dispatch.RefusedCall{
			Call: dispatch.Call{ID: c.id, Request: tool.Request{Name: c.name, Arguments: c.text.String()}},
			Err:  err,
		}
	}
	return nil
}

// ChatStream reads the chunks of one streamed Chat Completion (the
// [openai.ChatCompletionChunk] values of
// client.Chat.Completions.NewStreaming), in order, and checks each
// function call's arguments while they stream: see "Streaming" in the
// package documentation. It reads the first choice (index 0) only. It is
// made by [Tools.ChatStream]; it is not safe for concurrent use.
type ChatStream struct {
	tools   *Tools
	calls   []*streamedCall // by order of first appearance
	byIndex map[int64]*streamedCall
	finish  string
	err     error
}

// ChatStream returns a reader of one streamed Chat Completion whose
// function calls are checked against the contracts of [Config].Registry
// (with Definitions alone, only the completion of each call is checked).
func (t *Tools) ChatStream() *ChatStream {
	return &ChatStream{tools: t, byIndex: map[int64]*streamedCall{}}
}

// Add reads the next chunk. It returns a [*dispatch.RefusedCall] when the
// arguments of a call in it can no longer be admitted (the call is then
// checked no further, and Calls still returns it); an error wrapping
// [ErrInvalidReply] when the chunk contradicts the chunks before it: a
// call whose ID or name changes, arguments before a call's name, a call
// after the choice finished. Such an error is returned again by every
// later Add and by Calls. Several refusals in one chunk: the first is
// returned.
func (s *ChatStream) Add(chunk openai.ChatCompletionChunk) error {
	if s.err != nil {
		return s.err
	}
	var refused error
	for i := range chunk.Choices {
		choice := &chunk.Choices[i]
		if choice.Index != 0 {
			continue
		}
		for j := range choice.Delta.ToolCalls {
			err := s.delta(&choice.Delta.ToolCalls[j])
			if _, isRefusal := err.(*dispatch.RefusedCall); err != nil && !isRefusal {
				s.err = err
				return err
			}
			if refused == nil {
				refused = err
			}
		}
		if choice.FinishReason != "" {
			s.end(choice.FinishReason)
		}
	}
	return refused
}

// delta reads the delta of one tool call.
func (s *ChatStream) delta(tc *openai.ChatCompletionChunkChoiceDeltaToolCall) error {
	if s.finish != "" {
		return errprefix.Errorf("%w: a tool call delta after the choice finished (%s)", ErrInvalidReply, s.finish)
	}
	index := tc.Index
	if index == -1 {
		index = 0 // as the SDK's accumulator reads it, for servers that send -1 for a single call
	}
	c, ok := s.byIndex[index]
	if !ok {
		if len(s.calls) == maxStreamedCalls {
			return errprefix.Errorf("%w: more than %d tool calls", ErrInvalidReply, maxStreamedCalls)
		}
		c = &streamedCall{}
		s.byIndex[index] = c
		s.calls = append(s.calls, c)
	}
	switch {
	case tc.ID != "" && c.id != "" && tc.ID != c.id:
		return errprefix.Errorf("%w: tool call %d changed its ID from %q to %q", ErrInvalidReply, index, c.id, tc.ID)
	case tc.Function.Name != "" && c.name != "" && tc.Function.Name != c.name:
		return errprefix.Errorf("%w: tool call %d changed its name from %q to %q", ErrInvalidReply, index, c.name, tc.Function.Name)
	}
	if tc.ID != "" {
		c.id = tc.ID
	}
	if tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	if tc.Type != "" && tc.Type != "function" {
		c.skip = true
	}
	if tc.Function.Arguments == "" || c.skip {
		return nil
	}
	if c.name == "" {
		return errprefix.Errorf("%w: tool call %d has arguments before its name", ErrInvalidReply, index)
	}
	return s.tools.write(c, tc.Function.Arguments)
}

// end reads the choice's finish_reason: the completion of every call.
func (s *ChatStream) end(reason string) {
	s.finish = reason
	for _, c := range s.calls {
		if !c.skip && c.name != "" {
			_ = s.tools.stream(c).End() // a refusal now is Prepare's to report
			c.ended = true
		}
	}
}

// Calls returns the function calls of the streamed message as Tools.ChatCalls
// returns those of a message, once the stream is complete: its choice
// finished because of the calls or the end of the answer ("tool_calls" or
// "stop"). A call refused while streaming is returned with its whole
// text, which Prepare refuses. Errors wrap [ErrInvalidReply], and no calls
// are returned: a stream cut short (no finish_reason: its last call's
// arguments may be a prefix, even one that parses), a choice that
// finished for another reason ("length": the arguments are cut short,
// "content_filter"), a call without an ID, or the error Add returned.
func (s *ChatStream) Calls() ([]dispatch.Call, error) {
	switch {
	case s.err != nil:
		return nil, s.err
	case s.finish == "":
		return nil, errprefix.Errorf("%w: the stream ended before the choice finished: its tool calls may be cut short", ErrInvalidReply)
	case s.finish != "tool_calls" && s.finish != "stop":
		return nil, errprefix.Errorf("%w: the choice finished with %q: its tool calls may be cut short", ErrInvalidReply, s.finish)
	}
	calls := make([]dispatch.Call, 0, len(s.calls))
	for i, c := range s.calls {
		if c.skip {
			continue
		}
		switch {
		case c.id == "":
			return nil, errprefix.Errorf("%w: function call %d (%q) has no ID", ErrInvalidReply, i, c.name)
		case c.name == "":
			return nil, errprefix.Errorf("%w: function call %d (%s) has no name", ErrInvalidReply, i, c.id)
		}
		calls = append(calls, dispatch.Call{ID: c.id, Request: s.tools.request(c.name, c.text.String())})
	}
	return calls, nil
}
