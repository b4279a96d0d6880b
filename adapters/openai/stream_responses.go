package toolopenai

import (
	"errors"

	"github.com/openai/openai-go/v3/responses"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ResponseStream reads the events of one streamed response (the
// [responses.ResponseStreamEventUnion] values of
// client.Responses.NewStreaming), in order, and checks each function
// call's arguments while they stream: see "Streaming" in the package
// documentation. It is made by [Tools.ResponseStream]; it is not safe for
// concurrent use.
type ResponseStream struct {
	tools     *Tools
	calls     []*streamedCall // in the order their items were added
	byItem    map[string]*streamedCall
	byOutput  map[int64]*streamedCall
	completed bool
	ended     string // the event that ended the response otherwise
	err       error
}

// ResponseStream returns a reader of one streamed response whose function
// calls are checked against the contracts of [Config].Registry (with
// Definitions alone, only the completion of each call is checked).
func (t *Tools) ResponseStream() *ResponseStream {
	return &ResponseStream{tools: t, byItem: map[string]*streamedCall{}, byOutput: map[int64]*streamedCall{}}
}

// Add reads the next event. It returns a [*dispatch.RefusedCall] when
// the arguments of a call can no longer be admitted (the call is then
// checked no further, and Calls still returns it), and an error wrapping
// [ErrInvalidReply] when the event contradicts the events before it: text
// for an item that was not added or whose arguments are done, the full
// text of a function_call_arguments.done, output_item.done or
// response.completed event that differs from the deltas (it also wraps
// [dispatch.ErrInvalidStream]), or a call's call_id or name that
// changes. Such an error is returned again by every later Add and by
// Calls.
func (s *ResponseStream) Add(event responses.ResponseStreamEventUnion) error {
	if s.err != nil {
		return s.err
	}
	err := s.event(&event)
	var refused *dispatch.RefusedCall
	if err != nil && !errors.As(err, &refused) {
		s.err = err
	}
	return err
}

func (s *ResponseStream) event(e *responses.ResponseStreamEventUnion) error {
	switch e.Type {
	case "response.output_item.added":
		if e.Item.Type != "function_call" {
			return nil
		}
		if len(s.calls) == maxStreamedCalls {
			return errprefix.Errorf("%w: more than %d function calls", ErrInvalidReply, maxStreamedCalls)
		}
		if _, dup := s.byItem[e.Item.ID]; dup && e.Item.ID != "" {
			return errprefix.Errorf("%w: function_call item %q added twice", ErrInvalidReply, e.Item.ID)
		}
		c := &streamedCall{id: e.Item.CallID, name: e.Item.Name}
		s.calls = append(s.calls, c)
		s.byItem[e.Item.ID] = c
		s.byOutput[e.OutputIndex] = c
		if text := e.Item.Arguments.OfString; text != "" {
			return s.tools.write(c, text)
		}
	case "response.function_call_arguments.delta":
		c, err := s.call(e, "function_call_arguments.delta")
		if err != nil {
			return err
		}
		return s.tools.write(c, e.Delta)
	case "response.function_call_arguments.done":
		c, err := s.call(e, "function_call_arguments.done")
		if err != nil {
			return err
		}
		return s.done(c, e.Arguments)
	case "response.output_item.done":
		if e.Item.Type != "function_call" {
			return nil
		}
		c, ok := s.byItem[e.Item.ID]
		if !ok {
			return errprefix.Errorf("%w: output_item.done for function_call item %q, which was not added", ErrInvalidReply, e.Item.ID)
		}
		if err := s.same(c, &e.Item); err != nil {
			return err
		}
		if !c.ended {
			return s.done(c, e.Item.Arguments.OfString)
		}
	case "response.completed":
		return s.complete(&e.Response)
	case "response.incomplete", "response.failed", "error":
		s.ended = e.Type
	}
	return nil
}

// call returns the call an arguments event is about, by item ID, or by
// output index when the event has none.
func (s *ResponseStream) call(e *responses.ResponseStreamEventUnion, what string) (*streamedCall, error) {
	c, ok := s.byItem[e.ItemID]
	if e.ItemID == "" {
		c, ok = s.byOutput[e.OutputIndex]
	}
	switch {
	case !ok:
		return nil, errprefix.Errorf("%w: %s for item %q (output %d), which was not added", ErrInvalidReply, what, e.ItemID, e.OutputIndex)
	case c.ended:
		return nil, errprefix.Errorf("%w: %s for function call %q after its arguments were done", ErrInvalidReply, what, c.id)
	}
	return c, nil
}

// done ends the call with the full text its event carries, which must
// equal the deltas.
func (s *ResponseStream) done(c *streamedCall, arguments string) error {
	c.ended = true
	if err := s.tools.stream(c).EndWith(arguments); errors.Is(err, dispatch.ErrInvalidStream) {
		return errprefix.Errorf("%w: function call %q: %w", ErrInvalidReply, c.id, err)
	}
	return nil
}

// same refuses an item whose call_id, name or (once done) arguments
// differ from the call's.
func (s *ResponseStream) same(c *streamedCall, item *responses.ResponseOutputItemUnion) error {
	switch {
	case item.CallID != c.id:
		return errprefix.Errorf("%w: function call %q is also called %q", ErrInvalidReply, c.id, item.CallID)
	case item.Name != c.name:
		return errprefix.Errorf("%w: function call %q names %q and %q", ErrInvalidReply, c.id, c.name, item.Name)
	case c.ended && item.Arguments.OfString != c.text.String():
		return errprefix.Errorf("%w: function call %q: %w: its item carries %d bytes of arguments that differ from the %d bytes its deltas made", ErrInvalidReply, c.id, dispatch.ErrInvalidStream, len(item.Arguments.OfString), c.text.Len())
	}
	return nil
}

// complete reads response.completed: the response's function_call items
// must be the calls streamed, each done.
func (s *ResponseStream) complete(r *responses.Response) error {
	n := 0
	for i := range r.Output {
		item := &r.Output[i]
		if item.Type != "function_call" {
			continue
		}
		if n == len(s.calls) {
			return errprefix.Errorf("%w: the completed response holds function call %q, which was not streamed", ErrInvalidReply, item.CallID)
		}
		c := s.calls[n]
		n++
		if !c.ended {
			return errprefix.Errorf("%w: function call %q: the response completed before its arguments were done", ErrInvalidReply, c.id)
		}
		if err := s.same(c, item); err != nil {
			return err
		}
	}
	if len(r.Output) > 0 && n < len(s.calls) {
		return errprefix.Errorf("%w: the completed response lacks function call %q", ErrInvalidReply, s.calls[n].id)
	}
	for _, c := range s.calls {
		if !c.ended {
			return errprefix.Errorf("%w: function call %q: the response completed before its arguments were done", ErrInvalidReply, c.id)
		}
	}
	s.completed = true
	return nil
}

// Calls returns the function calls of the streamed response as
// Tools.ResponseCalls returns those of a response, once the response
// completed (response.completed), every call's arguments done and equal
// to its deltas. A call refused while streaming is returned with its
// whole text, which Prepare refuses. Errors wrap [ErrInvalidReply], and
// no calls are returned: a stream cut short (no response.completed: a
// call's arguments may be a prefix, even one that parses), a response
// that ended incomplete or failed, a call without a call_id, or the error
// Add returned.
func (s *ResponseStream) Calls() ([]dispatch.Call, error) {
	switch {
	case s.err != nil:
		return nil, s.err
	case s.ended != "":
		return nil, errprefix.Errorf("%w: the response ended with %s: its function calls may be cut short", ErrInvalidReply, s.ended)
	case !s.completed:
		return nil, errprefix.Errorf("%w: the stream ended before response.completed: its function calls may be cut short", ErrInvalidReply)
	}
	calls := make([]dispatch.Call, len(s.calls))
	for i, c := range s.calls {
		if c.id == "" {
			return nil, errprefix.Errorf("%w: function_call item %d (%q) has no call_id", ErrInvalidReply, i, c.name)
		}
		calls[i] = dispatch.Call{ID: c.id, Request: s.tools.request(c.name, c.text.String())}
	}
	return calls, nil
}
