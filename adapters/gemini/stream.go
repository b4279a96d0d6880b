package toolgemini

import (
	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
	"google.golang.org/genai"
)

// Stream reads a model turn streamed by [genai.Models.GenerateContentStream],
// chunk by chunk, in the order the chunks come. Gemini sends each function
// call whole, its arguments an object the SDK decodes into a map, so a call
// is complete when it arrives: [Stream.Add] returns it at once, and a
// runtime may run it while the model writes the rest of the turn. The turn
// itself, to replay and to answer, is complete only when its candidate
// finished: see [Stream.Turn].
//
// Streamed arguments (the partialArgs of the Vertex AI API, with
// willContinue: path and value pairs whose numbers are floats, so that the
// number text the model wrote is lost) are refused: leave that streaming
// off.
//
// The zero Stream is ready to use. A Stream is not safe for concurrent use.
type Stream struct {
	content *genai.Content
	calls   int
	ids     map[string]bool // the IDs of the calls read
	finish  genai.FinishReason
	err     error
}

// Add reads the next chunk and returns the function calls it completes, as
// [Turn.Calls] returns them, in order: ready for [dispatch.Dispatcher.RunAll].
// A chunk without candidate content (usage metadata, say) completes none.
// Errors wrap [ErrInvalidReply], and are returned again by every later Add
// and by Turn: a nil chunk, a call with streamed arguments, a call whose
// ID came before (two sources of the same call), or content after the
// candidate finished. No call of that chunk is returned then.
func (s *Stream) Add(chunk *genai.GenerateContentResponse) ([]dispatch.Call, error) {
	if s.err != nil {
		return nil, s.err
	}
	calls, err := s.add(chunk)
	if err != nil {
		s.err = err
		return nil, err
	}
	return calls, nil
}

func (s *Stream) add(chunk *genai.GenerateContentResponse) ([]dispatch.Call, error) {
	if chunk == nil {
		return nil, errprefix.Errorf("%w: a nil chunk", ErrInvalidReply)
	}
	if len(chunk.Candidates) == 0 || chunk.Candidates[0] == nil {
		return nil, nil
	}
	candidate := chunk.Candidates[0]
	var calls []dispatch.Call
	if c := candidate.Content; c != nil && len(c.Parts) > 0 {
		if s.finish != "" {
			return nil, errprefix.Errorf("%w: content after the candidate finished (%s)", ErrInvalidReply, s.finish)
		}
		if s.content == nil {
			s.content = &genai.Content{Role: genai.RoleModel}
		}
		if c.Role != "" {
			s.content.Role = c.Role
		}
		for _, p := range c.Parts {
			if p == nil || p.FunctionCall == nil {
				continue
			}
			fc := p.FunctionCall
			switch {
			case len(fc.PartialArgs) > 0 || (fc.WillContinue != nil && *fc.WillContinue):
				return nil, errprefix.Errorf("%w: function call %q has streamed arguments, which this package does not assemble", ErrInvalidReply, fc.Name)
			case fc.ID != "" && s.ids[fc.ID]:
				return nil, errprefix.Errorf("%w: function call %q came twice", ErrInvalidReply, fc.ID)
			}
			calls = append(calls, dispatch.Call{ID: fc.ID, Request: tool.Request{Name: fc.Name, Arguments: argumentText(fc.Args)}})
		}
		for _, call := range calls {
			if call.ID != "" {
				if s.ids == nil {
					s.ids = map[string]bool{}
				}
				s.ids[call.ID] = true
			}
		}
		s.calls += len(calls)
		s.content.Parts = append(s.content.Parts, c.Parts...)
	} else if candidate.Content != nil && s.content == nil {
		s.content = &genai.Content{Role: genai.RoleModel}
	}
	if candidate.FinishReason != "" {
		s.finish = candidate.FinishReason
	}
	return calls, nil
}

// Turn returns the turn read, as [NewStreamTurn] returns it from every
// chunk, once the candidate finished with STOP: its calls are those Add
// returned, in order. Errors wrap [ErrInvalidReply]: a stream cut short
// (no finish reason: the turn, to be replayed, may lack its end), a
// candidate that finished for another reason (MAX_TOKENS,
// MALFORMED_FUNCTION_CALL: a call the model meant is missing), no
// candidate content, or the error Add returned.
func (s *Stream) Turn() (Turn, error) {
	switch {
	case s.err != nil:
		return Turn{}, s.err
	case s.content == nil:
		return Turn{}, errprefix.Errorf("%w: no candidate content", ErrInvalidReply)
	case s.finish == "":
		return Turn{}, errprefix.Errorf("%w: the stream ended before the candidate finished: the turn may be cut short", ErrInvalidReply)
	case s.finish != genai.FinishReasonStop:
		return Turn{}, errprefix.Errorf("%w: the candidate finished with %s: the turn is not complete", ErrInvalidReply, s.finish)
	}
	return Turn{content: s.content, n: s.calls}, nil
}
