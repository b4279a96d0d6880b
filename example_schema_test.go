package tool_test

import (
	"fmt"

	"github.com/agentcontract/tool"
)

func ExampleParseSchema() {
	schema, err := tool.ParseSchema([]byte(`{
		"type": "object",
		"properties": {"city": {"type": "string", "minLength": 1}},
		"required": ["city"]
	}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(schema.Valid())
	fmt.Println(string(schema.JSON()))

	// Nothing outside the document is ever loaded.
	_, err = tool.ParseSchema([]byte(`{"$ref": "https://example.com/city.json"}`))
	fmt.Println(err != nil)
	// Output:
	// true
	// {"type":"object","properties":{"city":{"type":"string","minLength":1}},"required":["city"]}
	// true
}

func ExampleSchemaFor() {
	type forecast struct {
		City string `json:"city"`
		Days int    `json:"days,omitempty"`
	}
	schema, err := tool.SchemaFor[forecast]()
	if err != nil {
		panic(err)
	}
	fmt.Println(schema.Validate([]byte(`{"city":"Oslo","days":3}`)) == nil)
	fmt.Println(schema.Validate([]byte(`{"days":3}`)) == nil)
	fmt.Println(schema.Validate([]byte(`{"city":"Oslo","hours":3}`)) == nil)
	// Output:
	// true
	// false
	// false
}

func ExampleSchema_Validate() {
	schema, err := tool.ParseSchema([]byte(`{"type":"object","properties":{"days":{"type":"integer","maximum":14}}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(schema.Validate([]byte(`{"days":7}`)))

	// A violation is an *InputRejection whose message a model can act on.
	err = schema.Validate([]byte(`{"days":30}`))
	if rejection, ok := tool.ClassifyInputRejection(err); ok {
		fmt.Println(rejection.Message())
	}

	// Numbers are compared exactly, never rounded through float64.
	exact, err := tool.ParseSchema([]byte(`{"maximum":9007199254740993}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(exact.Validate([]byte(`9007199254740994`)) != nil)
	// Output:
	// <nil>
	// at /days: maximum: got 30, want 14
	// true
}
