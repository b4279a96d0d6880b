package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// goTypeWords match what a public message must never show: Go type names
// and package paths.
var goTypeWords = regexp.MustCompile(`\b(u?int(8|16|32|64)?|float(32|64)|complex(64|128)|struct|uintptr|interface|tool_test|main|reflect|netip|time\.Time|Go)\b|\[\]byte|json:`)

// requirePublicRejection checks that err is a model-correctable refusal
// whose public message names the location and speaks JSON only.
func requirePublicRejection(t testing.TB, err error, pointer string) *tool.InputRejection {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	rejection, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "not a public rejection: %v", err)
	msg := rejection.Message()
	require.NotEmpty(t, msg)
	require.Contains(t, msg, pointer, "the message names the JSON pointer")
	require.Falsef(t, goTypeWords.MatchString(msg), "the message names a Go type: %q (%q)", msg, goTypeWords.FindString(msg))
	return rejection
}

type sigInner struct {
	Level int16 `json:"level"`
}

type sigArgs struct {
	Name  string     `json:"name"`
	Count int        `json:"count"`
	Small int8       `json:"small,omitzero"`
	Size  uint32     `json:"size,omitzero"`
	Data  []byte     `json:"data,omitzero"`
	Fixed [2]byte    `json:"fixed,omitzero"`
	When  time.Time  `json:"when,omitzero"`
	Addr  netip.Addr `json:"addr,omitzero"`
	Inner *sigInner  `json:"inner,omitzero"`
}

func TestPrepareRefusesBeforeTheFunctionRuns(t *testing.T) {
	var calls atomic.Int32
	b := bindFunc(t, "strict", func(_ context.Context, in sigArgs) (string, error) {
		calls.Add(1)
		return in.Name, nil
	})
	tests := []struct {
		name      string
		arguments string
		pointer   string // the location the message must name
		reason    string // a word of the rule broken
	}{
		{"unknown member", `{"name":"a","count":1,"extra":1}`, "the root", "extra"},
		{"member name in the wrong case", `{"Name":"a","count":1}`, "the root", "name"},
		{"nested unknown member", `{"name":"a","count":1,"inner":{"level":1,"Level":2}}`, "/inner", "Level"},
		{"duplicate names", `{"name":"a","name":"b","count":1}`, "/name", "duplicate"},
		{"duplicate names spelt with an escape", `{"name":"a","n\u0061me":"b","count":1}`, "/name", "duplicate"},
		{"fraction into an int", `{"name":"a","count":1.5}`, "/count", "integer"},
		{"300 into an int8", `{"name":"a","count":1,"small":300}`, "/small", "127"},
		{"-129 into an int8", `{"name":"a","count":1,"small":-129}`, "/small", "-128"},
		{"negative into a uint32", `{"name":"a","count":1,"size":-1}`, "/size", "0"},
		{"-0 into a uint32", `{"name":"a","count":1,"size":-0}`, "/size", "-0"},
		{"beyond int64", `{"name":"a","count":9223372036854775808}`, "/count", "9223372036854775807"},
		{"1.0 into an int", `{"name":"a","count":1.0}`, "/count", "fraction"},
		{"1e1 into an int", `{"name":"a","count":1e1}`, "/count", "exponent"},
		{"1.0 deep into an int16", `{"name":"a","count":1,"inner":{"level":2.0}}`, "/inner/level", "fraction"},
		{"trailing data", `{"name":"a","count":1} {}`, "the root", "after"},
		{"trailing garbage", `{"name":"a","count":1}x`, "the root", "after"},
		{"bad base64", `{"name":"a","count":1,"data":"@@@@"}`, "/data", "base64"},
		{"unpadded base64", `{"name":"a","count":1,"data":"AQI"}`, "/data", "base64"},
		{"base64 of the wrong length for an array", `{"name":"a","count":1,"fixed":"AQID"}`, "/fixed", "2 bytes"},
		{"not a date-time", `{"name":"a","count":1,"when":"2024-13-01T00:00:00Z"}`, "/when", "date-time"},
		{"a leap second", `{"name":"a","count":1,"when":"2016-12-31T23:59:60Z"}`, "/when", "date-time"},
		{"not an address", `{"name":"a","count":1,"addr":"not-an-ip"}`, "/addr", "string"},
		{"null for a required string", `{"name":null,"count":1}`, "/name", "string"},
		{"missing required member", `{"count":1}`, "the root", "name"},
		{"not an object", `[1,2]`, "JSON object", "object"},
		{"not JSON", `{"name":"a",`, "the root", "end"},
		{"invalid UTF-8", "{\"name\":\"\xff\",\"count\":1}", "/name", "UTF-8"},
		{"a noncharacter", `{"name":"\ufffe","count":1}`, "/name", "noncharacter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := prepare(b, tc.arguments)
			rejection := requirePublicRejection(t, err, tc.pointer)
			require.Contains(t, rejection.Message(), tc.reason)
			require.Zero(t, calls.Load(), "the function never runs for a refused call")
		})
	}

	// The admitted neighbours of the refused numbers run.
	for _, ok := range []string{
		`{"name":"a","count":10}`,
		`{"name":"a","count":-9223372036854775808,"small":-128,"size":4294967295}`,
		`{"name":"a","count":1,"inner":{"level":-32768},"data":"AQI=","fixed":"AQI="}`,
		`{"name":"a","count":1,"when":"2016-12-31T23:59:59.999999999-08:00","addr":"::1"}`,
		`   `,
	} {
		inv, err := prepare(b, ok)
		if strings.TrimSpace(ok) == "" {
			rejection := requirePublicRejection(t, err, "the root")
			require.Contains(t, rejection.Message(), "name", "blank arguments are {} and miss required members")
			continue
		}
		require.NoError(t, err, ok)
		_, err = b.Call(context.Background(), inv)
		require.NoError(t, err, "an admitted value never fails to decode at Call: %s", ok)
	}
	require.EqualValues(t, 4, calls.Load())
}

// The decode messages for numbers, checked exactly.
func TestDecodeRejectionMessages(t *testing.T) {
	b := bindFunc(t, "numbers", func(_ context.Context, in sigArgs) (string, error) { return "", nil })
	tests := []struct {
		arguments, message string
	}{
		{`{"name":"a","count":1.0}`, "arguments cannot be decoded: value at /count must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or exponent, got 1.0"},
		{`{"name":"a","count":2E3}`, "arguments cannot be decoded: value at /count must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or exponent, got 2E3"},
		{`{"name":"a","count":1,"size":-0}`, "arguments cannot be decoded: value at /size must be an integer from 0 to 4294967295, got -0"},
		{`{"name":"a","count":1,"data":"AQI"}`, "arguments cannot be decoded: value at /data must be a string of standard base64 with padding, got a string"},
		{`{"name":"a","count":1,"fixed":"AQID"}`, "arguments cannot be decoded: value at /fixed must be a string of standard base64 with padding that decodes to 2 bytes, got a string"},
		{`{"name":"a","count":1,"when":"2016-12-31T23:59:60Z"}`, "arguments cannot be decoded: value at /when must be an RFC 3339 date-time string, got a string"},
		{`{"name":"a","count":1,"addr":"x"}`, "arguments cannot be decoded: value at /addr must be a string in the form this member accepts"},
	}
	for _, tc := range tests {
		_, err := prepare(b, tc.arguments)
		rejection := requirePublicRejection(t, err, "/")
		require.Equal(t, tc.message, rejection.Message())
		require.Equal(t, "tool: invalid invocation: "+tc.message, err.Error())
		require.Error(t, rejection.Cause(), "the decoder's own error is kept as the private cause")
	}
}

func TestInputValidatorStandsAlone(t *testing.T) {
	sig, err := tool.NewSignature[sigArgs, string]()
	require.NoError(t, err)
	validate := sig.InputValidator()
	require.NoError(t, validate([]byte(`{"name":"a","count":1}`)))
	require.NoError(t, validate([]byte(`{}`)), "alone, the validator is the decoder only: required members are the schema's")
	for _, bad := range []string{`null`, ` null `, `{"count":1.5}`, `{"Count":1}`, `{"name":"a"} x`, `{"name":"a","name":"b"}`, `[]`, `"x"`, "{\"name\":\"\xff\"}"} {
		err := validate([]byte(bad))
		require.ErrorIs(t, err, tool.ErrInvalidInvocation, bad)
		_, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, "%s: %v", bad, err)
	}
	pointer, err := tool.NewSignature[*sigArgs, string]()
	require.NoError(t, err)
	err = pointer.InputValidator()([]byte(`null`))
	requirePublicRejection(t, err, "null")
}

// Input types with a Validate method of each kind.
type (
	valRejects        struct{ N int }
	valRejectsWrapped struct{ N int }
	valPlainError     struct{ N int }
	valPanics         struct{ N int }
	valPanicsError    struct{ N int }
	valJoined         struct{ N int }
	valPointer        struct{ N int }
	valValue          struct{ N int }
	valNilRejection   struct{ N int }
)

var (
	errValidatorBroken = errors.New("database of allowed values unavailable")
	errPanicValue      = errors.New("validator exploded")
)

func rejectN(n int) *tool.InputRejection {
	r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: fmt.Sprintf("N must be positive, got %d", n)})
	if err != nil {
		panic(err)
	}
	return r
}

func (v valRejects) Validate() error {
	if v.N <= 0 {
		return rejectN(v.N)
	}
	return nil
}

func (v valRejectsWrapped) Validate() error {
	if v.N <= 0 {
		return fmt.Errorf("checking N: %w", rejectN(v.N))
	}
	return nil
}

func (v valPlainError) Validate() error {
	if v.N <= 0 {
		return errValidatorBroken
	}
	return nil
}

func (v valPanics) Validate() error {
	if v.N <= 0 {
		panic("no N")
	}
	return nil
}

func (v valPanicsError) Validate() error {
	if v.N <= 0 {
		panic(errPanicValue)
	}
	return nil
}

func (v valJoined) Validate() error {
	if v.N <= 0 {
		return errors.Join(rejectN(v.N), errValidatorBroken)
	}
	return nil
}

func (v *valPointer) Validate() error {
	if v.N <= 0 {
		return rejectN(v.N)
	}
	return nil
}

func (v valValue) Validate() error {
	if v.N <= 0 {
		return rejectN(v.N)
	}
	return nil
}

func (v valNilRejection) Validate() error {
	if v.N <= 0 {
		var r *tool.InputRejection
		return r // a typed nil: invalid, so a defect
	}
	return nil
}

// A field type whose decoder panics on negative numbers, errs on zero and
// rejects 13.
type valField struct{ n int }

func (f *valField) UnmarshalJSON(b []byte) error {
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	switch {
	case n < 0:
		panic(fmt.Sprintf("negative %d", n))
	case n == 0:
		return errValidatorBroken
	case n == 13:
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "value at /f must not be 13"})
		if err != nil {
			return err
		}
		return fmt.Errorf("unlucky: %w", r)
	}
	f.n = n
	return nil
}

// JSONSchemaModel says what valField reads: an integer.
func (valField) JSONSchemaModel() any { return 0 }

type valWithField struct {
	F valField `json:"f"`
}

// validatorOutcome runs arguments through a binding of In and reports what
// Prepare returned and whether the function ran.
func validatorOutcome[In any](t *testing.T, arguments string) (error, bool) {
	t.Helper()
	var ran atomic.Bool
	b := bindFunc(t, "v", func(context.Context, In) (string, error) {
		ran.Store(true)
		return "ok", nil
	})
	_, err := prepare(b, arguments)
	if err == nil {
		inv, perr := prepare(b, arguments)
		require.NoError(t, perr)
		_, cerr := b.Call(context.Background(), inv)
		require.NoError(t, cerr)
	}
	return err, ran.Load()
}

func TestValidateTaxonomy(t *testing.T) {
	type want int
	const (
		admitted want = iota
		rejection
		defect
		panicked
	)
	tests := []struct {
		name       string
		run        func(*testing.T, string) (error, bool)
		arguments  string
		want       want
		panicValue any
	}{
		{"rejection", validatorOutcome[valRejects], `{"N":0}`, rejection, nil},
		{"rejection admits valid input", validatorOutcome[valRejects], `{"N":1}`, admitted, nil},
		{"rejection wrapped once", validatorOutcome[valRejectsWrapped], `{"N":0}`, rejection, nil},
		{"plain error", validatorOutcome[valPlainError], `{"N":0}`, defect, nil},
		{"panic", validatorOutcome[valPanics], `{"N":0}`, panicked, "no N"},
		{"panic with an error", validatorOutcome[valPanicsError], `{"N":0}`, panicked, errPanicValue},
		{"rejection joined with another error", validatorOutcome[valJoined], `{"N":0}`, defect, nil},
		{"typed nil rejection", validatorOutcome[valNilRejection], `{"N":0}`, defect, nil},
		{"pointer receiver", validatorOutcome[valPointer], `{"N":0}`, rejection, nil},
		{"pointer receiver, pointer input", validatorOutcome[*valPointer], `{"N":0}`, rejection, nil},
		{"value receiver", validatorOutcome[valValue], `{"N":-1}`, rejection, nil},
		{"value receiver, pointer input", validatorOutcome[*valValue], `{"N":-1}`, rejection, nil},
		{"value receiver admits", validatorOutcome[*valValue], `{"N":2}`, admitted, nil},
		{"custom decoder panics", validatorOutcome[valWithField], `{"f":-1}`, panicked, "negative -1"},
		{"custom decoder errs", validatorOutcome[valWithField], `{"f":0}`, defect, nil},
		{"custom decoder rejects", validatorOutcome[valWithField], `{"f":13}`, rejection, nil},
		{"custom decoder admits", validatorOutcome[valWithField], `{"f":7}`, admitted, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err, ran := tc.run(t, tc.arguments)
			if tc.want == admitted {
				require.NoError(t, err)
				require.True(t, ran)
				return
			}
			require.False(t, ran, "the function never runs")
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			rej, isRejection := tool.ClassifyInputRejection(err)
			var invalid *tool.InputValidationError
			isDefect := errors.As(err, &invalid)
			switch tc.want {
			case rejection:
				require.True(t, isRejection, "%v", err)
				require.False(t, isDefect)
				require.NotEmpty(t, rej.Message())
				require.NotContains(t, err.Error(), errValidatorBroken.Error())
			case defect, panicked:
				require.False(t, isRejection, "a defect has no public message: %v", err)
				require.True(t, isDefect, "%T %v", err, err)
				require.Equal(t, "tool: invalid invocation: the input validator failed", err.Error(),
					"the cause stays out of the message")
				require.NotErrorIs(t, err, errValidatorBroken, "the cause is not reachable through errors.Is")
				require.NotErrorIs(t, err, errPanicValue)
				var panicErr *tool.InputValidationPanicError
				if tc.want == defect {
					require.False(t, errors.As(invalid.Cause(), &panicErr))
					require.Error(t, invalid.Cause(), "the validator's error is kept as the cause")
					_, causeIsDefect := invalid.Cause().(*tool.InputValidationError)
					require.False(t, causeIsDefect, "not wrapped twice")
					return
				}
				require.True(t, errors.As(invalid.Cause(), &panicErr), "%v", invalid.Cause())
				require.Equal(t, tc.panicValue, panicErr.Value)
				if e, ok := tc.panicValue.(error); ok {
					require.ErrorIs(t, invalid.Cause(), e, "an error panic value is reachable from the cause")
				}
			}
		})
	}
}

func TestValidateRejectionReachesTheCaller(t *testing.T) {
	err, _ := validatorOutcome[valRejectsWrapped](t, `{"N":-5}`)
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Equal(t, "N must be positive, got -5", rej.Message())
	require.Equal(t, "checking N: tool: invalid invocation: N must be positive, got -5", err.Error(),
		"Prepare returns the validator's own error")
}

type sigResult struct {
	Sum   int64    `json:"sum"`
	Terms []string `json:"terms"`
	Note  *string  `json:"note,omitzero"`
}

type sigNumbers struct {
	A int32 `json:"a"`
	B int32 `json:"b"`
}

// callOnce prepares and calls a binding.
func callOnce(t *testing.T, b tool.Binding, arguments string) (tool.Result, error) {
	t.Helper()
	inv, err := prepare(b, arguments)
	require.NoError(t, err)
	return b.Call(context.Background(), inv)
}

func TestOutputCodec(t *testing.T) {
	ctx := context.Background()
	_ = ctx

	t.Run("string is text without an output schema", func(t *testing.T) {
		b := bindFunc(t, "text", func(_ context.Context, in sigNumbers) (string, error) {
			return fmt.Sprint(in.A + in.B), nil
		})
		require.Nil(t, b.Contract().Definition().OutputSchema)
		result, err := callOnce(t, b, `{"a":2,"b":3}`)
		require.NoError(t, err)
		require.Equal(t, tool.NewTextOutput("5"), result.Output)
		require.Nil(t, result.InputRequest)

		sig, err := tool.NewSignature[sigNumbers, string]()
		require.NoError(t, err)
		require.Nil(t, sig.OutputSchema())
		empty, err := sig.Encode("")
		require.NoError(t, err)
		require.Equal(t, tool.Output{}, empty, "an empty string is the zero Output")
		_, err = sig.Encode("\xff")
		require.ErrorIs(t, err, tool.ErrInvalidOutput)
	})

	t.Run("Output passes through with media", func(t *testing.T) {
		png := []byte{0x89, 'P', 'N', 'G'}
		b := bindFunc(t, "media", func(context.Context, sigNumbers) (tool.Output, error) {
			return tool.Output{
				Content: []tool.Block{tool.NewTextBlock("chart:"), tool.NewMediaBlock("image/png", png)},
				Details: json.RawMessage(`{"points":2}`),
			}, nil
		})
		require.Nil(t, b.Contract().Definition().OutputSchema)
		result, err := callOnce(t, b, `{"a":1,"b":1}`)
		require.NoError(t, err)
		require.Len(t, result.Output.Content, 2)
		require.Equal(t, tool.BlockMedia, result.Output.Content[1].Kind)
		require.Equal(t, "image/png", result.Output.Content[1].MediaType)
		require.Equal(t, png, result.Output.Content[1].Data)
		require.JSONEq(t, `{"points":2}`, string(result.Output.Details))
		_, isText := result.Output.Text()
		require.False(t, isText, "media is not dropped into text")
	})

	t.Run("struct is JSON details under the reflected schema", func(t *testing.T) {
		note := "rounded"
		b := bindFunc(t, "sum", func(_ context.Context, in sigNumbers) (sigResult, error) {
			return sigResult{Sum: int64(in.A) + int64(in.B), Terms: []string{fmt.Sprint(in.A), fmt.Sprint(in.B)}, Note: &note}, nil
		})
		sig, err := tool.NewSignature[sigNumbers, sigResult]()
		require.NoError(t, err)
		def := b.Contract().Definition()
		require.NotNil(t, def.OutputSchema)
		require.JSONEq(t, string(sig.OutputSchema()), string(def.OutputSchema))
		require.JSONEq(t, string(sig.InputSchema()), string(def.InputSchema))
		out := schemaDoc(t, def.OutputSchema)
		require.Equal(t, false, out["additionalProperties"])

		result, err := callOnce(t, b, `{"a":2147483647,"b":2147483647}`)
		require.NoError(t, err)
		require.Empty(t, result.Output.Content)
		require.JSONEq(t, `{"sum":4294967294,"terms":["2147483647","2147483647"],"note":"rounded"}`, string(result.Output.Details))
		require.NoError(t, b.Contract().ValidateResult(result))
	})

	t.Run("nil pointer result is null and meets its own schema", func(t *testing.T) {
		b := bindFunc(t, "maybe", func(_ context.Context, in sigNumbers) (*sigResult, error) {
			if in.A == 0 {
				return nil, nil
			}
			return &sigResult{Sum: int64(in.A), Terms: []string{}}, nil
		})
		result, err := callOnce(t, b, `{"a":0,"b":0}`)
		require.NoError(t, err)
		require.Equal(t, "null", string(result.Output.Details))
		result, err = callOnce(t, b, `{"a":4,"b":0}`)
		require.NoError(t, err)
		require.JSONEq(t, `{"sum":4,"terms":[]}`, string(result.Output.Details))
	})

	t.Run("nil slice in a result is an empty array", func(t *testing.T) {
		b := bindFunc(t, "empty", func(context.Context, sigNumbers) (sigResult, error) {
			return sigResult{}, nil
		})
		result, err := callOnce(t, b, `{"a":0,"b":0}`)
		require.NoError(t, err)
		require.JSONEq(t, `{"sum":0,"terms":[]}`, string(result.Output.Details))
	})

	for _, effect := range []tool.Effect{"", tool.EffectSafe, tool.EffectIdempotent} {
		t.Run("invalid media block is refused, effect "+string(effect), func(t *testing.T) {
			f, err := tool.NewFunc(tool.FuncConfig{Name: "broken", Effect: effect}, func(context.Context, sigNumbers) (tool.Output, error) {
				return tool.Output{Content: []tool.Block{{Kind: tool.BlockMedia, MediaType: "not a type", Data: []byte{1}}}}, nil
			})
			require.NoError(t, err)
			b, err := tool.Bind(f)
			require.NoError(t, err)
			result, err := callOnce(t, b, `{"a":1,"b":2}`)
			require.ErrorIs(t, err, tool.ErrInvalidResult)
			require.Equal(t, tool.Result{}, result, "no result reaches the caller")
			_, isFailure := tool.ClassifyFailure(err)
			require.False(t, isFailure, "a broken result is not a tool failure")
		})
	}

	t.Run("text of invalid UTF-8 is refused", func(t *testing.T) {
		b := bindFunc(t, "garbled", func(context.Context, sigNumbers) (string, error) { return "\xff\xfe", nil })
		result, err := callOnce(t, b, `{"a":1,"b":2}`)
		require.ErrorIs(t, err, tool.ErrInvalidResult)
		require.Equal(t, tool.Result{}, result)
	})

	t.Run("a result JSON cannot encode is refused", func(t *testing.T) {
		b := bindFunc(t, "nan", func(context.Context, sigNumbers) (map[string]float64, error) {
			return map[string]float64{"x": math.NaN()}, nil
		})
		result, err := callOnce(t, b, `{"a":1,"b":2}`)
		require.ErrorIs(t, err, tool.ErrInvalidResult)
		require.ErrorIs(t, err, tool.ErrInvalidOutput)
		require.Equal(t, tool.Result{}, result)
	})

	t.Run("details that break a hand-written output schema are refused", func(t *testing.T) {
		b, err := tool.Bind(handTool{
			def: tool.Definition{
				Name:         "hand",
				InputSchema:  json.RawMessage(`{"type":"object"}`),
				OutputSchema: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`),
			},
			result: tool.Result{Output: tool.Output{Details: json.RawMessage(`{"n":"seven"}`)}},
		})
		require.NoError(t, err)
		result, err := callOnce(t, b, `{}`)
		require.ErrorIs(t, err, tool.ErrInvalidResult)
		require.Contains(t, err.Error(), "/n")
		require.Equal(t, tool.Result{}, result)
	})

	t.Run("output and input request together are refused", func(t *testing.T) {
		schema, err := tool.ParseSchema([]byte(`{"type":"boolean"}`))
		require.NoError(t, err)
		request, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"ok?"`), ResponseSchema: schema})
		require.NoError(t, err)
		b, err := tool.Bind(handTool{
			def:    tool.Definition{Name: "both", InputSchema: json.RawMessage(`{"type":"object"}`)},
			result: tool.Result{Output: tool.NewTextOutput("done"), InputRequest: &request},
		})
		require.NoError(t, err)
		result, err := callOnce(t, b, `{}`)
		require.ErrorIs(t, err, tool.ErrInvalidResult)
		require.Equal(t, tool.Result{}, result)
	})
}

// handTool is a Tool written by hand that returns a fixed result.
type handTool struct {
	def    tool.Definition
	result tool.Result
}

func (h handTool) Call(context.Context, tool.Invocation) (tool.Result, error) { return h.result, nil }

func (h handTool) Definition() tool.Definition { return h.def.Clone() }

func TestSignatureEncode(t *testing.T) {
	sig, err := tool.NewSignature[sigNumbers, tool.Output]()
	require.NoError(t, err)
	data := []byte{1, 2, 3}
	in := tool.Output{Content: []tool.Block{tool.NewMediaBlock("audio/ogg", data)}}
	out, err := sig.Encode(in)
	require.NoError(t, err)
	in.Content[0].Data[0] = 9
	require.Equal(t, []byte{1, 2, 3}, out.Content[0].Data, "the Output shares no memory with the value encoded")
	_, err = sig.Encode(tool.Output{Content: []tool.Block{{Kind: "video"}}})
	require.ErrorIs(t, err, tool.ErrInvalidOutput)

	js, err := tool.NewSignature[sigNumbers, sigResult]()
	require.NoError(t, err)
	out, err = js.Encode(sigResult{Sum: 1, Terms: []string{"a"}})
	require.NoError(t, err)
	require.Equal(t, `{"sum":1,"terms":["a"]}`, string(out.Details))

	var zero tool.Signature[sigNumbers, string]
	_, err = zero.Encode("x")
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	require.Nil(t, zero.InputSchema())
	require.Nil(t, zero.OutputSchema())
	_, err = zero.Decode(tool.Invocation{})
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	_, err = js.Decode(tool.Invocation{})
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
}

// The property tests below are the evidence that the derived schema and
// the decoder agree: every value of an input type, encoded by the JSON
// codec, is admitted by Prepare and decodes back to itself; and whatever
// Prepare admits of a mutated text decodes without error.

type propFlat struct {
	I   int     `json:"i"`
	I8  int8    `json:"i8"`
	I16 int16   `json:"i16"`
	I32 int32   `json:"i32"`
	I64 int64   `json:"i64"`
	U   uint    `json:"u"`
	U8  uint8   `json:"u8"`
	U16 uint16  `json:"u16"`
	U32 uint32  `json:"u32"`
	U64 uint64  `json:"u64"`
	F32 float32 `json:"f32"`
	F64 float64 `json:"f64"`
	B   bool    `json:"b"`
	S   string  `json:"s"`
	R   rune    `json:"r"`
	By  byte    `json:"by"`
}

type propLeaf struct {
	ID     uint16   `json:"id"`
	Tags   []string `json:"tags"`
	Weight *float64 `json:"weight"`
}

type propBase struct {
	Kind string `json:"kind"`
	Rank int16  `json:"rank"`
}

type propNested struct {
	propBase
	Leaf   propLeaf            `json:"leaf"`
	Ptr    *propLeaf           `json:"ptr"`
	Leaves []propLeaf          `json:"leaves"`
	Ptrs   []*propLeaf         `json:"ptrs"`
	ByName map[string]propLeaf `json:"by_name"`
	ByID   map[int32]*int8     `json:"by_id"`
	ByU    map[uint16]string   `json:"by_u"`
	Matrix [][]int32           `json:"matrix"`
	Pair   [2]float32          `json:"pair"`
	Next   *propNested         `json:"next"`
}

type propWire struct {
	At    time.Time       `json:"at"`
	When  *time.Time      `json:"when"`
	Data  []byte          `json:"data"`
	Blobs [][]byte        `json:"blobs"`
	Fixed [5]byte         `json:"fixed"`
	Addr  netip.Addr      `json:"addr"`
	Raw   json.RawMessage `json:"raw"`
	Any   any             `json:"any"`
}

// PropExtra is embedded through a pointer: all or none of its members.
type PropExtra struct {
	Note  string `json:"note"`
	Score uint32 `json:"score"`
}

type propOptional struct {
	*PropExtra
	S    string          `json:"s,omitzero"`
	N    int32           `json:"n,omitzero"`
	P    *int16          `json:"p,omitzero"`
	L    []string        `json:"l,omitzero"`
	M    map[string]bool `json:"m,omitzero"`
	T    time.Time       `json:"t,omitzero"`
	St   propLeaf        `json:"st,omitzero"`
	E    string          `json:"e,omitempty"`
	Ptr  *propLeaf       `json:"ptr,omitempty"`
	Mode string          `json:"mode,omitzero" jsonschema:"enum=fast,enum=slow"`
}

// propGen draws values within the natural ranges of Go types, favouring
// the edges.
type propGen struct{ r *rand.Rand }

func newPropGen(seed uint64) *propGen { return &propGen{rand.New(rand.NewPCG(seed, 0x5eed))} }

func (g *propGen) edge() bool { return g.r.IntN(5) == 0 }

func (g *propGen) signed(bits int) int64 {
	lo, hi := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if g.edge() {
		return []int64{lo, hi, 0, -1, 1, lo + 1, hi - 1}[g.r.IntN(7)]
	}
	return int64(g.r.Uint64()) >> (64 - bits)
}

func (g *propGen) unsigned(bits int) uint64 {
	hi := uint64(math.MaxUint64) >> (64 - bits)
	if g.edge() {
		return []uint64{0, 1, hi, hi - 1}[g.r.IntN(4)]
	}
	return g.r.Uint64() >> (64 - bits)
}

func (g *propGen) float32() float32 {
	if g.edge() {
		return []float32{0, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 1, -1.5, 0.1}[g.r.IntN(8)]
	}
	for {
		f := math.Float32frombits(g.r.Uint32())
		if !math.IsNaN(float64(f)) && !math.IsInf(float64(f), 0) {
			return f
		}
	}
}

func (g *propGen) float64() float64 {
	if g.edge() {
		return []float64{0, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e21, 1e-7, 0.1, -2.5}[g.r.IntN(8)]
	}
	for {
		f := math.Float64frombits(g.r.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f
		}
	}
}

// rune draws any Unicode scalar value that is not a noncharacter.
func (g *propGen) rune() rune {
	for {
		var r rune
		switch g.r.IntN(6) {
		case 0:
			r = rune(g.r.IntN(0x80)) // ASCII, controls, quote and backslash included
		case 1:
			r = []rune{'"', '\\', '/', 0, 0x1f, 0x7f, 0x2028, 0x2029, 0xfeff, 0xfffd, 0x10fffd}[g.r.IntN(11)]
		case 2:
			r = 0xa0 + rune(g.r.IntN(0x200))
		case 3:
			r = 0x4e00 + rune(g.r.IntN(0x5200))
		case 4:
			r = 0x1f300 + rune(g.r.IntN(0x800))
		default:
			r = rune(g.r.IntN(0x110000))
		}
		surrogate := r >= 0xd800 && r <= 0xdfff
		nonchar := (r >= 0xfdd0 && r <= 0xfdef) || r&0xfffe == 0xfffe
		if !surrogate && !nonchar {
			return r
		}
	}
}

func (g *propGen) string() string {
	n := g.r.IntN(12)
	if g.edge() {
		n = 0
	}
	var b strings.Builder
	for range n {
		b.WriteRune(g.rune())
	}
	return b.String()
}

func (g *propGen) strings() []string {
	out := make([]string, g.r.IntN(4))
	for i := range out {
		out[i] = g.string()
	}
	return out
}

func (g *propGen) bytes() []byte {
	out := make([]byte, g.r.IntN(20))
	for i := range out {
		out[i] = byte(g.r.Uint32())
	}
	return out
}

func (g *propGen) time() time.Time {
	zone := time.UTC
	if g.r.IntN(2) == 0 {
		zone = time.FixedZone("", (g.r.IntN(28*60+1)-14*60)*60)
	}
	nanos := 0
	if g.r.IntN(2) == 0 {
		nanos = g.r.IntN(1e9)
	}
	year := g.r.IntN(10000)
	if g.edge() {
		year = []int{0, 9999, 1970, 2000}[g.r.IntN(4)]
	}
	return time.Date(year, time.Month(1+g.r.IntN(12)), 1+g.r.IntN(28), g.r.IntN(24), g.r.IntN(60), g.r.IntN(60), nanos, zone)
}

func (g *propGen) addr() netip.Addr {
	switch g.r.IntN(3) {
	case 0:
		return netip.Addr{}
	case 1:
		return netip.AddrFrom4([4]byte{byte(g.r.Uint32()), byte(g.r.Uint32()), byte(g.r.Uint32()), byte(g.r.Uint32())})
	}
	var a [16]byte
	for i := range a {
		a[i] = byte(g.r.Uint32())
	}
	return netip.AddrFrom16(a)
}

// anyValue draws a value that decodes into any as itself.
func (g *propGen) anyValue(depth int) any {
	switch k := g.r.IntN(6); {
	case k == 0:
		return nil
	case k == 1:
		return g.r.IntN(2) == 0
	case k == 2:
		return g.float64()
	case k == 3 || depth <= 0:
		return g.string()
	case k == 4:
		out := make([]any, g.r.IntN(3))
		for i := range out {
			out[i] = g.anyValue(depth - 1)
		}
		return out
	default:
		out := make(map[string]any, 2)
		for range g.r.IntN(3) {
			out[g.string()] = g.anyValue(depth - 1)
		}
		return out
	}
}

func (g *propGen) leaf() propLeaf {
	l := propLeaf{ID: uint16(g.unsigned(16)), Tags: g.strings()}
	if g.r.IntN(2) == 0 {
		w := g.float64()
		l.Weight = &w
	}
	return l
}

func (g *propGen) flat() propFlat {
	return propFlat{
		I: int(g.signed(64)), I8: int8(g.signed(8)), I16: int16(g.signed(16)), I32: int32(g.signed(32)), I64: g.signed(64),
		U: uint(g.unsigned(64)), U8: uint8(g.unsigned(8)), U16: uint16(g.unsigned(16)), U32: uint32(g.unsigned(32)), U64: g.unsigned(64),
		F32: g.float32(), F64: g.float64(), B: g.r.IntN(2) == 0, S: g.string(), R: rune(g.signed(32)), By: byte(g.unsigned(8)),
	}
}

func (g *propGen) nested(depth int) propNested {
	n := propNested{
		propBase: propBase{Kind: g.string(), Rank: int16(g.signed(16))},
		Leaf:     g.leaf(),
		Leaves:   make([]propLeaf, g.r.IntN(3)),
		Ptrs:     make([]*propLeaf, g.r.IntN(3)),
		ByName:   map[string]propLeaf{},
		ByID:     map[int32]*int8{},
		ByU:      map[uint16]string{},
		Matrix:   make([][]int32, g.r.IntN(3)),
		Pair:     [2]float32{g.float32(), g.float32()},
	}
	if g.r.IntN(2) == 0 {
		l := g.leaf()
		n.Ptr = &l
	}
	for i := range n.Leaves {
		n.Leaves[i] = g.leaf()
	}
	for i := range n.Ptrs {
		if g.r.IntN(3) > 0 {
			l := g.leaf()
			n.Ptrs[i] = &l
		}
	}
	for range g.r.IntN(3) {
		n.ByName[g.string()] = g.leaf()
	}
	for range g.r.IntN(3) {
		var v *int8
		if g.r.IntN(2) == 0 {
			x := int8(g.signed(8))
			v = &x
		}
		n.ByID[int32(g.signed(32))] = v
	}
	for range g.r.IntN(3) {
		n.ByU[uint16(g.unsigned(16))] = g.string()
	}
	for i := range n.Matrix {
		n.Matrix[i] = make([]int32, g.r.IntN(3))
		for j := range n.Matrix[i] {
			n.Matrix[i][j] = int32(g.signed(32))
		}
	}
	if depth > 0 && g.r.IntN(2) == 0 {
		next := g.nested(depth - 1)
		n.Next = &next
	}
	return n
}

func (g *propGen) wire() propWire {
	w := propWire{At: g.time(), Data: g.bytes(), Blobs: make([][]byte, g.r.IntN(3)), Addr: g.addr(), Any: g.anyValue(2)}
	if g.r.IntN(2) == 0 {
		when := g.time()
		w.When = &when
	}
	for i := range w.Blobs {
		w.Blobs[i] = g.bytes()
	}
	for i := range w.Fixed {
		w.Fixed[i] = byte(g.r.Uint32())
	}
	raw, err := jsonv2.Marshal(g.anyValue(2), jsonv2.Deterministic(true))
	if err != nil {
		panic(err)
	}
	w.Raw = raw
	return w
}

func (g *propGen) optional() propOptional {
	var o propOptional
	if g.r.IntN(2) == 0 {
		o.S = g.string()
	}
	if g.r.IntN(2) == 0 {
		o.N = int32(g.signed(32))
	}
	if g.r.IntN(2) == 0 {
		p := int16(g.signed(16))
		o.P = &p
	}
	if g.r.IntN(2) == 0 {
		o.L = g.strings() // possibly empty, never nil: written as []
	}
	if g.r.IntN(2) == 0 {
		o.M = map[string]bool{}
		for range g.r.IntN(3) {
			o.M[g.string()] = g.r.IntN(2) == 0
		}
	}
	if g.r.IntN(2) == 0 {
		o.T = g.time()
	}
	if g.r.IntN(2) == 0 {
		o.St = g.leaf()
	}
	if g.r.IntN(2) == 0 {
		o.E = g.string()
	}
	if g.r.IntN(2) == 0 {
		l := g.leaf()
		o.Ptr = &l
	}
	o.Mode = []string{"", "fast", "slow"}[g.r.IntN(3)]
	if g.r.IntN(2) == 0 {
		o.PropExtra = &PropExtra{Note: g.string(), Score: uint32(g.unsigned(32))}
	}
	return o
}

// utc makes times comparable with require.Equal: same instant, same
// location, no monotonic reading.
func utc(t time.Time) time.Time { return t.UTC().Round(0) }

const propValues = 300

func TestSchemaAndDecoderAgree(t *testing.T) {
	t.Run("flat scalars", func(t *testing.T) {
		checkAgreement(t, 1, (*propGen).flat, func(*propFlat) {})
	})
	t.Run("nested structs, pointers, slices, maps", func(t *testing.T) {
		checkAgreement(t, 2, func(g *propGen) propNested { return g.nested(2) }, func(*propNested) {})
	})
	t.Run("times, bytes and unconstrained values", func(t *testing.T) {
		checkAgreement(t, 3, (*propGen).wire, func(w *propWire) {
			w.At = utc(w.At)
			if w.When != nil {
				when := utc(*w.When)
				w.When = &when
			}
		})
	})
	t.Run("optional members", func(t *testing.T) {
		checkAgreement(t, 4, (*propGen).optional, func(o *propOptional) { o.T = utc(o.T) })
	})
	t.Run("pointer input", func(t *testing.T) {
		checkAgreement(t, 5, func(g *propGen) *propFlat { f := g.flat(); return &f }, func(**propFlat) {})
	})
}

// checkAgreement is the round trip encode → Prepare → Decode (and Call)
// over generated values, then the mutation differential.
func checkAgreement[T any](t *testing.T, seed uint64, gen func(*propGen) T, normalize func(*T)) {
	var seen T
	b := bindFunc(t, "prop", func(_ context.Context, in T) (string, error) {
		seen = in
		return "ok", nil
	})
	sig, err := tool.NewSignature[T, string]()
	require.NoError(t, err)
	g := newPropGen(seed)
	texts := make([][]byte, 0, propValues)
	for range propValues {
		want := gen(g)
		text, err := jsonv2.Marshal(want)
		require.NoError(t, err)
		inv, err := prepare(b, string(text))
		require.NoError(t, err, "the encoder's text is admitted: %s", text)
		got, err := sig.Decode(inv)
		require.NoError(t, err, "%s", text)
		normalize(&want)
		normalize(&got)
		require.Equal(t, want, got, "decoded value of %s", text)
		_, err = b.Call(context.Background(), inv)
		require.NoError(t, err)
		normalize(&seen)
		require.Equal(t, want, seen, "the function sees the value: %s", text)
		texts = append(texts, text)
	}

	// Negative differential: what Prepare admits of a mutated text always
	// decodes, and every refusal is a public rejection.
	admitted, refused := 0, 0
	r := rand.New(rand.NewPCG(seed, 0xbad))
	for _, text := range texts {
		for range 6 {
			mutated, ok := mutateJSON(r, text)
			if !ok {
				continue
			}
			inv, err := prepare(b, string(mutated))
			if err != nil {
				refused++
				// The message may quote the model's own member names, so
				// only its kind is checked here.
				require.ErrorIs(t, err, tool.ErrInvalidInvocation)
				_, ok := tool.ClassifyInputRejection(err)
				require.True(t, ok, "a refusal of %s is a public rejection: %v", mutated, err)
				continue
			}
			admitted++
			_, err = sig.Decode(inv)
			require.NoError(t, err, "admitted but not decodable: %s", mutated)
			_, err = b.Call(context.Background(), inv)
			require.NoError(t, err, "admitted but the call fails: %s", mutated)
		}
	}
	require.Positive(t, refused, "the mutations exercise refusals")
	require.Positive(t, admitted, "the mutations exercise admissions")
}

// jsonTok is one token of a JSON text, with its role.
type jsonTok struct {
	tok    jsontext.Token
	isName bool
}

// mutateJSON changes one token of a valid JSON text the way a careless
// model would: numbers with fractions, exponents or out of range, strings
// for numbers, renamed, dropped and unknown members, nulls.
func mutateJSON(r *rand.Rand, text []byte) ([]byte, bool) {
	dec := jsontext.NewDecoder(bytes.NewReader(text))
	var toks []jsonTok
	type frame struct{ object, wantName bool }
	var stack []frame
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			break
		}
		isName := false
		if n := len(stack); n > 0 && stack[n-1].object && tok.Kind() != '}' {
			isName = stack[n-1].wantName
			stack[n-1].wantName = !stack[n-1].wantName
		}
		toks = append(toks, jsonTok{tok: tok.Clone(), isName: isName})
		switch tok.Kind() {
		case '{':
			stack = append(stack, frame{object: true, wantName: true})
		case '[':
			stack = append(stack, frame{})
		case '}', ']':
			stack = stack[:len(stack)-1]
		}
	}
	if len(toks) < 2 {
		return nil, false
	}
	i := 1 + r.IntN(len(toks)-1) // never the root
	target := toks[i]
	var replacement string
	drop, insertUnknown := false, false
	switch k := target.tok.Kind(); {
	case target.isName:
		switch r.IntN(4) {
		case 0:
			drop = true
		case 1:
			name := []rune(target.tok.String())
			if len(name) > 0 {
				name[0] = unicode.ToUpper(name[0])
			}
			replacement = string(name)
			if replacement == target.tok.String() {
				replacement = "X" + replacement
			}
		case 2:
			replacement = target.tok.String() + "_"
		default:
			replacement = ""
		}
		replacement = strconvQuote(replacement)
	case k == '0':
		n := target.tok.String()
		options := []string{n + ".0", n + ".5", n + "e0", "1e1", "1.0", "-" + n, "-0", "0.1", "300", "-129", "256", "65536", "-1",
			"4294967296", "9223372036854775808", "-9223372036854775809", "18446744073709551616", "3.5e38", "1e-50", "1E2", `"` + n + `"`, "null"}
		replacement = options[r.IntN(len(options))]
	case k == '"':
		options := []string{"1", "null", "true", `""`, `"@@"`, `"AQI"`, `"not-a-date"`, `"2016-12-31T23:59:60Z"`, `"2024-02-30T00:00:00Z"`,
			`"0000-01-01T00:00:00Z"`, `"::1"`, `"1.2.3.4"`, `"1.2.3"`, `"fast"`, `"medium"`, "[]", "{}"}
		replacement = options[r.IntN(len(options))]
	case k == '{':
		if r.IntN(2) == 0 {
			insertUnknown = true
		} else {
			replacement = []string{"null", "[]", `"{}"`, "{}"}[r.IntN(4)]
		}
	case k == '[':
		replacement = []string{"null", "{}", "[null]", "[[]]", "[1.5]", `["x"]`}[r.IntN(6)]
	case k == 't' || k == 'f':
		replacement = []string{`"true"`, "0", "null"}[r.IntN(3)]
	case k == 'n':
		replacement = []string{"0", `""`, "false", "{}", "[]"}[r.IntN(5)]
	default:
		return nil, false // a closing token
	}

	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true))
	for j := 0; j < len(toks); j++ {
		t := toks[j]
		if j != i {
			if err := enc.WriteToken(t.tok); err != nil {
				return nil, false
			}
			continue
		}
		switch {
		case insertUnknown:
			if enc.WriteToken(t.tok) != nil || enc.WriteToken(jsontext.String("zz_unknown")) != nil || enc.WriteToken(jsontext.Int(1)) != nil {
				return nil, false
			}
		case drop:
			j = skipValue(toks, j+1) // the member's value
		case t.isName:
			if err := enc.WriteValue(jsontext.Value(replacement)); err != nil {
				return nil, false
			}
		default:
			if err := enc.WriteValue(jsontext.Value(replacement)); err != nil {
				return nil, false
			}
			if k := t.tok.Kind(); k == '{' || k == '[' {
				j = skipValue(toks, j)
			}
		}
	}
	return bytes.TrimSpace(out.Bytes()), true
}

// skipValue returns the index of the last token of the value starting at i.
func skipValue(toks []jsonTok, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].tok.Kind() {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		}
		if depth == 0 {
			return j
		}
	}
	return len(toks) - 1
}

func strconvQuote(s string) string {
	b, err := jsontext.AppendQuote(nil, s)
	if err != nil {
		panic(err)
	}
	return string(b)
}
