package toolopenai_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"

	toolopenai "github.com/agentcontract/tool/adapters/openai"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=City name"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
}

// fakeOpenAI answers the first request with a tool call and the second with
// text, as the Chat Completions API would.
func fakeOpenAI() *httptest.Server {
	turn := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		turn++
		w.Header().Set("Content-Type", "application/json")
		if turn == 1 {
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1764576000,"model":"gpt-5.5",
				"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,
				"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Lisbon\",\"unit\":null}"}}]}}]}`)
			return
		}
		fmt.Fprint(w, `{"id":"chatcmpl-2","object":"chat.completion","created":1764576001,"model":"gpt-5.5",
			"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"It is 21°C and sunny in Lisbon."}}]}`)
	}))
}

// A model turn with Chat Completions: the registry's tools go out in strict
// mode, the model's call comes back through dispatch, and the tool message
// answers it.
func Example() {
	server := fakeOpenAI() // stands in for the API in this example
	defer server.Close()

	weather, _ := tool.NewFunc(tool.FuncConfig{Name: "get_weather", Description: "Current weather for a city."},
		func(_ context.Context, in weatherArgs) (string, error) { return "21°C and sunny in " + in.City, nil })
	binding, _ := tool.Bind(weather)
	reg, _ := tool.NewRegistry(binding)
	store, _ := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{}) // one process
	dispatcher, _ := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("an example secret of 32 bytes!!!")}}})

	tools, err := toolopenai.New(toolopenai.Config{Registry: reg, Strict: true})
	if err != nil {
		panic(err)
	}
	client := openai.NewClient(option.WithBaseURL(server.URL), option.WithAPIKey("My API Key"))
	ctx := context.Background()
	params := openai.ChatCompletionNewParams{
		Model:    openai.ChatModelGPT5_5,
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What's the weather in Lisbon?")},
		Tools:    tools.ChatTools(),
	}
	for {
		completion, err := client.Chat.Completions.New(ctx, params)
		if err != nil {
			panic(err)
		}
		msg := completion.Choices[0].Message
		calls, err := tools.ChatCalls(msg)
		if err != nil {
			panic(err)
		}
		if len(calls) == 0 {
			fmt.Println(msg.Content)
			return
		}
		outcomes := dispatcher.RunAll(ctx, calls)
		for _, o := range outcomes {
			fmt.Printf("%s(%s) %s: %s\n", o.Tool, calls[0].Request.Arguments, o.Kind, o.Text())
		}
		answers, err := toolopenai.ChatResults(outcomes)
		if err != nil {
			panic(err)
		}
		params.Messages = append(params.Messages, msg.ToParam())
		params.Messages = append(params.Messages, answers...)
	}
	// Output:
	// get_weather({"city":"Lisbon"}) completed: 21°C and sunny in Lisbon
	// It is 21°C and sunny in Lisbon.
}

// A schema that cannot be strict is sent with strict set to false, and the
// lint says where and why.
func ExampleTools_Lints() {
	tools, err := toolopenai.New(toolopenai.Config{Strict: true, Definitions: []tool.Definition{{
		Name:        "tag",
		InputSchema: []byte(`{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}},"required":["labels"]}`),
	}}})
	if err != nil {
		panic(err)
	}
	fmt.Println(tools.Strict("tag"))
	for _, l := range tools.Lints() {
		fmt.Println(l)
	}
	// Output:
	// false
	// tag input schema at /properties/labels: an object that declares no properties and does not forbid others is free-form, which strict mode cannot express
	// tag input schema at /properties/labels/additionalProperties: additionalProperties with a schema (a map) cannot be strict: every member must be named
}
