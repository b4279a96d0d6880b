package toolanthropic

import (
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// maxStreamedCalls bounds the tool_use blocks of one streamed message.
const maxStreamedCalls = 256

// Stream reads the events of one streamed message (the
// [anthropic.MessageStreamEventUnion] values of
// client.Messages.NewStreaming), in order, and checks the input of each
// tool_use block while it streams as input_json_delta: see "Streaming" in
// the package documentation. It is made by [Tools.Stream]; it is not safe
// for concurrent use.
type Stream struct {
	tools   *Tools
	calls   []*streamedCall // in the order their blocks started
	byIndex map[int64]*streamedCall
	reason  anthropic.StopReason
	stopped bool // message_stop came
	err     error
}

// streamedCall is one tool_use block of a streamed message.
type streamedCall struct {
	id, name string
	start    string // the input its content_block_start carries, "{}" as a rule
	deltas   bool
	text     strings.Builder
	stream   *dispatch.Stream
	refused  error
	ended    bool // content_block_stop came
}

// Stream returns a reader of one streamed message whose tool_use blocks
// are checked against the contracts of [Config].Registry (with
// Definitions alone, only the completion of each call is checked).
func (t *Tools) Stream() *Stream {
	return &Stream{tools: t, byIndex: map[int64]*streamedCall{}}
}

// Add reads the next event. It returns a [*dispatch.RefusedCall] when the
// input of a tool_use block can no longer be admitted (the call is then
// checked no further, and Calls still returns it), and an error wrapping
// [ErrInvalidReply] when the event contradicts the events before it: a
// delta or stop for a block that did not start or already stopped, a
// block started twice, or input_json_delta for a block whose start
// already carried an input other than {} (two sources of the same input).
// Such an error is returned again by every later Add and by Calls.
func (s *Stream) Add(event anthropic.MessageStreamEventUnion) error {
	if s.err != nil {
		return s.err
	}
	err := s.event(&event)
	if _, refusal := err.(*dispatch.RefusedCall); err != nil && !refusal {
		s.err = err
	}
	return err
}

func (s *Stream) event(e *anthropic.MessageStreamEventUnion) error {
	switch e.Type {
	case "content_block_start":
		if e.ContentBlock.Type != "tool_use" {
			return nil
		}
		if _, dup := s.byIndex[e.Index]; dup {
			return errprefix.Errorf("%w: content block %d started twice", ErrInvalidReply, e.Index)
		}
		if len(s.calls) == maxStreamedCalls {
			return errprefix.Errorf("%w: more than %d tool_use blocks", ErrInvalidReply, maxStreamedCalls)
		}
		c := &streamedCall{id: e.ContentBlock.ID, name: e.ContentBlock.Name, start: strings.TrimSpace(e.ContentBlock.JSON.Input.Raw())}
		s.byIndex[e.Index] = c
		s.calls = append(s.calls, c)
	case "content_block_delta":
		c, err := s.open(e.Index, "content_block_delta")
		if err != nil || c == nil || e.Delta.Type != "input_json_delta" {
			return err
		}
		if !c.deltas && c.start != "" && c.start != "{}" {
			return errprefix.Errorf("%w: tool_use block %q started with an input and continued with input_json_delta", ErrInvalidReply, c.id)
		}
		c.deltas = true
		return s.write(c, e.Delta.PartialJSON)
	case "content_block_stop":
		c, err := s.open(e.Index, "content_block_stop")
		if err != nil || c == nil {
			return err
		}
		if !c.deltas {
			// A block without deltas is its start's input, or none, and
			// complete: a refusal now is Prepare's to report.
			c.text.WriteString(c.start)
			_, _ = s.stream(c).WriteString(c.start)
		}
		c.ended = true
		_ = s.stream(c).End()
	case "message_delta":
		s.reason = e.Delta.StopReason
	case "message_stop":
		s.stopped = true
	}
	return nil
}

// open returns the tool_use block at index that has not stopped; nil for
// another kind of block that started.
func (s *Stream) open(index int64, what string) (*streamedCall, error) {
	c, ok := s.byIndex[index]
	switch {
	case !ok:
		return nil, nil // a text, thinking or server tool block
	case c.ended:
		return nil, errprefix.Errorf("%w: %s for tool_use block %q after it stopped", ErrInvalidReply, what, c.id)
	}
	return c, nil
}

func (s *Stream) stream(c *streamedCall) *dispatch.Stream {
	if c.stream == nil {
		c.stream = dispatch.NewStream(s.tools.registry, c.name)
	}
	return c.stream
}

// write gives a delta of c's input to its Stream, and returns the refusal
// the first time the input is refused.
func (s *Stream) write(c *streamedCall, delta string) error {
	c.text.WriteString(delta)
	if c.refused != nil {
		return nil
	}
	if _, err := s.stream(c).WriteString(delta); err != nil {
		c.refused = err
		return &dispatch.RefusedCall{
			Call: dispatch.Call{ID: c.id, Request: tool.Request{Name: c.name, Arguments: c.text.String()}},
			Err:  err,
		}
	}
	return nil
}

// Calls returns the tool_use blocks of the streamed message as
// Tools.Calls returns those of a message, once the message stopped
// (message_stop) for a reason other than running out of room: every
// block's stop event came, and the input of each is its deltas (the
// stop event carries no input of its own). A call refused while
// streaming is returned with its whole input, which Prepare refuses.
// Errors wrap [ErrInvalidReply], and no calls are returned: a stream cut
// short (no message_stop, or a block that never stopped: its input may be
// a prefix, even one that parses), a message that stopped with
// max_tokens, model_context_window_exceeded or refusal (its last block
// may be cut short), a block without an ID, or the error Add returned.
func (s *Stream) Calls() ([]dispatch.Call, error) {
	switch {
	case s.err != nil:
		return nil, s.err
	case !s.stopped:
		return nil, errprefix.Errorf("%w: the stream ended before message_stop: its tool_use blocks may be cut short", ErrInvalidReply)
	}
	switch s.reason {
	case anthropic.StopReasonMaxTokens, anthropic.StopReasonModelContextWindowExceeded, anthropic.StopReasonRefusal:
		return nil, errprefix.Errorf("%w: the message stopped with %q: its tool_use blocks may be cut short", ErrInvalidReply, s.reason)
	}
	calls := make([]dispatch.Call, len(s.calls))
	for i, c := range s.calls {
		switch {
		case !c.ended:
			return nil, errprefix.Errorf("%w: tool_use block %q never stopped: its input may be cut short", ErrInvalidReply, c.id)
		case c.id == "":
			return nil, errprefix.Errorf("%w: tool_use block %d (%q) has no ID", ErrInvalidReply, i, c.name)
		}
		calls[i] = dispatch.Call{ID: c.id, Request: tool.Request{Name: c.name, Arguments: c.text.String()}}
	}
	return calls, nil
}
