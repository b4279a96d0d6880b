package desk_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

// serveWith serves f's store through a desk on d instead.
func (f *fixture) serveWith(t *testing.T, d *dispatch.Dispatcher, store dispatch.Store) {
	t.Helper()
	dk, err := desk.New(desk.Config{
		Dispatcher: d, Store: store,
		Authorize: func(context.Context, string, dispatch.Pending) (bool, error) { return true, nil },
		Person:    func(r *http.Request) (string, error) { return r.Header.Get("X-Person"), nil },
	})
	require.NoError(t, err)
	srv := httptest.NewServer(dk)
	t.Cleanup(srv.Close)
	f.srv = srv
}

// Text a model wrote is shown as the tool gets it: a bidi override that
// would make "6666-LIVE-TCCA" read as "ACCT-EVIL-6666" is shown as its
// escape in the arguments and as a mark in the prompt.
func TestDeskShowsInvisibleCharacters(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"`+"\u202e6666-LIVE-TCCA\u202c"+`","cents":1}`, "")
	for _, path := range []string{"/", link} {
		status, page := f.get(t, path, "ann")
		require.Equal(t, http.StatusOK, status)
		require.NotContains(t, page, "\u202e", "no bidi control reaches the page")
		require.NotContains(t, page, "\u202c")
		require.Contains(t, html.UnescapeString(page), "⟨U+202E⟩6666-LIVE-TCCA⟨U+202C⟩", "the prompt shows the marks")
	}
	_, page := f.get(t, link, "ann")
	require.Contains(t, page, `\u202e6666-LIVE-TCCA\u202c`, "the arguments show the escapes")
}

// A call whose seal this desk cannot open (its key was retired) says so,
// not that the store is down, and a person clears it: declined, off the
// list, nothing run.
func TestDeskRetiredKey(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1}`, "")
	reg := &tool.Registry{}
	b, ok := f.reg.Resolve("refund")
	require.True(t, ok)
	require.NoError(t, reg.Register(b))
	rotated, err := dispatch.New(dispatch.Config{Registry: reg, Store: f.store, SealKeys: []dispatch.SealKey{{ID: "k2", Secret: []byte("another secret of thirty-two b!!")}}})
	require.NoError(t, err)
	f.serveWith(t, rotated, f.store)

	status, page := f.get(t, link, "ann")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "the key that sealed it is not one this desk holds any more")
	require.NotContains(t, page, "cannot reach its store")
	require.NotContains(t, page, `value="answer"`)
	require.Contains(t, page, `value="dismiss"`)

	status, page = f.post(t, link, "ann", url.Values{"action": {"dismiss"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Declined")
	c, err := f.store.Claimed(t.Context(), cpOf(t, link))
	require.NoError(t, err)
	require.True(t, c.Declined)
	require.Equal(t, "ann", c.Principal)
	_, page = f.get(t, "/", "ann")
	require.Contains(t, page, "Nothing waits for an answer.")
	require.Zero(t, f.acted.Load())
}

// A call whose tool changed since it was made says why it cannot be
// answered, and is declined to clear it; a store that fails still says
// that the store failed.
func TestDeskContractChangedAndStoreDown(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1}`, "")
	changed, err := tool.NewFunc(tool.FuncConfig{Name: "refund", Description: "refund an order", Effect: tool.EffectIdempotent},
		func(context.Context, struct{ Order string }) (string, error) { return "", nil })
	require.NoError(t, err)
	b, err := tool.Bind(changed)
	require.NoError(t, err)
	reg, err := tool.NewRegistry(b)
	require.NoError(t, err)
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: f.store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}})
	require.NoError(t, err)
	f.serveWith(t, d, f.store)

	status, page := f.post(t, link, "ann", url.Values{"action": {"answer"}, "m.approve": {"true"}})
	require.Equal(t, http.StatusConflict, status)
	require.Contains(t, page, "This call can no longer be answered")
	require.NotContains(t, page, "cannot reach its store")
	status, page = f.post(t, link, "ann", url.Values{"action": {"decline"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Declined")

	link = f.suspend(t, `{"order":"A-8","cents":1}`, "")
	f.serveWith(t, f.d, &downStore{Store: f.store})
	status, page = f.get(t, link, "ann")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Contains(t, page, "cannot reach its store")
}

// downStore fails every read of pending calls, as an unreachable
// database would.
type downStore struct{ dispatch.Store }

func (downStore) Pending(context.Context, dispatch.PendingQuery) ([]dispatch.Pending, error) {
	return nil, errors.New("dial tcp 10.0.0.5:5432: connection refused")
}

// The page of a call whose process was lost says where it stands, and a
// person recovers it by sending the recorded answer again: the refund,
// whose effect does not allow running it again, is recorded unknown.
func TestDeskShowsStrandedCalls(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1}`, "")
	cp := cpOf(t, link)
	// A process claimed it with ann's answer, started it and died.
	answer := json.RawMessage(`{"approve":true}`)
	digest, err := dispatch.AnswerSHA256(answer)
	require.NoError(t, err)
	_, err = f.store.Claim(t.Context(), dispatch.Claim{
		CheckpointID: cp, Nonce: strings.Repeat("ab", 16), Tool: "refund", Principal: "ann",
		AnswerSHA256: digest, Response: answer, ClaimedAt: time.Now(), ExpiresAt: time.Now().Add(24 * time.Hour),
	})
	require.NoError(t, err)
	_, err = f.store.Advance(t.Context(), cp, dispatch.Step{Version: 1, State: dispatch.StateRunning, Attempt: 1, LeaseOwner: "gone", LeaseExpires: time.Now().Add(-time.Second)})
	require.NoError(t, err)
	status, page := f.get(t, link, "ann")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, "The process that held it stopped before it recorded an outcome.")
	require.Contains(t, page, `value="recover"`)

	status, page = f.post(t, link, "ann", url.Values{"action": {"recover"}})
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, "Outcome unknown")
	require.Zero(t, f.acted.Load(), "never run again")
	c, err := f.store.Claimed(t.Context(), cp)
	require.NoError(t, err)
	require.Equal(t, dispatch.StateUnknown, c.State)
	_, page = f.get(t, link, "ann")
	require.Contains(t, page, "whether it ran is not known")
	require.NotContains(t, page, `value="recover"`)
}
