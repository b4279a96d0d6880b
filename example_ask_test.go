package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcontract/tool"
)

// A refund asks a person first and acts on the typed answer: the call
// suspends with the question, and resumes with the answer. It promises no
// Effect: act never sees the idempotency key, so it could not deduplicate
// a replay of the refund.
func ExampleNewAskFunc() {
	type refund struct {
		Order string `json:"order"`
		Cents int    `json:"cents"`
	}
	f, err := tool.NewAskFunc(tool.FuncConfig{Name: "refund", Description: "refund an order"},
		func(_ context.Context, in refund) (tool.Question, error) {
			return tool.Question{Prompt: fmt.Sprintf("Refund %d cents on %s?", in.Cents, in.Order)}, nil
		},
		func(_ context.Context, in refund, approved bool) (string, error) {
			if !approved {
				return "not refunded", nil
			}
			return fmt.Sprintf("refunded %d cents on %s", in.Cents, in.Order), nil
		})
	if err != nil {
		panic(err)
	}
	b, err := tool.Bind(f)
	if err != nil {
		panic(err)
	}
	call := tool.Request{Name: "refund", Arguments: `{"order":"A-7","cents":1250}`}
	inv, err := b.Contract().Prepare(call, tool.Admission{IdempotencyKey: "refund-A-7"})
	if err != nil {
		panic(err)
	}
	result, err := b.Call(context.Background(), inv)
	if err != nil {
		panic(err)
	}
	fmt.Println("asks:", string(result.InputRequest.Prompt()), "answer:", string(f.AnswerSchema().JSON()))

	c, err := result.InputRequest.Continuation(json.RawMessage(`true`))
	if err != nil {
		panic(err)
	}
	inv, err = b.Contract().Prepare(call, tool.Admission{IdempotencyKey: "refund-A-7", Continuation: &c})
	if err != nil {
		panic(err)
	}
	result, err = b.Call(context.Background(), inv)
	if err != nil {
		panic(err)
	}
	text, _ := result.Output.Text()
	fmt.Println(text)
	// Output:
	// asks: "Refund 1250 cents on A-7?" answer: {"type":"boolean"}
	// refunded 1250 cents on A-7
}
