package main

import (
	"context"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
)

var updateScreenshot = flag.Bool("update-screenshot", false, "write testdata/desk.png, the README's picture of the desk")

// chromiumInstall is how to get the browser these tests drive.
const chromiumInstall = "apt-get install chromium"

// chromiumPath returns the Chromium to drive. Without one the tests skip,
// unless TOOL_CI_CHROMIUM=1 says .ci/run installed it: then they fail.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	if os.Getenv("TOOL_CI_CHROMIUM") == "1" {
		t.Fatalf("TOOL_CI_CHROMIUM=1 but no Chromium on PATH; install it with: %s", chromiumInstall)
	}
	t.Skipf("no Chromium on PATH; install it with: %s", chromiumInstall)
	return ""
}

// browser starts a headless Chromium for the test, in a phone's viewport.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // as root
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(412, 915),
	)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	t.Cleanup(cancelBrowser)
	require.NoError(t, chromedp.Do(ctx), "starting Chromium")
	return ctx
}

// tab opens a new tab that records every console message, exception and
// dialog of its pages; a dialog is dismissed.
type tab struct {
	ctx    context.Context
	mu     sync.Mutex
	events []string
}

func newTab(t *testing.T, browserCtx context.Context) *tab {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browserCtx)
	t.Cleanup(cancel)
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancelTimeout)
	tb := &tab{ctx: ctx}
	require.NoError(t, chromedp.Do(ctx))
	record := func(what string) {
		tb.mu.Lock()
		tb.events = append(tb.events, what)
		tb.mu.Unlock()
	}
	console := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range console {
			if err != nil {
				return
			}
			switch m.Source {
			case "", "javascript", "security":
				// A call of the console API or an exception (no source), a
				// script's error, or a refusal by the page's
				// Content-Security-Policy: each means the page tried to
				// run something.
			default:
				// The browser's own notes, such as a status of 409 or the
				// icon the desk does not have.
				continue
			}
			record(fmt.Sprintf("console %s: %s", m.Type, m.Text))
		}
	}()
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			record("dialog: " + ev.Message)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return tb
}

func (tb *tab) run(t *testing.T, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(tb.ctx, actions...))
}

func (tb *tab) text(t *testing.T, sel string) string {
	t.Helper()
	tb.run(t, chromedp.WaitVisible(chromedp.CSS(sel)))
	s, err := chromedp.Run(tb.ctx, chromedp.Text(chromedp.CSS(sel)))
	require.NoError(t, err)
	return s
}

func (tb *tab) value(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(tb.ctx, chromedp.Value(chromedp.CSS(sel)))
	require.NoError(t, err)
	return s
}

func evaluate[T any](t *testing.T, tb *tab, expr string) T {
	t.Helper()
	v, err := chromedp.Run(tb.ctx, chromedp.Evaluate[T](expr))
	require.NoError(t, err)
	return v
}

func (tb *tab) recorded() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.events...)
}

// desk is an app whose desk is served on 127.0.0.1, with one refund
// waiting.
type deskServer struct {
	*app
	url string
}

func newDeskServer(t *testing.T) *deskServer {
	t.Helper()
	a, err := newApp()
	require.NoError(t, err)
	srv := httptest.NewServer(a.desk)
	t.Cleanup(srv.Close)
	return &deskServer{app: a, url: srv.URL + "/"}
}

func (s *deskServer) suspend(t *testing.T, turn, args string) {
	t.Helper()
	o, err := s.app.suspend(t.Context(), turn, dispatch.Call{ID: "call-" + turn, Request: tool.Request{Name: "refund", Arguments: args}})
	require.NoError(t, err)
	require.Equal(t, dispatch.KindSuspended, o.Kind, o.Text())
}

func (s *deskServer) turn(t *testing.T, turn string) dispatch.Outcome {
	t.Helper()
	outcomes, err := s.d.Turn(t.Context(), turn)
	require.NoError(t, err)
	return outcomes[0]
}

// openFirst opens the list and the first call on it.
func (tb *tab) openFirst(t *testing.T, url string) {
	t.Helper()
	tb.run(t,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.CSS(`li.call a.open`)),
		chromedp.Click(chromedp.CSS(`li.call a.open`)),
		chromedp.WaitVisible(chromedp.CSS(`form.answer`)),
	)
}

const (
	approveYes = `input[name="m.approve"][value="true"]`
	sendAnswer = `button[value="answer"]`
)

func TestBrowser(t *testing.T) {
	ctx := browser(t)

	t.Run("approve runs the tool once", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"A-7","cents":1250}`)
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		callURL, err := chromedp.Run(tb.ctx, chromedp.Location())
		require.NoError(t, err)
		require.Equal(t, "Refund $12.50 on order A-7?", tb.text(t, `p.prompt`))
		tb.run(t, chromedp.Click(chromedp.CSS(approveYes)), chromedp.Click(chromedp.CSS(sendAnswer)))
		require.Contains(t, tb.text(t, `p.outcome`), "Refunded $12.50 on order A-7.")
		require.Equal(t, "Completed", tb.text(t, `h1`))
		// The call's page now shows who answered, and no form to send
		// again; the list is empty.
		tb.run(t, chromedp.Navigate(callURL))
		require.Contains(t, tb.text(t, `p.answered`), "was already answered by operator")
		require.Zero(t, evaluate[int](t, tb, `document.querySelectorAll("form").length`))
		tb.run(t, chromedp.Navigate(s.url))
		require.Equal(t, "Nothing waits for an answer.", tb.text(t, `p.empty`))
		require.EqualValues(t, 1, s.paid.Load())
		require.Equal(t, dispatch.KindCompleted, s.turn(t, "t1").Kind)
		require.Empty(t, tb.recorded())
	})

	t.Run("decline never runs the tool", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"A-8","cents":500}`)
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		tb.run(t, chromedp.Click(chromedp.CSS(`button[value="decline"]`)))
		require.Contains(t, tb.text(t, `p.outcome`), "declined")
		require.Equal(t, "Declined", tb.text(t, `h1`))
		require.Zero(t, s.paid.Load())
		o := s.turn(t, "t1")
		require.Equal(t, dispatch.KindFailed, o.Kind)
		require.EqualValues(t, 1, s.asked.Load(), "only the question ran")
	})

	t.Run("an answer that breaks the schema is refused, input kept", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"A-9","cents":1250}`)
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		// A browser that does not enforce the input's max (or a hand-made
		// post): the server still checks the answer against the schema.
		require.True(t, evaluate[bool](t, tb, `document.querySelector("form.answer").noValidate = true`))
		tb.run(t,
			chromedp.Click(chromedp.CSS(approveYes)),
			chromedp.SendKeys(chromedp.CSS(`input[name="m.cents"]`), "999999"),
			chromedp.Click(chromedp.CSS(sendAnswer)),
		)
		reason := tb.text(t, `p.error .reason`)
		require.Contains(t, reason, "/cents")
		require.Contains(t, reason, "100000")
		require.Equal(t, "999999", tb.value(t, `input[name="m.cents"]`))
		require.True(t, evaluate[bool](t, tb, `document.querySelector('`+approveYes+`').checked`))
		require.Zero(t, s.paid.Load())
		require.Equal(t, dispatch.KindSuspended, s.turn(t, "t1").Kind, "the call still waits")
	})

	t.Run("two tabs: one wins, the other is told", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"B-1","cents":300}`)
		one, two := newTab(t, ctx), newTab(t, ctx)
		one.openFirst(t, s.url)
		two.openFirst(t, s.url)
		one.run(t, chromedp.Click(chromedp.CSS(approveYes)))
		two.run(t, chromedp.Click(chromedp.CSS(approveYes)))
		// Each wait is for an element of the page the post leads to only,
		// so that nothing is read from the page being left.
		one.run(t, chromedp.Click(chromedp.CSS(sendAnswer)))
		require.Contains(t, one.text(t, `p.outcome`), "Refunded $3.00 on order B-1.")
		require.Equal(t, "Completed", one.text(t, `h1`))
		two.run(t, chromedp.Click(chromedp.CSS(sendAnswer)))
		require.Contains(t, two.text(t, `p.answered`), "was already answered by operator")
		require.Equal(t, "Already answered", two.text(t, `h1`))
		require.EqualValues(t, 1, s.paid.Load())
	})

	t.Run("hostile arguments are inert", func(t *testing.T) {
		s := newDeskServer(t)
		hostile := `<script>alert('script')</script><img src=x onerror="alert('onerror');console.log('onerror')">`
		s.suspend(t, "t1", fmt.Sprintf(`{"order":%q,"cents":100}`, hostile))
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		// The call's page, then the list: both show the text as text.
		for _, url := range []string{"", s.url} {
			if url != "" {
				tb.run(t, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(`li.call`)))
			}
			elements := evaluate[int](t, tb, `document.querySelectorAll("script, img, [onerror]").length`)
			require.Zero(t, elements, "the model's markup became elements")
			if url != "" { // the list shows the prompt alone
				require.Contains(t, tb.text(t, `p.prompt`), "<img src=x onerror=")
				continue
			}
			shown := tb.text(t, `pre.arguments`)
			require.Contains(t, shown, `<script>alert('script')</script>`)
			require.Contains(t, shown, `onerror=`)
		}
		tb.openFirst(t, s.url)
		require.Contains(t, tb.text(t, `p.prompt`), "<img src=x onerror=")
		time.Sleep(300 * time.Millisecond) // let anything that would run, run
		require.Empty(t, tb.recorded(), "a script ran, or a dialog opened")
	})

	t.Run("a reversed account number is shown as the tool gets it", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"`+"\u202e6666-LIVE-TCCA\u202c"+`","cents":100}`)
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		require.False(t, evaluate[bool](t, tb, `document.body.innerText.includes("\u202e") || document.body.innerText.includes("\u202c")`),
			"no bidi control reaches what the person reads")
		require.Contains(t, tb.text(t, `pre.arguments`), `\u202e6666-LIVE-TCCA\u202c`)
		require.Contains(t, tb.text(t, `p.prompt`), "⟨U+202E⟩6666-LIVE-TCCA⟨U+202C⟩")
	})

	t.Run("a call sealed with a retired key says so and is cleared", func(t *testing.T) {
		before := newDeskServer(t)
		before.suspend(t, "t1", `{"order":"R-1","cents":100}`)
		rotated, err := newAppOn(before.store)
		require.NoError(t, err)
		srv := httptest.NewServer(rotated.desk)
		t.Cleanup(srv.Close)
		tb := newTab(t, ctx)
		tb.run(t,
			chromedp.Navigate(srv.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS(`li.call a.open`)),
			chromedp.Click(chromedp.CSS(`li.call a.open`)),
			chromedp.WaitVisible(chromedp.CSS(`form.dismiss`)),
		)
		require.Contains(t, tb.text(t, `p.unanswerable`), "the key that sealed it is not one this desk holds any more")
		require.Zero(t, evaluate[int](t, tb, `document.querySelectorAll("form.answer").length`))
		tb.run(t, chromedp.Click(chromedp.CSS(`button[value="dismiss"]`)), chromedp.WaitVisible(chromedp.CSS(`p.outcome`)))
		require.Equal(t, "Declined", tb.text(t, `h1`))
		tb.run(t, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS(`p.empty`)))
		require.Zero(t, before.paid.Load()+rotated.paid.Load())
	})

	t.Run("an edit is a new admitted call", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"C-3","cents":125000}`)
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		tb.run(t,
			chromedp.Click(chromedp.CSS(`details.edit summary`)),
			chromedp.SetValue(chromedp.CSS(`textarea[name="arguments"]`), `{"order":"C-3","cents":0}`),
			chromedp.Click(chromedp.CSS(`button[value="edit"]`)),
		)
		require.Contains(t, tb.text(t, `p.error .reason`), "/cents")
		require.Equal(t, `{"order":"C-3","cents":0}`, tb.value(t, `textarea[name="arguments"]`))
		require.EqualValues(t, 1, s.asked.Load(), "refused arguments never reach the tool")

		tb.run(t,
			chromedp.SetValue(chromedp.CSS(`textarea[name="arguments"]`), `{"order":"C-3","cents":1250}`),
			chromedp.Click(chromedp.CSS(`button[value="edit"]`)),
		)
		require.Contains(t, tb.text(t, `p.outcome`), "new question")
		require.Equal(t, "The tool asks again", tb.text(t, `h1`))
		tb.run(t, chromedp.Click(chromedp.CSS(`p.outcome a`)), chromedp.WaitVisible(chromedp.CSS(`form.answer`)))
		require.Equal(t, "Refund $12.50 on order C-3?", tb.text(t, `p.prompt`))
		tb.run(t, chromedp.Click(chromedp.CSS(approveYes)), chromedp.Click(chromedp.CSS(sendAnswer)))
		require.Contains(t, tb.text(t, `p.outcome`), "Refunded $12.50 on order C-3.")
		require.EqualValues(t, 2, s.asked.Load())
		require.EqualValues(t, 1, s.paid.Load())

		all, err := s.store.Claims(t.Context(), dispatch.ClaimQuery{})
		require.NoError(t, err)
		var claims []dispatch.Claim // the answers: the record of the run that asked left out
		for _, c := range all {
			if c.AnswerSHA256 != dispatch.RunSHA256 {
				claims = append(claims, c)
			}
		}
		require.Len(t, claims, 2)
		edit := claims[0].Edit
		require.NotNil(t, edit)
		require.Equal(t, `{"order":"C-3","cents":125000}`, edit.Proposed)
		require.Equal(t, `{"order":"C-3","cents":1250}`, edit.Approved)
		require.Equal(t, edit.Approved, edit.Executed)
		require.NotEqual(t, claims[0].IdempotencyKey, edit.IdempotencyKey)
		require.Equal(t, edit.IdempotencyKey, claims[1].IdempotencyKey)
		o := s.turn(t, "t1")
		require.Equal(t, dispatch.KindCompleted, o.Kind)
		require.Equal(t, edit.IdempotencyKey, o.IdempotencyKey)
	})

	t.Run("a standing approval, minted with a widened member and revoked", func(t *testing.T) { testGrants(t, ctx) })

	t.Run("screenshot", func(t *testing.T) {
		s := newDeskServer(t)
		s.suspend(t, "t1", `{"order":"A-7","cents":1250}`)
		tb := newTab(t, ctx)
		tb.openFirst(t, s.url)
		tb.run(t, chromedp.EmulateViewport(412, 915))
		png, err := chromedp.Run(tb.ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(png), "\x89PNG"), "a PNG")
		if *updateScreenshot {
			require.NoError(t, os.WriteFile("testdata/desk.png", png, 0o644))
		}
		_, err = os.Stat("testdata/desk.png")
		require.NoError(t, err, "regenerate the README's picture with go test -run TestBrowser/screenshot -update-screenshot")
	})
}
