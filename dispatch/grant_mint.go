package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/agentcontract/tool/internal/strictjson"
)

// Mint is what a person decides when they approve a pending call and
// approve its like in advance: see Dispatcher.Mint.
type Mint struct {
	// By is the person who grants, as the runtime authenticated them:
	// one who may answer the call (Answer.Principal's rule).
	By string
	// Answer is the answer the grant gives each call it covers, which
	// must satisfy the call's response schema. Mint copies it.
	Answer json.RawMessage
	// Uses is how many calls the grant may answer: 1 to MaxGrantUses.
	Uses int
	// TTL is how long the grant lasts: 0 means the Dispatcher's
	// Config.MaxGrantTTL, and a longer one is cut to it. A negative TTL
	// is refused.
	TTL time.Duration
	// Widen lists the members admitted beyond their approved value (see
	// Widening); every other member is pinned. Ignored with Predicate.
	Widen []Widening
	// Predicate, when not nil, is the grant's predicate in place of the
	// pinned one Mint builds: a JSON Schema checked on the admitted
	// argument bytes. It must compile within the engine's cost bounds
	// (tool.ParseSchema) and accept the call's own arguments. Leave it
	// nil unless the runtime writes predicates itself: the pinned one
	// covers exactly what the person saw, and what they widened.
	Predicate json.RawMessage
}

// Mint makes a grant from the pending call of cp, which the person
// m.By approves, and records it with its receipt in the Dispatcher's
// GrantStore (Config.Grants). The grant covers later calls of the
// principal cp was sealed for, to cp's tool under the same contract,
// whose admitted arguments satisfy its predicate: by default every member
// of cp's arguments pinned to its approved value (const), the object
// closed (additionalProperties false, every member required), and the
// members of m.Widen admitted within their bounds. It answers each with
// m.Answer, m.Uses times, until the TTL ends. Mint does not answer cp
// itself: Resume it with the same answer.
//
// Mint checks, in order: the seal, the answer against the response
// schema, the expiry and the principal, as Resume does
// (ErrInvalidCheckpoint, ErrInvalidAnswer, ErrExpired,
// ErrWrongPrincipal); then that cp names a principal (a call sealed for
// nobody always asks) and carries its contract's digest, the uses, the
// TTL, the widenings and the predicate, which must compile within the
// engine's static cost bounds (a hostile one is refused here, with no
// timer) and accept cp's arguments (ErrInvalidGrant). The store's errors
// come back wrapping ErrStore or ErrInvalidGrant. The zero Grant comes
// with every error.
func (d *Dispatcher) Mint(ctx context.Context, cp Checkpoint, m Mint) (Grant, error) {
	if err := d.needGrants("mints"); err != nil {
		return Grant{}, err
	}
	_, now, err := d.admitResume(cp, Answer{Response: m.Answer, Principal: m.By}, true)
	if err != nil {
		return Grant{}, err
	}
	if cp.principal == "" || m.By == "" {
		return Grant{}, errprefix.Errorf("%w: checkpoint %s names no principal: a call anyone may answer always asks, and no grant covers it", ErrInvalidGrant, cp.id)
	}
	st, err := readStamp(cp.inputRequest)
	if err != nil || st.ContractSHA256 == "" {
		return Grant{}, errprefix.Errorf("%w: checkpoint %s carries no digest of its tool's contract (its input request is not stamped): no grant can be tied to the contract", ErrInvalidGrant, cp.id)
	}
	ttl, err := d.grants.ttl(m.TTL)
	if err != nil {
		return Grant{}, err
	}
	if m.Uses < 1 || m.Uses > MaxGrantUses {
		return Grant{}, errprefix.Errorf("%w: %d uses, want 1 to %d", ErrInvalidGrant, m.Uses, MaxGrantUses)
	}
	args := admittedArguments(cp.request.Arguments)
	predicate, widened := m.Predicate, []Widening(nil)
	if predicate == nil {
		if predicate, widened, err = pinned(args, m.Widen); err != nil {
			return Grant{}, err
		}
	}
	schema, err := compilePredicate(predicate)
	if err != nil {
		return Grant{}, err
	}
	if err := schema.Validate(args); err != nil {
		return Grant{}, errprefix.Errorf("%w: the predicate does not accept the arguments of the call it is minted from: %s", ErrInvalidGrant, answerProblem(err))
	}
	id, err := newCheckpointID()
	if err != nil {
		return Grant{}, errprefix.Errorf("%w: drawing the grant's ID: %w", ErrStore, err)
	}
	now = now.UTC().Truncate(time.Second)
	g := Grant{
		ID: id, GrantedBy: m.By, Principal: cp.principal, Tool: cp.request.Name, ContractSHA256: st.ContractSHA256,
		Predicate: schema.JSON(), Widened: widened, Answer: slices.Clone(m.Answer), CheckpointID: cp.id,
		CreatedAt: now, ExpiresAt: now.Add(ttl), Uses: m.Uses,
	}
	if err := g.Validate(); err != nil {
		return Grant{}, err
	}
	made, err := d.receipt(Receipt{Kind: ReceiptMade, At: now, GrantID: g.ID, By: m.By, Grant: &g})
	if err != nil {
		return Grant{}, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	if err := d.grants.store.AddGrant(wctx, g, made); err != nil {
		return Grant{}, grantStoreError(fmt.Sprintf("grant %s not recorded", g.ID), err)
	}
	return g, nil
}

// Revoke revokes grant id for by, the person who revokes, and records its
// receipt: from the next call on, the grant covers nothing (a call whose
// use was spent before it is answered). Who may revoke is the runtime's
// to decide (a desk lets whoever may answer the grant's calls). It
// returns the grant as it now stands. Errors wrap ErrInvalidConfig (no
// Config.Grants), ErrGrantNotLive (revoked already), ErrNotFound,
// ErrInvalidGrant (by is not 1 to 1024 bytes of UTF-8) or ErrStore.
func (d *Dispatcher) Revoke(ctx context.Context, id, by string) (Grant, error) {
	if err := d.needGrants("revokes"); err != nil {
		return Grant{}, err
	}
	if by == "" || checkPrincipal(by) != nil {
		return Grant{}, errprefix.Errorf("%w: who revokes must be 1 to %d bytes of UTF-8", ErrInvalidGrant, maxRecordText)
	}
	if !validID(id) {
		return Grant{}, errprefix.Errorf("%w: no grant %q", ErrNotFound, truncate(id, 80))
	}
	now := d.clock().UTC()
	revoked, err := d.receipt(Receipt{Kind: ReceiptRevoked, At: now, GrantID: id, By: by})
	if err != nil {
		return Grant{}, err
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	g, err := d.grants.store.RevokeGrant(wctx, id, by, now, revoked)
	if err != nil {
		return Grant{}, grantStoreError(fmt.Sprintf("grant %s not revoked", truncate(id, 80)), err)
	}
	return g, nil
}

// Grants lists the grants of the Dispatcher's GrantStore selected by q,
// as GrantStore.Grants does: what a desk shows. Errors wrap
// ErrInvalidConfig (no Config.Grants) or the store's.
func (d *Dispatcher) Grants(ctx context.Context, q GrantQuery) ([]Grant, error) {
	if err := d.needGrants("lists"); err != nil {
		return nil, err
	}
	gs, err := d.grants.store.Grants(ctx, q)
	if err != nil {
		return nil, grantStoreError("grants not listed", err)
	}
	return gs, nil
}

// MaxGrantTTL returns the longest a grant of this Dispatcher may last
// (Config.MaxGrantTTL, or DefaultMaxGrantTTL), or 0 when it keeps no
// grants (Config.Grants is nil): a desk offers grants when it is not 0.
func (d *Dispatcher) MaxGrantTTL() time.Duration {
	if d == nil || d.grants == nil {
		return 0
	}
	return d.grants.maxTTL
}

// needGrants returns nil when d keeps grants, and otherwise the error of a
// method that needs them: verb is what it does ("mints").
func (d *Dispatcher) needGrants(verb string) error {
	if err := d.needSuspension(verb); err != nil {
		return err
	}
	if d.grants == nil {
		return errprefix.Errorf("%w: this Dispatcher has no Config.Grants: it %s no grant", ErrInvalidConfig, verb)
	}
	return nil
}

// receipt returns r with a fresh ID, sealed with the first seal key.
func (d *Dispatcher) receipt(r Receipt) (Receipt, error) {
	id, err := newCheckpointID()
	if err != nil {
		return Receipt{}, errprefix.Errorf("%w: drawing a receipt's ID: %w", ErrStore, err)
	}
	r.ID = id
	return sealReceipt(r, d.keys[0])
}

// grantStoreError wraps an error of a GrantStore in ErrStore, unless it
// wraps one of the errors a GrantStore returns on purpose.
func grantStoreError(what string, err error) error {
	for _, sentinel := range []error{ErrGrantNotLive, ErrNotFound, ErrInvalidGrant, ErrInvalidReceipt, ErrStore} {
		if errors.Is(err, sentinel) {
			return errprefix.Part("%s: %w", what, err)
		}
	}
	return errprefix.Errorf("%w: %s: %w", ErrStore, what, err)
}

// admittedArguments returns the argument bytes Prepare admits for
// arguments: the text itself, or {} for a blank one.
func admittedArguments(arguments string) []byte {
	if strictjson.IsBlank([]byte(arguments)) {
		return []byte("{}")
	}
	return []byte(arguments)
}

// pinned returns the predicate that pins every member of args, an object
// Prepare admitted, to its value and closes the object, except the
// members of widen, each admitted as a number within its bounds; and the
// widenings as recorded (with the approved values).
func pinned(args []byte, widen []Widening) (json.RawMessage, []Widening, error) {
	dec := jsontext.NewDecoder(strings.NewReader(string(args)))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil, errprefix.Errorf("%w: the arguments are not a JSON object", ErrInvalidGrant)
	}
	values := map[string]jsontext.Value{}
	var names []string
	for dec.PeekKind() != '}' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, nil, errprefix.Errorf("%w: the arguments do not decode: %v", ErrInvalidGrant, err)
		}
		name := tok.String()
		value, err := dec.ReadValue()
		if err != nil {
			return nil, nil, errprefix.Errorf("%w: the arguments do not decode: %v", ErrInvalidGrant, err)
		}
		names = append(names, name)
		values[name] = slices.Clone(value)
	}
	properties := map[string]any{}
	for name, v := range values {
		properties[name] = map[string]any{"const": v}
	}
	var widened []Widening
	for _, w := range widen {
		v, ok := values[w.Member]
		switch {
		case !ok:
			return nil, nil, errprefix.Errorf("%w: widened member %q is not a member of the arguments", ErrInvalidGrant, truncate(w.Member, 80))
		case v.Kind() != '0':
			return nil, nil, errprefix.Errorf("%w: widened member %q is a %s: only a number can be widened, every other member stays pinned", ErrInvalidGrant, truncate(w.Member, 80), kindName(v.Kind()))
		case w.Minimum == "" && w.Maximum == "":
			return nil, nil, errprefix.Errorf("%w: widened member %q has no bound: give a minimum, a maximum or both", ErrInvalidGrant, truncate(w.Member, 80))
		case slices.ContainsFunc(widened, func(o Widening) bool { return o.Member == w.Member }):
			return nil, nil, errprefix.Errorf("%w: member %q is widened twice", ErrInvalidGrant, truncate(w.Member, 80))
		}
		number := "number"
		if !strings.ContainsAny(string(v), ".eE") {
			number = "integer"
		}
		sub := map[string]any{"type": number}
		for keyword, bound := range map[string]string{"minimum": w.Minimum, "maximum": w.Maximum} {
			if bound == "" {
				continue
			}
			if !isNumber(bound) {
				return nil, nil, errprefix.Errorf("%w: widened member %q: the %s %q is not a JSON number", ErrInvalidGrant, truncate(w.Member, 80), keyword, truncate(bound, 80))
			}
			sub[keyword] = jsontext.Value(bound)
		}
		if err := coversApproved(sub, v); err != nil {
			return nil, nil, errprefix.Errorf("%w: widened member %q: the bounds do not admit its approved value %s: a widening widens what was approved", ErrInvalidGrant, truncate(w.Member, 80), v)
		}
		properties[w.Member] = sub
		widened = append(widened, Widening{Member: w.Member, Minimum: w.Minimum, Maximum: w.Maximum, Approved: string(v)})
	}
	slices.Sort(names)
	if names == nil {
		names = []string{}
	}
	doc, err := jsonv2.Marshal(map[string]any{"type": "object", "additionalProperties": false, "required": names, "properties": properties}, jsonv2.Deterministic(true))
	if err != nil {
		return nil, nil, errprefix.Errorf("%w: %v", ErrInvalidGrant, err)
	}
	return doc, widened, nil
}

// coversApproved reports whether the subschema sub of a widened member
// admits its approved value v, checked by the engine (exact numbers).
func coversApproved(sub map[string]any, v jsontext.Value) error {
	doc, err := jsonv2.Marshal(sub, jsonv2.Deterministic(true))
	if err != nil {
		return err
	}
	s, err := tool.ParseSchema(doc)
	if err != nil {
		return err
	}
	return s.Validate(v)
}

// kindName names the JSON kind of a value.
func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "number"
}

// compilePredicate compiles a grant's predicate with the engine Prepare
// checks arguments with, under its cost bounds: a predicate beyond them
// is refused here, when it is compiled, not by a timer when it is
// checked. Errors wrap ErrInvalidGrant.
func compilePredicate(predicate json.RawMessage) (tool.Schema, error) {
	s, err := tool.ParseSchema(predicate)
	if err != nil {
		return tool.Schema{}, errprefix.Errorf("%w: the predicate is refused: %s", ErrInvalidGrant, errprefix.Detail(err, tool.ErrInvalidSchema))
	}
	return s, nil
}
