package dispatch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// Supersede replaces a suspended call with a corrected one: the person
// edited the arguments before approving. The edit is a new call, never a
// re-sealed old one. Supersede
//
//  1. opens the seal (ErrInvalidCheckpoint), checks the expiry
//     (ErrExpired) and the principal (ErrWrongPrincipal), as Resume
//     does;
//  2. chooses a new idempotency key (Config.NewKey) and admits
//     e.Arguments with Prepare like anything a model sends, without a
//     continuation: arguments the tool refuses are an error wrapping
//     ErrInvalidAnswer whose text says why, and nothing is claimed, so
//     the person may correct them again;
//  3. claims the checkpoint as superseded (Claim.Edit holds the proposed,
//     approved and executed arguments and the new key): from then on the
//     old call can be neither answered nor declined. A second Supersede
//     with the same arguments returns the outcome recorded by the first,
//     with Outcome.Replayed set; anything else is an *AnsweredError;
//  4. runs the new call, behind every middleware of its Binding, and
//     records its outcome as the claim's.
//
// The Outcome keeps the checkpoint's call ID, so that the model's call is
// answered by it (Dispatcher.Turn follows the claim to it), and carries
// the new key. The tool may ask again: then the Outcome is suspended with
// a new Checkpoint, sealed with the old one's principal. As with Resume,
// an error from step 4's record comes with the Outcome of a call that
// ran; errors before it come with the zero Outcome.
func (d *Dispatcher) Supersede(ctx context.Context, cp Checkpoint, e Edit) (Outcome, error) {
	start := time.Now()
	if err := d.needSuspension("supersedes"); err != nil {
		return Outcome{}, err
	}
	info := resumeInfo(OpSupersede, cp, Answer{Principal: e.Principal})
	_, now, err := d.admitResume(cp, Answer{Principal: e.Principal}, false)
	if err != nil {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	binding, err := d.resolveAgain(cp)
	if err != nil {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	key, err := d.newKey()
	if err != nil {
		err = errprefix.Errorf("%w: choosing an idempotency key for the edited call: %w", ErrInvalidConfig, err)
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	if key == cp.key {
		err := errprefix.Errorf("%w: Config.NewKey chose the superseded call's key %q again", ErrInvalidConfig, string(key))
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	digest, err := editSHA256(e.Arguments)
	if err != nil {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	// The edited call, admitted under key: the new one, or the key an
	// earlier claim of the same edit ran with when it runs again.
	edited := func(key tool.IdempotencyKey) (claimedCall, error) {
		request := tool.Request{Name: cp.request.Name, Arguments: e.Arguments}
		invocation, err := binding.Contract().Prepare(request, tool.Admission{IdempotencyKey: key})
		if err != nil {
			return claimedCall{}, errprefix.Errorf("%w: the edited arguments are not admitted: %s", ErrInvalidAnswer, answerProblem(err))
		}
		c := d.newClaim(cp, e.Principal, digest, now)
		c.Edit = &EditRecord{Proposed: cp.request.Arguments, Approved: e.Arguments, Executed: string(invocation.Arguments()), IdempotencyKey: key}
		info := info
		info.IdempotencyKey = key
		call := Call{ID: cp.callID, Request: request, IdempotencyKey: key, Principal: cp.principal, Progress: e.Progress}
		cc := d.toRun(cp, c, info, start, call, binding, invocation)
		run := cc.run
		cc.run = func(ctx context.Context) Outcome { return withEditNote(run(ctx), c.Edit) }
		return cc, nil
	}
	cc, err := edited(key)
	if err != nil {
		d.resumeRefused(ctx, info, err)
		return Outcome{}, err
	}
	cc.rekey = edited
	return d.claimAndRun(ctx, cc)
}

// editDomain keeps the digest of an edit apart from the digest of every
// answer, which is the SHA-256 of a JSON document.
const editDomain = "edit\x00"

// editSHA256 is the AnswerSHA256 of a superseding claim: the SHA-256 of
// editDomain and the canonical JSON of the edited arguments, so that the
// same edit sent twice is one claim. Errors wrap ErrInvalidAnswer.
func editSHA256(arguments string) (string, error) {
	v := jsontext.Value(arguments)
	if err := v.Canonicalize(jsontext.CanonicalizeRawInts(false), jsontext.CanonicalizeRawFloats(false)); err != nil {
		return "", errprefix.Errorf("%w: the edited arguments are not one JSON document: %v", ErrInvalidAnswer, err)
	}
	sum := sha256.Sum256(append([]byte(editDomain), v...))
	return hex.EncodeToString(sum[:]), nil
}

// EditedText is the note an edited call's outcome begins with, so that
// the model reads that the person changed the arguments it proposed, and
// to what, before it reads what the call did: the arguments it proposed,
// then those the call ran with, each cut to 1 KiB.
const EditedText = "The person changed the arguments of this call before it ran. You proposed: %s. It ran with: %s."

// maxEditNote bounds each set of arguments an edit's note quotes.
const maxEditNote = 1 << 10

// withEditNote returns o, the outcome of an edited call, with the note of
// e before what the tool returned. When the edited call asks again, its
// suspended Outcome carries the note alone as its Output (a suspended
// Outcome's Output is otherwise empty): the saved turn keeps it in the
// call's place, and the outcome that answers the call begins with it.
func withEditNote(o Outcome, e *EditRecord) Outcome {
	if e == nil {
		return o
	}
	note := tool.NewTextBlock(fmt.Sprintf(EditedText, truncate(e.Proposed, maxEditNote), truncate(e.Executed, maxEditNote)) + "\n")
	if o.Kind == KindSuspended {
		o.Output = tool.Output{Content: []tool.Block{note}}
		return o
	}
	o.Output = prependNote(o.Output, []tool.Block{note})
	return o
}

// prependNote returns out with note before its content. Details a
// text-only model read stay, as text after the note.
func prependNote(out tool.Output, note []tool.Block) tool.Output {
	if len(out.Content) == 0 && len(out.Details) > 0 {
		out.Content = []tool.Block{tool.NewTextBlock(string(out.Details))}
	}
	out.Content = append(slices.Clone(note), out.Content...)
	return out
}

// carryNote returns o, the outcome that takes the place of was in a saved
// turn, with the note was carries (an edited call that asked again):
// before its content when o ends the call, as its Output when o asks
// again.
func carryNote(was SavedOutcome, o Outcome) Outcome {
	if was.Kind != KindSuspended || len(was.Output.Content) == 0 {
		return o
	}
	if o.Kind == KindSuspended {
		if len(o.Output.Content) == 0 {
			o.Output = was.Output
		}
		return o
	}
	o.Output = prependNote(o.Output, was.Output.Content)
	return o
}
