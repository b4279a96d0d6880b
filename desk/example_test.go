package desk_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/desk"
	"github.com/agentcontract/tool/dispatch"
)

// A runtime saves a turn whose refund waits for a person; the desk lists
// it for a signed-in person.
func ExampleNew() {
	ctx := context.Background()
	refund, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in struct {
			Order string `json:"order"`
		}) (tool.Question, error) {
			return tool.Question{Prompt: "Refund order " + in.Order + "?"}, nil
		},
		func(context.Context, struct {
			Order string `json:"order"`
		}, bool) (string, error) {
			return "refunded", nil
		})
	if err != nil {
		panic(err)
	}
	b, err := tool.Bind(refund)
	if err != nil {
		panic(err)
	}
	reg := &tool.Registry{}
	if err := reg.Register(b); err != nil {
		panic(err)
	}
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{})
	if err != nil {
		panic(err)
	}
	d, err := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("an example secret of 32 bytes!!!")}}})
	if err != nil {
		panic(err)
	}
	o := d.Run(ctx, dispatch.Call{ID: "call_1", Request: tool.Request{Name: "refund", Arguments: `{"order":"A-7"}`}})
	if err := d.SaveTurn(ctx, "turn-1", []dispatch.Outcome{o}); err != nil {
		panic(err)
	}

	h, err := desk.New(desk.Config{
		Dispatcher: d,
		Store:      store,
		// Your authentication; a fixed person for the example.
		Person: func(*http.Request) (string, error) { return "ann", nil },
		Authorize: func(_ context.Context, person string, p dispatch.Pending) (bool, error) {
			return person == "ann" && p.Tool == "refund", nil
		},
	})
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	fmt.Println(resp.StatusCode, strings.Contains(string(page), "Refund order A-7?"))
	// Output: 200 true
}
