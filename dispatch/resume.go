package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Answer is a person's answer to a suspended call, with what the runtime
// knows about who gave it.
type Answer struct {
	// Response is the JSON answer to the checkpoint's input request; it
	// must satisfy the request's response schema. Decline ignores it.
	Response json.RawMessage
	// Principal is who answers, as the runtime authenticated them (never
	// as the model or the answer's sender claims). A checkpoint that names
	// a principal accepts only an Answer with the same one. It is
	// recorded in the claim for the audit. At most 1024 bytes of UTF-8.
	Principal string
	// Progress, when not nil, receives the progress the resumed tool
	// reports.
	Progress tool.ProgressReporter
	// Record keeps Response itself in the claim (Claim.Response), not
	// only its digest, so that an audit shows what the person answered.
	// Leave it false when answers may hold what a log must not.
	Record bool
}

// DeclinedText is what the model sees for a call the person declined,
// with the tool's name in place of the verb.
const DeclinedText = "The person declined the call to %s."

// Resume continues a suspended call with a person's answer, in this
// process or another, once: the first answer claims the checkpoint.
//
// The order of a resume, the same on every replica:
//
//  1. open the seal (see Open): an edited, forged or foreign checkpoint
//     is refused with ErrInvalidCheckpoint;
//  2. check a.Response against the response schema: ErrInvalidAnswer,
//     with the reason. The claim is not used up: the person can correct
//     the answer and send it again;
//  3. check the expiry on this process's clock (Config.Clock):
//     ErrExpired; a checkpoint issued more than MaxClockSkew in this
//     clock's future is ErrInvalidCheckpoint;
//  4. check the principal: a checkpoint that names one accepts only an
//     Answer with the same Principal: ErrWrongPrincipal;
//  5. admit the call again (its tool must still be in the registry, with
//     the same name, schemas and effect; a description may have
//     changed): ErrInvalidCheckpoint;
//  6. claim the checkpoint's ID in the Store, with the SHA-256 of the
//     answer's canonical JSON and a fresh nonce. A Store that fails or is
//     full refuses the resume with ErrStore. If the ID was claimed before:
//     - with another answer, or declined, it returns an *AnsweredError
//     (ErrAlreadyAnswered) carrying the recorded claim and outcome;
//     - with the same answer and a recorded outcome, Resume returns that
//     outcome, with Outcome.Replayed set, and runs nothing (a client
//     that lost the response learns what happened);
//     - with the same answer and no outcome recorded, see "Uncertain
//     paths" below;
//  7. run the call with the same idempotency key;
//  8. record the outcome with Store.Finish.
//
// Steps 1 to 6 run nothing; an error there comes with the zero Outcome.
// The Outcome may be suspended again, with a new Checkpoint of its own.
//
// # Uncertain paths
//
// The claim is written, and the claimed call runs and is recorded, on a
// context detached from ctx: a request that ends after step 5 (a closed
// tab, a dropped connection, a client's retry, a deadline) neither
// strands the claim nor cancels the approved call. A ctx that ended
// before step 6 claims nothing. The claim's write and the outcome's record
// are bounded by a minute each, the call by Config.CallTimeout (none when
// it is 0); Resume returns when the call has ended and its outcome was
// recorded or not.
//
// The claim's result is what the Store holds (see Store.Claim): a resume
// told that its claim failed ran nothing, and the checkpoint can be
// answered again.
//
// The claim is the call's record (see Claim and State): written running,
// with this Dispatcher's lease (Config.Lease), in the one write that
// claims it just before the tool starts (a decline's is written
// claimed: nothing starts), its lease renewed while the tool runs, and
// finished with the outcome. When step 8 fails, the call ran: Resume
// returns its Outcome together with an error wrapping ErrStore, and this
// Dispatcher keeps the Outcome. A resend of the same answer, the record
// still without an outcome, then gets:
//   - while the call still runs in this process: an *AnsweredError that
//     says so, and no Outcome. Once its tool has returned, the resend
//     waits, a minute at most, for the outcome to be written: it then
//     gets that outcome, as replayed, or, when the write failed, what
//     follows;
//   - when it ran in this process and its outcome was kept: the outcome,
//     recorded now, as replayed (or ErrStore again while the Store still
//     fails);
//   - in another process, while the lease of the process that holds the
//     call has not ended: an *AnsweredError that says until when, and no
//     Outcome;
//   - once the lease has ended (the process died, lost its store, or
//     kept an outcome it could not record), recovery, in whichever
//     process the resend reaches: a call whose record is still claimed
//     provably never started, and is started now; a running one is
//     reconciled first — its tool's Reconciler (Config.Reconcilers),
//     when it has one, is asked what became of it: done finishes the
//     record with the output it gives, marked as reconciled, and runs
//     nothing; not done runs the call again under the same key —;
//     without a verdict either way, it is run again under the same
//     idempotency key when its tool's Effect makes a replay under its
//     key safe (tool.EffectSafe, tool.EffectIdempotent) and its outcome
//     recorded (when two are, the first stands, and both callers get
//     it); any other is recorded unknown, and that unknown outcome
//     returned: it is never run again silently, nor reported completed,
//     and the runtime finds out from the backend or a person what
//     happened. A resend of an answer whose call was recorded unknown
//     asks the tool's Reconciler again, when it has one (and otherwise
//     returns the unknown outcome recorded). Of two processes that
//     recover one call at once, one does; the other is told as above.
//     Lister.Stranded lists the calls that wait for such a resend.
//
// The outcome of an answered call takes the place of the checkpoint it
// answered in the saved turn that listed it (Claim.TurnID): a new
// question is then pending there, and whoever waits for the turn
// (WaitTurn) is woken. Two calls of one turn answered at once both keep
// theirs (the turn is saved at the version it was read at, and read
// again when another save came in between). An error of that save comes
// with the Outcome, wrapping ErrStore; a resend places it again.
// Config.Observer's Answered hook is called once the outcome is
// recorded.
//
// A double submit (the same answer twice while the first request is
// alive) runs the call once: the second gets the *AnsweredError of a call
// that still runs, or, once the outcome is recorded, the outcome.
func (d *Dispatcher) Resume(ctx context.Context, cp Checkpoint, a Answer) (Outcome, error) {
	start := time.Now()
	if err := d.needSuspension("resumes"); err != nil {
		return Outcome{}, err
	}
	info := resumeInfo(OpResume, cp, a)
	binding, invocation, now, digest, err := d.admitAnswer(cp, a)
	if err != nil {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	c := d.newClaim(cp, a.Principal, digest, now)
	if a.Record {
		c.Response = slices.Clone(a.Response)
	}
	call := Call{ID: cp.callID, Request: cp.request, IdempotencyKey: cp.key, Principal: cp.principal, Progress: a.Progress}
	return d.claimAndRun(ctx, d.toRun(cp, c, info, start, call, binding, invocation))
}

// toRun is the claimed call that runs call, admitted as invocation of
// binding, once cp is claimed with c. A call whose outcome was lost runs
// again when the tool's Effect makes a replay under its key safe.
func (d *Dispatcher) toRun(cp Checkpoint, c Claim, info CallInfo, start time.Time, call Call, binding tool.Binding, invocation tool.Invocation) claimedCall {
	effect := binding.Contract().Effect()
	arguments := jsontext.Value(invocation.Arguments())
	_ = arguments.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)) // admitted: it canonicalizes
	return claimedCall{cp: cp, claim: c, info: info, start: start, effect: effect, key: call.IdempotencyKey, runsTool: true, redo: effect.Replayable(),
		binding: binding, arguments: arguments,
		run: func(ctx context.Context) Outcome {
			o := Outcome{CallID: call.ID, Tool: call.Request.Name, Effect: effect, IdempotencyKey: call.IdempotencyKey}
			result, _, err := d.callTool(ctx, binding, invocation, call.Progress, nil)
			return d.settle(o, call, result, err)
		},
	}
}

// admitAnswer runs the steps of Resume before the claim: the seal, the
// answer, the time, the principal and the admission. It returns the
// tool's binding, the call admitted again, the time the expiry was judged
// at and the digest of the answer.
func (d *Dispatcher) admitAnswer(cp Checkpoint, a Answer) (tool.Binding, tool.Invocation, time.Time, string, error) {
	continuation, now, err := d.admitResume(cp, a, true)
	if err != nil {
		return tool.Binding{}, tool.Invocation{}, time.Time{}, "", err
	}
	binding, err := d.resolveAgain(cp)
	if err != nil {
		return tool.Binding{}, tool.Invocation{}, time.Time{}, "", err
	}
	invocation, err := binding.Contract().Prepare(cp.request, tool.Admission{IdempotencyKey: cp.key, Continuation: &continuation})
	if err != nil {
		return tool.Binding{}, tool.Invocation{}, time.Time{}, "", errprefix.Errorf("%w: the call is no longer admitted: %w", ErrInvalidCheckpoint, err)
	}
	digest, err := AnswerSHA256(a.Response)
	if err != nil {
		return tool.Binding{}, tool.Invocation{}, time.Time{}, "", err
	}
	return binding, invocation, now, digest, nil
}

// admitResume runs steps 1 to 4 of Resume, which ask neither the registry
// nor the Store: the seal, the answer when answered (Decline and
// Supersede carry none), the time and the principal. It returns the
// continuation (when answered) and the time it judged the expiry at. The
// principal is checked before the tool is looked up, so that someone
// other than the checkpoint's principal learns nothing of the registry.
func (d *Dispatcher) admitResume(cp Checkpoint, a Answer, answered bool) (tool.Continuation, time.Time, error) {
	if err := d.Open(cp); err != nil {
		return tool.Continuation{}, time.Time{}, err
	}
	var continuation tool.Continuation
	if answered {
		var err error
		if continuation, err = cp.continuation(a.Response); err != nil {
			return tool.Continuation{}, time.Time{}, err
		}
	}
	now := d.clock()
	if err := d.checkTime(cp, now); err != nil {
		return tool.Continuation{}, time.Time{}, err
	}
	if err := checkAnswerer(cp, a.Principal); err != nil {
		return tool.Continuation{}, time.Time{}, err
	}
	return continuation, now, nil
}

// checkAnswerer refuses an answer from someone other than the principal
// the checkpoint names.
func checkAnswerer(cp Checkpoint, principal string) error {
	if err := checkPrincipal(principal); err != nil {
		return errprefix.Errorf("%w: %v", ErrWrongPrincipal, err)
	}
	if cp.principal != "" && principal != cp.principal {
		return errprefix.Errorf("%w: checkpoint %s may not be answered by this principal", ErrWrongPrincipal, cp.id)
	}
	return nil
}

// resolveAgain looks the tool of cp up in the registry again, for the
// call that answering or editing it runs: ErrInvalidCheckpoint when the
// registry no longer has it.
func (d *Dispatcher) resolveAgain(cp Checkpoint) (tool.Binding, error) {
	binding, ok := d.registry.Resolve(cp.request.Name)
	if !ok {
		return tool.Binding{}, errprefix.Errorf("%w: no tool named %s in the registry", ErrInvalidCheckpoint, quoteName(cp.request.Name))
	}
	return binding, nil
}

// newClaim returns the claim of cp by principal with digest at now: the
// record of the call, with the digests of its contract and arguments
// that the checkpoint's stamp carries.
func (d *Dispatcher) newClaim(cp Checkpoint, principal, digest string, now time.Time) Claim {
	stamp, _ := readStamp(cp.inputRequest)
	return Claim{
		CheckpointID:    cp.id,
		CallID:          cp.callID,
		Tool:            cp.request.Name,
		IdempotencyKey:  cp.key,
		Principal:       principal,
		SealedPrincipal: cp.principal,
		ContractSHA256:  stamp.ContractSHA256,
		ArgumentsSHA256: stamp.ArgumentsSHA256,
		Declined:        digest == DeclineSHA256,
		AnswerSHA256:    digest,
		ClaimedAt:       now.UTC(),
		ExpiresAt:       cp.expiresAt,
	}
}

// Decline records that the person declined the suspended call: a claim,
// like an answer, so the checkpoint can never be answered afterwards, and
// a final outcome the model sees. The outcome is KindFailed with a
// *tool.Failure of kind rejected (the call was refused permission, as a
// Guard refuses one) whose public text is DeclinedText with the tool's
// name; the tool does not run and sees nothing more of the call.
//
// Decline checks, in order, the seal (ErrInvalidCheckpoint), the expiry
// (ErrExpired), the principal (ErrWrongPrincipal) and the claim, as
// Resume does; a.Response and a.Progress are ignored. Declining again
// returns the recorded outcome with Outcome.Replayed set (a decline whose
// outcome the Store did not record is recorded then, by any process:
// nothing runs either way); declining a
// checkpoint that was answered is an *AnsweredError. The tool need not
// be in the registry any more.
//
// A request that was dismissed without a choice (MCP's "cancel", a
// closed window) is not a decline: do not call Decline, and the
// checkpoint stays answerable until it expires.
func (d *Dispatcher) Decline(ctx context.Context, cp Checkpoint, a Answer) (Outcome, error) {
	if err := d.needSuspension("declines"); err != nil {
		return Outcome{}, err
	}
	info := resumeInfo(OpDecline, cp, a)
	_, now, err := d.admitResume(cp, a, false)
	if err != nil {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	return d.claimAndRun(ctx, claimedCall{cp: cp, claim: d.newClaim(cp, a.Principal, DeclineSHA256, now), info: info, start: time.Now(), key: cp.key, redo: true,
		run: func(context.Context) Outcome { return d.declined(cp, a.Principal) },
	})
}

// declined is the outcome of cp's call declined by principal.
func (d *Dispatcher) declined(cp Checkpoint, principal string) Outcome {
	o := Outcome{CallID: cp.callID, Tool: cp.request.Name, Kind: KindFailed, IsError: true, IdempotencyKey: cp.key}
	if b, ok := d.registry.Resolve(cp.request.Name); ok {
		o.Effect = b.Contract().Effect()
	}
	o.Output = tool.NewTextOutput(fmt.Sprintf(DeclinedText, quoteName(cp.request.Name)))
	failure, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindRejected, Output: o.Output, Cause: &declinedError{principal: principal}})
	if err != nil {
		return unknown(o, err)
	}
	o.Err = failure
	return o
}

// resumeInfo is the CallInfo of a resume or decline of cp answered by a.
func resumeInfo(op Op, cp Checkpoint, a Answer) CallInfo {
	return CallInfo{
		Op:             op,
		CallID:         cp.callID,
		Tool:           cp.request.Name,
		Arguments:      cp.request.Arguments,
		IdempotencyKey: cp.key,
		Principal:      cp.principal,
		CheckpointID:   cp.id,
		AnsweredBy:     a.Principal,
	}
}

// Open verifies the seal of cp with this Dispatcher's keys. It is what
// Resume checks first; a runtime may call it on its own before it shows a
// checkpoint's prompt to a person. Errors wrap ErrInvalidCheckpoint.
func (d *Dispatcher) Open(cp Checkpoint) error {
	if err := d.needSuspension("opens"); err != nil {
		return err
	}
	return d.open(cp)
}

// needSuspension returns nil when d has a suspension layer, and otherwise the
// error of a method that needs one: verb is what it does ("resumes").
func (d *Dispatcher) needSuspension(verb string) error {
	switch {
	case d == nil || d.registry == nil:
		return errprefix.Errorf("%w: the zero Dispatcher %s nothing", ErrInvalidConfig, verb)
	case d.suspension == nil:
		return errprefix.Errorf("%w: this Dispatcher was made of a registry alone, without a Store and seal keys: it %s no checkpoint", ErrInvalidConfig, verb)
	}
	return nil
}
