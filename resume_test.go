package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

const (
	transferSchema      = `{"type":"object","properties":{"amount":{"type":"integer","minimum":0}},"additionalProperties":false}`
	transferDescription = "transfer an amount once a person approved it"
)

// approval is a hand-written tool that must ask a person before it acts:
// a new call returns an InputRequest, a continuation completes with the
// answer. It records what it saw so tests can tell whether it ran.
type approval struct {
	name        string // "transfer" when empty
	description string // transferDescription when empty
	schema      string // transferSchema when empty
	effect      tool.Effect
	state       json.RawMessage // checkpoint to save; none when nil

	runs      int
	seenState json.RawMessage
	seenKey   tool.IdempotencyKey
}

func newApproval() *approval {
	return &approval{effect: tool.EffectIdempotent, state: json.RawMessage(`{"step":1}`)}
}

func (a *approval) Definition() tool.Definition {
	def := tool.Definition{
		Name:        a.name,
		Description: a.description,
		InputSchema: json.RawMessage(a.schema),
		Effect:      a.effect,
	}
	if def.Name == "" {
		def.Name = "transfer"
	}
	if def.Description == "" {
		def.Description = transferDescription
	}
	if len(def.InputSchema) == 0 {
		def.InputSchema = json.RawMessage(transferSchema)
	}
	return def
}

func (a *approval) Call(_ context.Context, invocation tool.Invocation) (tool.Result, error) {
	a.runs++
	a.seenKey = invocation.IdempotencyKey()
	var args struct {
		Amount int `json:"amount"`
	}
	if err := json.Unmarshal(invocation.Arguments(), &args); err != nil {
		return tool.Result{}, err
	}
	c, resumed := invocation.Continuation()
	if !resumed {
		request, err := tool.NewInputRequest(tool.InputRequestConfig{
			Prompt:            json.RawMessage(fmt.Sprintf(`{"question":"Approve the transfer?","amount":%d}`, args.Amount)),
			ResponseSchema:    mustSchema(`{"type":"boolean"}`),
			ContinuationState: a.state,
		})
		if err != nil {
			return tool.Result{}, err
		}
		return tool.Result{InputRequest: &request}, nil
	}
	a.seenState = c.State()
	var approved bool
	if err := json.Unmarshal(c.Response(), &approved); err != nil {
		return tool.Result{}, err
	}
	if !approved {
		return tool.Result{Output: tool.NewTextOutput("transfer cancelled")}, nil
	}
	return tool.Result{Output: tool.NewTextOutput(fmt.Sprintf("transferred %d", args.Amount))}, nil
}

func mustSchema(doc string) tool.Schema {
	s, err := tool.ParseSchema([]byte(doc))
	if err != nil {
		panic(err)
	}
	return s
}

// suspend runs a new call of executable and returns the stamped
// InputRequest it suspended with.
func suspend(t *testing.T, executable tool.Tool, call tool.Request, key tool.IdempotencyKey) tool.InputRequest {
	t.Helper()
	b := mustBind(t, executable)
	inv, err := b.Contract().Prepare(call, tool.Admission{IdempotencyKey: key})
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	require.NotNil(t, result.InputRequest, "the call must suspend")
	require.Empty(t, result.Output.Content)
	require.Empty(t, result.Output.Details)
	return *result.InputRequest
}

// persist is what a runtime does with a suspended call: encode the request
// with encoding/json and keep the bytes.
func persist(t *testing.T, request tool.InputRequest) []byte {
	t.Helper()
	saved, err := json.Marshal(request)
	require.NoError(t, err)
	return saved
}

// restore decodes persisted bytes into a new InputRequest.
func restore(t *testing.T, saved []byte) tool.InputRequest {
	t.Helper()
	var request tool.InputRequest
	require.NoError(t, json.Unmarshal(saved, &request))
	return request
}

var transferCall = tool.Request{Name: "transfer", Arguments: `{"amount":100}`}

func TestResumeAfterRestart(t *testing.T) {
	ctx := context.Background()
	first := newApproval()
	b := mustBind(t, first)
	inv, err := b.Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1"})
	require.NoError(t, err)
	_, resumed := inv.Continuation()
	require.False(t, resumed, "a new call has no continuation")
	result, err := b.Call(ctx, inv)
	require.NoError(t, err)
	require.NotNil(t, result.InputRequest)
	require.Equal(t, 1, first.runs)
	saved := persist(t, *result.InputRequest)

	// A restart: nothing survives but the bytes. A freshly constructed,
	// identical tool gets a fresh Binding.
	second := newApproval()
	fresh := mustBind(t, second)
	restored := restore(t, saved)
	require.JSONEq(t, `{"question":"Approve the transfer?","amount":100}`, string(restored.Prompt()))
	require.Equal(t, `{"step":1}`, string(restored.State()))

	c, err := restored.Continuation(json.RawMessage(`true`))
	require.NoError(t, err)
	resumedInv, err := fresh.Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1", Continuation: &c})
	require.NoError(t, err)
	got, ok := resumedInv.Continuation()
	require.True(t, ok)
	require.Equal(t, `true`, string(got.Response()))
	require.Equal(t, `{"step":1}`, string(got.State()))

	// The admission's Continuation was copied: clearing the caller's
	// variable changes nothing about the prepared call.
	c = tool.Continuation{}

	done, err := fresh.Call(ctx, resumedInv)
	require.NoError(t, err)
	require.Nil(t, done.InputRequest)
	text, ok := done.Output.Text()
	require.True(t, ok)
	require.Equal(t, "transferred 100", text)
	require.Equal(t, 1, second.runs)
	require.Equal(t, `{"step":1}`, string(second.seenState))
	require.Equal(t, tool.IdempotencyKey("k1"), second.seenKey)

	// The same checkpoint answered "no" completes differently: the tool's
	// own code decides what the answer means.
	no, err := restore(t, saved).Continuation(json.RawMessage(`false`))
	require.NoError(t, err)
	inv, err = fresh.Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1", Continuation: &no})
	require.NoError(t, err)
	done, err = fresh.Call(ctx, inv)
	require.NoError(t, err)
	text, _ = done.Output.Text()
	require.Equal(t, "transfer cancelled", text)
}

// TestResumeBlankArguments shows that the stamp is over the admitted bytes:
// blank argument text is admitted as {}, whatever the blanks.
func TestResumeBlankArguments(t *testing.T) {
	request := suspend(t, newApproval(), tool.Request{Name: "transfer", Arguments: ""}, "k1")
	c, err := restore(t, persist(t, request)).Continuation(json.RawMessage(`true`))
	require.NoError(t, err)
	for _, args := range []string{"", " \t\r\n", "{}"} {
		inv, err := mustBind(t, newApproval()).Contract().Prepare(tool.Request{Name: "transfer", Arguments: args}, tool.Admission{IdempotencyKey: "k1", Continuation: &c})
		require.NoError(t, err, "arguments %q", args)
		require.Equal(t, "{}", string(inv.Arguments()))
	}
}

// TestResumeRefusesForeignContinuation: a continuation is admitted only by
// the call that asked. Each tampered copy is refused by Prepare with a plain
// ErrInvalidInvocation, not an InputRejection (the model cannot fix it), and
// the tool never runs.
func TestResumeRefusesForeignContinuation(t *testing.T) {
	saved := persist(t, suspend(t, newApproval(), transferCall, "k1"))
	savedNoKey := persist(t, suspend(t, newApproval(), transferCall, ""))

	// edit returns saved with the JSON string value of member name changed
	// in its first character (a hex digit stays a hex digit).
	edit := func(name string) []byte {
		var wire map[string]any
		require.NoError(t, json.Unmarshal(saved, &wire))
		call := wire["call"].(map[string]any)
		value := []byte(call[name].(string))
		switch value[0] {
		case 'f':
			value[0] = '0'
		case '9':
			value[0] = 'a'
		case 'z':
			value[0] = 'y'
		default:
			value[0]++
		}
		edited := bytes.Replace(saved, []byte(`"`+call[name].(string)+`"`), []byte(`"`+string(value)+`"`), 1)
		require.NotEqual(t, saved, edited)
		return edited
	}
	answer := func(saved []byte) *tool.Continuation {
		c, err := restore(t, saved).Continuation(json.RawMessage(`true`))
		require.NoError(t, err)
		return &c
	}
	unstamped, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:            json.RawMessage(`{"question":"Approve the transfer?","amount":100}`),
		ResponseSchema:    mustSchema(`{"type":"boolean"}`),
		ContinuationState: json.RawMessage(`{"step":1}`),
	})
	require.NoError(t, err)
	fromUnstamped, err := unstamped.Continuation(json.RawMessage(`true`))
	require.NoError(t, err)

	variant := func(change func(*approval)) *approval {
		a := newApproval()
		change(a)
		return a
	}
	tests := []struct {
		name      string
		tool      *approval
		call      tool.Request
		admission tool.Admission
	}{
		{
			name:      "other arguments",
			call:      tool.Request{Name: "transfer", Arguments: `{"amount":1000}`},
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(saved)},
		},
		{
			// The digest is over the exact admitted bytes: the same JSON
			// value written differently is other arguments.
			name:      "same value, other whitespace",
			call:      tool.Request{Name: "transfer", Arguments: `{"amount": 100}`},
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(saved)},
		},
		{
			name:      "same value, other number text",
			call:      tool.Request{Name: "transfer", Arguments: `{"amount":100.0}`},
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(saved)},
		},
		{
			name:      "another tool name",
			tool:      variant(func(a *approval) { a.name = "transfer2" }),
			call:      tool.Request{Name: "transfer2", Arguments: transferCall.Arguments},
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(saved)},
		},
		{
			name:      "same name, other input schema",
			tool:      variant(func(a *approval) { a.schema = `{"type":"object","properties":{"amount":{"type":"integer"}}}` }),
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(saved)},
		},
		{
			name:      "same name, other effect",
			tool:      variant(func(a *approval) { a.effect = "" }),
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(saved)},
		},
		{
			name:      "other idempotency key",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k2", Continuation: answer(saved)},
		},
		{
			name:      "empty key for a continuation issued with one",
			call:      transferCall,
			admission: tool.Admission{Continuation: answer(saved)},
		},
		{
			name:      "a key for a continuation issued without one",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(savedNoKey)},
		},
		{
			name:      "edited stamp: arguments digest",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(edit("arguments_sha256"))},
		},
		{
			name:      "edited stamp: contract digest",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(edit("contract_sha256"))},
		},
		{
			name:      "edited stamp: tool",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(edit("tool"))},
		},
		{
			name:      "edited stamp: idempotency key",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: answer(edit("idempotency_key"))},
		},
		{
			name: "stamp removed",
			call: transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: func() *tool.Continuation {
				var wire map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(saved, &wire))
				delete(wire, "call")
				stripped, err := json.Marshal(wire)
				require.NoError(t, err)
				return answer(stripped)
			}()},
		},
		{
			name:      "zero Continuation",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: &tool.Continuation{}},
		},
		{
			name:      "continuation of an unstamped request",
			call:      transferCall,
			admission: tool.Admission{IdempotencyKey: "k1", Continuation: &fromUnstamped},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			executable := tt.tool
			if executable == nil {
				executable = newApproval()
			}
			b := mustBind(t, executable)
			inv, err := b.Contract().Prepare(tt.call, tt.admission)
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			require.Regexp(t, `^tool: invalid invocation: `, err.Error())
			_, isRejection := tool.ClassifyInputRejection(err)
			require.False(t, isRejection, "a foreign continuation is not something the model can correct")
			_, err = b.Call(context.Background(), inv)
			require.ErrorIs(t, err, tool.ErrInvalidInvocation)
			require.Zero(t, executable.runs, "the tool must not run")

			// The same call without the continuation is admitted: only
			// the continuation was refused.
			_, err = b.Contract().Prepare(tt.call, tool.Admission{IdempotencyKey: tt.admission.IdempotencyKey})
			require.NoError(t, err)
		})
	}
}

// TestResumeEditedState: the state is the tool's own business. An edited
// state with the stamp intact is accepted and handed to the tool as it was
// stored; a tool that cannot trust its storage verifies its state itself.
func TestResumeEditedState(t *testing.T) {
	saved := persist(t, suspend(t, newApproval(), transferCall, "k1"))
	edited := bytes.Replace(saved, []byte(`"state":{"step":1}`), []byte(`"state":{"step":2}`), 1)
	require.NotEqual(t, saved, edited)

	c, err := restore(t, edited).Continuation(json.RawMessage(`true`))
	require.NoError(t, err)
	resumed := newApproval()
	b := mustBind(t, resumed)
	inv, err := b.Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1", Continuation: &c})
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	text, _ := result.Output.Text()
	require.Equal(t, "transferred 100", text)
	require.Equal(t, `{"step":2}`, string(resumed.seenState))
}

// TestResumeStateBytes: the state a tool reads back is the same bytes in
// process and after a round trip through storage, whatever encoder the
// runtime used.
func TestResumeStateBytes(t *testing.T) {
	for _, state := range []string{
		`{"step":1}`,
		`{ "step" : 1 ,"note":"a\u003cb"}`,
		`{"note":"<b> & \u2028 \u00e9 \/","n":1E2}`,
		`[1.0, -0, "\ud83d\ude00"]`,
	} {
		t.Run(state, func(t *testing.T) {
			a := newApproval()
			a.state = json.RawMessage(state)
			request := suspend(t, a, transferCall, "k1")
			inProcess, err := request.Continuation(json.RawMessage(`true`))
			require.NoError(t, err)
			require.JSONEq(t, state, string(inProcess.State()), "the value is kept")

			viaEncodingJSON := restore(t, persist(t, request))
			direct, err := request.MarshalJSON()
			require.NoError(t, err)
			viaMarshalJSON := restore(t, direct)
			for _, restored := range []tool.InputRequest{viaEncodingJSON, viaMarshalJSON} {
				c, err := restored.Continuation(json.RawMessage(`true`))
				require.NoError(t, err)
				require.Equal(t, string(inProcess.State()), string(c.State()))
				require.Equal(t, string(request.Prompt()), string(restored.Prompt()))
			}
		})
	}
}

// TestResumeKeyText: any key Prepare admits survives persistence, escapes
// and all; a key that cannot be written as I-JSON text is refused before the
// tool runs, so no suspended call is ever stuck with a checkpoint that
// cannot be restored.
func TestResumeKeyText(t *testing.T) {
	for _, key := range []tool.IdempotencyKey{"k1", `<a & "b">`, "line\u2028sep\x01", "é😀"} {
		t.Run(string(key), func(t *testing.T) {
			c, err := restore(t, persist(t, suspend(t, newApproval(), transferCall, key))).Continuation(json.RawMessage(`true`))
			require.NoError(t, err)
			_, err = mustBind(t, newApproval()).Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: key, Continuation: &c})
			require.NoError(t, err)
		})
	}
	for _, key := range []tool.IdempotencyKey{"k\xff", "k\uffff", "\ufdd0", tool.IdempotencyKey(bytes.Repeat([]byte("k"), tool.MaxInputBytes+1))} {
		a := newApproval()
		_, err := mustBind(t, a).Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: key})
		require.ErrorIs(t, err, tool.ErrInvalidInvocation, "key %.20q", key)
		_, isRejection := tool.ClassifyInputRejection(err)
		require.False(t, isRejection)
	}
}

// TestResumeAskingTwice: a call that asks again after resuming gets the
// same stamp, so the state is what tells the tool which question an answer
// belongs to.
func TestResumeAskingTwice(t *testing.T) {
	first := suspend(t, newApproval(), transferCall, "k1")
	c, err := first.Continuation(json.RawMessage(`true`))
	require.NoError(t, err)

	asksAgain := tool.CallerFunc(func(_ context.Context, inv tool.Invocation) (tool.Result, error) {
		request, err := tool.NewInputRequest(tool.InputRequestConfig{
			Prompt:            json.RawMessage(`"Really?"`),
			ResponseSchema:    mustSchema(`{"type":"boolean"}`),
			ContinuationState: json.RawMessage(`{"step":2}`),
		})
		return tool.Result{InputRequest: &request}, err
	})
	b := mustBind(t, callerTool{def: newApproval().Definition(), caller: asksAgain})
	inv, err := b.Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1", Continuation: &c})
	require.NoError(t, err)
	result, err := b.Call(context.Background(), inv)
	require.NoError(t, err)
	require.NotNil(t, result.InputRequest)

	var firstWire, secondWire struct {
		Call json.RawMessage `json:"call"`
	}
	require.NoError(t, json.Unmarshal(persist(t, first), &firstWire))
	require.NoError(t, json.Unmarshal(persist(t, *result.InputRequest), &secondWire))
	require.Equal(t, string(firstWire.Call), string(secondWire.Call))
}

// callerTool is a Tool made of a definition and a Caller.
type callerTool struct {
	def    tool.Definition
	caller tool.Caller
}

func (c callerTool) Definition() tool.Definition { return c.def }

func (c callerTool) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	return c.caller.Call(ctx, inv)
}

// TestResumeDescriptionEdited: the description is text for the model, not
// part of what the call means, so a release that only rewords it admits
// the continuations issued before it; a changed output schema does not.
func TestResumeDescriptionEdited(t *testing.T) {
	saved := persist(t, suspend(t, newApproval(), transferCall, "k1"))
	c, err := restore(t, saved).Continuation(json.RawMessage(`true`))
	require.NoError(t, err)

	reworded := newApproval()
	reworded.description = "move money between accounts, once approved"
	inv, err := mustBind(t, reworded).Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1", Continuation: &c})
	require.NoError(t, err, "a description edit keeps the continuation valid")
	_, resumed := inv.Continuation()
	require.True(t, resumed)

	withOutput := toolWithOutputSchema{newApproval()}
	_, err = mustBind(t, withOutput).Contract().Prepare(transferCall, tool.Admission{IdempotencyKey: "k1", Continuation: &c})
	require.ErrorIs(t, err, tool.ErrInvalidInvocation)
	require.ErrorContains(t, err, "issued by another contract")
}

// toolWithOutputSchema is the approval tool with an output schema added.
type toolWithOutputSchema struct{ *approval }

func (w toolWithOutputSchema) Definition() tool.Definition {
	def := w.approval.Definition()
	def.OutputSchema = json.RawMessage(`{"type":"string"}`)
	return def
}
