package tool_test

import (
	"encoding/json"
	"fmt"

	"github.com/agentcontract/tool"
)

func ExampleNewJSONOutput() {
	out, err := tool.NewJSONOutput(json.RawMessage(`{"temperature": 21.50, "unit": "C"}`))
	if err != nil {
		panic(err)
	}
	// The exact bytes are kept, number text included.
	fmt.Println(string(out.Details))
	// Without content blocks, the details are what the model reads.
	text, ok := out.Text()
	fmt.Println(text, ok)

	// Anything but one I-JSON document is refused.
	_, err = tool.NewJSONOutput(json.RawMessage(`{"a":1,"a":2}`))
	fmt.Println(err != nil)
	// Output:
	// {"temperature": 21.50, "unit": "C"}
	// {"temperature": 21.50, "unit": "C"} true
	// true
}
