package tool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentcontract/tool"
)

// A typed function becomes a tool whose input and output schemas are
// derived from its Go types.
func ExampleNewFunc() {
	type forecastInput struct {
		City string `json:"city" jsonschema:"description=city name"`
		Days uint8  `json:"days" jsonschema:"minimum=1,maximum=7"`
	}
	type forecast struct {
		City   string    `json:"city"`
		Highs  []float64 `json:"highs"`
		Source string    `json:"source,omitzero"`
	}
	f, err := tool.NewFunc(tool.FuncConfig{
		Name:        "forecast",
		Description: "daily high temperatures in Celsius",
		Effect:      tool.EffectSafe,
	}, func(_ context.Context, in forecastInput) (forecast, error) {
		highs := make([]float64, in.Days)
		for i := range highs {
			highs[i] = 20 + float64(i)/2
		}
		return forecast{City: in.City, Highs: highs}, nil
	})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(f)
	if err != nil {
		panic(err)
	}
	def := binding.Contract().Definition()
	fmt.Println(string(def.InputSchema))

	invocation, err := binding.Contract().Prepare(tool.Request{
		Name:      "forecast",
		Arguments: `{"city":"Lyon","days":3}`,
	}, tool.Admission{})
	if err != nil {
		panic(err)
	}
	result, err := binding.Call(context.Background(), invocation)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(result.Output.Details))
	// Output:
	// {"properties":{"city":{"type":"string","description":"city name"},"days":{"type":"integer","maximum":7,"minimum":1}},"additionalProperties":false,"type":"object","required":["city","days"]}
	// {"city":"Lyon","highs":[20,20.5,21]}
}

type ledgerTransfer struct {
	To    string `json:"to"`
	Cents int64  `json:"cents" jsonschema:"minimum=1"`
}

type ledgerReceipt struct {
	Receipt string `json:"receipt"`
	Cents   int64  `json:"cents"`
}

// ledgerTool is written by hand around a Signature because it needs the
// call's IdempotencyKey: the same key never moves money twice.
type ledgerTool struct {
	signature tool.Signature[ledgerTransfer, ledgerReceipt]
	done      map[tool.IdempotencyKey]ledgerReceipt // a durable table in real life
	transfers int
}

func (l *ledgerTool) Definition() tool.Definition {
	return tool.Definition{
		Name:         "transfer",
		Description:  "move money to another account",
		InputSchema:  l.signature.InputSchema(),
		OutputSchema: l.signature.OutputSchema(),
		Effect:       tool.EffectIdempotent,
	}
}

// InputValidator lets Prepare run the Signature's strict decode.
func (l *ledgerTool) InputValidator() func([]byte) error { return l.signature.InputValidator() }

func (l *ledgerTool) Call(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
	in, err := l.signature.Decode(invocation)
	if err != nil {
		return tool.Result{}, err
	}
	key := invocation.IdempotencyKey()
	if key == "" {
		return tool.Result{}, errors.New("transfer: the runtime must give every call an idempotency key")
	}
	receipt, seen := l.done[key]
	if !seen {
		l.transfers++
		receipt = ledgerReceipt{Receipt: fmt.Sprintf("R-%d-%s", l.transfers, strings.ToUpper(in.To)), Cents: in.Cents}
		l.done[key] = receipt
	}
	output, err := l.signature.Encode(receipt)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Result{Output: output}, nil
}

// A Signature gives a hand-written tool the same typed, strict input and
// output contract as a Func, while the tool reads the call itself.
func ExampleNewSignature() {
	signature, err := tool.NewSignature[ledgerTransfer, ledgerReceipt]()
	if err != nil {
		panic(err)
	}
	ledger := &ledgerTool{signature: signature, done: map[tool.IdempotencyKey]ledgerReceipt{}}
	binding, err := tool.Bind(ledger)
	if err != nil {
		panic(err)
	}

	call := tool.Request{Name: "transfer", Arguments: `{"to":"acme","cents":1250}`}
	for _, attempt := range []string{"first try", "retry after a timeout"} {
		invocation, err := binding.Contract().Prepare(call, tool.Admission{IdempotencyKey: "order-42"})
		if err != nil {
			panic(err)
		}
		result, err := binding.Call(context.Background(), invocation)
		if err != nil {
			panic(err)
		}
		fmt.Println(attempt+":", string(result.Output.Details))
	}
	fmt.Println("transfers made:", ledger.transfers)
	// Output:
	// first try: {"receipt":"R-1-ACME","cents":1250}
	// retry after a timeout: {"receipt":"R-1-ACME","cents":1250}
	// transfers made: 1
}

// When a model's arguments are refused, the rejection's message is the
// one meant for the model: it names the offending member and the rule.
func ExampleClassifyInputRejection() {
	type bookingInput struct {
		Room   string `json:"room" jsonschema:"enum=small,enum=large"`
		Guests int8   `json:"guests"`
	}
	f, err := tool.NewFunc(tool.FuncConfig{Name: "book"}, func(_ context.Context, in bookingInput) (string, error) {
		return "booked " + in.Room, nil
	})
	if err != nil {
		panic(err)
	}
	binding, err := tool.Bind(f)
	if err != nil {
		panic(err)
	}
	for _, arguments := range []string{
		`{"room":"small","guests":2.0}`,
		`{"room":"small","guests":300}`,
		`{"room":"small","guests":2,"breakfast":true}`,
	} {
		_, err := binding.Contract().Prepare(tool.Request{Name: "book", Arguments: arguments}, tool.Admission{})
		if rejection, ok := tool.ClassifyInputRejection(err); ok {
			fmt.Println(rejection.Message())
		}
	}
	// Output:
	// arguments cannot be decoded: value at /guests must be an integer from -128 to 127, written without a fraction or exponent, got 2.0
	// arguments of "book" do not match its input schema at /guests: maximum: got 300, want 127
	// arguments of "book" do not match its input schema at the root: additional properties 'breakfast' not allowed
}
