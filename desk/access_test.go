package desk_test

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

// tenantOf is the tenant of a person ("ann@acme") or of a turn
// ("acme/7").
func tenantOf(s string) string {
	if at := strings.LastIndexByte(s, '@'); at >= 0 {
		return s[at+1:]
	}
	before, _, _ := strings.Cut(s, "/")
	return before
}

// sameTenant answers for the people of a call's tenant, from the turn the
// store placed the call in.
func sameTenant(_ context.Context, person string, p dispatch.Pending) (bool, error) {
	return p.TurnID != "" && tenantOf(person) == tenantOf(p.TurnID) && !strings.HasPrefix(person, "audit@"), nil
}

// suspendIn runs a refund call with args in turn, saves it and returns
// the link to its page.
func (f *fixture) suspendIn(t *testing.T, turn, args string) string {
	t.Helper()
	o := f.d.Run(t.Context(), dispatch.Call{ID: "call-" + turn, Request: tool.Request{Name: "refund", Arguments: args}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	require.NoError(t, f.d.SaveTurn(t.Context(), turn, []dispatch.Outcome{o}))
	return "/call?" + url.Values{"turn": {turn}, "i": {"0"}, "cp": {o.Checkpoint.ID()}}.Encode()
}

// cpOf is the checkpoint ID of a call page's link.
func cpOf(t *testing.T, link string) string {
	u, err := url.Parse(link)
	require.NoError(t, err)
	return u.Query().Get("cp")
}

// Each page and action of the desk shows a call only to the people its
// tenant's hook accepts, decided from what the store keeps of the call,
// whatever the request names: another tenant reads every call of acme as
// a call that does not exist, and a person signed out reads nothing.
func TestDeskTenants(t *testing.T) {
	f := newFixture(t, sameTenant)
	pending := f.suspendIn(t, "acme/1", `{"order":"ACME-PENDING","cents":1}`)
	answered := f.suspendIn(t, "acme/2", `{"order":"ACME-ANSWERED","cents":2}`)
	declined := f.suspendIn(t, "acme/3", `{"order":"ACME-DECLINED","cents":3}`)
	edited := f.suspendIn(t, "acme/4", `{"order":"ACME-EDITED","cents":4}`)
	theirs := f.suspendIn(t, "globex/1", `{"order":"GLOBEX-OWN","cents":5}`)

	status, page := f.post(t, answered, "ann@acme", url.Values{"action": {"answer"}, "m.approve": {"true"}})
	require.Equal(t, http.StatusOK, status, page)
	status, page = f.post(t, declined, "ann@acme", url.Values{"action": {"decline"}})
	require.Equal(t, http.StatusOK, status, page)
	status, page = f.post(t, edited, "ann@acme", url.Values{"action": {"edit"}, "arguments": {`{"order":"ACME-EDITED","cents":1}`}})
	require.Equal(t, http.StatusOK, status, page)

	// The pages of answered calls, as the old desk linked them (turn,
	// index and checkpoint) and by checkpoint alone.
	byID := func(link string) string { return "/call?" + url.Values{"i": {"0"}, "cp": {cpOf(t, link)}}.Encode() }
	pages := map[string]string{
		"list": "/", "pending": pending, "answered": answered, "declined": declined, "edited": edited,
		"answered by ID": byID(answered), "edited by ID": byID(edited),
		"arguments": strings.Replace(pending, "/call?", "/call/arguments?", 1),
	}
	for name, path := range pages {
		t.Run(name, func(t *testing.T) {
			status, page := f.get(t, path, "ann@acme")
			require.Equal(t, http.StatusOK, status, page)
			if name != "arguments" {
				require.True(t, strings.Contains(page, "ACME-") || strings.Contains(page, "was already"), "the tenant sees its call: %s", page)
			}

			status, page = f.get(t, path, "eve@globex")
			if name == "list" {
				require.Equal(t, http.StatusOK, status)
				require.Contains(t, page, "GLOBEX-OWN")
			} else {
				require.Equal(t, http.StatusNotFound, status)
				require.Contains(t, page, "There is no such call.")
			}
			require.NotContains(t, page, "ACME-", "another tenant sees nothing of acme's calls")
			require.NotContains(t, page, "ann@acme")
			for _, link := range []string{pending, answered, declined, edited} {
				require.NotContains(t, page, cpOf(t, link), "not even a checkpoint ID")
			}

			status, page = f.get(t, path, "")
			require.Equal(t, http.StatusUnauthorized, status)
			require.NotContains(t, page, "ACME-")
		})
	}
	// A made-up ID reads as the other tenant's: there is no oracle.
	status, notFound := f.get(t, "/call?i=0&cp=0123456789abcdef0123456789abcdef", "eve@globex")
	require.Equal(t, http.StatusNotFound, status)
	_, denied := f.get(t, byID(answered), "eve@globex")
	require.Equal(t, notFound, denied)

	// An action on acme's call with globex's own valid token is refused
	// as for a call that does not exist, and runs nothing.
	_, own := f.get(t, theirs, "eve@globex")
	token := hidden.FindStringSubmatch(own)
	require.NotNil(t, token)
	form := url.Values{"csrf": {html.UnescapeString(token[2])}, "turn": {"acme/1"}, "i": {"0"}, "cp": {cpOf(t, pending)}, "action": {"answer"}, "m.approve": {"true"}}
	status, page = f.postForm(t, "eve@globex", form)
	require.Equal(t, http.StatusNotFound, status, page)
	form.Set("cp", cpOf(t, answered))
	status, page = f.postForm(t, "eve@globex", form)
	require.Equal(t, http.StatusNotFound, status, page)
	require.NotContains(t, page, "ann@acme")
	require.EqualValues(t, 1, f.refunded.Load(), "only acme's own answer ran")
}

// With MaySee, a person may see calls they may not answer: listed, and
// their pages shown, without the prompt, the arguments or a form.
func TestDeskMaySee(t *testing.T) {
	f := newFixture(t, sameTenant)
	link := f.suspendIn(t, "acme/1", `{"order":"ACME-1","cents":1}`)
	dk, err := desk.New(desk.Config{
		Dispatcher: f.d, Store: f.store, Authorize: sameTenant,
		MaySee: func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
			return tenantOf(person) == tenantOf(p.TurnID), nil
		},
		Person: func(r *http.Request) (string, error) { return r.Header.Get("X-Person"), nil },
	})
	require.NoError(t, err)
	srv := httptest.NewServer(dk)
	t.Cleanup(srv.Close)
	f.srv = srv

	for _, path := range []string{"/", link} {
		status, page := f.get(t, path, "audit@acme")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, page, "You may not answer this call.")
		require.NotContains(t, page, "ACME-1")
		require.NotContains(t, page, `name="csrf"`)
		status, _ = f.get(t, path, "eve@globex")
		require.Equal(t, path == "/", status == http.StatusOK)
	}
	status, page := f.post(t, link, "ann@acme", url.Values{"action": {"answer"}, "m.approve": {"true"}})
	require.Equal(t, http.StatusOK, status, page)
	status, page = f.get(t, link, "audit@acme")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "was already answered by <b>ann@acme</b>")
}

func ExampleConfig_maySee() {
	// An auditor sees every call of their tenant; only its operators
	// answer them.
	config := desk.Config{
		Authorize: func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
			return strings.HasSuffix(person, "@acme") && strings.HasPrefix(p.TurnID, "acme/") && !strings.HasPrefix(person, "audit@"), nil
		},
		MaySee: func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
			return strings.HasSuffix(person, "@acme") && strings.HasPrefix(p.TurnID, "acme/"), nil
		},
	}
	p := dispatch.Pending{TurnID: "acme/7", Tool: "refund"}
	see, _ := config.MaySee(context.Background(), "audit@acme", p)
	answer, _ := config.Authorize(context.Background(), "audit@acme", p)
	fmt.Println(see, answer)
	// Output: true false
}

// The record of a call Run ran under its key (it asked nobody and was
// answered by nobody) is no call of the desk's: its ID names no page,
// although the store keeps it beside the claims of answered calls.
func TestDeskHidesRunRecords(t *testing.T) {
	f := newFixture(t, nil)
	o := f.d.Run(t.Context(), dispatch.Call{ID: "call-1", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7","cents":1}`}, IdempotencyKey: "k1"})
	require.Equal(t, dispatch.KindSuspended, o.Kind, "%v", o.Err)
	id := dispatch.RunRecordID("refund", "", "k1")
	c, err := f.store.Claimed(t.Context(), id)
	require.NoError(t, err, "the store keeps the run's record")
	require.Equal(t, dispatch.RunSHA256, c.AnswerSHA256)
	status, page := f.get(t, "/call?"+url.Values{"i": {"0"}, "cp": {id}}.Encode(), "ann")
	require.Equal(t, http.StatusNotFound, status, page)
	require.Contains(t, page, "There is no such call.")
}
