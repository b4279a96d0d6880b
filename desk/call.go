package desk

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/agentcontract/tool/dispatch"
)

// show serves one call: its page while it is pending, or who answered it
// and how.
func (d *Desk) show(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	f, ok := d.locate(w, r, r.URL.Query().Get, person)
	if !ok {
		return
	}
	if !f.pending {
		v := d.answeredOf(f.claim)
		if f.claim.Stranded(d.clock()) && f.may {
			v.Recover = &recoverForm{CSRF: d.csrfToken(person, d.clock()), TurnID: f.claim.TurnID, Index: f.claim.CallIndex, CheckpointID: f.claim.CheckpointID}
		}
		d.render(w, http.StatusOK, page{Title: d.title, Person: person, Answered: v})
		return
	}
	v := d.callView(person, f, d.clock())
	d.render(w, http.StatusOK, page{Title: d.title, Person: person, Call: &v})
}

// arguments serves the whole arguments of a pending call, as the JSON
// the model wrote, for download: the call page shows them up to a cap.
func (d *Desk) arguments(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	f, ok := d.locate(w, r, r.URL.Query().Get, person)
	if !ok {
		return
	}
	if !f.pending || !f.may {
		d.render(w, http.StatusNotFound, page{Title: d.title, Person: person, Message: "There is no such call."})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Disposition", `attachment; filename="arguments.json"`)
	_, _ = w.Write([]byte(f.p.Outcome.Checkpoint.Request().Arguments))
}

// posted is what a person sent about one call.
type posted struct {
	action string // answer, decline or edit
	f      found
	view   callView
	cp     dispatch.Checkpoint
	made   *grantView // the standing approval made with the answer (action "grant")
}

// post answers, declines or edits one call: it reads the form, acts
// through the Dispatcher, and says what came of it.
func (d *Desk) post(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	p, ok := d.parse(w, r, person)
	if !ok {
		return
	}
	o, err := d.act(r.Context(), person, &p, r)
	d.logAnswer(r.Context(), person, p.action, p.cp, o, err)
	d.respond(w, r, person, p, o, err)
}

// parse reads and checks a posted form: its size, its token, the call it
// names and whether the person may answer it. It answers the request
// itself when it returns false.
func (d *Desk) parse(w http.ResponseWriter, r *http.Request, person string) (posted, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		d.render(w, http.StatusBadRequest, page{Title: d.title, Person: person, Message: "The form could not be read."})
		return posted{}, false
	}
	now := d.clock()
	if !d.checkCSRF(r, person, now) {
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "The form has expired or did not come from this desk. Open the call again and resend your answer."})
		return posted{}, false
	}
	f, ok := d.locate(w, r, r.PostForm.Get, person)
	if !ok {
		return posted{}, false
	}
	if !f.pending {
		return d.parseRecovery(w, r, person, f)
	}
	v := d.callView(person, f, now)
	if !v.May {
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "You may not answer this call."})
		return posted{}, false
	}
	action := r.PostForm.Get("action")
	switch action {
	case "answer", "decline", "edit", "dismiss", "grant":
	default:
		d.render(w, http.StatusBadRequest, page{Title: d.title, Person: person, Message: "The form named no action."})
		return posted{}, false
	}
	return posted{action: action, f: f, view: v, cp: *f.p.Outcome.Checkpoint}, true
}

// errNotJSON refuses edited arguments that are not JSON.
var errNotJSON = &formError{msg: "The edited arguments are not valid JSON."}

// act does what p asks, through the Dispatcher, as person.
func (d *Desk) act(ctx context.Context, person string, p *posted, r *http.Request) (dispatch.Outcome, error) {
	switch p.action {
	case "recover":
		return d.recover(ctx, p.f.claim, p.cp)
	case "decline":
		return d.d.Decline(ctx, p.cp, dispatch.Answer{Principal: person})
	case "dismiss":
		return d.d.Dismiss(ctx, p.cp, dispatch.Answer{Principal: person})
	case "edit":
		p.view.EditText, p.view.Editing = r.PostForm.Get("arguments"), true
		if !json.Valid([]byte(p.view.EditText)) {
			return dispatch.Outcome{}, errNotJSON
		}
		return d.d.Supersede(ctx, p.cp, dispatch.Edit{Arguments: p.view.EditText, Principal: person})
	}
	answer, err := p.view.Form.answer(r.PostForm.Get)
	if err == nil {
		err = p.cp.CheckAnswer(answer)
	}
	if err == nil && p.action == "grant" {
		err = d.mint(ctx, person, p, answer, r.PostForm.Get) // grant.go
	}
	if err != nil {
		return dispatch.Outcome{}, err
	}
	return d.d.Resume(ctx, p.cp, dispatch.Answer{Response: answer, Principal: person, Record: true})
}

// respond says what came of p: the outcome, the form again with the
// reason it was refused, or why nothing could be done.
func (d *Desk) respond(w http.ResponseWriter, r *http.Request, person string, p posted, o dispatch.Outcome, err error) {
	var answered *dispatch.AnsweredError
	switch {
	case p.action == "recover" && err != nil && o.Kind == "" && !errors.Is(err, dispatch.ErrStore):
		v := d.answeredOf(p.f.claim)
		v.State = "It could not be recovered now: " + reason(err)
		d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Answered: v})
		return
	case errors.As(err, &answered):
		d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Answered: d.answeredOf(answered.Claim)})
		return
	case errors.As(err, new(*formError)) || errors.Is(err, dispatch.ErrInvalidAnswer):
		p.view.Error = reason(err)
		d.render(w, http.StatusUnprocessableEntity, page{Title: d.title, Person: person, Call: &p.view})
		return
	case errors.Is(err, dispatch.ErrExpired):
		d.render(w, http.StatusGone, page{Title: d.title, Person: person, Message: "This call has expired: it can no longer be answered."})
		return
	case errors.Is(err, dispatch.ErrWrongPrincipal):
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "You may not answer this call."})
		return
	case errors.Is(err, dispatch.ErrInvalidCheckpoint):
		// The call can no longer be answered: say why, and keep what
		// clears it (Decline, or Dismiss for a retired key).
		p.view.Error = unanswerable(err)
		d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Call: &p.view})
		return
	case errors.Is(err, dispatch.ErrStore) && o.Kind == "":
		d.storeFailed(w, r, err)
		return
	case err != nil && o.Kind == "":
		if d.logger != nil {
			d.logger.ErrorContext(r.Context(), "approval desk: the call could not be answered", "error", err.Error())
		}
		d.render(w, http.StatusInternalServerError, page{Title: d.title, Person: person, Message: "The call could not be answered, and nothing ran. The desk's log says why."})
		return
	}
	if o.Replayed {
		// The same answer was claimed before (another tab, a resend):
		// nothing ran now.
		if c, cerr := d.store.Claimed(r.Context(), p.cp.ID()); cerr == nil {
			d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Answered: d.answeredOf(c)})
			return
		}
	}
	// A call that asks again takes its place in its turn by itself
	// (dispatch.Dispatcher.Resume): the new question is pending.
	result := outcomeOf(o, p.f.p.TurnID, p.f.p.Index)
	result.Declined = p.action == "decline" || p.action == "dismiss"
	result.Unrecorded = err != nil
	pg := page{Title: d.title, Person: person, Outcome: &result}
	if p.made != nil {
		pg.Grants = &grantsPage{Made: p.made}
	}
	d.render(w, http.StatusOK, pg)
}
