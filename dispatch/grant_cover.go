package dispatch

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// grantLayer is a dispatcher's grants (Config.Grants); nil without them.
type grantLayer struct {
	store  GrantStore
	maxTTL time.Duration

	mu sync.Mutex
	// compiled holds the predicates compiled so far, by their SHA-256:
	// the zero Schema for one the engine refuses. Cleared when full.
	compiled map[[sha256.Size]byte]tool.Schema
}

// maxCompiled bounds the predicates a dispatcher keeps compiled.
const maxCompiled = 1024

// maxCoveringGrants bounds how many live grants of one principal, tool
// and contract a call that asks is checked against: the oldest first.
const maxCoveringGrants = 64

// newGrantLayer checks the grants' part of a Config: a GrantStore only
// on a dispatcher with a suspension layer (s), and a MaxGrantTTL in
// range. It returns nil, nil for a Config without Grants.
func newGrantLayer(config Config, s *suspension) (*grantLayer, error) {
	has := config.Grants != nil && !isTypedNil(config.Grants)
	switch {
	case !has && config.MaxGrantTTL == 0:
		return nil, nil
	case !has:
		return nil, errprefix.Errorf("%w: MaxGrantTTL is set but Grants is nil", ErrInvalidConfig)
	case s == nil:
		return nil, errprefix.Errorf("%w: Grants without a Store and seal keys: a grant answers calls that suspend, and only the suspension layer suspends them", ErrInvalidConfig)
	case config.MaxGrantTTL < 0 || config.MaxGrantTTL > MaxCheckpointTTL:
		return nil, errprefix.Errorf("%w: MaxGrantTTL is %s, want 0 (the default) to MaxCheckpointTTL (%s)", ErrInvalidConfig, config.MaxGrantTTL, MaxCheckpointTTL)
	}
	return &grantLayer{store: config.Grants, maxTTL: cmp.Or(config.MaxGrantTTL, DefaultMaxGrantTTL)}, nil
}

// ttl returns how long a grant asked to last ttl lasts: the maximum for
// 0 or more than it.
func (l *grantLayer) ttl(ttl time.Duration) (time.Duration, error) {
	if ttl < 0 {
		return 0, errprefix.Errorf("%w: a TTL of %s, want 0 (the longest) or more", ErrInvalidGrant, ttl)
	}
	if ttl == 0 || ttl > l.maxTTL {
		return l.maxTTL, nil
	}
	return ttl, nil
}

// schema returns the compiled predicate, and false for one the engine
// refuses (a store's record that no Dispatcher made).
func (l *grantLayer) schema(predicate json.RawMessage) (tool.Schema, bool) {
	key := sha256.Sum256(predicate)
	l.mu.Lock()
	s, ok := l.compiled[key]
	l.mu.Unlock()
	if !ok {
		s, _ = compilePredicate(predicate)
		l.mu.Lock()
		if l.compiled == nil || len(l.compiled) >= maxCompiled {
			l.compiled = map[[sha256.Size]byte]tool.Schema{}
		}
		l.compiled[key] = s
		l.mu.Unlock()
	}
	return s, s.Valid()
}

// cover answers asked, the outcome of call admitted as invocation, with a
// live grant when one covers it: the hook of the suspension layer, where
// a call is about to return suspended with its sealed checkpoint. The
// first live grant (oldest first) for the checkpoint's principal, tool
// and contract whose predicate accepts the admitted arguments and whose
// answer passes the response schema has one use spent (atomically, with
// its receipt), and the call is answered with that answer through the
// claim Resume makes, which records the grant's ID. Without such a grant,
// or when anything on the way fails, asked is returned: the call asks. A
// replayed outcome (the same key run again) was covered, or asked, the
// first time, and is returned as it is.
func (d *Dispatcher) cover(ctx context.Context, call Call, invocation tool.Invocation, asked Outcome) Outcome {
	if d.grants == nil || asked.Replayed || asked.Kind != KindSuspended || asked.Checkpoint == nil || asked.Checkpoint.principal == "" || ctx.Err() != nil {
		return asked
	}
	cp := *asked.Checkpoint
	st, err := readStamp(cp.inputRequest)
	if err != nil || st.ContractSHA256 == "" {
		return asked
	}
	args := invocation.Arguments()
	now := d.clock()
	gs, err := d.grants.store.Grants(ctx, GrantQuery{Principal: cp.principal, Tool: cp.request.Name, ContractSHA256: st.ContractSHA256, LiveAt: now, Limit: maxCoveringGrants})
	if err != nil {
		d.grantWarn(ctx, "grants not listed; the call asks", cp, "", err)
		return asked
	}
	for _, g := range gs {
		if g.Principal != cp.principal || g.Tool != cp.request.Name || g.ContractSHA256 != st.ContractSHA256 || !g.Live(now) {
			continue
		}
		schema, ok := d.grants.schema(g.Predicate)
		if !ok || schema.Validate(args) != nil || cp.CheckAnswer(g.Answer) != nil {
			continue
		}
		spent, err := d.spend(ctx, g, cp, args, now)
		switch {
		case errors.Is(err, ErrGrantNotLive):
			continue // another call took its last use, or it was revoked
		case err != nil:
			d.grantWarn(ctx, "grant not spent; the call asks", cp, g.ID, err)
			return asked
		}
		return d.answerWith(ctx, call, cp, spent, asked)
	}
	return asked
}

// spend takes one use of g for the call of cp, with its receipt.
func (d *Dispatcher) spend(ctx context.Context, g Grant, cp Checkpoint, args []byte, now time.Time) (Grant, error) {
	r, err := d.receipt(Receipt{Kind: ReceiptSpent, At: now, GrantID: g.ID, CheckpointID: cp.id, CallID: cp.callID,
		Principal: cp.principal, Tool: cp.request.Name, Arguments: string(args)})
	if err != nil {
		return Grant{}, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	return d.grants.store.SpendGrant(wctx, g.ID, now, r)
}

// answerWith answers the checkpoint of asked, the outcome of call, with
// the answer of g, whose use for it was spent: the steps of Resume, with
// a claim that records the grant. A claim that runs nothing returns
// asked: the call asks, and the use is lost (its receipt says which call
// it was spent on).
func (d *Dispatcher) answerWith(ctx context.Context, call Call, cp Checkpoint, g Grant, asked Outcome) Outcome {
	start := time.Now()
	a := Answer{Response: g.Answer, Principal: cp.principal, Progress: call.Progress, Record: true}
	info := resumeInfo(OpGrant, cp, a)
	info.AnsweredBy, info.TurnID = g.GrantedBy, call.TurnID
	binding, invocation, now, digest, err := d.admitAnswer(cp, a)
	if err != nil {
		d.grantWarn(ctx, "the grant's answer was not admitted; the call asks", cp, g.ID, err)
		return asked
	}
	c := d.newClaim(cp, g.GrantedBy, digest, now)
	c.Response, c.GrantID = slices.Clone(g.Answer), g.ID
	resumed := Call{ID: cp.callID, Request: cp.request, IdempotencyKey: cp.key, Principal: cp.principal, Progress: call.Progress}
	o, err := d.claimAndRun(ctx, d.toRun(cp, c, info, start, resumed, binding, invocation))
	if o.Kind == "" {
		d.grantWarn(ctx, "the call covered by a grant was not claimed; it asks", cp, g.ID, err)
		return asked
	}
	if err != nil {
		d.grantWarn(ctx, "the call covered by a grant ran, but its outcome was not recorded", cp, g.ID, err)
	}
	covered, err := d.receipt(Receipt{Kind: ReceiptCovered, At: d.clock(), GrantID: g.ID, CheckpointID: cp.id, CallID: cp.callID,
		Principal: cp.principal, Tool: cp.request.Name, Use: g.Used, Uses: g.Uses, Outcome: o.Kind})
	if err == nil {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
		err = d.grants.store.AddReceipt(wctx, covered)
		cancel()
	}
	if err != nil {
		d.grantWarn(ctx, "the receipt of a covered call was not recorded (its claim records the grant)", cp, g.ID, err)
	}
	return o
}

// grantWarn logs a step of a grant that failed: the call then asks, or
// its audit lacks a receipt.
func (d *Dispatcher) grantWarn(ctx context.Context, msg string, cp Checkpoint, grantID string, err error) {
	if d.logger == nil {
		return
	}
	d.logger.WarnContext(ctx, "tool call grant: "+msg, "tool", truncate(cp.request.Name, 128), "call_id", truncate(cp.callID, 128),
		"checkpoint_id", cp.id, "grant_id", grantID, "error", errprefix.Body(err))
}
