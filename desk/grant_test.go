package desk_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

// newGrantFixture is newFixture with a Dispatcher that keeps grants in
// the fixture's store.
func newGrantFixture(t *testing.T, authorize func(context.Context, string, dispatch.Pending) (bool, error)) *fixture {
	t.Helper()
	f := newFixture(t, authorize)
	var err error
	f.d, err = dispatch.New(dispatch.Config{Registry: f.reg, Store: f.store, Grants: f.store,
		SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}})
	require.NoError(t, err)
	if authorize == nil {
		authorize = func(context.Context, string, dispatch.Pending) (bool, error) { return true, nil }
	}
	dk, err := desk.New(desk.Config{
		Dispatcher: f.d, Store: f.store, Authorize: authorize,
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

// run runs a refund call sealed for principal, not saved in a turn.
func (f *fixture) run(t *testing.T, args, principal string) dispatch.Outcome {
	t.Helper()
	return f.d.Run(t.Context(), dispatch.Call{ID: "call", Request: tool.Request{Name: "refund", Arguments: args}, Principal: principal})
}

var grantLink = regexp.MustCompile(`href="(grant\?id=[0-9a-f]{32})"`)

// postGrant posts the revocation form of the grant page at link.
func (f *fixture) postGrant(t *testing.T, link, person string) (int, string) {
	t.Helper()
	status, page := f.get(t, link, person)
	require.Equal(t, http.StatusOK, status, page)
	m := regexp.MustCompile(`name="csrf" value="([^"]*)"`).FindStringSubmatch(page)
	require.NotNil(t, m, "the page has a revocation form")
	id := strings.TrimPrefix(link, "/grant?id=")
	form := url.Values{"csrf": {html.UnescapeString(m[1])}, "id": {id}, "action": {"revoke"}}
	req, err := http.NewRequest(http.MethodPost, f.srv.URL+"/grant", strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Person", person)
	return f.do(t, req)
}

// A person approves a call and its like in advance, with a member
// widened: the call is answered, the grant is shown with what it pins and
// what it widens, and it answers the next call that fits.
func TestDeskMintsAGrant(t *testing.T) {
	f := newGrantFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1250}`, "ann")
	status, page := f.get(t, link, "ann")
	require.Equal(t, http.StatusOK, status)
	for _, want := range []string{
		`<a class="grants" href="grants">Standing approvals</a>`,
		`<details class="grant">`,
		`name="grant.max.1"`,                              // cents, a number
		`<span class="pinned">exactly as approved</span>`, // order, a string
		`name="grant.uses"`, `max="7"`,                    // days, by DefaultMaxGrantTTL
	} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, `name="grant.max.0"`, "a string cannot be widened")

	// A widening the call's value falls outside: refused, input kept,
	// nothing made or answered.
	status, page = f.post(t, link, "ann", url.Values{"action": {"grant"}, "m.approve": {"true"}, "grant.uses": {"3"}, "grant.days": {"2"}, "grant.min.1": {"2000"}})
	require.Equal(t, http.StatusUnprocessableEntity, status, page)
	require.Contains(t, page, "The standing approval was not made: widened member &#34;cents&#34;: the bounds do not admit its approved value 1250")
	require.Contains(t, page, `name="grant.min.1" type="text" inputmode="decimal" value="2000"`)
	status, page = f.post(t, link, "ann", url.Values{"action": {"grant"}, "m.approve": {"true"}, "grant.uses": {"0"}, "grant.days": {"2"}})
	require.Equal(t, http.StatusUnprocessableEntity, status, page)
	require.Contains(t, page, "must be a whole number from 1 to 10000")
	require.Zero(t, f.acted.Load())

	status, page = f.post(t, link, "ann", url.Values{"action": {"grant"}, "m.approve": {"true"}, "grant.uses": {"3"}, "grant.days": {"2"}, "grant.max.1": {"5000"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "refunded 1250 cents on A-7")
	require.Contains(t, page, "Approved in advance: the next 3 calls like this one")
	m := grantLink.FindStringSubmatch(page)
	require.NotNil(t, m, page)
	grantPage := "/" + m[1]

	status, page = f.get(t, grantPage, "ann")
	require.Equal(t, http.StatusOK, status)
	for _, want := range []string{
		`<tr class="rule widened" data-member="cents"><td><code>cents</code></td><td>any number up to 5000 (approved: 1250) <span class="widened-mark">widened</span>`,
		`<tr class="rule" data-member="order"><td><code>order</code></td><td>exactly &#34;A-7&#34;</td>`,
		`<p class="closed">and no other argument.</p>`,
		`<dd class="uses">0 of 3 used</dd>`,
		`<dd class="principal"><b>ann</b></dd>`,
	} {
		require.Contains(t, page, want)
	}

	require.Equal(t, dispatch.KindCompleted, f.run(t, `{"order":"A-7","cents":4000}`, "ann").Kind)
	require.Equal(t, dispatch.KindSuspended, f.run(t, `{"order":"B-9","cents":1250}`, "ann").Kind)
	require.EqualValues(t, 2, f.refunded.Load())
	_, page = f.get(t, grantPage, "ann")
	require.Contains(t, page, `<dd class="uses">1 of 3 used</dd>`)
	_, page = f.get(t, "/grants", "ann")
	require.Contains(t, page, "2 of 3 calls left")
}

// A person sees and revokes only the grants of calls they may answer;
// a revocation takes effect on the next call.
func TestDeskRevokesAGrant(t *testing.T) {
	f := newGrantFixture(t, func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
		return person != "eve", nil
	})
	link := f.suspend(t, `{"order":"A-7","cents":1250}`, "ann")
	status, page := f.post(t, link, "ann", url.Values{"action": {"grant"}, "m.approve": {"true"}, "grant.uses": {"5"}, "grant.days": {"1"}})
	require.Equal(t, http.StatusOK, status, page)
	grantPage := "/" + grantLink.FindStringSubmatch(page)[1]

	for _, other := range []string{"bob", "eve"} { // another principal; one Authorize refuses
		status, page = f.get(t, grantPage, other)
		require.Equal(t, http.StatusNotFound, status, other)
		require.Contains(t, page, "There is no such standing approval.")
		_, page = f.get(t, "/grants", other)
		require.Contains(t, page, "No standing approvals.", other)
	}
	_, page = f.get(t, "/grants", "ann")
	require.Contains(t, page, `data-grant="`)

	status, page = f.postGrant(t, grantPage, "ann")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Revoked: from the next call on, it answers nothing.")
	require.Contains(t, page, `data-state="revoked">revoked by <b>ann</b>`)
	require.NotContains(t, page, `class="revoke"`)
	require.Equal(t, dispatch.KindSuspended, f.run(t, `{"order":"A-7","cents":1250}`, "ann").Kind, "the next call asks")
}

// A call sealed for nobody is never approved in advance, and a desk
// whose Dispatcher keeps no grants offers none.
func TestDeskOffersGrantsOnlyWhereTheyApply(t *testing.T) {
	f := newGrantFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1250}`, "")
	_, page := f.get(t, link, "ann")
	require.NotContains(t, page, `<details class="grant">`)
	status, page := f.post(t, link, "ann", url.Values{"action": {"grant"}, "m.approve": {"true"}, "grant.uses": {"5"}, "grant.days": {"1"}})
	require.Equal(t, http.StatusUnprocessableEntity, status, page)
	require.Contains(t, page, "This call cannot be approved in advance")

	plain := newFixture(t, nil)
	link = plain.suspend(t, `{"order":"A-7","cents":1250}`, "ann")
	_, page = plain.get(t, link, "ann")
	require.NotContains(t, page, `<details class="grant">`)
	require.NotContains(t, page, `href="grants"`)
	status, page = plain.get(t, "/grants", "ann")
	require.Equal(t, http.StatusNotFound, status)
	require.Contains(t, page, "This desk keeps no standing approvals.")
}
