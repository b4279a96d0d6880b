package desk_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

// asker asks for an answer of a given schema and completes with it.
type asker struct{ schema tool.Schema }

func (asker) Definition() tool.Definition {
	return tool.Definition{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`), Effect: tool.EffectSafe}
}

func (a asker) Call(_ context.Context, inv tool.Invocation) (tool.Result, error) {
	c, resumed := inv.Continuation()
	if resumed {
		return tool.Result{Output: tool.NewTextOutput("got " + string(c.Response()))}, nil
	}
	ir, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`{"question":"Which?"}`), ResponseSchema: a.schema})
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{InputRequest: &ir}, nil
}

// schemaDesk serves a desk whose one pending call asks for an answer of
// schema, and returns the link to it.
func schemaDesk(t *testing.T, schema string) (*fixture, string) {
	t.Helper()
	s, err := tool.ParseSchema([]byte(schema))
	require.NoError(t, err)
	b, err := tool.Bind(asker{schema: s})
	require.NoError(t, err)
	reg := &tool.Registry{}
	require.NoError(t, reg.Register(b))
	f := &fixture{}
	f.store, err = dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	require.NoError(t, err)
	f.d, err = dispatch.New(dispatch.Config{Registry: reg, Store: f.store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("0123456789abcdef0123456789abcdef")}}})
	require.NoError(t, err)
	dk, err := desk.New(desk.Config{
		Dispatcher: f.d, Store: f.store,
		Authorize: func(context.Context, string, dispatch.Pending) (bool, error) { return true, nil },
		Person:    func(r *http.Request) (string, error) { return r.Header.Get("X-Person"), nil },
	})
	require.NoError(t, err)
	f.srv = httptest.NewServer(dk)
	t.Cleanup(f.srv.Close)
	o := f.d.Run(t.Context(), dispatch.Call{ID: "c1", Request: tool.Request{Name: "ask", Arguments: `{}`}})
	require.Equal(t, dispatch.KindSuspended, o.Kind, o.Text())
	require.NoError(t, f.d.SaveTurn(t.Context(), "turn", []dispatch.Outcome{o}))
	return f, "/call?" + url.Values{"turn": {"turn"}, "i": {"0"}, "cp": {o.Checkpoint.ID()}}.Encode()
}

func TestDeskForms(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		shows   []string
		refused url.Values
		reason  string
		kept    string
		answer  url.Values
		got     string
	}{
		{
			name:   "boolean",
			schema: `{"type":"boolean","description":"Go ahead?"}`,
			shows:  []string{`>Approve</button>`, `Go ahead?`},
			answer: url.Values{}, got: "got true",
		},
		{
			name:    "root enum",
			schema:  `{"type":"string","enum":["red","<b>blue</b>"]}`,
			shows:   []string{`<select id="answer" name="answer" required>`, `<option value="&lt;b&gt;blue&lt;/b&gt;">&lt;b&gt;blue&lt;/b&gt;</option>`},
			refused: url.Values{"answer": {"green"}}, reason: "must be one of the choices",
			answer: url.Values{"answer": {"<b>blue</b>"}}, got: `got "<b>blue</b>"`,
		},
		{
			name:    "root integer with exclusive bounds",
			schema:  `{"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":10.5}`,
			shows:   []string{`step="1" value="" min="1" max="10"`},
			refused: url.Values{"answer": {"11"}}, reason: "/", kept: `value="11"`,
			answer: url.Values{"answer": {"10"}}, got: "got 10",
		},
		{
			name:    "string bounds",
			schema:  `{"type":"object","properties":{"note":{"type":"string","minLength":2,"maxLength":5}},"required":["note"],"additionalProperties":false}`,
			shows:   []string{`minlength="2" maxlength="5" required`},
			refused: url.Values{"m.note": {"x"}}, reason: "/note", kept: `value="x"`,
			answer: url.Values{"m.note": {"ok"}}, got: `got {"note":"ok"}`,
		},
		{
			name: "titled options and a multi-select",
			schema: `{"type":"object","properties":{
				"size":{"type":"string","title":"Size","oneOf":[{"const":"s","title":"Small"},{"const":"l","title":"<i>Large</i>"}],"default":"l"},
				"tags":{"type":"array","items":{"type":"string","enum":["a","b","c"]},"minItems":1,"default":["b"]}},
				"required":["size"]}`,
			shows: []string{
				`Size <code class="name">size</code>`,
				`<option value="l" selected>&lt;i&gt;Large&lt;/i&gt;</option>`,
				`<input type="checkbox" name="c.1.m.tags" value="b" checked> b</label>`,
			},
			refused: url.Values{"m.size": {"xl"}, "c.2.m.tags": {"c"}}, reason: `&#34;size&#34; must be one of the choices`, kept: `name="c.2.m.tags" value="c" checked`,
			answer: url.Values{"m.size": {"s"}, "c.0.m.tags": {"a"}, "c.2.m.tags": {"c"}}, got: `got {"size":"s","tags":["a","c"]}`,
		},
		{
			name:    "a multi-select refuses what is not an option",
			schema:  `{"type":"object","properties":{"tags":{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]}}}}`,
			shows:   []string{`<input type="checkbox" name="c.0.m.tags" value="a"> A</label>`},
			refused: url.Values{"c.0.m.tags": {"zzz"}}, reason: `&#34;tags&#34; must be one of the choices`, kept: `name="c.0.m.tags" value="a" checked`,
			answer: url.Values{}, got: `got {}`,
		},
		{
			name: "formats and defaults",
			schema: `{"type":"object","properties":{
				"email":{"type":"string","format":"email","default":"a@b.example"},
				"day":{"type":"string","format":"date"},
				"at":{"type":"string","format":"date-time"},
				"n":{"type":"integer","default":3},
				"ok":{"type":"boolean","default":true}},
				"required":["email"]}`,
			shows: []string{
				`type="email" value="a@b.example"`,
				`type="date" value=""`,
				`type="text" value="" placeholder="2006-01-02T15:04:05Z"`,
				`step="1" value="3"`,
				`value="true" checked`,
			},
			refused: url.Values{"m.email": {"not-an-email"}}, reason: "/email", kept: `value="not-an-email"`,
			answer: url.Values{"m.email": {"x@y.example"}, "m.day": {"2024-02-29"}, "m.n": {"3"}, "m.ok": {"true"}},
			got:    `got {"email":"x@y.example","day":"2024-02-29","n":3,"ok":true}`,
		},
		{
			name:    "root multi-select",
			schema:  `{"type":"array","items":{"type":"string","enum":["x","y"]},"maxItems":1}`,
			shows:   []string{`<legend>Your answer <span class="required">(required)</span></legend>`, `<input type="checkbox" name="c.1.answer" value="y">`},
			refused: url.Values{"c.0.answer": {"x"}, "c.1.answer": {"y"}}, reason: "/", kept: `name="c.1.answer" value="y" checked`,
			answer: url.Values{"c.1.answer": {"y"}}, got: `got ["y"]`,
		},
		{
			name:   "an approval with a title",
			schema: `{"type":"boolean","title":"Refund","description":"Go ahead?"}`,
			shows:  []string{`<p class="form-title">Refund</p>`, `>Approve</button>`},
			answer: url.Values{}, got: "got true",
		},
		{
			name:    "outside the subset: a JSON editor",
			schema:  `{"type":"array","items":{"type":"integer"},"maxItems":2}`,
			shows:   []string{`<textarea id="json" name="json"`},
			refused: url.Values{"json": {`[1,2,3]`}}, reason: "", kept: `[1,2,3]</textarea>`,
			answer: url.Values{"json": {`[1, 2]`}}, got: "got [1, 2]",
		},
		{
			name:    "JSON that does not parse",
			schema:  `{"type":"object","properties":{"a":{"type":"array"}}}`,
			shows:   []string{`<textarea id="json" name="json"`},
			refused: url.Values{"json": {`{"a":`}}, kept: `{&#34;a&#34;:</textarea>`,
			answer: url.Values{"json": {`{"a":[]}`}}, got: `got {"a":[]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, link := schemaDesk(t, tc.schema)
			status, page := f.get(t, link, "ann")
			require.Equal(t, http.StatusOK, status)
			require.Contains(t, page, `&#34;question&#34;: &#34;Which?&#34;`)
			for _, want := range tc.shows {
				require.Contains(t, page, want)
			}
			if tc.refused != nil {
				tc.refused.Set("action", "answer")
				status, page = f.post(t, link, "ann", tc.refused)
				require.Equal(t, http.StatusUnprocessableEntity, status, page)
				require.Contains(t, page, "Not accepted:")
				require.Contains(t, page, tc.reason)
				require.Contains(t, page, tc.kept)
			}
			tc.answer.Set("action", "answer")
			status, page = f.post(t, link, "ann", tc.answer)
			require.Equal(t, http.StatusOK, status, page)
			outcomes, err := f.d.Turn(t.Context(), "turn")
			require.NoError(t, err)
			require.Equal(t, tc.got, outcomes[0].Text())
		})
	}
}

// FuzzFormAnswer posts arbitrary values to a form of every kind: the desk
// never fails with a 5xx, and whatever it accepts satisfied the schema
// (the tool completes with it).
func FuzzFormAnswer(f *testing.F) {
	f.Add("true", "red", "3", "x")
	f.Add("", "", "", "")
	f.Add("yes", "<script>", "1e400", "\x00")
	f.Add("false", "blue", "-0", "ok")
	schema := `{"type":"object","properties":{
		"b":{"type":"boolean"},
		"e":{"type":"string","enum":["red","blue"]},
		"n":{"type":"number","minimum":-5,"maximum":5},
		"s":{"type":"string","maxLength":3}},
		"required":["b"],"additionalProperties":false}`
	f.Fuzz(func(t *testing.T, b, e, n, s string) {
		fx, link := schemaDesk(t, schema)
		status, page := fx.post(t, link, "ann", url.Values{"action": {"answer"}, "m.b": {b}, "m.e": {e}, "m.n": {n}, "m.s": {s}})
		switch status {
		case http.StatusOK:
			outcomes, err := fx.d.Turn(t.Context(), "turn")
			require.NoError(t, err)
			require.Equal(t, dispatch.KindCompleted, outcomes[0].Kind, page)
		case http.StatusUnprocessableEntity:
			require.Contains(t, page, "Not accepted:")
		default:
			t.Fatalf("status %d: %s", status, page)
		}
	})
}

// A store that fails shows a page that says so, and nothing runs.
func TestDeskStoreFails(t *testing.T) {
	f := newFixture(t, nil)
	link := f.suspend(t, `{"order":"A-7","cents":1}`, "")
	failing := failingStore{Store: f.store}
	dk, err := desk.New(desk.Config{
		Dispatcher: f.d, Store: failing,
		Authorize: func(context.Context, string, dispatch.Pending) (bool, error) { return true, nil },
		Person:    func(*http.Request) (string, error) { return "ann", nil },
	})
	require.NoError(t, err)
	for _, path := range []string{"/", link} {
		rec := httptest.NewRecorder()
		dk.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		require.Equal(t, http.StatusServiceUnavailable, rec.Code, path)
		require.Contains(t, rec.Body.String(), "cannot reach its store")
	}
	require.Zero(t, f.acted.Load())
}

type failingStore struct{ dispatch.Store }

func (failingStore) Pending(context.Context, dispatch.PendingQuery) ([]dispatch.Pending, error) {
	return nil, fmt.Errorf("%w: down", errors.Join(dispatch.ErrStore))
}
