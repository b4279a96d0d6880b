package main

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

	"github.com/agentcontract/tool"
)

// The script: what the user says.
const userSays = "Order A-7 arrived broken. Please refund the $12.50."

// refundArgs are the refund tool's arguments, as the model writes them.
type refundArgs struct {
	Order string `json:"order" jsonschema:"minLength=1,description=The order number"`
	Cents int    `json:"cents" jsonschema:"minimum=1,description=The amount to refund in cents"`
}

// refundTool asks a person before it refunds.
func refundTool() tool.Tool {
	refund, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "Refund an order to the customer's card."},
		func(_ context.Context, in refundArgs) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d cents on order %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in refundArgs, approve bool) (string, error) {
			if !approve {
				return "The person said no: order " + in.Order + " was not refunded.", nil
			}
			return fmt.Sprintf("Refunded %d cents on order %s.", in.Cents, in.Order), nil
		})
	if err != nil {
		panic(err)
	}
	return refund
}

func mustBind(t tool.Tool) tool.Binding {
	b, err := tool.Bind(t, tool.Recover)
	if err != nil {
		panic(err)
	}
	return b
}

// scriptedAPI stands in for the Chat Completions API: the model first
// calls the refund, then answers from the tool message it got.
func scriptedAPI() (string, func()) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		if !strings.Contains(string(body), `"role":"tool"`) {
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1764576000,"model":"gpt-5.5",
				"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
				"tool_calls":[{"id":"call_1","type":"function","function":{"name":"refund","arguments":"{\"order\":\"A-7\",\"cents\":1250}"}}]}}]}`)
			return
		}
		reply := "I could not refund it."
		if strings.Contains(string(body), "Refunded 1250 cents") {
			reply = "Done: $12.50 is on its way back to your card."
		}
		fmt.Fprintf(w, `{"id":"chatcmpl-2","object":"chat.completion","created":1764576001,"model":"gpt-5.5",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}]}`, reply)
	}))
	return srv.URL, srv.Close
}

var (
	callLink = regexp.MustCompile(`href="(call\?[^"]+)"`)
	hidden   = regexp.MustCompile(`name="(csrf|turn|i|cp)" value="([^"]*)"`)
)

// approveFirst does what a person does at the desk: it opens the first
// pending call and approves it.
func approveFirst(ctx context.Context, deskURL string) error {
	get := func(u string) (string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return "", err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	list, err := get(deskURL)
	if err != nil {
		return err
	}
	link := callLink.FindStringSubmatch(list)
	if link == nil {
		return errors.New("the desk lists no call")
	}
	page, err := get(deskURL + html.UnescapeString(link[1]))
	if err != nil {
		return err
	}
	form := url.Values{"action": {"answer"}}
	for _, m := range hidden.FindAllStringSubmatch(page, 4) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, deskURL+"call", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
