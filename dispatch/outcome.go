package dispatch

import (
	"fmt"
	"strings"
	"time"

	"github.com/agentcontract/tool"
)

// Kind says which of the six outcomes a call had. The zero Kind is not an
// outcome; an Outcome returned by this package always has one of the
// constants below.
type Kind string

// The kinds of outcome, as in the table of the package documentation.
const (
	// KindCompleted: the tool returned an Output.
	KindCompleted Kind = "completed"
	// KindSuspended: the tool asked for input; the Outcome carries a
	// Checkpoint.
	KindSuspended Kind = "suspended"
	// KindFailed: the tool or a policy returned a *tool.Failure, a definite
	// outcome with a public Output.
	KindFailed Kind = "failed"
	// KindRejected: the arguments were refused with a *tool.InputRejection,
	// which the model can correct.
	KindRejected Kind = "rejected"
	// KindUnknownTool: the registry has no tool of the requested name.
	// Nothing ran.
	KindUnknownTool Kind = "unknown_tool"
	// KindUnknown: any other error or a panic. The call may or may not have
	// had effects.
	KindUnknown Kind = "unknown"
)

// UnknownOutcomeText is what the model sees for an Outcome of KindUnknown,
// with the tool's name in place of the verb: the same words whatever the
// private error says.
const UnknownOutcomeText = "The call to %s did not complete and its outcome is unknown."

// Outcome is what became of one call. Exactly one Kind; the fields that do
// not apply to it are zero.
//
// An Outcome is a value: its Output and Checkpoint are the Outcome's own,
// and nothing in it is shared with the Dispatcher or another Outcome. Its
// zero value is not an outcome (Kind is empty).
type Outcome struct {
	// CallID is the Call's correlation ID, as given.
	CallID string
	// Tool is the requested tool name, as given.
	Tool string
	// Kind says what happened.
	Kind Kind
	// Output is what the model sees: the tool's Output when completed, the
	// Failure's public Output when failed, and a text Output otherwise. It
	// is zero when suspended.
	Output tool.Output
	// IsError reports whether the model should read Output as an error:
	// true for failed, rejected, unknown_tool and unknown.
	IsError bool
	// Retryable reports whether running the same call again, with the same
	// IdempotencyKey, cannot repeat an effect: the kind is unknown and the
	// tool's Effect is replayable. A definite outcome is never retried by
	// the runtime; a rejected call is the model's to correct.
	Retryable bool
	// Effect is the tool's Effect; zero for an unknown tool.
	Effect tool.Effect
	// IdempotencyKey is the key the call ran with; empty when the call
	// never reached Prepare.
	IdempotencyKey tool.IdempotencyKey
	// Checkpoint is set when suspended: everything Resume needs, sealed.
	Checkpoint *Checkpoint
	// Err is the private error, for logs and never for the model: the
	// *tool.Failure (whose Cause holds the diagnostic), the
	// *tool.InputRejection, or whatever made the outcome unknown (a
	// *tool.PanicError for a panic). Nil when completed or suspended.
	Err error
	// Duration is how long the call took, from lookup to outcome.
	Duration time.Duration
	// Replayed is true for the outcome Resume or Decline returns for an
	// answer that was already claimed with the same answer, and for the
	// outcome Run returns for a key whose call ran before (see "Exactly
	// once" in the package documentation): the outcome recorded then —
	// or the one a Reconciler said the earlier attempt had, or its
	// unknown outcome —, returned without running anything. Its Err is
	// the reduced error the Store kept (see SavedOutcome).
	Replayed bool
}

// Text is the text of o.Output a text-only provider sends the model; see
// the package function Text.
func (o Outcome) Text() string { return Text(o.Output) }

// Text renders out as the text a model reads when its provider carries text
// only: what [tool.Output.Text] gives when out holds no media; otherwise the
// text blocks in order, with each media block replaced by a note on a line
// of its own ([MediaNote]), so that nothing is dropped silently. An empty
// Output renders as "".
func Text(out tool.Output) string {
	if text, ok := out.Text(); ok {
		return text
	}
	var b strings.Builder
	afterNote := false
	for _, block := range out.Content {
		if block.Kind == tool.BlockText {
			if afterNote {
				b.WriteByte('\n')
			}
			b.WriteString(block.Text)
			afterNote = false
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(MediaNote(block))
		afterNote = true
	}
	return b.String()
}

// MediaNote is the note Text writes in place of a media block:
// "[attachment image/png, 1204 bytes]" or "[attachment image/png at
// https://…]". Adapters whose format carries some media but not all use it
// for the rest.
func MediaNote(block tool.Block) string {
	if block.URI != "" {
		return fmt.Sprintf("[attachment %s at %s]", block.MediaType, block.URI)
	}
	return fmt.Sprintf("[attachment %s, %d bytes]", block.MediaType, len(block.Data))
}

// Call is one call proposed by the model, with what the runtime adds.
type Call struct {
	// ID is the provider's correlation ID for the call (tool_call_id,
	// tool_use_id, …), echoed on the Outcome and the Checkpoint. Opaque.
	ID string
	// Request is the model's proposal, untrusted.
	Request tool.Request
	// IdempotencyKey, when not empty, is the key the runtime chose for this
	// call; otherwise the Dispatcher's NewKey chooses one.
	IdempotencyKey tool.IdempotencyKey
	// Principal, when not empty, is who may answer the call if it
	// suspends: a user ID, a tenant, whatever the runtime authenticates.
	// It is sealed into the Checkpoint, and Resume and Decline refuse an
	// Answer from anyone else with ErrWrongPrincipal. At most 1024 bytes
	// of UTF-8. Never take it from the model.
	Principal string
	// Progress, when not nil, receives the progress the tool reports.
	Progress tool.ProgressReporter
	// TurnID, when not empty, is the runtime's ID of the model turn the
	// call belongs to (1 to 1024 bytes of UTF-8): when a call of a RunAll
	// whose calls carry it suspends, RunAll saves the turn under it
	// (Dispatcher.SaveTurn), so that a desk lists the calls that wait and
	// the runtime can wait for them (Dispatcher.WaitTurn). The calls of
	// one RunAll carry the same TurnID, or none. Run saves nothing.
	TurnID string
	// Scope, when not empty, is what the scope rules of Config.Rules
	// count the call in: a conversation, a user, a tenant, as the runtime
	// decides (1 to 1024 bytes of UTF-8). Never take it from the model.
	// A call without a Scope is subject to no scope rule. The
	// idempotency key of a scoped call names its event in the scope's
	// log: at most 1024 bytes.
	Scope string
}

// unknown makes o an unknown outcome caused by err.
func unknown(o Outcome, err error) Outcome {
	o.Kind, o.IsError, o.Err = KindUnknown, true, err
	o.Output = tool.NewTextOutput(fmt.Sprintf(UnknownOutcomeText, quoteName(o.Tool)))
	o.Retryable = o.Effect.Replayable()
	return o
}
