package toolmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// resume continues a suspended call with the answers of a retry. Every
// answer claims the checkpoint (see dispatch.Dispatcher.Resume): a state
// is answered once, on any instance that shares the store, and a decline
// is final.
func (b *bridge) resume(ctx context.Context, req *mcp.CallToolRequest, principal string, progress tool.ProgressReporter) (*mcp.CallToolResult, error) {
	cp, err := b.box.open(req.Params.RequestState)
	if err != nil {
		return nil, invalidParams(err)
	}
	if err := b.d.Open(cp); err != nil {
		return nil, invalidParams(err)
	}
	if cp.Request().Name != req.Params.Name {
		return nil, invalidParams(errprefix.Errorf("%w: the request state belongs to tool %q, not %q", dispatch.ErrInvalidCheckpoint, cp.Request().Name, req.Params.Name))
	}
	answer, _ := req.Params.InputResponses[inputID].(*mcp.ElicitResult)
	for round := 1; ; round++ {
		if answer == nil {
			return nil, invalidParams(errprefix.Errorf("%w: the retry carries no elicitation result for input request %q", dispatch.ErrInvalidAnswer, inputID))
		}
		var o dispatch.Outcome
		switch answer.Action {
		case "accept":
			content, err := answerContent(req, answer, round)
			if err != nil {
				return nil, b.refused(ctx, err)
			}
			o, err = b.d.Resume(ctx, cp, dispatch.Answer{Response: content, Principal: principal, Progress: progress})
			if err != nil && o.Kind == "" {
				return nil, b.refused(ctx, err)
			}
			if err != nil {
				b.logStoreFailure(ctx, o, err)
			}
		case "decline":
			o, err = b.d.Decline(ctx, cp, dispatch.Answer{Principal: principal})
			if err != nil && o.Kind == "" {
				return nil, b.refused(ctx, err)
			}
			if err != nil {
				b.logStoreFailure(ctx, o, err)
			}
		default:
			// Dismissed without a choice ("cancel", or anything else):
			// not a claim. The state stays answerable until it expires.
			return dismissed(cp.Request().Name), nil
		}
		if o.Kind != dispatch.KindSuspended || !legacy(req.Session) {
			return b.result(ctx, req, o)
		}
		// A client before multi-round-trip requests cannot retry with a
		// second answer: ask it here, as the SDK asked the first time.
		if round >= maxLegacyRounds {
			return b.notContinued(ctx, o, fmt.Sprintf("asked more than %d questions in one call", maxLegacyRounds), nil), nil
		}
		params, res := b.form(ctx, req, o)
		if res != nil {
			return res, nil
		}
		answer, err = req.Session.Elicit(ctx, params)
		if err != nil {
			return nil, err
		}
		cp = *o.Checkpoint
	}
}

// answerContent is the JSON text of an accepted answer: the bytes the
// client sent when HTTPHandler kept them (the first round only: later
// rounds are asked by the bridge itself), or else the SDK's decoded
// content, re-encoded once checkDecoded found nothing it may have
// changed. An absent content is the empty object.
func answerContent(req *mcp.CallToolRequest, answer *mcp.ElicitResult, round int) ([]byte, error) {
	if round == 1 {
		raw, found, err := rawAnswer(req)
		if err != nil {
			return nil, err
		}
		if found {
			if raw == nil {
				return []byte("{}"), nil
			}
			return raw, nil
		}
	}
	if answer.Content == nil {
		return []byte("{}"), nil
	}
	if err := checkDecoded(map[string]any(answer.Content), ""); err != nil {
		return nil, err
	}
	content, err := json.Marshal(answer.Content)
	if err != nil {
		return nil, errprefix.Errorf("%w: the answer could not be encoded: %v", dispatch.ErrInvalidAnswer, err)
	}
	return content, nil
}

// refused is the JSON-RPC error for a retry that Resume or Decline
// refused before anything ran. A state that was answered before is
// refused with the recorded outcome's kind in the message; the client
// learns what happened, never the private error.
//
// A refusal for the wrong principal is worded here, not relayed: the
// client is not told whose call it is, nor who it was taken for.
func (b *bridge) refused(ctx context.Context, err error) error {
	var answered *dispatch.AnsweredError
	if errors.As(err, &answered) && b.logger != nil {
		b.logger.WarnContext(ctx, "tool call answered again", "tool", answered.Claim.Tool, "checkpoint", answered.Claim.CheckpointID, "error", err.Error())
	}
	if errors.Is(err, dispatch.ErrWrongPrincipal) {
		if b.logger != nil {
			b.logger.WarnContext(ctx, "tool call answer refused", "error", err.Error())
		}
		return invalidParams(errNotThisPrincipal)
	}
	return invalidParams(err)
}

// errNotThisPrincipal is what a client whose answer came from the wrong
// principal is told: no principal is named.
var errNotThisPrincipal = errprefix.Errorf("%w: the request state may not be answered by the principal of this request", dispatch.ErrWrongPrincipal)

// logStoreFailure logs an outcome the store could not record: the call ran
// and its result is sent; a resend of the same answer will be refused.
func (b *bridge) logStoreFailure(ctx context.Context, o dispatch.Outcome, err error) {
	if b.logger != nil {
		b.logger.ErrorContext(ctx, "tool call outcome not recorded", "tool", o.Tool, "idempotency_key", string(o.IdempotencyKey), "error", err.Error())
	}
}

// dismissed is the result of a call whose request for input was dismissed
// without a choice ("cancel", or any action but accept and decline). The
// tool is not continued, and the state is not claimed: the same request
// may still be answered until it expires.
func dismissed(name string) *mcp.CallToolResult {
	text := fmt.Sprintf("The person dismissed the request for input of %s; the call was not continued.", name)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}
