package tool_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/agentcontract/tool"
)

// A Failure's public output survives wrapping; its private cause stays
// out of reach of errors.Is.
func ExampleNewFailure() {
	failure, err := tool.NewFailure(tool.FailureConfig{
		Kind:   tool.FailureKindRejected,
		Output: tool.NewTextOutput("this operation is not permitted"),
		Cause:  errors.New("internal authorization diagnostic"),
	})
	if err != nil {
		panic(err)
	}
	wrapped := fmt.Errorf("tool call: %w", failure)

	result, ok := tool.ClassifyFailure(wrapped)
	if !ok {
		panic("the outcome was lost")
	}
	public, _ := result.Output().Text()
	fmt.Println(result.Kind(), public)
	fmt.Println(errors.Is(wrapped, result.Cause()))
	// Output:
	// rejected this operation is not permitted
	// false
}

// A Guard asks its Authorizer before every call; a refusal is a definite
// outcome of kind rejected, and the tool does not run.
func ExampleNewGuard() {
	inspect, err := tool.NewFunc(tool.FuncConfig{Name: "inspect", Effect: tool.EffectSafe},
		func(context.Context, struct{}) (string, error) {
			return "everything looks fine", nil
		})
	if err != nil {
		panic(err)
	}
	denyAll := tool.AuthorizerFunc(func(context.Context, tool.Authorization) (bool, error) {
		return false, nil
	})
	guard, err := tool.NewGuard(tool.GuardConfig{Authorizer: denyAll})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(inspect, guard.Call)
	if err != nil {
		panic(err)
	}
	invocation, err := binding.Contract().Prepare(tool.Request{Name: "inspect"}, tool.Admission{})
	if err != nil {
		panic(err)
	}

	_, err = binding.Call(context.Background(), invocation)
	if failure, ok := tool.ClassifyFailure(err); ok {
		fmt.Println(failure.Kind())
	}
	// Output:
	// rejected
}

// A runtime turns the outcome of each call into what the model sees: a
// Result's output, a Failure's public output, or, for any other error,
// nothing from the error itself, since nothing definite is known.
func ExampleClassifyFailure() {
	type city struct {
		City string `json:"city"`
	}
	weather, err := tool.NewFunc(tool.FuncConfig{Name: "weather", Effect: tool.EffectSafe},
		func(_ context.Context, in city) (string, error) {
			if in.City == "Atlantis" {
				return "", errors.New("geocoder: no match for \"Atlantis\"")
			}
			return "sunny in " + in.City, nil
		})
	if err != nil {
		panic(err)
	}
	transfer, err := tool.NewFunc(tool.FuncConfig{Name: "transfer"},
		func(context.Context, struct{}) (string, error) {
			return "", errors.New("bank: connection reset")
		})
	if err != nil {
		panic(err)
	}
	registry, err := tool.NewRegistry()
	if err != nil {
		panic(err)
	}
	for _, t := range []tool.Tool{weather, transfer} {
		binding, err := tool.Bind(t)
		if err != nil {
			panic(err)
		}
		if err := registry.Register(binding); err != nil {
			panic(err)
		}
	}

	// run is the runtime's side: it returns the text to send to the model
	// as the call's result, and whether that result reports an error.
	run := func(request tool.Request) (string, bool) {
		binding, ok := registry.Resolve(request.Name)
		if !ok {
			return "unknown tool " + request.Name, true
		}
		invocation, err := binding.Contract().Prepare(request, tool.Admission{})
		if rejection, ok := tool.ClassifyInputRejection(err); ok {
			return rejection.Message(), true
		} else if err != nil {
			return "the call was not admitted", true
		}
		result, err := binding.Call(context.Background(), invocation)
		if err == nil {
			text, _ := result.Output.Text()
			return text, false
		}
		if failure, ok := tool.ClassifyFailure(err); ok {
			text, _ := failure.Output().Text()
			return text, true
		}
		// Nothing definite is known: the call may have had effects. The
		// error is for logs; whether to retry is the runtime's decision,
		// guided by the tool's Effect.
		return "the outcome of the call is unknown", true
	}

	for _, request := range []tool.Request{
		{Name: "weather", Arguments: `{"city":"Lisbon"}`},
		{Name: "weather", Arguments: `{"city":"Atlantis"}`},
		{Name: "transfer", Arguments: `{}`},
	} {
		text, isError := run(request)
		fmt.Printf("%s error=%t: %s\n", request.Name, isError, text)
	}
	// Output:
	// weather error=false: sunny in Lisbon
	// weather error=true: the tool "weather" failed
	// transfer error=true: the outcome of the call is unknown
}

// Recover, given to Bind first, turns a panic anywhere in the call into a
// failed outcome whose public text is generic; the panic value and stack
// are kept in its Cause for the logs.
func ExampleRecover() {
	type fraction struct {
		Numerator   int `json:"numerator"`
		Denominator int `json:"denominator"`
	}
	divide, err := tool.NewFunc(tool.FuncConfig{Name: "divide", Effect: tool.EffectSafe},
		func(_ context.Context, in fraction) (int, error) {
			return in.Numerator / in.Denominator, nil
		})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(divide, tool.Recover)
	if err != nil {
		panic(err)
	}
	invocation, err := binding.Contract().Prepare(tool.Request{Name: "divide", Arguments: `{"numerator":1,"denominator":0}`}, tool.Admission{})
	if err != nil {
		panic(err)
	}

	_, err = binding.Call(context.Background(), invocation)
	failure, ok := tool.ClassifyFailure(err)
	if !ok {
		panic(err)
	}
	public, _ := failure.Output().Text()
	fmt.Println(failure.Kind(), public)
	var recovered *tool.PanicError
	if errors.As(failure.Cause(), &recovered) {
		fmt.Println(recovered.Value)
	}
	// Output:
	// failed the tool "divide" failed
	// runtime error: integer divide by zero
}
