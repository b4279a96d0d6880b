package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcontract/tool"
)

// A tool asks for approval; the answer is checked against the response
// schema and carried, with the tool's saved state, into a Continuation.
func ExampleNewInputRequest() {
	schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
	if err != nil {
		panic(err)
	}
	request, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:            json.RawMessage(`"Approve the write?"`),
		ResponseSchema:    schema,
		ContinuationState: json.RawMessage(`{"record":"draft"}`),
	})
	if err != nil {
		panic(err)
	}
	result := tool.Result{InputRequest: &request}
	c, err := result.InputRequest.Continuation(json.RawMessage(`true`))
	if err != nil {
		panic(err)
	}
	// A runtime resumes the same call with
	// binding.Contract().Prepare(call, tool.Admission{IdempotencyKey: key, Continuation: &c}).
	fmt.Println(string(c.State()), string(c.Response()))
	// Output: {"record":"draft"} true
}

// publisher publishes a draft, but only after a person approved it. It
// implements Tool itself because it needs the call's Continuation.
type publisher struct{}

func (publisher) Definition() tool.Definition {
	return tool.Definition{
		Name:        "publish",
		Description: "publish a draft once an editor approved it",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"draft":{"type":"integer"}},"required":["draft"]}`),
		Effect:      tool.EffectIdempotent,
	}
}

func (publisher) Call(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
	var args struct {
		Draft int `json:"draft"`
	}
	if err := json.Unmarshal(invocation.Arguments(), &args); err != nil {
		return tool.Result{}, err
	}
	c, resumed := invocation.Continuation()
	if !resumed {
		// Ask before any effect, saving what the resumed call needs.
		schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
		if err != nil {
			return tool.Result{}, err
		}
		request, err := tool.NewInputRequest(tool.InputRequestConfig{
			Prompt:            json.RawMessage(fmt.Sprintf(`"Publish draft %d?"`, args.Draft)),
			ResponseSchema:    schema,
			ContinuationState: json.RawMessage(`{"checked":"spelling"}`),
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &request}, nil
	}
	var approved bool
	if err := json.Unmarshal(c.Response(), &approved); err != nil {
		return tool.Result{}, err
	}
	if !approved {
		return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("draft %d stays a draft", args.Draft))}, nil
	}
	return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("published draft %d (state %s)", args.Draft, c.State()))}, nil
}

// A call suspends, its checkpoint is persisted as bytes, and after a
// restart a fresh Binding of the same tool resumes it with the answer.
func ExampleInputRequest_resume() {
	ctx := context.Background()
	call := tool.Request{Name: "publish", Arguments: `{"draft":42}`}
	const key tool.IdempotencyKey = "publish-42"

	// Before the restart: the call suspends and the runtime persists the
	// stamped request.
	binding, err := tool.Bind(publisher{})
	if err != nil {
		panic(err)
	}
	invocation, err := binding.Contract().Prepare(call, tool.Admission{IdempotencyKey: key})
	if err != nil {
		panic(err)
	}
	result, err := binding.Call(ctx, invocation)
	if err != nil {
		panic(err)
	}
	checkpoint, err := json.Marshal(result.InputRequest)
	if err != nil {
		panic(err)
	}
	fmt.Println("asks:", string(result.InputRequest.Prompt()))

	// After the restart: only the call, its key and the checkpoint bytes
	// survived. The answer comes from a person.
	fresh, err := tool.Bind(publisher{})
	if err != nil {
		panic(err)
	}
	var request tool.InputRequest
	if err := json.Unmarshal(checkpoint, &request); err != nil {
		panic(err)
	}
	if _, err := request.Continuation(json.RawMessage(`"yes"`)); err != nil {
		fmt.Println("refused:", err)
	}
	c, err := request.Continuation(json.RawMessage(`true`))
	if err != nil {
		panic(err)
	}
	invocation, err = fresh.Contract().Prepare(call, tool.Admission{IdempotencyKey: key, Continuation: &c})
	if err != nil {
		panic(err)
	}
	result, err = fresh.Call(ctx, invocation)
	if err != nil {
		panic(err)
	}
	text, _ := result.Output.Text()
	fmt.Println(text)

	// The continuation belongs to that call only.
	other := tool.Request{Name: "publish", Arguments: `{"draft":43}`}
	_, err = fresh.Contract().Prepare(other, tool.Admission{IdempotencyKey: key, Continuation: &c})
	fmt.Println(err)
	// Output:
	// asks: "Publish draft 42?"
	// refused: tool: invalid input request: the answer does not match the response schema: at the root: got string, want boolean
	// published draft 42 (state {"checked":"spelling"})
	// tool: invalid invocation: the continuation was issued for other arguments of "publish"
}

// A long tool reports progress; the runtime observes it through the
// context it calls with.
func ExampleReportProgress() {
	copyFiles, err := tool.NewFunc(tool.FuncConfig{Name: "copy_files", Description: "copy files to the archive", Effect: tool.EffectIdempotent},
		func(ctx context.Context, in struct {
			Files []string `json:"files"`
		}) (int, error) {
			for i, name := range in.Files {
				// A reporter's error is for the tool to weigh; progress
				// never changes the outcome on its own.
				_ = tool.ReportProgress(ctx, tool.Progress{Completed: float64(i + 1), Total: float64(len(in.Files)), Message: name})
			}
			return len(in.Files), nil
		})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(copyFiles)
	if err != nil {
		panic(err)
	}
	invocation, err := binding.Contract().Prepare(tool.Request{Name: "copy_files", Arguments: `{"files":["a.txt","b.txt","c.txt"]}`}, tool.Admission{})
	if err != nil {
		panic(err)
	}
	ctx := tool.WithProgressReporter(context.Background(), tool.ProgressReporterFunc(func(_ context.Context, p tool.Progress) error {
		fmt.Printf("%v/%v %s\n", p.Completed, p.Total, p.Message)
		return nil
	}))
	result, err := binding.Call(ctx, invocation)
	if err != nil {
		panic(err)
	}
	text, _ := result.Output.Text()
	fmt.Println("copied", text)
	// Output:
	// 1/3 a.txt
	// 2/3 b.txt
	// 3/3 c.txt
	// copied 3
}
