package desk

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"log/slog"
	"net/http"
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
	// Authorize reports whether person may answer the call p. Both it
	// and the principal sealed in the call's checkpoint, when it names
	// one, must accept the person. p is the summary the store keeps of
	// the call (its turn and position, checkpoint and call IDs, tool,
	// sealed principal, prompt and times: never what the request
	// names), the same on every page; its Outcome is the zero
	// SavedOutcome. For a call answered already, p is made from the
	// store's record of the answer. An error is a refusal. It must be
	// safe for concurrent use.
	Authorize func(ctx context.Context, person string, p dispatch.Pending) (bool, error)
	// MaySee, when not nil, reports whether person may see the call p
	// (given as to Authorize) without answering it: such a call is
	// listed, and its page shows who may answer it and, once answered,
	// who did and how, but not its prompt, arguments or form. nil means
	// that a person sees exactly the calls they may answer. A call a
	// person may not see is not listed, and its page and every action on
	// it answer 404, as for a call that does not exist. An error is a
	// refusal. It must be safe for concurrent use.
	MaySee func(ctx context.Context, person string, p dispatch.Pending) (bool, error)
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
//   - GET  /                the pending calls the person may see, newest
//     first, a page at a time (?from=N starts at the store's N-th);
//   - GET  /call            one call (?turn=…&i=…&cp=…): its tool, prompt,
//     arguments, who may answer, and the answer form rendered from the
//     response schema; or, once answered, who answered it, when and how,
//     and where its call stands;
//   - GET  /call/arguments  the call's whole arguments, for download;
//   - POST /call            an answer (action "answer"), a decline
//     ("decline"), edited arguments approved as a new call ("edit"), the
//     clearing of a call sealed with a retired key ("dismiss"), or the
//     recorded answer sent again to recover a stranded call ("recover"),
//     or an answer that also approves the call's like in advance
//     ("grant": a dispatch.Grant, offered when the Dispatcher keeps
//     grants and the call is sealed for a principal);
//   - GET  /grants, GET /grant, POST /grant  the standing approvals of the
//     calls the person may answer: listed, shown with what each member
//     of a covered call must be, and revoked;
//   - GET  /desk.css        the style sheet.
//
// Mount it under a prefix with http.StripPrefix; its links are relative.
//
// Who sees what is decided on every page and action from what the store
// keeps of the call (its turn and position, its sealed principal, its
// tool), never from what the request names: Config.Authorize says who
// may answer, Config.MaySee who may see. A call a person may not see is
// not listed, and its pages and actions answer 404, as for a call that
// does not exist, answered or not.
//
// Pages are bounded whatever the model wrote: the list shows the store's
// summaries (dispatch.MaxSummaryBytes a text), a call page shows the
// prompt and the arguments up to 64 KiB each (the whole arguments are a
// download away, and arguments longer than that are not corrected in
// place); a page of the largest size stays below 2 MiB.
//
// Every text the model or the tool wrote is escaped by html/template, and
// shown as the tool gets it: a bidi control, a zero width or another
// invisible character is shown as a mark that names it (⟨U+202E⟩), or
// as its escape inside JSON. The pages carry a Content-Security-Policy
// that allows no script at all and no framing. Every form carries a
// token bound to the person (Config.CSRFKey), and a post whose browser
// says it comes from another site is refused. An answer is checked
// against the response schema before anything runs; a refused one shows
// the form again with the person's input and the reason. The answer is
// claimed and resumed through the Dispatcher, recorded in the claim with
// the person as its principal (dispatch.Answer.Record); two answers to
// one call, from two tabs or two people, claim it once: the second is
// told who answered first. Edited arguments are a new call
// (dispatch.Dispatcher.Supersede). A resumed call that asks again takes
// its place in its turn by itself, so that the new question is pending.
//
// A call that can no longer be answered says why: its seal cannot be
// opened (the key that sealed it was retired: a person clears it,
// dispatch.Dispatcher.Dismiss), or its tool changed (a person declines
// it). A failing store says that the store failed. A call whose process
// was lost before it recorded an outcome says so, and a person recovers
// it by sending the recorded answer again.
//
// A Desk is safe for concurrent use. Make one with New; the zero Desk
// answers 500 to every request.
type Desk struct {
	d         *dispatch.Dispatcher
	store     dispatch.Store
	person    func(*http.Request) (string, error)
	authorize func(context.Context, string, dispatch.Pending) (bool, error)
	maySee    func(context.Context, string, dispatch.Pending) (bool, error)
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
		d: config.Dispatcher, store: config.Store, person: config.Person, authorize: config.Authorize, maySee: config.MaySee,
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
	mux.HandleFunc("GET /call/arguments", d.arguments)
	mux.HandleFunc("GET /grants", d.listGrants) // grant.go
	mux.HandleFunc("GET /grant", d.showGrant)
	mux.HandleFunc("POST /grant", d.postGrant)
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

// reason is the text of an error the person can correct.
func reason(err error) string {
	var fe *formError
	if errors.As(err, &fe) {
		return fe.msg
	}
	return errprefix.Detail(err, dispatch.ErrInvalidAnswer)
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
