package desk_test

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

type refundArgs struct {
	Order string `json:"order" jsonschema:"minLength=1"`
	Cents int    `json:"cents" jsonschema:"minimum=1"`
}

type refundAnswer struct {
	Approve bool   `json:"approve" jsonschema:"description=Send the money back?"`
	Reason  string `json:"reason,omitempty" jsonschema:"enum=duplicate,enum=damaged,enum=other"`
	Cap     int    `json:"cap,omitempty" jsonschema:"minimum=1,maximum=100000,description=Most cents to refund"`
}

// fixture is a runtime with one refund tool, a store, a dispatcher and a
// desk, served by httptest.
type fixture struct {
	d        *dispatch.Dispatcher
	reg      *tool.Registry
	store    *dispatch.MemoryStore
	srv      *httptest.Server
	refunded atomic.Int32
	acted    atomic.Int32
	turns    int
}

func newFixture(t *testing.T, authorize func(context.Context, string, dispatch.Pending) (bool, error)) *fixture {
	t.Helper()
	f := &fixture{}
	refund, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in refundArgs) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d cents on order %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in refundArgs, a refundAnswer) (string, error) {
			f.acted.Add(1)
			if !a.Approve {
				return "not refunded", nil
			}
			f.refunded.Add(1)
			return fmt.Sprintf("refunded %d cents on %s", in.Cents, in.Order), nil
		})
	require.NoError(t, err)
	b, err := tool.Bind(refund)
	require.NoError(t, err)
	reg := &tool.Registry{}
	require.NoError(t, reg.Register(b))
	f.reg = reg
	f.store, err = dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	f.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: f.store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}})
	require.NoError(t, err)
	if authorize == nil {
		authorize = func(context.Context, string, dispatch.Pending) (bool, error) { return true, nil }
	}
	dk, err := desk.New(desk.Config{
		Dispatcher: f.d, Store: f.store, Authorize: authorize, PageSize: 2,
		Person: func(r *http.Request) (string, error) {
			if p := r.Header.Get("X-Person"); p != "" {
				return p, nil
			}
			return "", errors.New("no person")
		},
	})
	require.NoError(t, err)
	f.srv = httptest.NewServer(dk)
	t.Cleanup(f.srv.Close)
	return f
}

// suspend runs a refund call with args in a new turn, saves it and
// returns the link to its page.
func (f *fixture) suspend(t *testing.T, args, principal string) string {
	t.Helper()
	f.turns++
	turn := fmt.Sprintf("turn-%d", f.turns)
	o := f.d.Run(t.Context(), dispatch.Call{ID: "call-" + turn, Request: tool.Request{Name: "refund", Arguments: args}, Principal: principal})
	require.Equal(t, dispatch.KindSuspended, o.Kind, o.Text())
	require.NoError(t, f.d.SaveTurn(t.Context(), turn, []dispatch.Outcome{o}))
	return "/call?" + url.Values{"turn": {turn}, "i": {"0"}, "cp": {o.Checkpoint.ID()}}.Encode()
}

// answeredClaims lists the claims of answered calls in store: its
// records of the calls Run ran (dispatch.RunSHA256) left out.
func answeredClaims(t *testing.T, store dispatch.Lister) []dispatch.Claim {
	t.Helper()
	all, err := store.Claims(t.Context(), dispatch.ClaimQuery{})
	require.NoError(t, err)
	var claims []dispatch.Claim
	for _, c := range all {
		if c.AnswerSHA256 != dispatch.RunSHA256 {
			claims = append(claims, c)
		}
	}
	return claims
}

func (f *fixture) get(t *testing.T, path, person string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.srv.URL+path, nil)
	require.NoError(t, err)
	if person != "" {
		req.Header.Set("X-Person", person)
	}
	return f.do(t, req)
}

func (f *fixture) do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

var hidden = regexp.MustCompile(`name="(csrf|turn|i|cp)" value="([^"]*)"`)

// post sends the form of the call page at link with the extra values.
func (f *fixture) post(t *testing.T, link, person string, values url.Values) (int, string) {
	t.Helper()
	status, page := f.get(t, link, person)
	require.Equal(t, http.StatusOK, status, page)
	form := url.Values{}
	for _, m := range hidden.FindAllStringSubmatch(page, 4) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	require.NotEmpty(t, form.Get("csrf"), page)
	for k, v := range values {
		form[k] = v
	}
	return f.postForm(t, person, form)
}

func (f *fixture) postForm(t *testing.T, person string, form url.Values) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/call", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Person", person)
	return f.do(t, req)
}

func TestDeskAnswerForm(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1250}`, "")

	status, page := f.get(t, link, "ann")
	require.Equal(t, http.StatusOK, status)
	for _, want := range []string{
		"Refund 1250 cents on order A-7?",
		`type="radio" name="m.approve" value="true" required`,
		`Send the money back?`,
		`<select id="m.reason" name="m.reason">`, `<option value="damaged">damaged</option>`,
		`type="number" inputmode="decimal" step="1" value="" min="1" max="100000"`,
		`Most cents to refund`,
		"anyone this desk authorizes", // no sealed principal
	} {
		require.Contains(t, page, want)
	}

	// A refused answer: the reason, and the input kept.
	status, page = f.post(t, link, "ann", url.Values{"action": {"answer"}, "m.approve": {"true"}, "m.reason": {"damaged"}, "m.cap": {"0"}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, page, "Not accepted:")
	require.Contains(t, page, "/cap")
	require.Contains(t, page, `value="true" checked`)
	require.Contains(t, page, `<option value="damaged" selected>damaged</option>`)
	require.Contains(t, page, `value="0" min="1"`)
	status, page = f.post(t, link, "ann", url.Values{"action": {"answer"}, "m.approve": {"true"}, "m.cap": {"lots"}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, page, `&#34;cap&#34; must be a number`)
	require.Zero(t, f.acted.Load())

	// An accepted answer runs the tool once and is recorded.
	status, page = f.post(t, link, "ann", url.Values{"action": {"answer"}, "m.approve": {"true"}, "m.cap": {"5000"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Completed")
	require.Contains(t, page, "refunded 1250 cents on A-7")
	require.EqualValues(t, 1, f.refunded.Load())
	claims := answeredClaims(t, f.store)
	require.Len(t, claims, 1)
	require.Equal(t, "ann", claims[0].Principal)
	require.JSONEq(t, `{"approve":true,"cap":5000}`, string(claims[0].Response))

	// The page of an answered call says who answered it.
	status, page = f.get(t, link, "bob")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "was already answered by <b>ann</b>")
	status, page = f.get(t, "/", "bob")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "Nothing waits for an answer.")
}

func TestDeskDeclineAndTwoTabs(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-8","cents":10}`, "")
	// Two tabs load the form; the first declines, the second approves.
	_, first := f.get(t, link, "ann")
	_, second := f.get(t, link, "ann")
	form := func(page string) url.Values {
		v := url.Values{}
		for _, m := range hidden.FindAllStringSubmatch(page, 4) {
			v.Set(m[1], html.UnescapeString(m[2]))
		}
		return v
	}
	decline := form(first)
	decline.Set("action", "decline")
	status, page := f.postForm(t, "ann", decline)
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Declined")
	approve := form(second)
	approve.Set("action", "answer")
	approve.Set("m.approve", "true")
	status, page = f.postForm(t, "ann", approve)
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, page, "was already declined by <b>ann</b>")
	require.Zero(t, f.acted.Load(), "a declined call never runs")

	// The same answer from two tabs: one runs, the other is told.
	link = f.suspend(t, `{"order":"A-9","cents":10}`, "")
	_, first = f.get(t, link, "ann")
	_, second = f.get(t, link, "bob")
	a := form(first)
	a.Set("action", "answer")
	a.Set("m.approve", "true")
	status, _ = f.postForm(t, "ann", a)
	require.Equal(t, http.StatusOK, status)
	b := form(second)
	b.Set("action", "answer")
	b.Set("m.approve", "true")
	b.Set("csrf", form(second).Get("csrf"))
	status, page = f.postForm(t, "bob", b)
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, page, "was already answered by <b>ann</b>")
	require.EqualValues(t, 1, f.refunded.Load())
}

func TestDeskEdit(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":125000}`, "ann")

	// Arguments the tool refuses are refused, kept, and claim nothing.
	status, page := f.post(t, link, "ann", url.Values{"action": {"edit"}, "arguments": {`{"order":"A-7","cents":0}`}})
	require.Equal(t, http.StatusUnprocessableEntity, status)
	require.Contains(t, page, "/cents")
	require.Contains(t, page, `{&#34;order&#34;:&#34;A-7&#34;,&#34;cents&#34;:0}`)
	status, _ = f.post(t, link, "ann", url.Values{"action": {"edit"}, "arguments": {`{"order":`}})
	require.Equal(t, http.StatusUnprocessableEntity, status)

	// The edit is a new call: the tool asks again, under a new key.
	status, page = f.post(t, link, "ann", url.Values{"action": {"edit"}, "arguments": {`{"order":"A-7","cents":1250}`}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "The tool asks again")
	next := regexp.MustCompile(`href="(call\?[^"]+)"`).FindStringSubmatch(page)
	require.NotNil(t, next)
	nextLink := "/" + html.UnescapeString(next[1])
	status, page = f.get(t, nextLink, "ann")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "Refund 1250 cents on order A-7?")

	status, page = f.post(t, nextLink, "ann", url.Values{"action": {"answer"}, "m.approve": {"true"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "refunded 1250 cents on A-7")
	require.EqualValues(t, 1, f.refunded.Load())

	claims := answeredClaims(t, f.store)
	require.Len(t, claims, 2)
	require.True(t, claims[0].Superseded())
	require.Equal(t, `{"order":"A-7","cents":125000}`, claims[0].Edit.Proposed)
	require.Equal(t, `{"order":"A-7","cents":1250}`, claims[0].Edit.Approved)
	require.Equal(t, claims[0].Edit.IdempotencyKey, claims[1].IdempotencyKey)
	outcomes, err := f.d.Turn(t.Context(), "turn-1")
	require.NoError(t, err)
	require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind)

	status, page = f.get(t, link, "ann")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "approved with edited arguments, as a new call")
}

func TestDeskWhoMayAnswer(t *testing.T) {
	f := newFixture(t, func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
		return person != "mallory", nil
	})
	link := f.suspend(t, `{"order":"A-7","cents":1}`, "ann")

	status, _ := f.get(t, link, "")
	require.Equal(t, http.StatusUnauthorized, status)
	status, page := f.get(t, link, "ann")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "only <b>ann</b> (sealed in the call)")

	// bob passes the hook but is not the sealed principal; mallory is
	// refused by the hook. Neither may see the call: its page reads as
	// one that does not exist, and the list does not show it.
	for _, person := range []string{"bob", "mallory"} {
		status, page := f.get(t, link, person)
		require.Equal(t, http.StatusNotFound, status)
		require.Contains(t, page, "There is no such call.")
		require.NotContains(t, page, "A-7")
		require.NotContains(t, page, `name="csrf"`)
		status, page = f.get(t, "/", person)
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, page, "Nothing waits for an answer.")
	}
	// A token of ann's page is worth nothing to bob.
	_, page = f.get(t, link, "ann")
	form := url.Values{"action": {"answer"}, "m.approve": {"true"}}
	for _, m := range hidden.FindAllStringSubmatch(page, 4) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	status, _ = f.postForm(t, "bob", form)
	require.Equal(t, http.StatusForbidden, status)
	// Without a token, or from another site, nothing runs.
	noToken := url.Values{"action": {"answer"}, "m.approve": {"true"}, "turn": {form.Get("turn")}, "i": {"0"}, "cp": {form.Get("cp")}}
	status, _ = f.postForm(t, "ann", noToken)
	require.Equal(t, http.StatusForbidden, status)
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/call", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Person", "ann")
	req.Header.Set("Origin", "https://evil.example")
	status, _ = f.do(t, req)
	require.Equal(t, http.StatusForbidden, status)
	require.Zero(t, f.acted.Load())

	status, page = f.postForm(t, "ann", form)
	require.Equal(t, http.StatusOK, status, page)
	require.EqualValues(t, 1, f.refunded.Load())
}

func TestDeskEscapesModelText(t *testing.T) {
	f := newFixture(t, nil)
	hostile := `<script>alert(1)</script><img src=x onerror=alert(2)>`
	link := f.suspend(t, fmt.Sprintf(`{"order":%q,"cents":1}`, hostile), "")
	for _, path := range []string{"/", link} {
		status, page := f.get(t, path, "ann")
		require.Equal(t, http.StatusOK, status)
		require.NotContains(t, page, "<script")
		require.NotContains(t, page, "<img")
		require.Contains(t, page, "&lt;script&gt;alert(1)&lt;/script&gt;")
	}
	resp, err := f.srv.Client().Get(f.srv.URL + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'none'")
	require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"))
}

func TestDeskPages(t *testing.T) {
	f := newFixture(t, nil)
	for i := range 5 {
		f.suspend(t, fmt.Sprintf(`{"order":"P-%d","cents":1}`, i), "")
	}
	path := "/"
	for n, orders := range [][]string{{"P-4", "P-3"}, {"P-2", "P-1"}, {"P-0"}} {
		status, page := f.get(t, path, "ann")
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, len(orders), strings.Count(page, `<li class="call"`))
		last := -1
		for _, o := range orders {
			at := strings.Index(page, o)
			require.Greater(t, at, last, "newest first: %s", o)
			last = at
		}
		require.Equal(t, n < 2, strings.Contains(page, `rel="next"`))
		require.Equal(t, n > 0, strings.Contains(page, `rel="first"`))
		if m := regexp.MustCompile(`rel="next" href="([^"]*)"`).FindStringSubmatch(page); m != nil {
			path = "/" + html.UnescapeString(m[1])
		}
	}
}

func TestNewRefuses(t *testing.T) {
	f := newFixture(t, nil)
	person := func(*http.Request) (string, error) { return "ann", nil }
	allow := func(context.Context, string, dispatch.Pending) (bool, error) { return true, nil }
	for name, c := range map[string]desk.Config{
		"no dispatcher": {Store: f.store, Person: person, Authorize: allow},
		"no person":     {Dispatcher: f.d, Store: f.store, Authorize: allow},
		"no authorize":  {Dispatcher: f.d, Store: f.store, Person: person},
		"short key":     {Dispatcher: f.d, Store: f.store, Person: person, Authorize: allow, CSRFKey: []byte("short")},
		"page size":     {Dispatcher: f.d, Store: f.store, Person: person, Authorize: allow, PageSize: 501},
	} {
		_, err := desk.New(c)
		require.ErrorIs(t, err, desk.ErrInvalidConfig, name)
	}
	var zero desk.Desk
	rec := httptest.NewRecorder()
	zero.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
}
