package toolanthropic_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"

	toolanthropic "github.com/agentcontract/tool/adapters/anthropic"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=City name"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit"`
}

// fakeAnthropic answers the first request with a tool_use block and the
// second with text, as the Messages API would.
func fakeAnthropic() *httptest.Server {
	turn := 0
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		turn++
		w.Header().Set("Content-Type", "application/json")
		if turn == 1 {
			fmt.Fprint(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-5-5","stop_reason":"tool_use",
				"content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Lisbon"}}],
				"usage":{"input_tokens":100,"output_tokens":20}}`)
			return
		}
		fmt.Fprint(w, `{"id":"msg_2","type":"message","role":"assistant","model":"claude-sonnet-5-5","stop_reason":"end_turn",
			"content":[{"type":"text","text":"It is 21°C and sunny in Lisbon."}],"usage":{"input_tokens":150,"output_tokens":12}}`)
	}))
}

// A model turn with the Messages API: the registry's tools go out in strict
// mode, the model's tool_use comes back through dispatch, and a tool_result
// answers it.
func Example() {
	server := fakeAnthropic() // stands in for the API in this example
	defer server.Close()

	weather, _ := tool.NewFunc(tool.FuncConfig{Name: "get_weather", Description: "Current weather for a city."},
		func(_ context.Context, in weatherArgs) (string, error) { return "21°C and sunny in " + in.City, nil })
	binding, _ := tool.Bind(weather)
	reg, _ := tool.NewRegistry(binding)
	store, _ := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{}) // one process
	dispatcher, _ := dispatch.New(dispatch.Config{Registry: reg, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: []byte("an example secret of 32 bytes!!!")}}})

	tools, err := toolanthropic.New(toolanthropic.Config{Registry: reg, Strict: true})
	if err != nil {
		panic(err)
	}
	client := anthropic.NewClient(option.WithBaseURL(server.URL), option.WithAPIKey("my-anthropic-api-key"))
	ctx := context.Background()
	params := anthropic.MessageNewParams{
		Model:     anthropic.ModelClaudeSonnet5_5,
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What's the weather in Lisbon?"))},
		Tools:     tools.Tools(),
	}
	for {
		message, err := client.Messages.New(ctx, params)
		if err != nil {
			panic(err)
		}
		calls, err := tools.Calls(*message)
		if err != nil {
			panic(err)
		}
		if len(calls) == 0 {
			fmt.Println(message.Content[0].Text)
			return
		}
		outcomes := dispatcher.RunAll(ctx, calls)
		for _, o := range outcomes {
			fmt.Printf("%s %s: %s\n", o.Tool, o.Kind, o.Text())
		}
		results, err := toolanthropic.Results(outcomes)
		if err != nil {
			panic(err)
		}
		params.Messages = append(params.Messages, message.ToParam(), results)
	}
	// Output:
	// get_weather completed: 21°C and sunny in Lisbon
	// It is 21°C and sunny in Lisbon.
}

// A schema that cannot be strict is sent with strict set to false, and the
// lint says where and why; a constraint Anthropic does not enforce moves into
// the description, and Relaxed lists it.
func ExampleTools_Lints() {
	tools, err := toolanthropic.New(toolanthropic.Config{Strict: true, Definitions: []tool.Definition{
		{
			Name:        "tag",
			InputSchema: []byte(`{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}}},"required":["labels"]}`),
		},
		{
			Name:        "rename",
			InputSchema: []byte(`{"type":"object","properties":{"name":{"type":"string","maxLength":40}},"required":["name"]}`),
		},
	}})
	if err != nil {
		panic(err)
	}
	fmt.Println(tools.Strict("tag"), tools.Strict("rename"))
	for _, l := range tools.Lints() {
		fmt.Println(l)
	}
	for _, l := range tools.Relaxed() {
		fmt.Println(l)
	}
	// Output:
	// false true
	// tag input schema at /properties/labels: an object that declares no properties and does not forbid others is free-form, which strict mode cannot express
	// tag input schema at /properties/labels/additionalProperties: additionalProperties with a schema (a map) cannot be strict: every member must be named
	// rename input schema at /properties/name/maxLength: maxLength is not enforced in strict mode; moved into the description
}
