package dispatch

import (
	"crypto/sha256"
	"fmt"
	"hash"
	"strconv"
	"unsafe"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/contractschema"
	"github.com/agentcontract/tool/internal/engine"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ErrInvalidStream: the stream of one call's arguments does not hold
// together: the text its completion event carries is not the text its
// deltas made, or text came after its end. Nothing of such a call may
// run; a provider adapter reports it as an invalid reply.
var ErrInvalidStream = errprefix.New("invalid argument stream")

// Stream checks the argument text of one tool call while a model writes
// it, delta by delta, and refuses it as soon as the text cannot become
// arguments [tool.Contract.Prepare] admits: see "Streaming admission" in
// the package documentation. A Stream never admits: a call is admitted by
// Prepare (through [Dispatcher.Run]) on its whole text, once the
// provider's own completion event for the call has come, and never on a
// prefix that happens to parse.
//
// Write gives it the deltas in order; End or EndWith says that the call's
// completion event came. A Stream keeps none of the text: only a digest of
// it, to compare with the text a completion event carries, and the state
// of the check, whose memory does not grow with the text.
//
// A Stream is made by [NewStream]; the zero Stream checks nothing and
// accepts no end. It is not safe for concurrent use.
type Stream struct {
	name   string
	feed   *engine.Feed // nil once ended or refused, or when nothing is checked
	digest hash.Hash    // of every byte written
	n      int
	err    error // the refusal
	ended  bool
}

// NewStream returns the Stream of a call of the tool named name in
// registry, checked against the input schema of the tool's contract. A
// call of a tool the registry does not hold (and any call, with a nil
// registry) is not checked, only digested: [Dispatcher.Run] reports it as
// an unknown tool, whatever its arguments. An adapter passes a nil
// registry for a tool whose arguments it rewrites before Prepare (a null
// that strict mode made the model send for an absent member), which the
// schema would otherwise refuse.
func NewStream(registry *tool.Registry, name string) *Stream {
	s := &Stream{name: name, digest: sha256.New()}
	if binding, ok := registry.Resolve(name); ok {
		if schema := contractschema.Input(binding.Contract()); schema != nil {
			s.feed = schema.Feed()
		}
	}
	return s
}

// Name returns the tool name the Stream checks arguments for.
func (s *Stream) Name() string { return s.name }

// Len returns the number of bytes written.
func (s *Stream) Len() int { return s.n }

// Err returns the refusal of the arguments, or nil while they may still
// be admitted.
func (s *Stream) Err() error { return s.err }

// Write reads the next delta of the arguments, and returns len(delta)
// and the refusal, if the text can no longer be admitted: an
// [*tool.InputRejection], as Prepare would return for the whole text,
// whose Message says what is wrong and where (a JSON pointer, and the
// byte at which it was refused). Once refused, every later delta returns
// the same refusal and is no longer checked, only digested. Text longer
// than [tool.MaxInputBytes] is refused at its first byte beyond. After
// End or EndWith, Write returns an error wrapping [ErrInvalidStream].
// The delta is not retained.
func (s *Stream) Write(delta []byte) (int, error) {
	if s.ended || s.digest == nil {
		return 0, errprefix.Errorf("%w: arguments of %q written after the end of the call", ErrInvalidStream, s.name)
	}
	s.digest.Write(delta)
	before := s.n
	s.n += len(delta)
	if s.feed == nil {
		return len(delta), s.err
	}
	room := max(tool.MaxInputBytes-before, 0)
	if r := s.feed.Write(delta[:min(room, len(delta))]); r != nil {
		s.refuse(s.rejection(r))
	} else if s.n > tool.MaxInputBytes {
		s.refuse(s.reject("arguments of %q are more than the limit of %d bytes (refused at byte %d)", s.name, tool.MaxInputBytes, tool.MaxInputBytes))
	}
	return len(delta), s.err
}

// WriteString is Write of a string.
func (s *Stream) WriteString(delta string) (int, error) {
	return s.Write(readOnly(delta))
}

// End says that the call's completion event came and carries no text of
// its own (the deltas are the arguments): the text written is complete.
// It returns the refusal, if any, now that the text is whole; nil means
// only that the call may go to Prepare. A second end is an error wrapping
// [ErrInvalidStream].
func (s *Stream) End() error {
	if s.ended || s.digest == nil {
		return errprefix.Errorf("%w: the call of %q ended twice", ErrInvalidStream, s.name)
	}
	s.ended = true
	if s.feed != nil {
		if r := s.feed.End(); r != nil {
			s.refuse(s.rejection(r))
		} else {
			s.release()
		}
	}
	return s.err
}

// EndWith is End for a completion event that carries the call's whole
// argument text, which must be the text the deltas made, byte for byte:
// otherwise two sources of the same arguments disagree, and the error
// wraps [ErrInvalidStream] (the call must not run, whatever either text
// says). Arguments is not retained.
func (s *Stream) EndWith(arguments string) error {
	if !s.ended && s.digest != nil && (len(arguments) != s.n || string(s.digest.Sum(nil)) != string(sum(arguments))) {
		s.ended = true
		s.release()
		return errprefix.Errorf("%w: the completion event of the call of %q carries %d bytes of arguments that differ from the %d bytes its deltas made", ErrInvalidStream, s.name, len(arguments), s.n)
	}
	return s.End()
}

// readOnly returns the bytes of s without copying them; they are only
// read.
func readOnly(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}

func sum(text string) []byte {
	d := sha256.Sum256(readOnly(text))
	return d[:]
}

// refuse records the refusal of the arguments; nothing more is checked.
func (s *Stream) refuse(err error) {
	s.err = err
	s.release()
}

func (s *Stream) release() {
	if s.feed != nil {
		s.feed.Release()
		s.feed = nil
	}
}

// rejection words the refusal r of the engine as Prepare words the
// refusal of the same text, with the byte at which it was refused.
func (s *Stream) rejection(r *engine.Refusal) error {
	switch {
	case r.Syntax != nil:
		return s.reject("arguments of %q are not valid JSON %v", s.name, r.Syntax)
	case r.NotObject:
		return s.reject("arguments of %q must be a JSON object (refused at byte %d)", s.name, r.Offset)
	case r.Costly:
		return s.reject("arguments of %q cost too much to check against its input schema %s", s.name, r.Message)
	}
	return s.reject("arguments of %q do not match its input schema %s (refused at byte %d)", s.name, r.Message, r.Offset)
}

// reject makes the rejection Prepare would make of the message.
func (s *Stream) reject(format string, args ...any) error {
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: engine.OneLine(fmt.Sprintf(format, args...))})
	if err != nil {
		return errprefix.Errorf("%w: %w", tool.ErrInvalidInvocation, err) // never: the message is not empty
	}
	return r
}

// RefusedCall is the error a provider adapter's stream returns for a call
// refused while its arguments were still streaming: the call as far as it
// came (its ID, its tool's name, and the argument text received so far,
// where the adapter keeps it), and the refusal, an [*tool.InputRejection]
// that [tool.ClassifyInputRejection] finds through it, as it would in
// Prepare's error. The call can never be admitted, whatever follows: a
// runtime may stop the model's stream and answer the call with the
// refusal ([Dispatcher.Settle] of Call and Err makes the rejected
// Outcome), or read the stream to its end and run the call, which Prepare
// then refuses.
type RefusedCall struct {
	Call Call
	Err  error
}

// Error says which call was refused, and why.
func (e *RefusedCall) Error() string { return errprefix.Message(e) }

// errorBody is the text of Error without its "tool: " prefix, as another
// error of this project quotes e.
func (e *RefusedCall) errorBody() string {
	if e == nil {
		return errprefix.Body(tool.ErrInvalidInvocation)
	}
	message := ""
	if r, ok := tool.ClassifyInputRejection(e.Err); ok {
		message = r.Message()
	} else if e.Err != nil {
		message = errprefix.Body(e.Err)
	}
	return errprefix.Body(tool.ErrInvalidInvocation) + ": call " + strconv.Quote(e.Call.ID) + " refused while its arguments streamed: " + message
}

// Unwrap returns the refusal.
func (e *RefusedCall) Unwrap() error {
	if e == nil {
		return nil
	}
	return e.Err
}
