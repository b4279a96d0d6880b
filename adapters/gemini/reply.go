package toolgemini

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
	"google.golang.org/genai"
)

// mediaTypes are the media types Gemini takes inside a functionResponse
// (multimodal function responses): images and documents. Other media is
// announced in the text with [dispatch.MediaNote].
var mediaTypes = []string{"image/png", "image/jpeg", "image/webp", "application/pdf", "text/plain"}

// Results returns the user content that answers the calls of one model
// turn: one functionResponse part ([genai.Part] holding a
// [genai.FunctionResponse]) per outcome, in order, each echoing its call's
// ID ([dispatch.Outcome].CallID, possibly empty: Gemini leaves it out on
// some models) and name (o.Tool):
//
//   - completed: response {"output": …}: the text of the Output's text
//     blocks (a string), or its [tool.Output].Details when it has no
//     content (a *json.RawMessage, a copy, which the SDK sends as the JSON
//     it holds);
//   - failed, rejected, unknown_tool, unknown: response {"error": …} with
//     the text the model may see (never the private error).
//
// Inline media of the types Gemini takes in function responses (PNG, JPEG and
// WebP images, PDF and plain text documents) travels in
// [genai.FunctionResponse].Parts as inlineData, each also named in the text
// so that the model can tell which is which. Other media, and media given by
// URI (the Gemini API documents no fileData in function responses), is
// announced in the text with [dispatch.MediaNote], URI included. The content
// shares no memory with outcomes. No outcomes give a nil content.
//
// Errors wrap [ErrInvalidOutcome]: a suspended outcome (it has no result
// until resumed: resume it with [dispatch.Dispatcher.Resume] and send the
// outcome Resume returns) or the zero Outcome. Nothing is returned then.
// [Turn.Reply] does the same for the calls of a [Turn], matching outcomes
// to calls.
func Results(outcomes []dispatch.Outcome) (*genai.Content, error) {
	if len(outcomes) == 0 {
		return nil, nil
	}
	for i := range outcomes {
		if err := check(&outcomes[i]); err != nil {
			return nil, err
		}
	}
	parts, content, spare := replyParts(len(outcomes))
	for i := range outcomes {
		pr := spare
		if pr == nil {
			pr = &responsePart{}
		}
		pr.fill(&outcomes[i])
		parts[i] = &pr.part
	}
	content.Role, content.Parts = genai.RoleUser, parts
	return content, nil
}

// check refuses an outcome that has no result to render yet.
func check(o *dispatch.Outcome) error {
	switch o.Kind {
	case dispatch.KindSuspended:
		return errprefix.Errorf("%w: call %q of %s is suspended: it waits for a person; give the calls a dispatch.Call.TurnID (or save the turn with Dispatcher.SaveTurn), wait for it with Dispatcher.WaitTurn, and send its outcomes then", ErrInvalidOutcome, o.CallID, o.Tool)
	case "":
		return errprefix.Errorf("%w: outcome of call %q has no kind", ErrInvalidOutcome, o.CallID)
	}
	return nil
}

// responsePart is a part, its function response and the Details it
// carries, allocated together (the response map holds &details, which
// costs no allocation of its own, where a json.RawMessage would).
type responsePart struct {
	part     genai.Part
	response genai.FunctionResponse
	details  json.RawMessage
}

// fill renders o, which is neither suspended nor the zero Outcome, into pr.
func (pr *responsePart) fill(o *dispatch.Outcome) {
	var value any
	var media []*genai.FunctionResponsePart
	switch {
	case len(o.Output.Content) == 0 && len(o.Output.Details) > 0:
		pr.details = slices.Clone(o.Output.Details)
		value = &pr.details
	default:
		var text string
		text, media = render(o.Output)
		value = text
	}
	key := "output"
	if o.IsError {
		key = "error"
	}
	pr.response = genai.FunctionResponse{ID: o.CallID, Name: o.Tool, Response: map[string]any{key: value}, Parts: media}
	pr.part.FunctionResponse = &pr.response
}

// render writes an Output's content as text, moving the media Gemini takes
// into parts.
func render(out tool.Output) (string, []*genai.FunctionResponsePart) {
	var parts []*genai.FunctionResponsePart
	var b strings.Builder
	for _, block := range out.Content {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		switch {
		case block.Kind == tool.BlockText:
			b.WriteString(block.Text)
		case block.URI != "" || !slices.Contains(mediaTypes, block.MediaType):
			// The Gemini API does not take fileData in a function
			// response: a URI is announced, address included.
			b.WriteString(dispatch.MediaNote(block))
		default:
			parts = append(parts, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{
				Data: slices.Clone(block.Data), MIMEType: block.MediaType,
			}})
			fmt.Fprintf(&b, "[attachment %d: %s]", len(parts), block.MediaType)
		}
	}
	return b.String(), parts
}

// Reply builds the user content that answers every call of t: one
// functionResponse part per call, in the order of the calls, each from its
// outcome. Outcomes are matched to calls by ID when the call has one, and
// otherwise by name and order (the k-th call of a name without an ID takes
// the k-th outcome of that name without an ID), so the outcomes of
// [dispatch.Dispatcher.RunAll](ctx, t.Calls()) match in any order.
//
// It fails, with an error wrapping [ErrInvalidOutcome], when a call has no
// outcome, an outcome matches no call, or an outcome is suspended or the
// zero Outcome (see [Results]). A turn
// without calls has nothing to reply: Reply returns nil and no error.
func (t Turn) Reply(outcomes []dispatch.Outcome) (*genai.Content, error) {
	if t.n == 0 && len(outcomes) == 0 {
		return nil, nil
	}
	var small [8]bool
	used := small[:0]
	if len(outcomes) > len(small) {
		used = make([]bool, 0, len(outcomes))
	}
	used = used[:len(outcomes)]
	parts, content, spare := replyParts(t.n)
	for i, fc := range t.calls() {
		j := match(outcomes, used, fc)
		if j < 0 {
			return nil, errprefix.Errorf("%w: no outcome for call %d (%s, id %q)", ErrInvalidOutcome, i, fc.Name, fc.ID)
		}
		used[j] = true
		o := &outcomes[j]
		if err := check(o); err != nil {
			return nil, err
		}
		pr := spare
		if pr == nil {
			pr = &responsePart{}
		}
		pr.fill(o)
		parts[i] = &pr.part
	}
	if k := slices.Index(used, false); k >= 0 {
		return nil, errprefix.Errorf("%w: outcome of %s (id %q) answers no call of the turn", ErrInvalidOutcome, outcomes[k].Tool, outcomes[k].CallID)
	}
	content.Role, content.Parts = genai.RoleUser, parts
	return content, nil
}

// match returns the index of the first outcome not yet used that answers
// fc, or -1.
func match(outcomes []dispatch.Outcome, used []bool, fc *genai.FunctionCall) int {
	for j := range outcomes {
		if !used[j] && outcomes[j].CallID == fc.ID && outcomes[j].Tool == fc.Name {
			return j
		}
	}
	return -1
}

// replyParts returns a slice of n parts, the content that will hold them,
// and, for the common turn of one call, the part to answer it: one
// allocation then.
func replyParts(n int) ([]*genai.Part, *genai.Content, *responsePart) {
	if n == 1 {
		c := &struct {
			content genai.Content
			parts   [1]*genai.Part
			part    responsePart
		}{}
		return c.parts[:], &c.content, &c.part
	}
	return make([]*genai.Part, n), &genai.Content{}, nil
}

// Next returns the contents of the next request: history, then the model's
// content of t unchanged ([Turn.Content]), then [Turn.Reply](outcomes).
// history is not modified; the result is a new slice (whose elements are
// shared, as the SDK's are).
func (t Turn) Next(history []*genai.Content, outcomes []dispatch.Outcome) ([]*genai.Content, error) {
	reply, err := t.Reply(outcomes)
	if err != nil {
		return nil, err
	}
	next := slices.Clone(history)
	if t.content != nil {
		next = append(next, t.content)
	}
	if reply != nil {
		next = append(next, reply)
	}
	return next, nil
}
