package desk

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

// ErrInvalidConfig is wrapped by the errors of New.
var ErrInvalidConfig = errprefix.New("invalid desk config")

// DefaultPageSize is the number of pending calls a page lists when
// Config.PageSize is zero.
const DefaultPageSize = 20

// maxPageSize bounds Config.PageSize.
const maxPageSize = 500

// maxFormBytes bounds a posted form: an answer and edited arguments, each
// at most tool.MaxInputBytes, and room for the rest.
const maxFormBytes = 3 << 20

// Config configures a Desk. Dispatcher, Store, Person and Authorize are
// required.
type Config struct {
	// Dispatcher resumes, declines and supersedes the calls; it must use
	// Store as its Config.Store, and hold the tools and seal keys of the
	// runtime whose calls the desk answers.
	Dispatcher *dispatch.Dispatcher
	// Store lists the pending calls and the claims. The desk keeps
	// nothing of its own: every record is the Store's.
	Store dispatch.Store
	// Person returns who makes the request, as the runtime authenticates
	// them (a session cookie, a header of a trusted proxy): never a value
	// the request merely claims. An error, or an empty name, answers 401
	// and shows nothing. It is recorded as the answer's principal.
	Person func(r *http.Request) (string, error)
	// Authorize reports whether person may answer the pending call p.
	// Both it and the principal sealed in p's checkpoint, when it names
	// one, must accept the person; a call the person may not answer is
	// listed without its prompt and arguments. An error is a refusal.
	// It must be safe for concurrent use.
	Authorize func(ctx context.Context, person string, p dispatch.Pending) (bool, error)
	// CSRFKey is the secret the forms' tokens are made with: at least 32
	// bytes, the same in every replica behind a load balancer. Nil makes
	// a random key for this process. New copies it.
	CSRFKey []byte
	// PageSize is the number of pending calls a page lists: 0 means
	// DefaultPageSize; at most 500.
	PageSize int
	// Title is the heading of every page; empty means "Approval desk".
	Title string
	// Clock tells the time of the CSRF tokens; nil means time.Now.
	Clock func() time.Time
	// Logger, when not nil, receives a record for every answer, decline
	// and edit, and every error of the Store.
	Logger *slog.Logger
}

// Desk is an http.Handler: the approval desk, where a person sees the
// calls that wait for an answer and answers them. It serves
//
//   - GET  /            the pending calls, newest first, a page at a time
//     (?page=N);
//   - GET  /call        one call (?turn=…&i=…&cp=…): its tool, prompt,
//     arguments, who may answer, and the answer form rendered from the
//     response schema; or, once answered, who answered it, when and how;
//   - POST /call        an answer (action "answer"), a decline ("decline"),
//     or edited arguments approved as a new call ("edit");
//   - GET  /desk.css    the style sheet.
//
// Mount it under a prefix with http.StripPrefix; its links are relative.
//
// Every text the model or the tool wrote is escaped by html/template;
// the pages carry a Content-Security-Policy that allows no script at all
// and no framing. Every form carries a token bound to the person
// (Config.CSRFKey), and a post whose browser says it comes from another
// site is refused. An answer is checked against the response schema
// before anything runs; a refused one shows the form again with the
// person's input and the reason. The answer is claimed and resumed
// through the Dispatcher, recorded in the claim with the person as its
// principal (dispatch.Answer.Record); two answers to one call, from two
// tabs or two people, claim it once: the second is told who answered
// first. Edited arguments are a new call (dispatch.Dispatcher.Supersede).
// When a resumed call asks again, the desk saves its turn again
// (Dispatcher.SaveTurn), so that the new question is pending.
//
// A Desk is safe for concurrent use. Make one with New; the zero Desk
// answers 500 to every request.
type Desk struct {
	d         *dispatch.Dispatcher
	store     dispatch.Store
	person    func(*http.Request) (string, error)
	authorize func(context.Context, string, dispatch.Pending) (bool, error)
	csrfKey   []byte
	pageSize  int
	title     string
	clock     func() time.Time
	logger    *slog.Logger
	mux       *http.ServeMux
}

// New returns the Desk of config. Errors wrap ErrInvalidConfig: a missing
// Dispatcher, Store, Person or Authorize, a CSRFKey shorter than 32
// bytes, or a PageSize out of range.
func New(config Config) (*Desk, error) {
	switch {
	case config.Dispatcher == nil || config.Store == nil:
		return nil, errprefix.Errorf("%w: Dispatcher and Store are required", ErrInvalidConfig)
	case config.Person == nil:
		return nil, errprefix.Errorf("%w: Person is required: the desk must know who answers", ErrInvalidConfig)
	case config.Authorize == nil:
		return nil, errprefix.Errorf("%w: Authorize is required: a desk that lets anyone answer must not come about by omission", ErrInvalidConfig)
	case config.CSRFKey != nil && len(config.CSRFKey) < 32:
		return nil, errprefix.Errorf("%w: CSRFKey is %d bytes, want at least 32", ErrInvalidConfig, len(config.CSRFKey))
	case config.PageSize < 0 || config.PageSize > maxPageSize:
		return nil, errprefix.Errorf("%w: PageSize is %d, want 0 to %d", ErrInvalidConfig, config.PageSize, maxPageSize)
	}
	key := bytes.Clone(config.CSRFKey)
	if key == nil {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // never fails (crypto/rand)
	}
	d := &Desk{
		d: config.Dispatcher, store: config.Store, person: config.Person, authorize: config.Authorize,
		csrfKey: key, pageSize: config.PageSize, title: config.Title, clock: config.Clock, logger: config.Logger,
	}
	if d.pageSize == 0 {
		d.pageSize = DefaultPageSize
	}
	if d.title == "" {
		d.title = "Approval desk"
	}
	if d.clock == nil {
		d.clock = time.Now
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.list)
	mux.HandleFunc("GET /call", d.show)
	mux.HandleFunc("POST /call", d.post)
	mux.HandleFunc("GET /desk.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=3600")
		_, _ = w.Write([]byte(stylesheet))
	})
	d.mux = mux
	return d, nil
}

// ServeHTTP serves the desk; see Desk.
func (d *Desk) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if d == nil || d.mux == nil {
		http.Error(w, "the zero Desk serves nothing", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	d.mux.ServeHTTP(w, r)
}

// who returns the person of r, or answers 401.
func (d *Desk) who(w http.ResponseWriter, r *http.Request) (string, bool) {
	person, err := d.person(r)
	if err != nil || person == "" {
		d.render(w, http.StatusUnauthorized, page{Title: d.title, Message: "You are not signed in."})
		return "", false
	}
	return person, true
}

// may reports whether person may answer p: the sealed principal and the
// hook both accept them.
func (d *Desk) may(ctx context.Context, person string, p dispatch.Pending) bool {
	if sealed := p.Outcome.Checkpoint.Principal(); sealed != "" && sealed != person {
		return false
	}
	ok, err := d.authorize(ctx, person, p)
	return err == nil && ok
}

// list serves the pending calls, newest first, a page at a time.
func (d *Desk) list(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	n, err := strconv.Atoi(r.URL.Query().Get("page"))
	if err != nil || n < 1 {
		n = 1
	}
	if n > 1<<20 {
		n = 1 << 20
	}
	ps, err := d.store.Pending(r.Context(), dispatch.PendingQuery{NewestFirst: true, Offset: (n - 1) * d.pageSize, Limit: d.pageSize + 1, Full: true})
	if err != nil {
		d.storeFailed(w, r, err)
		return
	}
	pg := page{Title: d.title, Person: person, List: true, Page: n}
	if len(ps) > d.pageSize {
		ps, pg.Next = ps[:d.pageSize], n+1
	}
	if n > 1 {
		pg.Prev = n - 1
	}
	now := d.clock()
	for _, p := range ps {
		pg.Calls = append(pg.Calls, d.view(r.Context(), person, p, now))
	}
	d.render(w, http.StatusOK, pg)
}

// locate finds the call a request names: pending, or claimed. It answers
// 404 when neither.
func (d *Desk) locate(w http.ResponseWriter, r *http.Request, q func(string) string, person string) (p dispatch.Pending, pending bool, claim dispatch.Claim, ok bool) {
	turn, cp := q("turn"), q("cp")
	i, err := strconv.Atoi(q("i"))
	if turn == "" || cp == "" || err != nil {
		d.render(w, http.StatusNotFound, page{Title: d.title, Person: person, Message: "There is no such call."})
		return p, false, claim, false
	}
	ps, err := d.store.Pending(r.Context(), dispatch.PendingQuery{TurnID: turn, Full: true})
	if err != nil {
		d.storeFailed(w, r, err)
		return p, false, claim, false
	}
	for _, candidate := range ps {
		if candidate.Index == i && candidate.Outcome.Checkpoint.ID() == cp {
			return candidate, true, claim, true
		}
	}
	claim, err = d.store.Claimed(r.Context(), cp)
	switch {
	case errors.Is(err, dispatch.ErrNotFound):
		d.render(w, http.StatusNotFound, page{Title: d.title, Person: person, Message: "There is no such call: it may have expired."})
		return p, false, claim, false
	case err != nil:
		d.storeFailed(w, r, err)
		return p, false, claim, false
	}
	return p, false, claim, true
}

// show serves one call.
func (d *Desk) show(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	p, pending, claim, ok := d.locate(w, r, r.URL.Query().Get, person)
	if !ok {
		return
	}
	if !pending {
		d.render(w, http.StatusOK, page{Title: d.title, Person: person, Answered: answeredOf(claim)})
		return
	}
	v := d.view(r.Context(), person, p, d.clock())
	d.render(w, http.StatusOK, page{Title: d.title, Person: person, Call: &v})
}

// post answers, declines or edits one call.
func (d *Desk) post(w http.ResponseWriter, r *http.Request) {
	person, ok := d.who(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		d.render(w, http.StatusBadRequest, page{Title: d.title, Person: person, Message: "The form could not be read."})
		return
	}
	now := d.clock()
	if !d.checkCSRF(r, person, now) {
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "The form has expired or did not come from this desk. Open the call again and resend your answer."})
		return
	}
	p, pending, claim, ok := d.locate(w, r, r.PostForm.Get, person)
	if !ok {
		return
	}
	if !pending {
		d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Answered: answeredOf(claim)})
		return
	}
	v := d.view(r.Context(), person, p, now)
	if !v.May {
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "You may not answer this call."})
		return
	}
	cp := *p.Outcome.Checkpoint
	var o dispatch.Outcome
	var err error
	action := r.PostForm.Get("action")
	switch action {
	case "decline":
		o, err = d.d.Decline(r.Context(), cp, dispatch.Answer{Principal: person})
	case "edit":
		v.EditText = r.PostForm.Get("arguments")
		v.Editing = true
		if !json.Valid([]byte(v.EditText)) {
			v.Error = "The edited arguments are not valid JSON."
			d.render(w, http.StatusUnprocessableEntity, page{Title: d.title, Person: person, Call: &v})
			return
		}
		o, err = d.d.Supersede(r.Context(), cp, dispatch.Edit{Arguments: v.EditText, Principal: person})
	case "answer":
		var answer []byte
		answer, err = v.Form.answer(r.PostForm.Get)
		if err == nil {
			if err = cp.CheckAnswer(answer); err == nil {
				o, err = d.d.Resume(r.Context(), cp, dispatch.Answer{Response: answer, Principal: person, Record: true})
			}
		}
	default:
		d.render(w, http.StatusBadRequest, page{Title: d.title, Person: person, Message: "The form named no action."})
		return
	}
	d.logAnswer(r.Context(), person, action, cp, o, err)
	var answered *dispatch.AnsweredError
	switch {
	case errors.As(err, &answered):
		d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Answered: answeredOf(answered.Claim)})
		return
	case errors.As(err, new(*formError)) || errors.Is(err, dispatch.ErrInvalidAnswer):
		v.Error = reason(err)
		d.render(w, http.StatusUnprocessableEntity, page{Title: d.title, Person: person, Call: &v})
		return
	case errors.Is(err, dispatch.ErrExpired):
		d.render(w, http.StatusGone, page{Title: d.title, Person: person, Message: "This call has expired: it can no longer be answered."})
		return
	case errors.Is(err, dispatch.ErrWrongPrincipal):
		d.render(w, http.StatusForbidden, page{Title: d.title, Person: person, Message: "You may not answer this call."})
		return
	case err != nil && o.Kind == "":
		d.storeFailed(w, r, err)
		return
	}
	if o.Replayed {
		// The same answer was claimed before (another tab, a resend):
		// nothing ran now.
		if c, cerr := d.store.Claimed(r.Context(), cp.ID()); cerr == nil {
			d.render(w, http.StatusConflict, page{Title: d.title, Person: person, Answered: answeredOf(c)})
			return
		}
	}
	// A call that asks again takes its place in its turn by itself
	// (dispatch.Dispatcher.Resume): the new question is pending.
	result := outcomeOf(o, p.TurnID, p.Index)
	result.Declined = action == "decline"
	result.Unrecorded = err != nil
	d.render(w, http.StatusOK, page{Title: d.title, Person: person, Outcome: &result})
}

// reason is the text of an error the person can correct.
func reason(err error) string {
	var fe *formError
	if errors.As(err, &fe) {
		return fe.msg
	}
	return strings.TrimPrefix(errprefix.Body(err), errprefix.Body(dispatch.ErrInvalidAnswer)+": ")
}

// storeFailed answers 503 for a failure of the store, and logs it.
func (d *Desk) storeFailed(w http.ResponseWriter, r *http.Request, err error) {
	if d.logger != nil {
		d.logger.ErrorContext(r.Context(), "approval desk: store failed", "error", err.Error())
	}
	d.render(w, http.StatusServiceUnavailable, page{Title: d.title, Message: "The desk cannot reach its store. Nothing was answered; try again later."})
}

// logAnswer logs what a person did.
func (d *Desk) logAnswer(ctx context.Context, person, action string, cp dispatch.Checkpoint, o dispatch.Outcome, err error) {
	if d.logger == nil {
		return
	}
	attrs := []any{"person", person, "action", action, "tool", cp.Request().Name, "checkpoint_id", cp.ID(), "kind", string(o.Kind)}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	d.logger.InfoContext(ctx, "approval desk: answer", attrs...)
}
