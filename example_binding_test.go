package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentcontract/tool"
)

// greeterTool is a Tool written by hand: a Definition and a Call.
type greeterTool struct{}

func (greeterTool) Definition() tool.Definition {
	return tool.Definition{
		Name:        "greet",
		Description: "greets a person by name",
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {"name": {"type": "string", "minLength": 1}},
			"required": ["name"],
			"additionalProperties": false
		}`),
		Effect: tool.EffectSafe,
	}
}

func (greeterTool) Call(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(invocation.Arguments(), &in); err != nil {
		return tool.Result{}, err
	}
	fmt.Println("  greet runs")
	return tool.Result{Output: tool.NewTextOutput("Hello, " + in.Name + "!")}, nil
}

// logging returns a middleware that prints when a call enters and leaves it.
func logging(name string) tool.CallMiddleware {
	return func(next tool.Caller) tool.Caller {
		return tool.CallerFunc(func(ctx context.Context, invocation tool.Invocation) (tool.Result, error) {
			fmt.Printf("  %s: enter %s\n", name, invocation.Definition().Name)
			result, err := next.Call(ctx, invocation)
			fmt.Printf("  %s: leave\n", name)
			return result, err
		})
	}
}

// Bind freezes a tool's definition; every call then runs through the
// middlewares, the first one given outermost.
func ExampleBind() {
	binding, err := tool.Bind(greeterTool{}, logging("outer"), logging("inner"))
	if err != nil {
		panic(err)
	}
	invocation, err := binding.Contract().Prepare(
		tool.Request{Name: "greet", Arguments: `{"name":"Ada"}`},
		tool.Admission{},
	)
	if err != nil {
		panic(err)
	}
	fmt.Println("call:")
	result, err := binding.Call(context.Background(), invocation)
	if err != nil {
		panic(err)
	}
	text, _ := result.Output.Text()
	fmt.Println(text)
	// Output:
	// call:
	//   outer: enter greet
	//   inner: enter greet
	//   greet runs
	//   inner: leave
	//   outer: leave
	// Hello, Ada!
}

// Prepare refuses arguments that break the input schema with an
// InputRejection whose message is meant for the model: it names the field
// and the rule, so the model can correct its call.
func ExampleContract_Prepare() {
	binding, err := tool.Bind(greeterTool{})
	if err != nil {
		panic(err)
	}
	proposals := []string{
		`{"name":""}`,
		`{"name":"Ada","age":36}`,
		`{"name":"Ada","name":"Grace"}`,
		`{"name":"Ada"}`,
	}
	for _, arguments := range proposals {
		_, err := binding.Contract().Prepare(tool.Request{Name: "greet", Arguments: arguments}, tool.Admission{})
		if rejection, ok := tool.ClassifyInputRejection(err); ok {
			fmt.Println("to the model:", rejection.Message())
			continue
		}
		if err != nil {
			panic(err)
		}
		fmt.Println("admitted:", arguments)
	}
	// Output:
	// to the model: arguments of "greet" do not match its input schema at /name: minLength: got 0, want 1
	// to the model: arguments of "greet" do not match its input schema at the root: additional properties 'age' not allowed
	// to the model: arguments of "greet" are not valid JSON at /name (byte 14): duplicate member name "name"
	// admitted: {"name":"Ada"}
}

// A Registry finds the Binding a model's proposal names and lists the
// definitions to advertise to the model, sorted by name.
func ExampleRegistry() {
	var registry tool.Registry // the zero Registry is ready to use
	greet, err := tool.Bind(greeterTool{})
	if err != nil {
		panic(err)
	}
	if err := registry.Register(greet); err != nil {
		panic(err)
	}
	if err := registry.Register(greet); err != nil {
		fmt.Println(err)
	}
	for _, def := range registry.Definitions() {
		fmt.Printf("%s: %s\n", def.Name, def.Description)
	}

	request := tool.Request{Name: "greet", Arguments: `{"name":"Grace"}`}
	binding, ok := registry.Resolve(request.Name)
	if !ok {
		fmt.Println("no such tool")
		return
	}
	invocation, err := binding.Contract().Prepare(request, tool.Admission{})
	if err != nil {
		panic(err)
	}
	result, err := binding.Call(context.Background(), invocation)
	if err != nil {
		panic(err)
	}
	text, _ := result.Output.Text()
	fmt.Println(text)

	_, ok = registry.Resolve("delete_everything")
	fmt.Println("delete_everything registered:", ok)
	// Output:
	// tool: duplicate tool: "greet" is already registered
	// greet: greets a person by name
	//   greet runs
	// Hello, Grace!
	// delete_everything registered: false
}
