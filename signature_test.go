package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
	Ratio float32    `json:"ratio,omitzero"`
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
		{"beyond int64", `{"name":"a","count":9223372036854775808}`, "/count", "out of range"},
		{"1e30 into an int", `{"name":"a","count":1e30}`, "/count", "out of range"},
		{"beyond uint32", `{"name":"a","count":1,"size":4294967296}`, "/size", "out of range"},
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

// The messages of a refused decode, checked exactly: located, in JSON
// terms, and showing what was got, cut when long.
func TestDecodeRejectionMessages(t *testing.T) {
	b := bindFunc(t, "numbers", func(_ context.Context, in sigArgs) (string, error) { return "", nil })
	long := strings.Repeat("a", 40) + "$"
	tests := []struct {
		arguments, message string
	}{
		{`{"name":"a","count":1.0}`, "arguments cannot be decoded: value at /count must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or exponent, got 1.0"},
		{`{"name":"a","count":2E3}`, "arguments cannot be decoded: value at /count must be an integer from -9223372036854775808 to 9223372036854775807, written without a fraction or exponent, got 2E3"},
		{`{"name":"a","count":1e30}`, "arguments cannot be decoded: value at /count is out of range: it must be an integer from -9223372036854775808 to 9223372036854775807, got 1e30"},
		{`{"name":"a","count":-9223372036854775809}`, "arguments cannot be decoded: value at /count is out of range: it must be an integer from -9223372036854775808 to 9223372036854775807, got -9223372036854775809"},
		{`{"name":"a","count":123456789012345678901234567890123456789012345}`, "arguments cannot be decoded: value at /count is out of range: it must be an integer from -9223372036854775808 to 9223372036854775807, got 1234567890123456789012345678901234567890... (a number of 45 characters)"},
		{`{"name":"a","count":1,"size":4294967296}`, "arguments cannot be decoded: value at /size is out of range: it must be an integer from 0 to 4294967295, got 4294967296"},
		{`{"name":"a","count":1,"size":-0}`, "arguments cannot be decoded: value at /size must be an integer from 0 to 4294967295, got -0"},
		{`{"name":"a","count":1,"ratio":1e39}`, "arguments cannot be decoded: value at /ratio is out of range: it must be a number from -3.4028235e+38 to 3.4028235e+38, got 1e39"},
		{`{"name":"a","count":1,"ratio":-3.4028236e38}`, "arguments cannot be decoded: value at /ratio is out of range: it must be a number from -3.4028235e+38 to 3.4028235e+38, got -3.4028236e38"},
		{`{"name":"a","count":1,"data":"AQI"}`, `arguments cannot be decoded: value at /data must be a string of standard base64 with padding, got "AQI"`},
		{`{"name":"a","count":1,"data":"a$b"}`, `arguments cannot be decoded: value at /data must be a string of standard base64 with padding, got "a$b"`},
		{`{"name":"a","count":1,"data":"` + long + `"}`, `arguments cannot be decoded: value at /data must be a string of standard base64 with padding, got "` + long[:32] + `..."`},
		{`{"name":"a","count":1,"data":"\u0000"}`, `arguments cannot be decoded: value at /data must be a string of standard base64 with padding, got "\u0000"`},
		{`{"name":"a","count":1,"fixed":"AQID"}`, `arguments cannot be decoded: value at /fixed must be a string of standard base64 with padding that decodes to 2 bytes, got "AQID"`},
		{`{"name":"a","count":1,"when":"2016-12-31T23:59:60Z"}`, `arguments cannot be decoded: value at /when must be an RFC 3339 date-time string, got "2016-12-31T23:59:60Z"`},
		{`{"name":"a","count":1,"when":"2024-05-01T10:00:00"}`, `arguments of "numbers" do not match its input schema at /when: '2024-05-01T10:00:00' is not valid date-time: the time-zone offset is missing; end the value with Z for UTC or with an offset such as +01:00`},
		{`{"name":"a","count":1,"when":"2024-05-01T10:00:00.25"}`, `arguments of "numbers" do not match its input schema at /when: '2024-05-01T10:00:00.25' is not valid date-time: the time-zone offset is missing; end the value with Z for UTC or with an offset such as +01:00`},
		{`{"name":"a","count":1,"addr":"x"}`, "arguments cannot be decoded: value at /addr must be a string in the form this member accepts"},
	}
	for _, tc := range tests {
		_, err := prepare(b, tc.arguments)
		rejection := requirePublicRejection(t, err, "/")
		require.Equal(t, tc.message, rejection.Message())
		require.Equal(t, "tool: invalid invocation: "+tc.message, err.Error())
		require.Error(t, rejection.Cause(), "the decoder's own error is kept as the private cause")
	}

	// Alone, the decoder says the same of a date-time without an offset.
	sig, err := tool.NewSignature[sigArgs, string]()
	require.NoError(t, err)
	err = sig.InputValidator()([]byte(`{"name":"a","when":"2024-05-01T10:00:00"}`))
	rejection := requirePublicRejection(t, err, "/when")
	require.Equal(t, `arguments cannot be decoded: value at /when must be an RFC 3339 date-time string, got "2024-05-01T10:00:00": the time-zone offset is missing; end the value with Z for UTC or with an offset such as +01:00`, rejection.Message())
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
