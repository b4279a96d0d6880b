package desk

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
)

//go:embed page.html grant.html desk.css
var files embed.FS

var (
	pageTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
		"when":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
		"show":     visible,
		"showJSON": visibleJSON,
	}).ParseFS(files, "page.html", "grant.html"))
	stylesheet = mustRead("desk.css")
)

func mustRead(name string) string {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// page is what one page shows.
type page struct {
	Title   string
	Person  string
	Message string
	// The list: the calls from the store's From-th pending call on; Next,
	// when not 0, is where the next page starts; First links back to the
	// newest calls.
	List  bool
	Calls []callView
	From  int
	Next  int
	First bool
	// One call, its outcome, or who answered it.
	Call     *callView
	Outcome  *outcomeView
	Answered *answeredView
	// Standing approvals (grant.go): Grants is what the page shows of
	// them, Granting whether the desk keeps any (a link to them).
	Grants   *grantsPage
	Granting bool
}

// callView is one pending call. Every text a model or a tool wrote is
// shown through show or showJSON (see visible), and bounded.
type callView struct {
	Link         string
	TurnID       string
	Index        int
	CheckpointID string
	Tool         string
	CallID       string
	IssuedAt     time.Time
	ExpiresAt    time.Time
	Expired      bool
	// Principal is the sealed principal, "" when the checkpoint names none.
	Principal string
	// May: the person may answer; the prompt and arguments are shown only
	// then.
	May        bool
	PromptText string // the prompt when it is a JSON string
	PromptJSON string // otherwise, indented
	PromptCut  bool   // the prompt is longer than what is shown
	// Arguments are the arguments, indented, up to maxShownBytes;
	// ArgumentsCut says there is more, which ArgumentsLink downloads.
	Arguments     string
	ArgumentsCut  bool
	ArgumentsSize int
	ArgumentsLink string
	// Unanswerable says why the call can no longer be answered, when it
	// cannot: the form is not shown. Dismissable: the key that sealed it
	// was retired, and a person may clear it.
	Unanswerable string
	Dismissable  bool
	Form         form
	// Editable: the arguments are short enough to be corrected here.
	Editable bool
	EditText string
	Editing  bool
	Error    string
	CSRF     string
	// Mint, when set, approves the call's like in advance with the
	// answer given (grant.go).
	Mint *mintForm
}

// maxShownBytes bounds the prompt and the arguments a call page shows,
// and the arguments it offers to correct in place; the whole arguments
// are a download away. With the list's summaries (dispatch.MaxSummaryBytes
// a text) it keeps every page far below 2 MiB, whatever the model wrote.
const maxShownBytes = 64 << 10

// summaryView returns the list's view of p, a summary, at now, for a
// person who may answer it or not.
func summaryView(p dispatch.Pending, now time.Time, may bool) callView {
	v := callView{
		TurnID: p.TurnID, Index: p.Index, CheckpointID: p.CheckpointID, Tool: p.Tool, CallID: p.CallID,
		IssuedAt: p.IssuedAt, ExpiresAt: p.ExpiresAt, Expired: !now.Before(p.ExpiresAt), Principal: p.Principal,
		Link: callLink(p.TurnID, p.Index, p.CheckpointID),
	}
	v.May = may
	if v.May {
		v.PromptText, v.PromptJSON = promptOf([]byte(p.Prompt))
		if v.PromptText == "" && v.PromptJSON == "" {
			v.PromptJSON = p.Prompt // cut short: not JSON any more
		}
	}
	return v
}

// callView returns the page's view of the pending call f, for person at
// now.
func (d *Desk) callView(person string, f found, now time.Time) callView {
	v := summaryView(f.summary, now, false)
	v.May = f.may
	if !v.May {
		return v
	}
	cp := f.p.Outcome.Checkpoint
	v.CSRF = d.csrfToken(person, now)
	if d.d.Open(*cp) != nil {
		v.Unanswerable, v.Dismissable = sealRetired, true
		return v
	}
	ir := cp.InputRequest()
	prompt := ir.Prompt()
	v.PromptCut = len(prompt) > maxShownBytes
	v.PromptText, v.PromptJSON = promptOf(prompt)
	v.PromptText, v.PromptJSON = cut(v.PromptText, maxShownBytes), cut(v.PromptJSON, maxShownBytes)
	args := cp.Request().Arguments
	v.ArgumentsSize = len(args)
	v.ArgumentsLink = "call/arguments?" + url.Values{"turn": {f.p.TurnID}, "i": {strconv.Itoa(f.p.Index)}, "cp": {cp.ID()}}.Encode()
	shown := args
	if len(args) <= maxShownBytes {
		shown = indent([]byte(args))
	}
	v.ArgumentsCut = len(shown) > maxShownBytes
	v.Arguments = cut(shown, maxShownBytes)
	v.Editable = len(args) <= maxShownBytes
	if v.Editable {
		v.EditText = shown
	}
	v.Form = newForm(ir.ResponseSchema().JSON())
	v.Mint = d.mintFormOf(*cp)
	return v
}

// promptOf returns a prompt as text when it is a JSON string, and as
// indented JSON otherwise.
func promptOf(prompt []byte) (text, doc string) {
	if json.Unmarshal(prompt, &text) == nil {
		return text, ""
	}
	if !json.Valid(prompt) {
		return "", ""
	}
	return "", indent(prompt)
}

// cut shortens s to at most n bytes, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// callLink is the link to the page of a call.
func callLink(turn string, index int, cp string) string {
	return "call?" + url.Values{"turn": {turn}, "i": {strconv.Itoa(index)}, "cp": {cp}}.Encode()
}

// unanswerable says why a call the store lists can no longer be
// answered, from the error of the Dispatcher that refused it.
func unanswerable(err error) string {
	return "This call can no longer be answered (" + errprefix.Body(err) + "). Decline it to take it off the list; the model is told it was declined."
}

// sealRetired is what the page of a call whose seal this desk cannot
// open says: the checkpoint came from the desk's own store, so the key
// that sealed it was retired.
const sealRetired = "This call can no longer be answered: the key that sealed it is not one this desk holds any more. Clear it to take it off the list; the model is told it was declined."

// indent returns JSON indented for reading, or as it is when it is not
// JSON.
func indent(doc []byte) string {
	var b bytes.Buffer
	if json.Indent(&b, doc, "", "  ") != nil {
		return string(doc)
	}
	return b.String()
}

// outcomeView is what became of an answer.
type outcomeView struct {
	Kind       string
	Text       string
	Declined   bool
	Asks       bool // the call asks again
	AskLink    string
	Unrecorded bool // the call ran, but its outcome was not recorded
}

func outcomeOf(o dispatch.Outcome, turn string, index int) outcomeView {
	v := outcomeView{Kind: string(o.Kind), Text: cut(o.Text(), maxShownBytes)}
	if o.Kind == dispatch.KindSuspended && o.Checkpoint != nil {
		v.Asks = true
		v.AskLink = callLink(turn, index, o.Checkpoint.ID())
	}
	return v
}

// answeredView says who answered a call, when and how, and where its
// call stands.
type answeredView struct {
	Tool         string
	By           string
	At           time.Time
	How          string
	Kind         string
	Text         string
	Arguments    *dispatch.EditRecord
	Recorded     bool
	Response     string
	CheckpointID string
	// State says where a call without an outcome stands, and what a
	// recovery did to one whose process was lost.
	State string
	// Recover, when set, is the form that sends the recorded answer
	// again, to recover a stranded call.
	Recover *recoverForm
}

// recoverForm names a stranded call for the form that recovers it.
type recoverForm struct {
	CSRF         string
	TurnID       string
	Index        int
	CheckpointID string
}

func (d *Desk) answeredOf(c dispatch.Claim) *answeredView {
	v := &answeredView{Tool: c.Tool, By: c.Principal, At: c.ClaimedAt, How: "answered", CheckpointID: c.CheckpointID}
	switch {
	case c.Declined:
		v.How = "declined"
	case c.Superseded():
		v.How = "approved with edited arguments, as a new call"
		e := *c.Edit
		e.Proposed, e.Approved, e.Executed = cut(e.Proposed, maxShownBytes), cut(e.Approved, maxShownBytes), cut(e.Executed, maxShownBytes)
		v.Arguments = &e
	}
	if len(c.Response) > 0 {
		v.Response = cut(indent(c.Response), maxShownBytes)
	}
	if c.Outcome != nil {
		v.Recorded = true
		v.Kind = string(c.Outcome.Kind)
		v.Text = cut(dispatch.Text(c.Outcome.Output), maxShownBytes)
	}
	now := d.clock()
	switch {
	case c.Stage() == dispatch.StateUnknown:
		v.State = fmt.Sprintf("The process that ran it (attempt %d) was lost before it recorded an outcome, and the tool may not be run again: whether it ran is not known. Find out from the system it acts on.", c.Attempt)
	case c.Stranded(now):
		v.State = "The process that held it stopped before it recorded an outcome. Sending the same answer again recovers it."
	case c.Outcome == nil && c.Attempt > 1:
		v.State = fmt.Sprintf("It runs again (attempt %d), after the process that first ran it was lost.", c.Attempt)
	case c.Outcome == nil && c.Stage() == dispatch.StateRunning:
		v.State = "It is running."
	}
	return v
}

// render writes pg with status.
func (d *Desk) render(w http.ResponseWriter, status int, pg page) {
	pg.Granting = pg.Person != "" && d.d.MaxGrantTTL() > 0
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pg); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
