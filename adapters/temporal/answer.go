package tooltemporal

import (
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Answer is the argument of the [UpdateAnswer] update, which [SendAnswer]
// sends: the answer to the suspended call that has IdempotencyKey, which
// [QueryPending] lists.
type Answer struct {
	// ID names this answer: 1 to 256 bytes of UTF-8 that its sender
	// chooses (a UUID, say) and never uses for another answer. Required.
	// Sending the same answer again under its ID is idempotent: a sender
	// that gave up waiting (no worker was running) and sends it again
	// gets the Receipt of the first, and the call resumes once. The same
	// ID with another key or response is refused.
	ID string `json:"id"`
	// IdempotencyKey names the call answered, as Pending lists it.
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
	// Response is the JSON answer; it must satisfy the input request's
	// response schema.
	Response json.RawMessage `json:"response"`
}

// maxAnswerIDBytes bounds Answer.ID.
const maxAnswerIDBytes = 256

// Receipt is what a workflow recorded of an answer it accepted:
// [SendAnswer] returns it, and [ReadReceipt] ([QueryReceipt]) tells it
// again, with the outcome of the call the answer resumed once it has one.
// It holds no answer, only its digest.
type Receipt struct {
	// AnswerID is the Answer's ID.
	AnswerID string `json:"answer_id"`
	// CallID, Tool and IdempotencyKey name the call answered.
	CallID         string              `json:"call_id,omitempty"`
	Tool           string              `json:"tool"`
	IdempotencyKey tool.IdempotencyKey `json:"idempotency_key"`
	// AnswerSHA256 is the SHA-256 of the response's canonical JSON
	// ([dispatch.AnswerSHA256]): a resend is the same answer when its
	// digest is equal.
	AnswerSHA256 string `json:"answer_sha256"`
	// AcceptedAt is when the workflow accepted the answer, in workflow
	// time.
	AcceptedAt time.Time `json:"accepted_at"`
	// Kind is the outcome of the call the answer resumed: empty while the
	// resumed call runs; [dispatch.KindSuspended] when the tool asked
	// again (the new question is pending under the same key).
	Kind dispatch.Kind `json:"kind,omitempty"`
}

// check is the validator of [UpdateAnswer]: it refuses, to the sender and
// without a trace in the history, an answer without an ID, one whose ID
// named another answer, one for no waiting call and one that breaks the
// response schema. It reads workflow state and changes nothing. Every
// refusal wraps [dispatch.ErrInvalidAnswer].
func (s *Session) check(a Answer) error {
	if a.ID == "" || len(a.ID) > maxAnswerIDBytes || !utf8.ValidString(a.ID) {
		return errprefix.Errorf("%w: an answer needs an ID of 1 to %d bytes of UTF-8", dispatch.ErrInvalidAnswer, maxAnswerIDBytes)
	}
	if r, ok := s.receipts[a.ID]; ok {
		if digest, err := dispatch.AnswerSHA256(a.Response); err != nil || r.IdempotencyKey != a.IdempotencyKey || r.AnswerSHA256 != digest {
			return errprefix.Errorf("%w: answer ID %q was used for another answer", dispatch.ErrInvalidAnswer, a.ID)
		}
		return nil // the same answer again: accept returns its receipt
	}
	w := s.find(a.IdempotencyKey)
	if w == nil {
		if id, ok := s.answered[a.IdempotencyKey]; ok {
			return errprefix.Errorf("%w: the call with idempotency key %q is not waiting: answer %q was accepted for it", dispatch.ErrInvalidAnswer, a.IdempotencyKey, id)
		}
		return errprefix.Errorf("%w: no call is waiting for an answer with idempotency key %q", dispatch.ErrInvalidAnswer, a.IdempotencyKey)
	}
	if w.checkpoint.IdempotencyKey() != w.key {
		// Never accept an answer that could not resume the call.
		return errprefix.Errorf("%w: the checkpoint of the call with idempotency key %q carries another key", dispatch.ErrInvalidAnswer, w.key)
	}
	if err := w.checkpoint.CheckAnswer(a.Response); err != nil {
		return err
	}
	_, err := dispatch.AnswerSHA256(a.Response) // the receipt's digest
	return err
}

// accept is the handler of [UpdateAnswer], run only for an answer check
// passed (and run again by every replay): the waiting call takes the
// answer and resumes, and the answer's Receipt is recorded. An answer
// accepted before gets its Receipt again and changes nothing.
func (s *Session) accept(ctx workflow.Context, a Answer) (Receipt, error) {
	if err := s.check(a); err != nil {
		return Receipt{}, err
	}
	if r, ok := s.receipts[a.ID]; ok {
		return *r, nil
	}
	digest, err := dispatch.AnswerSHA256(a.Response)
	if err != nil {
		return Receipt{}, err
	}
	w := s.find(a.IdempotencyKey)
	r := &Receipt{
		AnswerID:       a.ID,
		CallID:         w.checkpoint.CallID(),
		Tool:           w.checkpoint.Request().Name,
		IdempotencyKey: a.IdempotencyKey,
		AnswerSHA256:   digest,
		AcceptedAt:     workflow.Now(ctx).UTC(),
	}
	s.receipts[a.ID] = r
	s.answered[a.IdempotencyKey] = a.ID
	w.answer, w.receipt = slices.Clone(a.Response), r
	s.waiting = slices.DeleteFunc(s.waiting, func(x *suspension) bool { return x == w })
	return *r, nil
}

// Receipt returns the Receipt of the answer with ID answerID that this
// execution accepted, or an error wrapping [ErrUnknownAnswer]; it is also
// the [QueryReceipt] handler.
func (s *Session) Receipt(answerID string) (Receipt, error) {
	if s != nil {
		if r, ok := s.receipts[answerID]; ok {
			return *r, nil
		}
	}
	return Receipt{}, errprefix.Errorf("%w: no answer with ID %q was accepted by this run", ErrUnknownAnswer, answerID)
}

// find returns the first waiting call with key, or nil.
func (s *Session) find(key tool.IdempotencyKey) *suspension {
	for _, w := range s.waiting {
		if w.checkpoint.IdempotencyKey() == key {
			return w
		}
	}
	return nil
}
