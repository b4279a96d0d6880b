package toolgemini_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/agentcontract/tool"
	toolgemini "github.com/agentcontract/tool/adapters/gemini"
	"github.com/agentcontract/tool/dispatch"
	"google.golang.org/genai"
)

// A tool-use loop with the Gemini client: offer the registry's tools, run the
// calls of each model turn through a Dispatcher, send the function responses
// back after the model's turn, until the model answers in text.
func Example() {
	server := fakeGemini() // a stand-in for the Gemini API, so that the example runs offline
	defer server.Close()
	ctx := context.Background()

	client, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey:      "your-api-key",
		Backend:     genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: server.URL},
	})
	if err != nil {
		log.Fatal(err)
	}

	registry := weatherRegistry()
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	store, err := dispatch.NewMemoryStore(dispatch.MemoryStoreConfig{}) // one process
	if err != nil {
		log.Fatal(err)
	}
	dispatcher, err := dispatch.New(dispatch.Config{Registry: registry, Store: store, SealKeys: []dispatch.SealKey{{ID: "k1", Secret: secret}}})
	if err != nil {
		log.Fatal(err)
	}

	tools, err := toolgemini.New(toolgemini.Config{Registry: registry})
	if err != nil {
		log.Fatal(err)
	}
	config := &genai.GenerateContentConfig{Tools: tools.Tools()}
	contents := genai.Text("What is the weather in Lisbon?")
	for {
		resp, err := client.Models.GenerateContent(ctx, "gemini-3-flash-preview", contents, config)
		if err != nil {
			log.Fatal(err)
		}
		turn, err := toolgemini.NewTurn(resp)
		if err != nil {
			log.Fatal(err)
		}
		calls := turn.Calls()
		if len(calls) == 0 {
			fmt.Println(resp.Text())
			break
		}
		outcomes := dispatcher.RunAll(ctx, calls)
		for _, o := range outcomes {
			fmt.Println(o.Tool, o.Kind)
		}
		// The model's turn goes back unchanged (thought signatures
		// included), then one function response per call.
		contents, err = turn.Next(contents, outcomes)
		if err != nil {
			log.Fatal(err)
		}
	}
	// Output:
	// get_weather completed
	// It is 21°C and clear in Lisbon.
}

// Relaxed reports what Gemini receives in a looser form than the canonical
// schema: Prepare still checks the canonical one.
func ExampleTools_Relaxed() {
	code := tool.Definition{
		Name:        "lookup_airport",
		Description: "Find an airport by its IATA code.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{3}$"}},"required":["code"]}`),
	}
	tools, err := toolgemini.New(toolgemini.Config{Definitions: []tool.Definition{code}})
	if err != nil {
		log.Fatal(err)
	}
	schema, _ := json.Marshal(tools.Tools()[0].FunctionDeclarations[0].ParametersJsonSchema)
	fmt.Println(string(schema))
	for _, lint := range tools.Relaxed() {
		fmt.Println(lint)
	}
	// Output:
	// {"properties":{"code":{"description":"(pattern: \"^[A-Z]{3}$\")","type":"string"}},"required":["code"],"type":"object"}
	// lookup_airport input schema at /properties/code/pattern: pattern is not supported; dropped and written into the description
}

// Results answers the calls of a model turn: {"output": …} for a completed
// call, {"error": …} for one the model should read as an error.
func ExampleResults() {
	content, err := toolgemini.Results([]dispatch.Outcome{
		{CallID: "c1", Tool: "get_weather", Kind: dispatch.KindCompleted, Output: tool.NewTextOutput("21°C in Lisbon")},
		{CallID: "c2", Tool: "refund", Kind: dispatch.KindFailed, IsError: true, Output: tool.NewTextOutput("refunds are closed today")},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, part := range content.Parts {
		r, _ := json.Marshal(part.FunctionResponse.Response)
		fmt.Println(content.Role, part.FunctionResponse.ID, part.FunctionResponse.Name, string(r))
	}
	// Output:
	// user c1 get_weather {"output":"21°C in Lisbon"}
	// user c2 refund {"error":"refunds are closed today"}
}

func weatherRegistry() *tool.Registry {
	type in struct {
		City string `json:"city"`
	}
	weather, err := tool.NewFunc(tool.FuncConfig{Name: "get_weather", Description: "Current weather of a city.", Effect: tool.EffectSafe},
		func(_ context.Context, in in) (string, error) { return in.City + ": 21°C, clear sky", nil })
	if err != nil {
		log.Fatal(err)
	}
	b, err := tool.Bind(weather)
	if err != nil {
		log.Fatal(err)
	}
	registry, err := tool.NewRegistry(b)
	if err != nil {
		log.Fatal(err)
	}
	return registry
}

// fakeGemini answers generateContent with a function call, then, once the
// function response is there, with text.
func fakeGemini() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Contents []json.RawMessage `json:"contents"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		w.Header().Set("Content-Type", "application/json")
		if len(req.Contents) == 1 {
			fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[
				{"functionCall":{"id":"c1","name":"get_weather","args":{"city":"Lisbon"}},"thoughtSignature":"c2ln"}]}}]}`)
			return
		}
		fmt.Fprint(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"It is 21°C and clear in Lisbon."}]}}]}`)
	}))
}
