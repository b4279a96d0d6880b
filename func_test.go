package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

type funcArgs struct {
	A int `json:"a"`
}

func TestFuncMethodSet(t *testing.T) {
	want := []string{"Call", "Definition", "InputValidator"}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[tool.Func[funcArgs, string]](),
		reflect.TypeFor[*tool.Func[funcArgs, string]](),
		reflect.TypeFor[tool.Func[*funcArgs, tool.Output]](),
	} {
		var got []string
		for m := range typ.Methods() {
			got = append(got, m.Name)
		}
		slices.Sort(got)
		require.Equal(t, want, got, "%v has exactly these methods", typ)
	}
	f, err := tool.NewFunc(tool.FuncConfig{Name: "f"}, func(context.Context, funcArgs) (string, error) { return "", nil })
	require.NoError(t, err)
	var asTool tool.Tool = f
	_, ok := asTool.(tool.InputValidatingTool)
	require.True(t, ok, "a Func brings its input validator to Bind")
}

func TestFuncInputValidatorWorksAlone(t *testing.T) {
	var calls atomic.Int32
	f, err := tool.NewFunc(tool.FuncConfig{Name: "alone"}, func(context.Context, valRejects) (string, error) {
		calls.Add(1)
		return "", nil
	})
	require.NoError(t, err)
	validate := f.InputValidator()
	require.NotNil(t, validate)

	require.NoError(t, validate([]byte(`{"N":3}`)))
	err = validate([]byte(`{"N":0}`))
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok, "the type's own Validate runs")
	require.Equal(t, "N must be positive, got 0", rej.Message())
	for _, bad := range []string{`{"N":1.5}`, `{"N":1.0}`, `{"n":1}`, `{"N":1,"M":2}`, `{"N":1}{}`, `null`, `{"N":"1"}`} {
		err := validate([]byte(bad))
		require.ErrorIs(t, err, tool.ErrInvalidInvocation, bad)
		_, ok := tool.ClassifyInputRejection(err)
		require.True(t, ok, bad)
	}
	require.Zero(t, calls.Load(), "the validator never runs the function")

	// It is the Signature's validator: same answers on the same bytes.
	sig, err := tool.NewSignature[valRejects, string]()
	require.NoError(t, err)
	for _, text := range []string{`{"N":3}`, `{"N":-1}`, `{"N":1.5}`, `[]`} {
		require.Equal(t, errText(sig.InputValidator()([]byte(text))), errText(validate([]byte(text))), text)
	}

	// The argument is not modified.
	arg := []byte(`{"N":7}`)
	require.NoError(t, validate(arg))
	require.Equal(t, `{"N":7}`, string(arg))
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestNewFuncRefusals(t *testing.T) {
	ok := func(context.Context, funcArgs) (string, error) { return "", nil }
	tests := []struct {
		name   string
		err    func() error
		alsoIs error
	}{
		{"nil function", func() error {
			_, err := tool.NewFunc[funcArgs, string](tool.FuncConfig{Name: "f"}, nil)
			return err
		}, nil},
		{"empty name", func() error { _, err := tool.NewFunc(tool.FuncConfig{}, ok); return err }, tool.ErrInvalidDefinition},
		{"name with a space", func() error { _, err := tool.NewFunc(tool.FuncConfig{Name: "a b"}, ok); return err }, tool.ErrInvalidDefinition},
		{"name too long", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: strings.Repeat("a", 65)}, ok)
			return err
		}, tool.ErrInvalidDefinition},
		{"unknown effect", func() error { _, err := tool.NewFunc(tool.FuncConfig{Name: "f", Effect: "maybe"}, ok); return err }, nil},
		{"description of invalid UTF-8", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "f", Description: "caf\xe9"}, ok)
			return err
		}, tool.ErrInvalidDefinition},
		{"description over MaxInputBytes", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "f", Description: strings.Repeat("d", tool.MaxInputBytes+1)}, ok)
			return err
		}, tool.ErrInvalidDefinition},
		{"input not a struct", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "f"}, func(context.Context, []funcArgs) (string, error) { return "", nil })
			return err
		}, nil},
		{"unsupported input field", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "f"}, func(context.Context, unsChan) (string, error) { return "", nil })
			return err
		}, tool.ErrInvalidSchema},
		{"unsupported output", func() error {
			_, err := tool.NewFunc(tool.FuncConfig{Name: "f"}, func(context.Context, funcArgs) (chan int, error) { return nil, nil })
			return err
		}, tool.ErrInvalidSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.err()
			require.ErrorIs(t, err, tool.ErrInvalidTool)
			if tt.alsoIs != nil {
				require.ErrorIs(t, err, tt.alsoIs)
			}
			require.True(t, strings.HasPrefix(err.Error(), "tool: "), err.Error())
		})
	}
}

func TestZeroFunc(t *testing.T) {
	var f tool.Func[funcArgs, string]
	_, err := f.Call(context.Background(), tool.Invocation{})
	require.ErrorIs(t, err, tool.ErrInvalidTool)
	require.Equal(t, tool.Definition{}, f.Definition())
	_, err = tool.Bind(f)
	require.ErrorIs(t, err, tool.ErrInvalidTool, "the zero Func cannot be bound")
}

func TestFuncDefinition(t *testing.T) {
	f, err := tool.NewFunc(tool.FuncConfig{Name: "sum", Description: "adds", Effect: tool.EffectSafe},
		func(_ context.Context, in sigNumbers) (sigResult, error) { return sigResult{Sum: int64(in.A)}, nil })
	require.NoError(t, err)
	def := f.Definition()
	require.Equal(t, "sum", def.Name)
	require.Equal(t, "adds", def.Description)
	require.Equal(t, tool.EffectSafe, def.Effect)
	require.NoError(t, def.Validate())
	in := schemaDoc(t, def.InputSchema)
	require.Equal(t, "object", in["type"])
	require.NotNil(t, def.OutputSchema)

	def.InputSchema[0] = 'X'
	def.OutputSchema[0] = 'X'
	again := f.Definition()
	require.Equal(t, byte('{'), again.InputSchema[0], "Definition returns a copy")
	require.Equal(t, byte('{'), again.OutputSchema[0])
}

func TestFuncCallPassesErrorsAndContext(t *testing.T) {
	errBackend := errors.New("backend down")
	type key struct{}
	f, err := tool.NewFunc(tool.FuncConfig{Name: "ctx", Effect: tool.EffectIdempotent}, func(ctx context.Context, in funcArgs) (string, error) {
		if in.A < 0 {
			return "", errBackend
		}
		return ctx.Value(key{}).(string), nil
	})
	require.NoError(t, err)
	b, err := tool.Bind(f)
	require.NoError(t, err)
	ctx := context.WithValue(context.Background(), key{}, "from the caller")

	inv, err := prepare(b, `{"a":1}`)
	require.NoError(t, err)
	result, err := b.Call(ctx, inv)
	require.NoError(t, err)
	require.Equal(t, tool.NewTextOutput("from the caller"), result.Output)

	inv, err = prepare(b, `{"a":-1}`)
	require.NoError(t, err)
	_, err = b.Call(ctx, inv)
	require.Equal(t, errBackend, err, "the function's error is returned as it is")
}

// fuzzSearch is a realistic tool input: every kind of member a model is
// asked to fill.
type fuzzSearch struct {
	Query  string     `json:"query" jsonschema:"description=what to look for"`
	Mode   string     `json:"mode" jsonschema:"enum=exact,enum=fuzzy,enum=prefix"`
	Limit  int32      `json:"limit" jsonschema:"minimum=1,maximum=100"`
	Offset uint16     `json:"offset,omitzero"`
	Filter fuzzFilter `json:"filter"`
	Tags   []string   `json:"tags,omitzero"`
	Exact  bool       `json:"exact"`
	Cursor *string    `json:"cursor,omitzero"`
}

type fuzzFilter struct {
	Language string  `json:"language,omitzero" jsonschema:"pattern=^[a-z]{2}$"`
	MinScore float32 `json:"min_score"`
	Level    int8    `json:"level"`
	Since    *int64  `json:"since,omitzero"`
}

func (s fuzzSearch) Validate() error {
	if strings.TrimSpace(s.Query) == "" {
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "value at /query must not be blank"})
		if err != nil {
			return err
		}
		return r
	}
	return nil
}

func FuzzFuncPrepare(f *testing.F) {
	for _, seed := range []string{
		`{"query":"go generics","mode":"exact","limit":10,"filter":{"min_score":0.5,"level":3},"exact":true}`,
		`{"query":"q","mode":"prefix","limit":100,"offset":65535,"filter":{"language":"en","min_score":-3.4028235e+38,"level":-128,"since":-9223372036854775808},"tags":["a","β"],"exact":false,"cursor":"abc"}`,
		`{"query":"q","mode":"fuzzy","limit":1,"filter":{"min_score":1e-45,"level":127},"exact":false,"cursor":null,"tags":[]}`,
		`{"query":"q","mode":"fuzzy","limit":1.0,"filter":{"min_score":0,"level":0},"exact":false}`,
		`{"query":"q","mode":"fuzzy","limit":1e1,"filter":{"min_score":0,"level":0},"exact":false}`,
		`{"query":"q","mode":"fuzzy","limit":5,"offset":-0,"filter":{"min_score":0,"level":0},"exact":false}`,
		`{"query":"  ","mode":"exact","limit":5,"filter":{"min_score":0,"level":0},"exact":false}`,
		`{"query":"q","mode":"exact","limit":5,"filter":{"min_score":3.40282356779733661637539395458142568447e38,"level":0},"exact":false}`,
		`{"query":"q","mode":"exact","limit":5,"filter":{"min_score":0,"level":300},"exact":false}`,
		`{"query":"q","Mode":"exact","limit":5,"filter":{"min_score":0,"level":0},"exact":false}`,
		`{"query":"q","query":"r","mode":"exact","limit":5,"filter":{"min_score":0,"level":0},"exact":false}`,
		`{"query":"q","mode":"exact","limit":5,"filter":{"min_score":0,"level":0},"exact":false} x`,
		`{"query":"\ud800","mode":"exact","limit":5,"filter":{"min_score":0,"level":0},"exact":false}`,
		``, `   `, `null`, `[]`, `{`, `{"query":`, `1e999`,
	} {
		f.Add(seed)
	}
	var seen atomic.Pointer[fuzzSearch]
	fn, err := tool.NewFunc(tool.FuncConfig{Name: "search", Effect: tool.EffectSafe}, func(_ context.Context, in fuzzSearch) (string, error) {
		seen.Store(&in)
		return in.Query, nil
	})
	require.NoError(f, err)
	b, err := tool.Bind(fn)
	require.NoError(f, err)
	sig, err := tool.NewSignature[fuzzSearch, string]()
	require.NoError(f, err)

	f.Fuzz(func(t *testing.T, arguments string) {
		inv, err := prepare(b, arguments)
		if err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			rej, ok := tool.ClassifyInputRejection(err)
			require.True(t, ok, "refusing the content of arguments is a public rejection: %v", err)
			require.NoError(t, rej.Validate())
			return
		}
		decoded, err := sig.Decode(inv)
		require.NoError(t, err, "admitted but not decodable: %q", arguments)

		again, err := jsonv2.Marshal(decoded)
		require.NoError(t, err)
		inv2, err := prepare(b, string(again))
		require.NoError(t, err, "the re-encoded value of %q is admitted: %s", arguments, again)
		decodedAgain, err := sig.Decode(inv2)
		require.NoError(t, err)
		require.Equal(t, decoded, decodedAgain, "decoding is stable through re-encoding")

		result, err := b.Call(context.Background(), inv)
		require.NoError(t, err, "an admitted call runs: %q", arguments)
		text, _ := result.Output.Text()
		require.Equal(t, decoded.Query, text)
		// What the function got, decoded by Prepare in the read that
		// checked the arguments, is what the codec decodes, -0 included.
		require.Equal(t, decoded, *seen.Load(), "%q", arguments)
		got, err := jsonv2.Marshal(*seen.Load())
		require.NoError(t, err)
		require.Equal(t, string(again), string(got), "%q", arguments)
	})
}

func TestFuncOutputIsDetached(t *testing.T) {
	shared := json.RawMessage(`{"n":1}`)
	b := bindFunc(t, "shared", func(context.Context, funcArgs) (tool.Output, error) {
		return tool.Output{Details: shared}, nil
	})
	result, err := callOnce(t, b, `{"a":1}`)
	require.NoError(t, err)
	result.Output.Details[2] = 'X'
	require.Equal(t, `{"n":1}`, string(shared), "the caller's copy shares nothing with the function's value")
}

// TestFuncBrokenResultIsNeverAFailure pins one rule for results that break
// the output contract: whatever the Effect, and whether the Func could not
// encode the value or the Binding found the encoded Output invalid, the
// call ends in an error wrapping ErrInvalidResult, never in a Failure. Only
// the function's own error is converted by the safe rule.
func TestFuncBrokenResultIsNeverAFailure(t *testing.T) {
	tests := []struct {
		name string
		fn   func(context.Context, funcArgs) (tool.Output, error)
		also error
	}{
		{"a value JSON cannot encode", nil, tool.ErrInvalidOutput},
		{"an invalid media block", func(context.Context, funcArgs) (tool.Output, error) {
			return tool.Output{Content: []tool.Block{{Kind: tool.BlockMedia, MediaType: "not a type", Data: []byte{1}}}}, nil
		}, tool.ErrInvalidOutput},
	}
	for _, effect := range []tool.Effect{"", tool.EffectSafe, tool.EffectIdempotent} {
		for _, tt := range tests {
			t.Run(tt.name+", effect "+string(effect), func(t *testing.T) {
				var f tool.Tool
				var err error
				if tt.fn == nil {
					f, err = tool.NewFunc(tool.FuncConfig{Name: "broken", Effect: effect}, func(context.Context, funcArgs) (map[string]float64, error) {
						return map[string]float64{"x": math.NaN()}, nil
					})
				} else {
					f, err = tool.NewFunc(tool.FuncConfig{Name: "broken", Effect: effect}, tt.fn)
				}
				require.NoError(t, err)
				b := mustBind(t, f)
				result, err := b.Call(context.Background(), mustPrepare(t, b, `{"a":1}`))
				require.ErrorIs(t, err, tool.ErrInvalidResult)
				require.ErrorIs(t, err, tt.also)
				_, isFailure := tool.ClassifyFailure(err)
				require.False(t, isFailure, "a broken result is not the tool's error")
				require.Equal(t, tool.Result{}, result)
			})
		}
	}

	t.Run("the function's own error of a safe Func is a Failure", func(t *testing.T) {
		cause := errors.New("backend down")
		f, err := tool.NewFunc(tool.FuncConfig{Name: "broken", Effect: tool.EffectSafe}, func(context.Context, funcArgs) (map[string]float64, error) {
			return nil, cause
		})
		require.NoError(t, err)
		b := mustBind(t, f)
		_, err = b.Call(context.Background(), mustPrepare(t, b, `{"a":1}`))
		failure, isFailure := tool.ClassifyFailure(err)
		require.True(t, isFailure)
		require.Same(t, cause, failure.Cause())
	})
}

// funcDecodes counts decodes of funcCounted values, for
// TestFuncDecodesOncePerCall only.
var funcDecodes atomic.Int64

// funcCounted is a string that counts how often it is decoded.
type funcCounted string

func (c *funcCounted) UnmarshalJSON(data []byte) error {
	funcDecodes.Add(1)
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	*c = funcCounted(s)
	return nil
}

// TestFuncDecodesOncePerCall: the input a Func's validator decoded at
// Prepare is handed to the first Call of that invocation; every later
// Call, of the same invocation or a copy of it, decodes afresh.
func TestFuncDecodesOncePerCall(t *testing.T) {
	type in struct {
		Name funcCounted `json:"name" jsonschema:"type=string"`
	}
	b := bindFunc(t, "counted", func(_ context.Context, v in) (string, error) { return string(v.Name), nil })
	funcDecodes.Store(0)
	inv := mustPrepare(t, b, `{"name":"x"}`)
	require.Equal(t, int64(1), funcDecodes.Load(), "Prepare decodes once")
	for i, want := range []int64{1, 2, 3} {
		call := inv
		result, err := b.Call(context.Background(), call)
		require.NoError(t, err)
		text, _ := result.Output.Text()
		require.Equal(t, "x", text)
		require.Equal(t, want, funcDecodes.Load(), "call %d", i+1)
	}
}

// TestFuncCallsNeverShareInput lets the function modify everything it was
// given and calls one invocation again and again, one after another and
// concurrently (run under -race): every call sees the admitted input, never
// what another call did to its own.
func TestFuncCallsNeverShareInput(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type in struct {
		Tags  []string          `json:"tags"`
		Meta  map[string]string `json:"meta"`
		Inner *inner            `json:"inner"`
	}
	b := bindFunc(t, "mutator", func(_ context.Context, v in) (string, error) {
		seen := fmt.Sprintf("%s %s %d %d", v.Tags[0], v.Meta["k"], v.Inner.N, len(v.Tags))
		v.Tags[0] = "changed"
		v.Tags = append(v.Tags, "more")
		v.Meta["k"] = "changed"
		v.Inner.N++
		return seen, nil
	})
	inv := mustPrepare(t, b, `{"tags":["a","b"],"meta":{"k":"v"},"inner":{"n":1}}`)
	const want = "a v 1 2"
	call := func() string {
		result, err := b.Call(context.Background(), inv)
		if err != nil {
			return err.Error()
		}
		text, _ := result.Output.Text()
		return text
	}
	for range 3 {
		require.Equal(t, want, call())
	}

	again := mustPrepare(t, b, `{"tags":["a","b"],"meta":{"k":"v"},"inner":{"n":1}}`)
	inv = again // a fresh invocation, so that the first calls race for the value decoded at Prepare
	var wg sync.WaitGroup
	seen := make([]string, 16)
	for g := range seen {
		wg.Go(func() {
			for range 10 {
				if got := call(); got != want {
					seen[g] = got
					return
				}
			}
			seen[g] = want
		})
	}
	wg.Wait()
	for _, got := range seen {
		require.Equal(t, want, got)
	}
}

// funcOverridden embeds a Func but replaces its input validator: Bind must
// use the replacement, not the Func's own decode.
type funcOverridden struct {
	tool.Func[funcArgs, string]
	validations *atomic.Int64
}

func (o funcOverridden) InputValidator() func([]byte) error {
	return func([]byte) error {
		o.validations.Add(1)
		return nil
	}
}

func TestFuncEmbeddedWithItsOwnValidator(t *testing.T) {
	f, err := tool.NewFunc(tool.FuncConfig{Name: "wrapped"}, func(_ context.Context, v funcArgs) (string, error) {
		return fmt.Sprint(v.A), nil
	})
	require.NoError(t, err)
	var validations atomic.Int64
	b := mustBind(t, funcOverridden{Func: f, validations: &validations})
	inv := mustPrepare(t, b, `{"a":7}`)
	require.Equal(t, int64(1), validations.Load(), "the replacement validator ran")
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	text, _ := result.Output.Text()
	require.Equal(t, "7", text, "the embedded Func decodes for itself")
}
