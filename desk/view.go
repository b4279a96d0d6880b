package desk

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/agentcontract/tool/dispatch"
)

//go:embed page.html desk.css
var files embed.FS

var (
	pageTemplate = template.Must(template.New("page.html").Funcs(template.FuncMap{
		"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	}).ParseFS(files, "page.html"))
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
	// The list.
	List       bool
	Calls      []callView
	Page       int
	Prev, Next int
	// One call, its outcome, or who answered it.
	Call     *callView
	Outcome  *outcomeView
	Answered *answeredView
}

// callView is one pending call.
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
	Arguments  string // indented
	Form       form
	EditText   string
	Editing    bool
	Error      string
	CSRF       string
}

// view returns the view of p for person at now.
func (d *Desk) view(ctx context.Context, person string, p dispatch.Pending, now time.Time) callView {
	cp := p.Outcome.Checkpoint
	v := callView{
		TurnID: p.TurnID, Index: p.Index, CheckpointID: cp.ID(),
		Tool: cp.Request().Name, CallID: cp.CallID(),
		IssuedAt: cp.IssuedAt(), ExpiresAt: cp.ExpiresAt(), Expired: !now.Before(cp.ExpiresAt()),
		Principal: cp.Principal(),
	}
	v.Link = "call?" + url.Values{"turn": {p.TurnID}, "i": {strconv.Itoa(p.Index)}, "cp": {cp.ID()}}.Encode()
	v.May = d.may(ctx, person, p)
	if !v.May {
		return v
	}
	ir := cp.InputRequest()
	prompt := ir.Prompt()
	var text string
	if json.Unmarshal(prompt, &text) == nil {
		v.PromptText = text
	} else {
		v.PromptJSON = indent(prompt)
	}
	v.Arguments = indent([]byte(cp.Request().Arguments))
	v.EditText = v.Arguments
	v.Form = newForm(ir.ResponseSchema().JSON())
	v.CSRF = d.csrfToken(person, now)
	return v
}

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
	v := outcomeView{Kind: string(o.Kind), Text: o.Text()}
	if o.Kind == dispatch.KindSuspended && o.Checkpoint != nil {
		v.Asks = true
		v.AskLink = "call?" + url.Values{"turn": {turn}, "i": {strconv.Itoa(index)}, "cp": {o.Checkpoint.ID()}}.Encode()
	}
	return v
}

// answeredView says who answered a call, when and how.
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
}

func answeredOf(c dispatch.Claim) *answeredView {
	v := &answeredView{Tool: c.Tool, By: c.Principal, At: c.ClaimedAt, How: "answered", CheckpointID: c.CheckpointID}
	switch {
	case c.Declined:
		v.How = "declined"
	case c.Superseded():
		v.How = "approved with edited arguments, as a new call"
		v.Arguments = c.Edit
	}
	if len(c.Response) > 0 {
		v.Response = indent(c.Response)
	}
	if c.Outcome != nil {
		v.Recorded = true
		v.Kind = string(c.Outcome.Kind)
		v.Text = dispatch.Text(c.Outcome.Output)
	}
	return v
}

// render writes pg with status.
func (d *Desk) render(w http.ResponseWriter, status int, pg page) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, pg); err != nil {
		http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}
