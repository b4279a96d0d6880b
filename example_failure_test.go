package tool_test

import (
	"errors"
	"fmt"

	"github.com/agentcontract/tool"
)

func ExampleNewCallError() {
	timeout := errors.New("ledger: timeout after the second write")
	callErr, err := tool.NewCallError(tool.CallErrorConfig{
		Cause:    timeout,
		Evidence: tool.NewTextOutput("rows 1 and 2 were written"),
	})
	if err != nil {
		panic(err)
	}
	var failed error = fmt.Errorf("sync: %w", callErr)

	// A CallError declares no outcome: it is transparent to errors.Is.
	fmt.Println(errors.Is(failed, timeout))
	_, isFailure := tool.ClassifyFailure(failed)
	fmt.Println(isFailure)

	// The evidence is for logs and evaluation, not for the model.
	var withEvidence *tool.CallError
	if errors.As(failed, &withEvidence) {
		text, _ := withEvidence.Evidence().Text()
		fmt.Println(text)
	}
	// Output:
	// true
	// false
	// rows 1 and 2 were written
}
