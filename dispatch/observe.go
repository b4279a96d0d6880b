package dispatch

import (
	"context"
	"errors"
	"log/slog"

	"github.com/agentcontract/tool"
)

// Observer is a set of hooks with which a runtime observes the calls a
// [Dispatcher] runs: a tracer starts a span in CallStart and ends it in
// CallDone, a meter records each [Outcome]'s kind and duration, an audit
// log records every refused resume. It is designed as
// net/http/httptrace's ClientTrace is: every field is optional, and a nil
// field costs nothing. Set it as [Config.Observer]; [New] copies the
// struct, so changing it afterwards changes nothing.
//
// What the hooks are given is private: an Outcome's Err, its Retryable
// verdict and the refusal errors of [Dispatcher.Resume] are for logs and
// traces, never for the model. Keep what the model sees to
// [Outcome.Output].
//
// Guarantees, for every hook:
//   - it is called synchronously, on the goroutine of the call it
//     observes (the goroutine of Run, of one call of RunAll, of Resume,
//     of Decline or of Settle), so it delays that call while it runs;
//   - calls of RunAll run concurrently when [Config.MaxConcurrency] is
//     above 1, and one Dispatcher serves concurrent callers: every hook
//     must be safe for concurrent use;
//   - a hook must not panic; if one does, the panic is recovered and
//     dropped, and the call goes on as if the hook had returned (a
//     CallStart that panics leaves ctx as it was). No hook changes an
//     Outcome or an error.
type Observer struct {
	// CallStart is called when a call starts: at the start of Run (and of
	// each call of RunAll), before the tool is resolved; and in Resume
	// and Decline once the checkpoint is admitted and claimed, just before
	// the tool runs (or the decline or the recorded outcome of a replay
	// is returned). The context it returns is the one the call continues
	// with: the tool runs with it, and CallDone receives it, so a tracer
	// can put its span there. Returning nil keeps ctx. Settle, which runs
	// nothing, does not call it.
	//
	// Every CallStart is followed by exactly one CallDone for the same
	// call, on the same goroutine.
	CallStart func(ctx context.Context, info CallInfo) context.Context
	// CallDone is called with the Outcome of every call, after
	// Config.Logger's record and before the Outcome is returned. The
	// Outcome carries the kind, the private error (Outcome.Err), the
	// retry verdict (Outcome.Retryable), the duration and, when
	// suspended, the Checkpoint whose ID a later resumption carries as
	// [CallInfo.CheckpointID]. A replayed Outcome (Outcome.Replayed) ran
	// nothing. Settle calls it with context.Background(), as it has no
	// context of its own.
	CallDone func(ctx context.Context, info CallInfo, o Outcome)
	// ResumeRefused is called when Resume or Decline refuses a checkpoint
	// and runs nothing: err is the error they return, and wraps
	// [ErrInvalidCheckpoint] (an altered, forged or foreign seal, or a
	// tool no longer admitted), [ErrInvalidAnswer], [ErrExpired],
	// [ErrWrongPrincipal], [ErrAlreadyAnswered] (a refused replay: the
	// checkpoint was claimed before by another answer or a decline),
	// [ErrStore] or [ErrInvalidConfig]. Tell them apart with errors.Is.
	// No CallStart or CallDone is called for a refused checkpoint.
	//
	// The CallInfo is what the checkpoint says: when err wraps
	// ErrInvalidCheckpoint the seal may not have verified, and its
	// fields may be forged.
	ResumeRefused func(ctx context.Context, info CallInfo, err error)
	// Answered is called when a person's answer, decline or edit of a
	// checkpoint has been claimed, its call run (a decline runs
	// nothing) and its outcome recorded: once per answer, in the process
	// that claimed it, after CallDone, with that outcome (which may ask
	// again). info.TurnID names the saved turn the call belongs to, when
	// the store placed it in one: a runtime in this process that waits
	// for that turn can go on with it. A resend that replays the recorded
	// outcome does not call it again. Across processes, wait for the
	// turn instead (Dispatcher.WaitTurn).
	Answered func(ctx context.Context, info CallInfo, o Outcome)
	// RuleDecided is called once for each scope rule decided for a call
	// of Run or RunAll (see Config.Rules), between its CallStart and its
	// CallDone: after all its rules were decided and before its tool
	// runs, or before its Outcome is returned when a rule refused it. d
	// names the rule and says what it decided, and whether that refused
	// the call; a Shadow rule's denial refuses nothing. d holds no
	// argument of the call and no reason (info is the call's, as in
	// CallStart). See Rule.
	RuleDecided func(ctx context.Context, info CallInfo, d RuleDecision)
}

// Observers returns an Observer that calls each of observers' hooks in
// turn, the nil ones skipped: the OpenTelemetry adapter's and the
// runtime's own on one Dispatcher, say. Each CallStart is given the
// context the one before it returned. It copies the Observers; nil
// elements are skipped, and no Observer at all gives nil.
func Observers(observers ...*Observer) *Observer {
	var all []Observer
	for _, o := range observers {
		if o != nil {
			all = append(all, *o)
		}
	}
	if len(all) == 0 {
		return nil
	}
	return &Observer{
		CallStart: func(ctx context.Context, info CallInfo) context.Context {
			for _, o := range all {
				if o.CallStart != nil {
					ctx = watch{observer: &o}.callStart(ctx, info)
				}
			}
			return ctx
		},
		CallDone: func(ctx context.Context, info CallInfo, out Outcome) {
			for _, o := range all {
				watch{observer: &o}.callDone(ctx, info, out)
			}
		},
		ResumeRefused: func(ctx context.Context, info CallInfo, err error) {
			for _, o := range all {
				watch{observer: &o}.resumeRefused(ctx, info, err)
			}
		},
		Answered: func(ctx context.Context, info CallInfo, out Outcome) {
			for _, o := range all {
				watch{observer: &o}.answered(ctx, info, out)
			}
		},
		RuleDecided: func(ctx context.Context, info CallInfo, d RuleDecision) {
			for _, o := range all {
				watch{observer: &o}.ruleDecided(ctx, info, d)
			}
		},
	}
}

// Op says which method of a [Dispatcher] a [CallInfo] comes from.
type Op string

// The operations an [Observer] sees.
const (
	// OpRun: Run, or one call of RunAll.
	OpRun Op = "run"
	// OpResume: Resume.
	OpResume Op = "resume"
	// OpDecline: Decline.
	OpDecline Op = "decline"
	// OpSettle: Settle.
	OpSettle Op = "settle"
	// OpSupersede: Supersede, whose CallInfo names the new call's
	// idempotency key once it is chosen.
	OpSupersede Op = "supersede"
)

// CallInfo says which call an [Observer]'s hook is about. It is a value,
// given anew to each hook; it holds nothing the hook must not keep.
type CallInfo struct {
	// Op is the method observed.
	Op Op
	// CallID is the provider's correlation ID, as given (see [Call.ID]).
	CallID string
	// Tool is the requested tool name, as given; it has no length bound,
	// and comes from the model.
	Tool string
	// Arguments is the argument text of the call, as the model proposed it
	// (in Resume and Decline, as the checkpoint holds it): unchecked, with
	// no bound beyond what the runtime accepts, and as sensitive as
	// anything the model wrote. Record it only when the user asked for it.
	Arguments string
	// IdempotencyKey is the key the call runs with when it is known at
	// the time of the hook: the Call's own key in Run (empty when the
	// Dispatcher will choose one; the Outcome carries it then), the
	// checkpoint's in Resume and Decline.
	IdempotencyKey tool.IdempotencyKey
	// Principal is who may answer the call if it suspends: the Call's
	// Principal in Run, the checkpoint's in Resume and Decline.
	Principal string
	// CheckpointID is, in Resume and Decline, the ID of the checkpoint
	// answered: the same as the ID of the Checkpoint of the suspended
	// Outcome it came from, which links a resumption to its suspension.
	// Empty in Run and Settle.
	CheckpointID string
	// AnsweredBy is, in Resume and Decline, the Principal of the
	// [Answer]: who answered, as the runtime authenticated them.
	AnsweredBy string
	// TurnID is the saved turn the call belongs to: the Call's TurnID in
	// Run; in Answered, the turn the store placed the answered call in.
	// Empty when none is known.
	TurnID string
	// Reconciled is, in CallDone (and Answered), the verdict of the
	// tool's Reconciler when the call asked it what became of an
	// earlier attempt whose outcome was unknown (see Reconciler):
	// VerdictDone, VerdictNotDone or VerdictCannotTell. Empty when no
	// Reconciler was asked, and in CallStart. It says what happened to
	// the call, never what the Reconciler found out.
	Reconciled VerdictKind
}

// watch is what a Dispatcher reports its calls to: the Config's Logger
// and Observer, either of which may be nil. Its zero value reports
// nothing.
type watch struct {
	logger   *slog.Logger
	observer *Observer
}

// callStart calls the CallStart hook, if any, and returns the context the
// call goes on with.
func (w watch) callStart(ctx context.Context, info CallInfo) context.Context {
	if w.observer == nil || w.observer.CallStart == nil {
		return ctx
	}
	return w.safeCallStart(ctx, info)
}

func (w watch) safeCallStart(ctx context.Context, info CallInfo) (next context.Context) {
	next = ctx
	defer func() {
		if recover() != nil {
			next = ctx
		}
	}()
	if c := w.observer.CallStart(ctx, info); c != nil {
		next = c
	}
	return next
}

// log writes the record of one call.
func (w watch) log(ctx context.Context, o Outcome) {
	if w.logger == nil {
		return
	}
	level := slog.LevelInfo
	switch o.Kind {
	case KindFailed, KindRejected, KindUnknownTool:
		level = slog.LevelWarn
	case KindUnknown:
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String("tool", truncate(o.Tool, 128)),
		slog.String("call_id", o.CallID),
		slog.String("idempotency_key", string(o.IdempotencyKey)),
		slog.String("kind", string(o.Kind)),
		slog.Duration("duration", o.Duration),
	}
	if o.Err != nil {
		attrs = append(attrs, slog.String("error", o.Err.Error()))
		var failure *tool.Failure
		if errors.As(o.Err, &failure) && failure.Cause() != nil {
			attrs = append(attrs, slog.String("cause", failure.Cause().Error()))
		}
		var rejection *tool.InputRejection
		if errors.As(o.Err, &rejection) && rejection.Cause() != nil {
			attrs = append(attrs, slog.String("cause", rejection.Cause().Error()))
		}
	}
	w.logger.LogAttrs(ctx, level, "tool call", attrs...)
}

// callDone calls the CallDone hook, if any.
func (w watch) callDone(ctx context.Context, info CallInfo, o Outcome) {
	if w.observer == nil || w.observer.CallDone == nil {
		return
	}
	defer func() { _ = recover() }()
	w.observer.CallDone(ctx, info, o)
}

// resumeRefused calls the ResumeRefused hook, if any.
func (w watch) resumeRefused(ctx context.Context, info CallInfo, err error) {
	if w.observer == nil || w.observer.ResumeRefused == nil {
		return
	}
	defer func() { _ = recover() }()
	w.observer.ResumeRefused(ctx, info, err)
}

// answered calls the Answered hook, if any.
func (w watch) answered(ctx context.Context, info CallInfo, o Outcome) {
	if w.observer == nil || w.observer.Answered == nil {
		return
	}
	defer func() { _ = recover() }()
	w.observer.Answered(ctx, info, o)
}
