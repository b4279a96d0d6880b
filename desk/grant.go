package desk

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// The desk's pages of standing approvals (dispatch.Grant), served when
// its Dispatcher keeps grants (dispatch.Config.Grants):
//
//   - GET  /grants  the grants of the calls the person may answer, newest
//     first, a page at a time (?from=N starts at the store's N-th);
//   - GET  /grant   one grant (?id=…): whose calls it covers, what each
//     member of their arguments must be (pinned, or widened and how),
//     its answer, its uses and expiry, who made it, and who revoked it;
//   - POST /grant   its revocation (action "revoke"), which takes effect
//     on the next call.
//
// A grant is made on a pending call's page, with the answer the person
// gives that call (action "grant" of its form: the grant is minted, then
// the call answered). A person sees, and may revoke, only the grants of
// calls they may answer: Config.Authorize, and the principal sealed in
// them, decide as for the calls themselves; any other grant answers 404,
// as one that does not exist.

// noGrants answers the grant pages of a desk whose Dispatcher keeps none.
func (d *Desk) noGrants(w http.ResponseWriter, person string) bool {
	if d.d.MaxGrantTTL() > 0 {
		return false
	}
	d.render(w, http.StatusNotFound, page{Title: d.title, Person: person, Message: "This desk keeps no standing approvals."})
	return true
}

// listGrants serves the grants the person may see, newest first.
func (d *Desk) listGrants(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok || d.noGrants(w, person) {
		return
	}
	from, err := strconv.Atoi(r.URL.Query().Get("from"))
	if err != nil || from < 0 {
		from = 0
	}
	from = min(from, 1<<30)
	gp := &grantsPage{List: true, From: from, First: from > 0}
	now := d.clock()
	offset := from
scan:
	for range maxListScan {
		gs, err := d.d.Grants(r.Context(), dispatch.GrantQuery{NewestFirst: true, Offset: offset, Limit: d.pageSize})
		if err != nil {
			d.storeFailed(w, r, err)
			return
		}
		for k, g := range gs {
			if len(gp.Items) == d.pageSize {
				gp.Next = offset + k
				break scan
			}
			if d.mayAnswer(r.Context(), person, summaryOfGrant(g)) {
				gp.Items = append(gp.Items, grantViewOf(g, now))
			}
		}
		offset += len(gs)
		if len(gs) < d.pageSize {
			gp.Next = 0
			break
		}
		gp.Next = offset
	}
	d.render(w, http.StatusOK, page{Title: d.title, Person: person, Grants: gp})
}

// grantOf reads the grant a request names, if the person may see it, or
// answers the request itself (404 for a grant that does not exist or
// that they may not see, 503 for a store that failed).
func (d *Desk) grantOf(w http.ResponseWriter, r *http.Request, id, person string) (dispatch.Grant, bool) {
	gs, err := d.d.Grants(r.Context(), dispatch.GrantQuery{ID: id})
	if err != nil {
		d.storeFailed(w, r, err)
		return dispatch.Grant{}, false
	}
	if id == "" || len(gs) != 1 || !d.mayAnswer(r.Context(), person, summaryOfGrant(gs[0])) {
		d.render(w, http.StatusNotFound, page{Title: d.title, Person: person, Message: "There is no such standing approval."})
		return dispatch.Grant{}, false
	}
	return gs[0], true
}

// showGrant serves one grant.
func (d *Desk) showGrant(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok || d.noGrants(w, person) {
		return
	}
	g, ok := d.grantOf(w, r, r.URL.Query().Get("id"), person)
	if !ok {
		return
	}
	d.renderGrant(w, http.StatusOK, person, g, "")
}

// renderGrant renders the page of g for person, with a notice.
func (d *Desk) renderGrant(w http.ResponseWriter, status int, person string, g dispatch.Grant, notice string) {
	now := d.clock()
	v := grantViewOf(g, now)
	if g.RevokedBy == "" {
		v.CSRF = d.csrfToken(person, now)
	}
	d.render(w, status, page{Title: d.title, Person: person, Grants: &grantsPage{One: &v, Notice: notice}})
}

// postGrant revokes a grant.
func (d *Desk) postGrant(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok || d.noGrants(w, person) {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 1<<16)
	if err := r.ParseForm(); err != nil {
		d.render(w, http.StatusBadRequest, page{Title: d.title, Person: person, Message: "The form could not be read."})
		return
	}
	if !d.checkCSRF(r, person, d.clock()) {
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "The form has expired or did not come from this desk. Open the standing approval again."})
		return
	}
	g, ok := d.grantOf(w, r, r.PostForm.Get("id"), person)
	if !ok {
		return
	}
	if r.PostForm.Get("action") != "revoke" {
		d.render(w, http.StatusBadRequest, page{Title: d.title, Person: person, Message: "The form named no action."})
		return
	}
	revoked, err := d.d.Revoke(r.Context(), g.ID, person)
	switch {
	case errors.Is(err, dispatch.ErrGrantNotLive):
		d.renderGrant(w, http.StatusConflict, person, g, "It was revoked already.")
		return
	case err != nil:
		d.storeFailed(w, r, err)
		return
	}
	if d.logger != nil {
		d.logger.InfoContext(r.Context(), "approval desk: standing approval revoked", "person", person, "grant_id", g.ID, "tool", g.Tool)
	}
	d.renderGrant(w, http.StatusOK, person, revoked, "Revoked: from the next call on, it answers nothing.")
}

// mint makes the standing approval a pending call's form asks for, with
// answer, the answer the person gives the call: what the action "grant"
// does before it answers the call. Its errors are the person's to
// correct (a *formError), or the store's.
func (d *Desk) mint(ctx context.Context, person string, p *posted, answer []byte, get func(string) string) error {
	m := p.view.Mint
	if m == nil {
		return &formError{msg: "This call cannot be approved in advance: it names no principal, or this desk keeps no standing approvals."}
	}
	uses, ttl, widen, err := m.read(get)
	if err != nil {
		return err
	}
	g, err := d.d.Mint(ctx, p.cp, dispatch.Mint{By: person, Answer: answer, Uses: uses, TTL: ttl, Widen: widen})
	switch {
	case errors.Is(err, dispatch.ErrInvalidGrant):
		return &formError{msg: "The standing approval was not made: " + errprefix.Detail(err, dispatch.ErrInvalidGrant)}
	case err != nil:
		return err
	}
	if d.logger != nil {
		d.logger.InfoContext(ctx, "approval desk: standing approval made", "person", person, "grant_id", g.ID, "tool", g.Tool, "uses", g.Uses)
	}
	v := grantViewOf(g, d.clock())
	p.made = &v
	return nil
}
