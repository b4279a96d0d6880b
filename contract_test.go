package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

// coreTool is a hand-written Tool that records what happens to it. Its
// definition may be changed after Bind to prove that nothing follows.
type coreTool struct {
	mu       sync.Mutex
	def      tool.Definition
	defReads int
	calls    []tool.Invocation
	run      func(context.Context, tool.Invocation) (tool.Result, error)
}

func newCoreTool(def tool.Definition) *coreTool {
	return &coreTool{def: def}
}

func (c *coreTool) Definition() tool.Definition {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.defReads++
	return c.def
}

func (c *coreTool) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	c.mu.Lock()
	c.calls = append(c.calls, inv)
	run := c.run
	c.mu.Unlock()
	if run != nil {
		return run(ctx, inv)
	}
	return tool.Result{Output: tool.NewTextOutput("ran with " + string(inv.Arguments()))}, nil
}

func (c *coreTool) ran() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

func (c *coreTool) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.defReads
}

// coreValidatingTool adds an input validator to a coreTool.
type coreValidatingTool struct {
	*coreTool
	validator func() func([]byte) error
}

func (v coreValidatingTool) InputValidator() func([]byte) error { return v.validator() }

// coreDefinition is a definition with a small but real input schema.
func coreDefinition(name string) tool.Definition {
	return tool.Definition{
		Name:        name,
		Description: "looks up a city",
		InputSchema: json.RawMessage(`{
			"type":"object",
			"properties":{
				"city":{"type":"string","minLength":1},
				"days":{"type":"integer","minimum":1,"maximum":9007199254740993}
			},
			"additionalProperties":false
		}`),
	}
}

func TestPrepareRefuses(t *testing.T) {
	const name = "weather"
	tests := []struct {
		name      string
		request   tool.Request
		admission tool.Admission
		content   bool   // an *InputRejection a model can act on
		envelope  bool   // matches ErrInvalidRequest as well
		message   string // the public message, when pinned
	}{
		// Identity problems: plain errors, nothing for the model.
		{name: "wrong tool name", request: tool.Request{Name: "other", Arguments: `{}`}},
		{name: "empty tool name", request: tool.Request{Name: "", Arguments: `{}`}, envelope: true},
		{name: "name differing in case", request: tool.Request{Name: "Weather", Arguments: `{}`}},
		{name: "continuation without a stamp", request: tool.Request{Name: name, Arguments: `{}`}, admission: tool.Admission{Continuation: &tool.Continuation{}}},
		// Content problems: one case per class.
		{name: "array", request: tool.Request{Name: name, Arguments: `[]`}, content: true, message: `arguments of "weather" must be a JSON object`},
		{name: "string", request: tool.Request{Name: name, Arguments: `"city"`}, content: true, message: `arguments of "weather" must be a JSON object`},
		{name: "null", request: tool.Request{Name: name, Arguments: `null`}, content: true, message: `arguments of "weather" must be a JSON object`},
		{name: "not JSON", request: tool.Request{Name: name, Arguments: `city=Paris`}, content: true, message: `arguments of "weather" are not valid JSON at the root (byte 0): invalid character "c", expected a value`},
		{name: "duplicate member", request: tool.Request{Name: name, Arguments: `{"city":"a","city":"b"}`}, content: true, message: `arguments of "weather" are not valid JSON at /city (byte 12): duplicate member name "city"`},
		{name: "duplicate member after escape", request: tool.Request{Name: name, Arguments: `{"city":"a","\u0063ity":"b"}`}, content: true},
		{name: "invalid UTF-8", request: tool.Request{Name: name, Arguments: "{\"city\":\"\xff\"}"}, content: true},
		{name: "byte-order mark", request: tool.Request{Name: name, Arguments: "\xef\xbb\xbf{}"}, content: true, message: `arguments of "weather" are not valid JSON at the root (byte 0): a byte-order mark is not allowed`},
		{name: "lone high surrogate", request: tool.Request{Name: name, Arguments: `{"city":"\ud800"}`}, content: true},
		{name: "lone low surrogate", request: tool.Request{Name: name, Arguments: `{"city":"\udc00"}`}, content: true},
		{name: "inverted surrogates", request: tool.Request{Name: name, Arguments: `{"city":"\udc00\ud800"}`}, content: true},
		{name: "noncharacter in a string", request: tool.Request{Name: name, Arguments: `{"city":"\ufdd0"}`}, content: true},
		{name: "noncharacter in a name", request: tool.Request{Name: name, Arguments: "{\"\xef\xbf\xbe\":1}"}, content: true},
		{name: "float overflow", request: tool.Request{Name: name, Arguments: `{"days":1e400}`}, content: true, message: `arguments of "weather" are not valid JSON at /days (byte 8): number 1e400 is too large for a 64-bit float`},
		{name: "nonzero underflow", request: tool.Request{Name: name, Arguments: `{"days":1e-400}`}, content: true},
		{name: "number over 100 characters", request: tool.Request{Name: name, Arguments: `{"days":` + strings.Repeat("1", 101) + `}`}, content: true},
		{name: "trailing data", request: tool.Request{Name: name, Arguments: `{} {}`}, content: true},
		{name: "nesting beyond the bound", request: tool.Request{Name: name, Arguments: `{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`}, content: true},
		{name: "more than MaxInputBytes", request: tool.Request{Name: name, Arguments: "{" + strings.Repeat(" ", tool.MaxInputBytes-1) + "}"}, content: true, message: fmt.Sprintf(`arguments of "weather" are %d bytes, more than the limit of %d`, tool.MaxInputBytes+1, tool.MaxInputBytes)},
		{name: "schema: wrong type", request: tool.Request{Name: name, Arguments: `{"city":7}`}, content: true, message: `arguments of "weather" do not match its input schema at /city: got number, want string`},
		{name: "schema: unknown member", request: tool.Request{Name: name, Arguments: `{"town":"Paris"}`}, content: true, message: `arguments of "weather" do not match its input schema at the root: additional properties 'town' not allowed`},
		{name: "schema: beyond maximum by one", request: tool.Request{Name: name, Arguments: `{"days":9007199254740994}`}, content: true, message: `arguments of "weather" do not match its input schema at /days: maximum: got 9007199254740994, want 9007199254740993`},
		{name: "schema: not an integer", request: tool.Request{Name: name, Arguments: `{"days":1.5}`}, content: true, message: `arguments of "weather" do not match its input schema at /days: got number, want integer`},
		{name: "vertical tab is not blank", request: tool.Request{Name: name, Arguments: "\v"}, content: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			executable := newCoreTool(coreDefinition(name))
			b := mustBind(t, executable)
			inv, err := b.Contract().Prepare(tt.request, tt.admission)
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			require.Zero(t, inv)
			rej, ok := tool.ClassifyInputRejection(err)
			require.Equal(t, tt.content, ok, "content problems are InputRejections, identity problems are not: %v", err)
			require.Equal(t, tt.envelope, errors.Is(err, tool.ErrInvalidRequest), "only an empty name is refused as a bad Request; over-long argument text is the model's to fix")
			if tt.message != "" {
				require.Equal(t, tt.message, rej.Message())
				require.Equal(t, "tool: invalid invocation: "+tt.message, err.Error())
			}
			if ok {
				require.NotContains(t, rej.Message(), "\n", "one line")
			}
			require.Zero(t, executable.ran(), "Prepare runs no tool")
			_, err = b.Call(context.Background(), inv)
			require.ErrorIs(t, err, tool.ErrInvalidInvocation, "nothing refused can be called")
			require.Zero(t, executable.ran())
		})
	}
}

func TestPrepareZeroContract(t *testing.T) {
	var c tool.Contract
	require.Equal(t, "", c.Name())
	require.Zero(t, c.Definition())
	_, err := c.Prepare(tool.Request{Name: "x", Arguments: `{}`}, tool.Admission{})
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	_, ok := tool.ClassifyInputRejection(err)
	require.False(t, ok)
	require.ErrorIs(t, c.ValidateResult(tool.Result{}), tool.ErrInvalidResult)
}

func TestPrepareAdmits(t *testing.T) {
	tests := []struct {
		name, arguments, admitted string
	}{
		{"object kept exactly", `{ "city" : "Paris" }`, `{ "city" : "Paris" }`},
		{"empty text is {}", ``, `{}`},
		{"JSON whitespace is {}", " \t\r\n ", `{}`},
		{"big integer at the maximum", `{"days":9007199254740993}`, `{"days":9007199254740993}`},
		{"zero with a huge exponent", `{"days":1,"x":0e-400}`, ``},
		{"nesting at the bound", `{"x":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, ``},
		{"exactly MaxInputBytes", "{" + strings.Repeat(" ", tool.MaxInputBytes-2) + "}", ``},
	}
	def := coreDefinition("weather")
	def.InputSchema = json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer","maximum":9007199254740993}}}`)
	executable := newCoreTool(def)
	b := mustBind(t, executable)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: tt.arguments}, tool.Admission{IdempotencyKey: "k-1"})
			require.NoError(t, err)
			want := tt.admitted
			if want == "" {
				want = tt.arguments
			}
			require.Equal(t, want, string(inv.Arguments()))
			require.Equal(t, tool.IdempotencyKey("k-1"), inv.IdempotencyKey())
			_, resumed := inv.Continuation()
			require.False(t, resumed)
			require.Equal(t, "weather", inv.Definition().Name)
		})
	}
	require.Zero(t, executable.ran())
}

func TestPrepareBlankMeetsTheSchema(t *testing.T) {
	def := coreDefinition("weather")
	def.InputSchema = json.RawMessage(`{"type":"object","required":["city"]}`)
	b := mustBind(t, newCoreTool(def))
	_, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: "  "}, tool.Admission{})
	rej, ok := tool.ClassifyInputRejection(err)
	require.True(t, ok)
	require.Equal(t, `arguments of "weather" do not match its input schema at the root: missing property 'city'`, rej.Message())
}

func TestPrepareInputValidator(t *testing.T) {
	rejection, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: "city must be a real city", Cause: errors.New("lookup table miss")})
	require.NoError(t, err)
	defect := errors.New("validator lost its table")
	tests := []struct {
		name      string
		validator func([]byte) error
		admitted  bool
		public    string // the InputRejection message, if any
		defect    bool   // an *InputValidationError
	}{
		{"admits", func([]byte) error { return nil }, true, "", false},
		{"rejection", func([]byte) error { return rejection }, false, "city must be a real city", false},
		{"wrapped rejection", func([]byte) error { return fmt.Errorf("checking city: %w", rejection) }, false, "city must be a real city", false},
		{"joined rejection is a defect", func([]byte) error { return errors.Join(rejection, defect) }, false, "", true},
		{"plain error is a defect", func([]byte) error { return defect }, false, "", true},
		{"panic is a defect", func([]byte) error { panic("boom") }, false, "", true},
		{"panic with an error", func([]byte) error { panic(defect) }, false, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seen []byte
			executable := coreValidatingTool{
				coreTool: newCoreTool(coreDefinition("weather")),
				validator: func() func([]byte) error {
					return func(args []byte) error {
						seen = append([]byte(nil), args...)
						return tt.validator(args)
					}
				},
			}
			b := mustBind(t, executable)
			_, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{"city":"Atlantis"}`}, tool.Admission{})
			require.Equal(t, `{"city":"Atlantis"}`, string(seen), "the validator sees the argument text")
			require.Zero(t, executable.ran())
			if tt.admitted {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			rej, ok := tool.ClassifyInputRejection(err)
			require.Equal(t, tt.public != "", ok)
			if ok {
				require.Equal(t, tt.public, rej.Message())
			}
			var verr *tool.InputValidationError
			require.Equal(t, tt.defect, errors.As(err, &verr))
			if tt.defect {
				require.Equal(t, "tool: invalid invocation: the input validator failed", err.Error())
				require.NotErrorIs(t, err, defect, "the defect is private")
				require.NotNil(t, verr.Cause())
			}
		})
	}
}

func TestPrepareSchemaBeforeValidator(t *testing.T) {
	ran := false
	executable := coreValidatingTool{
		coreTool:  newCoreTool(coreDefinition("weather")),
		validator: func() func([]byte) error { return func([]byte) error { ran = true; return nil } },
	}
	b := mustBind(t, executable)
	_, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{"city":7}`}, tool.Admission{})
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	require.False(t, ran, "the validator runs only on input the schema admitted")
}

func TestPrepareNilValidator(t *testing.T) {
	executable := coreValidatingTool{
		coreTool:  newCoreTool(coreDefinition("weather")),
		validator: func() func([]byte) error { return nil },
	}
	b := mustBind(t, executable)
	_, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{"city":"Paris"}`}, tool.Admission{})
	require.NoError(t, err, "a nil validator leaves the schema as the whole contract")
}

func TestInvocationAccessorsAreCopies(t *testing.T) {
	b := mustBind(t, newCoreTool(coreDefinition("weather")))
	inv, err := b.Contract().Prepare(tool.Request{Name: "weather", Arguments: `{"city":"Paris"}`}, tool.Admission{})
	require.NoError(t, err)

	args := inv.Arguments()
	args[2] = 'X'
	require.Equal(t, `{"city":"Paris"}`, string(inv.Arguments()))

	def := inv.Definition()
	def.InputSchema[0] = 'X'
	def.Name = "changed"
	require.Equal(t, "weather", inv.Definition().Name)
	require.Equal(t, byte('{'), inv.Definition().InputSchema[0])

	var zero tool.Invocation
	require.Nil(t, zero.Arguments())
	require.Zero(t, zero.Definition())
	require.Equal(t, tool.IdempotencyKey(""), zero.IdempotencyKey())
}

func TestValidateResult(t *testing.T) {
	prompt, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:         json.RawMessage(`"approve?"`),
		ResponseSchema: coreSchema(t, `{"type":"boolean"}`),
	})
	require.NoError(t, err)
	withOutput := coreDefinition("report")
	withOutput.OutputSchema = json.RawMessage(`{"type":"object","required":["total"]}`)

	tests := []struct {
		name   string
		def    tool.Definition
		result tool.Result
		msg    string // "" when valid
	}{
		{"zero result", coreDefinition("plain"), tool.Result{}, ""},
		{"text output", coreDefinition("plain"), tool.Result{Output: tool.NewTextOutput("hi")}, ""},
		{"input request alone", coreDefinition("plain"), tool.Result{InputRequest: &prompt}, ""},
		{"invalid block", coreDefinition("plain"), tool.Result{Output: tool.Output{Content: []tool.Block{tool.NewTextBlock("")}}}, `tool: invalid result: tool "plain": content[0]: invalid output: text block with empty text`},
		{"invalid details", coreDefinition("plain"), tool.Result{Output: tool.Output{Details: json.RawMessage(`{`)}}, ""},
		{"output and input request", coreDefinition("plain"), tool.Result{Output: tool.NewTextOutput("hi"), InputRequest: &prompt}, `tool: invalid result: tool "plain" returned both an output and an input request`},
		{"zero input request", coreDefinition("plain"), tool.Result{InputRequest: &tool.InputRequest{}}, `tool: invalid result: tool "plain" returned an invalid input request`},
		{"details match the output schema", withOutput, tool.Result{Output: tool.Output{Details: json.RawMessage(`{"total":1}`)}}, ""},
		{"output schema but no details", withOutput, tool.Result{Output: tool.NewTextOutput("total: 1")}, `tool: invalid result: tool "report" declares an output schema but returned no details`},
		{"details break the output schema", withOutput, tool.Result{Output: tool.Output{Details: json.RawMessage(`{"sum":1}`)}}, `tool: invalid result: details of tool "report" do not match its output schema: at the root: missing property 'total'`},
		{"input request needs no details", withOutput, tool.Result{InputRequest: &prompt}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustBind(t, newCoreTool(tt.def)).Contract()
			err := c.ValidateResult(tt.result)
			if tt.msg == "" && tt.name != "invalid details" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidResult)
			if tt.msg != "" {
				require.EqualError(t, err, tt.msg)
			}
		})
	}
}

// TestPrepareValidatorCannotChangeAdmittedArguments: the input validator
// gets a copy, so a validator that breaks its contract and writes to its
// argument cannot change the bytes the schema admitted.
func TestPrepareValidatorCannotChangeAdmittedArguments(t *testing.T) {
	executable := coreValidatingTool{
		coreTool: newCoreTool(coreDefinition("weather")),
		validator: func() func([]byte) error {
			return func(b []byte) error {
				for i := range b {
					b[i] = ' '
				}
				return nil
			}
		},
	}
	b := mustBind(t, executable)
	inv := mustPrepare(t, b, `{"city":"Oslo"}`)
	require.Equal(t, `{"city":"Oslo"}`, string(inv.Arguments()))
}

func TestContractEffect(t *testing.T) {
	for _, effect := range []tool.Effect{"", tool.EffectSafe, tool.EffectIdempotent} {
		def := coreDefinition("effect")
		def.Effect = effect
		c := mustBind(t, newCoreTool(def)).Contract()
		require.Equal(t, effect, c.Effect())
		require.Equal(t, c.Definition().Effect, c.Effect())
	}
	require.Equal(t, tool.Effect(""), tool.Contract{}.Effect())
}

// TestPrepareReadsArgumentsInPlace checks that Prepare neither copies the
// argument text nor builds a value tree of valid arguments: preparing 1 MiB
// of small objects allocates a small fraction of that, and 1 MiB of one
// string with escapes the scratch space of its decoded text only.
func TestPrepareReadsArgumentsInPlace(t *testing.T) {
	schema := []byte(`{"type":"object","properties":{
		"items":{"type":"array","items":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string","maxLength":8}},"required":["a","b"],"additionalProperties":false}},
		"text":{"type":"string"}}}`)
	binding, err := tool.Bind(echoTool{definition: tool.Definition{Name: "bulk", InputSchema: schema}})
	require.NoError(t, err)
	contract := binding.Contract()
	for _, p := range memoryPayloads(tool.MaxInputBytes) {
		req := tool.Request{Name: "bulk", Arguments: p.args}
		_, err := contract.Prepare(req, tool.Admission{})
		require.NoError(t, err, p.name)
		const runs = 4
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			inv, err := contract.Prepare(req, tool.Admission{})
			require.NoError(t, err, p.name)
			require.Len(t, inv.Arguments(), len(p.args)) // a copy for the caller, outside the count below
		}
		runtime.ReadMemStats(&after)
		perPrepare := (after.TotalAlloc - before.TotalAlloc - runs*uint64(len(p.args))) / runs
		limit := uint64(len(p.args) / 16)
		if p.name == "escapes" {
			limit = 3 * uint64(len(p.args)) // the decoded text, in scratch space grown by doubling
		}
		require.Less(t, perPrepare, limit, "%s: bytes allocated by one Prepare of %d bytes", p.name, len(p.args))
	}
}
