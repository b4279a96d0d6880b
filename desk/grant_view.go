package desk

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentcontract/tool/dispatch"
)

// mintForm is the part of a pending call's answer form that approves its
// like in advance: a standing approval (dispatch.Dispatcher.Mint) with the
// answer the form gives. It is offered when the Dispatcher keeps grants
// and the call is sealed for a principal.
type mintForm struct {
	Principal string
	Uses      string // as typed
	Days      string // as typed
	MaxUses   int
	MaxDays   int
	// Members are the call's arguments, each pinned to its value unless
	// the person widens it (numbers only).
	Members []mintMember
}

// mintMember is one top-level member of the arguments.
type mintMember struct {
	Name     string
	Approved string // the approved value, as JSON
	Number   bool   // it may be widened
	Min, Max string // the bounds as typed; empty: that side is pinned
	Index    int    // what its inputs are named by
}

// maxMintMembers bounds the members a mint form lists; arguments with
// more are pinned whole.
const maxMintMembers = 64

// mintFormOf returns the mint form of the pending call cp, or nil when
// none is offered.
func (d *Desk) mintFormOf(cp dispatch.Checkpoint) *mintForm {
	ttl := d.d.MaxGrantTTL()
	args := cp.Request().Arguments
	if ttl == 0 || cp.Principal() == "" || len(args) > maxShownBytes {
		return nil
	}
	maxDays := max(1, int(ttl/(24*time.Hour)))
	return &mintForm{Principal: cp.Principal(), Uses: "5", Days: strconv.Itoa(min(7, maxDays)), MaxUses: dispatch.MaxGrantUses, MaxDays: maxDays, Members: members(args)}
}

// members returns the top-level members of args, an object, in order;
// nil when it is not one or has too many.
func members(args string) []mintMember {
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	var out []mintMember
	for dec.More() {
		tok, err := dec.Token()
		name, ok := tok.(string)
		if err != nil || !ok || len(out) == maxMintMembers {
			return nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil
		}
		number := len(v) > 0 && (v[0] == '-' || (v[0] >= '0' && v[0] <= '9'))
		out = append(out, mintMember{Name: name, Approved: string(v), Number: number, Index: len(out)})
	}
	return out
}

// read takes the mint form's values from a post, keeping them for the
// form shown again, and returns what the person decided. A value that is
// not of its field's kind is a *formError.
func (m *mintForm) read(get func(string) string) (uses int, ttl time.Duration, widen []dispatch.Widening, err error) {
	m.Uses, m.Days = strings.TrimSpace(get("grant.uses")), strings.TrimSpace(get("grant.days"))
	uses, err = strconv.Atoi(m.Uses)
	if err != nil || uses < 1 || uses > m.MaxUses {
		return 0, 0, nil, &formError{msg: "The number of calls to approve in advance must be a whole number from 1 to " + strconv.Itoa(m.MaxUses) + "."}
	}
	days, err := strconv.Atoi(m.Days)
	if err != nil || days < 1 || days > m.MaxDays {
		return 0, 0, nil, &formError{msg: "The number of days must be a whole number from 1 to " + strconv.Itoa(m.MaxDays) + "."}
	}
	for i := range m.Members {
		mm := &m.Members[i]
		mm.Min = strings.TrimSpace(get("grant.min." + strconv.Itoa(i)))
		mm.Max = strings.TrimSpace(get("grant.max." + strconv.Itoa(i)))
		if mm.Min == "" && mm.Max == "" {
			continue
		}
		if !mm.Number {
			return 0, 0, nil, &formError{msg: "Only numbers can be widened; " + mm.Name + " stays as it is."}
		}
		widen = append(widen, dispatch.Widening{Member: mm.Name, Minimum: mm.Min, Maximum: mm.Max})
	}
	return uses, time.Duration(days) * 24 * time.Hour, widen, nil
}

// grantsPage is what a page shows of standing approvals: a list, one of
// them, or the one a person just made.
type grantsPage struct {
	List  bool
	Items []grantView
	From  int
	Next  int
	First bool
	One   *grantView
	// Made is the grant made with the answer whose outcome the page
	// shows.
	Made *grantView
	// Notice says what became of a revocation.
	Notice string
}

// grantView is one grant, as a person who may answer its calls sees it.
type grantView struct {
	ID        string
	Link      string
	Tool      string
	Principal string
	GrantedBy string
	CreatedAt time.Time
	ExpiresAt time.Time
	Uses      int
	Used      int
	Left      int
	// State is live, spent, expired or revoked.
	State     string
	RevokedBy string
	RevokedAt time.Time
	// Rules say what each member of a covered call's arguments must be;
	// Closed: no other member.
	Rules     []ruleView
	Closed    bool
	Answer    string
	Predicate string
	// CSRF is set when the person may revoke it (it is not revoked).
	CSRF string
}

// ruleView is what a grant admits of one member.
type ruleView struct {
	Member  string
	Rule    string
	Widened bool
}

// grantViewOf returns the view of g at now.
func grantViewOf(g dispatch.Grant, now time.Time) grantView {
	v := grantView{
		ID: g.ID, Link: "grant?id=" + g.ID, Tool: g.Tool, Principal: g.Principal, GrantedBy: g.GrantedBy,
		CreatedAt: g.CreatedAt, ExpiresAt: g.ExpiresAt, Uses: g.Uses, Used: g.Used, Left: g.Uses - g.Used,
		State: "live", RevokedBy: g.RevokedBy, RevokedAt: g.RevokedAt,
		Answer: cut(indent(g.Answer), maxShownBytes), Predicate: cut(indent(g.Predicate), maxShownBytes),
	}
	switch {
	case g.RevokedBy != "":
		v.State = "revoked"
	case g.Used >= g.Uses:
		v.State = "spent"
	case !now.Before(g.ExpiresAt):
		v.State = "expired"
	}
	v.Rules, v.Closed = rules(g)
	return v
}

// rules reads the predicate of g as rules on each member, as Mint writes
// it: a pinned member (const), or a widened one. closed says that no
// other member is admitted.
func rules(g dispatch.Grant) (rs []ruleView, closed bool) {
	var p struct {
		Properties           map[string]map[string]json.RawMessage `json:"properties"`
		AdditionalProperties *bool                                 `json:"additionalProperties"`
	}
	if json.Unmarshal(g.Predicate, &p) != nil {
		return nil, false
	}
	names := make([]string, 0, len(p.Properties))
	for name := range p.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		r := ruleView{Member: name, Rule: "as the predicate below says"}
		if i := slices.IndexFunc(g.Widened, func(w dispatch.Widening) bool { return w.Member == name }); i >= 0 {
			w := g.Widened[i]
			r.Widened = true
			switch {
			case w.Minimum != "" && w.Maximum != "":
				r.Rule = "any number from " + w.Minimum + " to " + w.Maximum
			case w.Maximum != "":
				r.Rule = "any number up to " + w.Maximum
			default:
				r.Rule = "any number from " + w.Minimum + " up"
			}
			r.Rule += " (approved: " + w.Approved + ")"
		} else if c, ok := p.Properties[name]["const"]; ok {
			r.Rule = "exactly " + cut(string(c), maxSummaryRule)
		}
		rs = append(rs, r)
	}
	return rs, p.AdditionalProperties != nil && !*p.AdditionalProperties
}

// maxSummaryRule bounds the value a rule quotes.
const maxSummaryRule = 1 << 10

// summaryOfGrant is the summary of the calls g covers: what the desk's
// hooks decide from.
func summaryOfGrant(g dispatch.Grant) dispatch.Pending {
	return dispatch.Pending{Tool: g.Tool, Principal: g.Principal, CheckpointID: g.CheckpointID, ExpiresAt: g.ExpiresAt}
}
