package desk_test

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

// An approval from end to end: a refund asks a person first, the model's
// call waits in its turn, a person approves it at the desk, and the
// runtime gets the turn back with the refund's outcome.
func Example_approval() {
	type refund struct {
		Order string `json:"order"`
		Cents int    `json:"cents"`
	}
	ask, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in refund) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d cents on %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in refund, approved bool) (string, error) {
			if !approved {
				return "not refunded", nil
			}
			return fmt.Sprintf("refunded %d cents on %s", in.Cents, in.Order), nil // your payments API here
		})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(ask, tool.Recover)
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry(binding)
	if err != nil {
		panic(err)
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{}) // replicas share a stores/sqlstore
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: registry, Store: store,
		SealKeys: []dispatch.SealKey{{ID: "2026-12", Secret: []byte("32 bytes from your secret store!")}}})
	if err != nil {
		panic(err)
	}
	approvals, err := desk.New(desk.Config{Dispatcher: d, Store: store,
		Person: func(*http.Request) (string, error) { return "ann", nil }, // your authentication
		Authorize: func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
			return person == "ann" && p.Tool == "refund", nil
		},
	})
	if err != nil {
		panic(err)
	}
	server := httptest.NewServer(approvals) // or http.Handle("/desk/", http.StripPrefix("/desk", approvals))
	defer server.Close()

	ctx := context.Background()
	outcomes := d.RunAll(ctx, []dispatch.Call{{ID: "call_1", TurnID: "chat-1/turn-1",
		Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7","cents":1250}`}}})
	fmt.Println(outcomes[0].Kind)

	go approveAtDesk(server.URL) // a person opens the desk and approves
	outcomes, err = d.WaitTurn(ctx, "chat-1/turn-1")
	if err != nil {
		panic(err)
	}
	fmt.Println(outcomes[0].Kind, outcomes[0].Text())
	// Output:
	// suspended
	// completed refunded 1250 cents on A-7
}

var (
	callLink   = regexp.MustCompile(`href="(call\?[^"]+)"`)
	formHidden = regexp.MustCompile(`name="(csrf|turn|i|cp)" value="([^"]*)"`)
)

// approveAtDesk does what a person does in a browser: it opens the desk,
// opens the first call it lists, and presses Approve.
func approveAtDesk(deskURL string) {
	read := func(resp *http.Response, err error) string {
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			panic(err)
		}
		return string(b)
	}
	link := callLink.FindStringSubmatch(read(http.Get(deskURL + "/")))
	if link == nil {
		panic("the desk lists no call")
	}
	page := read(http.Get(deskURL + "/" + html.UnescapeString(link[1])))
	form := url.Values{"action": {"answer"}}
	for _, m := range formHidden.FindAllStringSubmatch(page, 4) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	read(http.PostForm(deskURL+"/call", form))
}
