package tool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/agentcontract/tool"
)

func TestNewInputRequest(t *testing.T) {
	boolean := mustSchema(`{"type":"boolean"}`)
	big := json.RawMessage(`"` + strings.Repeat("a", tool.MaxInputBytes-2) + `"`)
	tests := []struct {
		name    string
		config  tool.InputRequestConfig
		wantErr string // "" when the request is valid
	}{
		{
			name:   "prompt and schema",
			config: tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: boolean},
		},
		{
			name:   "object prompt and state",
			config: tool.InputRequestConfig{Prompt: json.RawMessage(`{"amount":100}`), ResponseSchema: boolean, ContinuationState: json.RawMessage(`{"step":1}`)},
		},
		{
			name:   "any JSON document is a prompt, null included",
			config: tool.InputRequestConfig{Prompt: json.RawMessage(`null`), ResponseSchema: boolean},
		},
		{
			name:   "a boolean schema",
			config: tool.InputRequestConfig{Prompt: json.RawMessage(`1`), ResponseSchema: mustSchema(`true`)},
		},
		{
			name:   "prompt of exactly MaxInputBytes",
			config: tool.InputRequestConfig{Prompt: big, ResponseSchema: boolean, ContinuationState: big},
		},
		{
			name:    "prompt missing",
			config:  tool.InputRequestConfig{ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is required",
		},
		{
			name:    "prompt empty",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage{}, ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is required",
		},
		{
			name:    "prompt blank",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(" "), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is not one I-JSON document: ",
		},
		{
			name:    "prompt invalid JSON",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`{"a":`), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is not one I-JSON document: ",
		},
		{
			name:    "prompt with duplicate names",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`{"a":1,"a":2}`), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is not one I-JSON document: ",
		},
		{
			name:    "prompt with trailing data",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"a" "b"`), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is not one I-JSON document: ",
		},
		{
			name:    "prompt with invalid UTF-8",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage("\"\xff\""), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is not one I-JSON document: ",
		},
		{
			name:    "prompt over MaxInputBytes",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"` + strings.Repeat("a", tool.MaxInputBytes-2) + ` "`), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is 1048577 bytes, more than the limit of 1048576",
		},
		{
			// The prompt is kept with the escapes every JSON encoder
			// writes; it must fit in MaxInputBytes that way.
			name:    "prompt over MaxInputBytes once escaped",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"` + strings.Repeat("<", tool.MaxInputBytes/2) + `"`), ResponseSchema: boolean},
			wantErr: "tool: invalid input request: the prompt is 3145730 bytes once encoded, more than the limit of 1048576",
		},
		{
			name:    "zero response schema",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`)},
			wantErr: "tool: invalid input request: the response schema is the zero Schema",
		},
		{
			name:    "response schema over MaxInputBytes once escaped",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: mustSchema(`{"description":"` + strings.Repeat("&", tool.MaxInputBytes/4) + `"}`)},
			wantErr: "tool: invalid input request: the response schema is 1572882 bytes once encoded, more than the limit of 1048576",
		},
		{
			name:    "state invalid JSON",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: boolean, ContinuationState: json.RawMessage(`{`)},
			wantErr: "tool: invalid input request: the state is not one I-JSON document: ",
		},
		{
			name:    "state with duplicate names",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: boolean, ContinuationState: json.RawMessage(`{"a":1,"\u0061":2}`)},
			wantErr: "tool: invalid input request: the state is not one I-JSON document: ",
		},
		{
			name:    "state with trailing data",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: boolean, ContinuationState: json.RawMessage(`{}}`)},
			wantErr: "tool: invalid input request: the state is not one I-JSON document: ",
		},
		{
			name:    "state over MaxInputBytes",
			config:  tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: boolean, ContinuationState: json.RawMessage(strings.Repeat(" ", tool.MaxInputBytes) + `1`)},
			wantErr: "tool: invalid input request: the state is 1048577 bytes, more than the limit of 1048576",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := tool.NewInputRequest(tt.config)
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.True(t, r.Valid())
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
			require.True(t, strings.HasPrefix(err.Error(), tt.wantErr), "error %q does not start with %q", err, tt.wantErr)
			require.False(t, r.Valid(), "a refused request is the zero InputRequest")
		})
	}
}

func TestNewInputRequestCopies(t *testing.T) {
	prompt := []byte(`{"question":"Approve?"}`)
	state := []byte(`{"step":1}`)
	r, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: prompt, ResponseSchema: mustSchema(`{"type":"boolean"}`), ContinuationState: state})
	require.NoError(t, err)

	// Mutating what was passed in changes nothing.
	copy(prompt, `{"question":"Nope!?"}`)
	copy(state, `{"step":9}`)
	require.Equal(t, `{"question":"Approve?"}`, string(r.Prompt()))
	require.Equal(t, `{"step":1}`, string(r.State()))

	// Mutating what came out changes nothing either.
	r.Prompt()[2] = 'X'
	r.State()[2] = 'X'
	require.Equal(t, `{"question":"Approve?"}`, string(r.Prompt()))
	require.Equal(t, `{"step":1}`, string(r.State()))

	c, err := r.Continuation(json.RawMessage(`true`))
	require.NoError(t, err)
	c.State()[2] = 'X'
	c.Response()[0] = 'X'
	require.Equal(t, `{"step":1}`, string(c.State()))
	require.Equal(t, `true`, string(c.Response()))
}

// TestNewInputRequestCompact: the prompt and state are kept compact, with
// the string escapes encoding/json writes, so that the bytes a tool reads
// back are the same in process and after any round trip through storage.
func TestNewInputRequestCompact(t *testing.T) {
	r, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:            json.RawMessage(" { \"q\" : \"a<b\\u0041\" } "),
		ResponseSchema:    mustSchema(`true`),
		ContinuationState: json.RawMessage("[ 1.0 ,\n 1E2 ]"),
	})
	require.NoError(t, err)
	require.Equal(t, `{"q":"a\u003cbA"}`, string(r.Prompt()))
	require.Equal(t, `[1.0,1E2]`, string(r.State()), "number text is kept as given")

	// What encoding/json writes is kept byte for byte.
	state, err := json.Marshal(map[string]any{"note": "<&> \u2028 é", "n": 3})
	require.NoError(t, err)
	r, err = tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`1`), ResponseSchema: mustSchema(`true`), ContinuationState: state})
	require.NoError(t, err)
	require.Equal(t, string(state), string(r.State()))
}

func TestInputRequestZero(t *testing.T) {
	var r tool.InputRequest
	require.False(t, r.Valid())
	require.Nil(t, r.Prompt())
	require.Nil(t, r.State())
	require.False(t, r.ResponseSchema().Valid())

	_, err := r.Continuation(json.RawMessage(`true`))
	require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
	require.EqualError(t, err, "tool: invalid input request: the zero InputRequest takes no answer")

	_, err = r.MarshalJSON()
	require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
	require.EqualError(t, err, "tool: invalid input request: the zero InputRequest has no wire form")
	_, err = json.Marshal(r)
	require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
}

func TestInputRequestNoState(t *testing.T) {
	r, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Approve?"`), ResponseSchema: mustSchema(`true`)})
	require.NoError(t, err)
	require.Nil(t, r.State())
	c, err := r.Continuation(json.RawMessage(`1`))
	require.NoError(t, err)
	require.Nil(t, c.State())
	require.Equal(t, `1`, string(c.Response()))
}

func TestInputRequestContinuation(t *testing.T) {
	r, err := tool.NewInputRequest(tool.InputRequestConfig{
		Prompt:            json.RawMessage(`"Pick a match"`),
		ResponseSchema:    mustSchema(`{"type":"object","properties":{"choice":{"type":"integer","minimum":1,"maximum":3}},"required":["choice"],"additionalProperties":false}`),
		ContinuationState: json.RawMessage(`{"matches":["a","b","c"]}`),
	})
	require.NoError(t, err)

	tests := []struct {
		name    string
		answer  string
		wantErr string // "" when the answer is accepted
	}{
		{name: "valid", answer: `{"choice":2}`},
		{name: "valid with whitespace", answer: ` { "choice" : 3 } `},
		{
			name:    "out of range",
			answer:  `{"choice":4}`,
			wantErr: "tool: invalid input request: the answer does not match the response schema: at /choice: ",
		},
		{
			name:    "wrong type",
			answer:  `{"choice":"2"}`,
			wantErr: "tool: invalid input request: the answer does not match the response schema: at /choice: ",
		},
		{
			name:    "missing member",
			answer:  `{}`,
			wantErr: "tool: invalid input request: the answer does not match the response schema: ",
		},
		{
			name:    "invalid JSON",
			answer:  `{"choice":`,
			wantErr: "tool: invalid input request: the answer does not match the response schema: invalid JSON ",
		},
		{
			name:    "duplicate names",
			answer:  `{"choice":1,"choice":2}`,
			wantErr: "tool: invalid input request: the answer does not match the response schema: invalid JSON ",
		},
		{
			name:    "empty",
			answer:  ``,
			wantErr: "tool: invalid input request: the answer does not match the response schema: invalid JSON ",
		},
		{
			name:    "oversize",
			answer:  `{"choice":1}` + strings.Repeat(" ", tool.MaxInputBytes),
			wantErr: "tool: invalid input request: the answer does not match the response schema: value is 1048588 bytes, more than the limit of 1048576",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := r.Continuation(json.RawMessage(tt.answer))
			if tt.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, tt.answer, string(c.Response()), "the answer is kept as given")
				require.Equal(t, `{"matches":["a","b","c"]}`, string(c.State()))
				return
			}
			require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
			require.True(t, strings.HasPrefix(err.Error(), tt.wantErr), "error %q does not start with %q", err, tt.wantErr)
			_, isRejection := tool.ClassifyInputRejection(err)
			require.False(t, isRejection, "a bad answer is not a model's input rejection")
			require.Nil(t, c.Response())
		})
	}

	// The answer is copied in.
	answer := []byte(`{"choice":1}`)
	c, err := r.Continuation(answer)
	require.NoError(t, err)
	answer[10] = '3'
	require.Equal(t, `{"choice":1}`, string(c.Response()))
}

// TestInputRequestJSONRoundTrip: marshal → unmarshal → marshal gives the
// same bytes, stamp included.
func TestInputRequestJSONRoundTrip(t *testing.T) {
	unstamped := func(state string) tool.InputRequest {
		config := tool.InputRequestConfig{Prompt: json.RawMessage(`{"question":"Approve?"}`), ResponseSchema: mustSchema(`{"type":"boolean","description":"<yes> & no"}`)}
		if state != "" {
			config.ContinuationState = json.RawMessage(state)
		}
		r, err := tool.NewInputRequest(config)
		require.NoError(t, err)
		return r
	}
	stamped := func(state string, key tool.IdempotencyKey) tool.InputRequest {
		a := newApproval()
		a.state = nil
		if state != "" {
			a.state = json.RawMessage(state)
		}
		return suspend(t, a, transferCall, key)
	}
	tests := []struct {
		name    string
		request tool.InputRequest
		want    string // a regular expression for the encoding
	}{
		{name: "unstamped, no state", request: unstamped(""), want: `^{"prompt":{"question":"Approve\?"},"response_schema":{"type":"boolean","description":"\\u003cyes\\u003e \\u0026 no"}}$`},
		{name: "unstamped, state", request: unstamped(`{"step":1}`), want: `^{"prompt":{"question":"Approve\?"},"response_schema":{.*},"state":{"step":1}}$`},
		{name: "stamped, no state, no key", request: stamped("", ""), want: `^{"prompt":{.*},"response_schema":{"type":"boolean"},"call":{"tool":"transfer","contract_sha256":"[0-9a-f]{64}","arguments_sha256":"[0-9a-f]{64}"}}$`},
		{name: "stamped, no state, key", request: stamped("", "k1"), want: `^{"prompt":{.*},"response_schema":{"type":"boolean"},"call":{"tool":"transfer","contract_sha256":"[0-9a-f]{64}","arguments_sha256":"[0-9a-f]{64}","idempotency_key":"k1"}}$`},
		{name: "stamped, state, no key", request: stamped(`{"step":1}`, ""), want: `^{"prompt":{.*},"response_schema":{"type":"boolean"},"state":{"step":1},"call":{"tool":"transfer","contract_sha256":"[0-9a-f]{64}","arguments_sha256":"[0-9a-f]{64}"}}$`},
		{name: "stamped, state, key", request: stamped(`{"step":1}`, "k1"), want: `^{"prompt":{.*},"response_schema":{"type":"boolean"},"state":{"step":1},"call":{"tool":"transfer","contract_sha256":"[0-9a-f]{64}","arguments_sha256":"[0-9a-f]{64}","idempotency_key":"k1"}}$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, err := tt.request.MarshalJSON()
			require.NoError(t, err)
			require.Regexp(t, tt.want, string(first))

			viaEncodingJSON, err := json.Marshal(tt.request)
			require.NoError(t, err)
			require.Equal(t, string(first), string(viaEncodingJSON), "encoding/json adds nothing to the encoding")

			var decoded tool.InputRequest
			require.NoError(t, decoded.UnmarshalJSON(first))
			second, err := decoded.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, string(first), string(second))
			require.Equal(t, string(tt.request.Prompt()), string(decoded.Prompt()))
			require.Equal(t, string(tt.request.State()), string(decoded.State()))
			require.JSONEq(t, string(tt.request.ResponseSchema().JSON()), string(decoded.ResponseSchema().JSON()))
		})
	}
}

// TestInputRequestAtTheLimits: every request NewInputRequest accepts can be
// persisted and restored, even one whose prompt and state are each as large
// as allowed, with a stamp.
func TestInputRequestAtTheLimits(t *testing.T) {
	big := `"` + strings.Repeat("a", tool.MaxInputBytes-2) + `"`
	a := newApproval()
	a.state = json.RawMessage(big)
	stampedBig := suspend(t, callerTool{def: a.Definition(), caller: tool.CallerFunc(func(_ context.Context, _ tool.Invocation) (tool.Result, error) {
		r, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(big), ResponseSchema: mustSchema(`true`), ContinuationState: json.RawMessage(big)})
		return tool.Result{InputRequest: &r}, err
	})}, transferCall, tool.IdempotencyKey(strings.Repeat("<", tool.MaxInputBytes/6-2)))

	saved := persist(t, stampedBig)
	restored := restore(t, saved)
	again := persist(t, restored)
	require.Equal(t, saved, again)
	require.Equal(t, big, string(restored.State()))
}

func TestInputRequestUnmarshalStrict(t *testing.T) {
	const (
		a64 = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		b64 = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	)
	stamp := `"call":{"tool":"transfer","contract_sha256":"` + a64 + `","arguments_sha256":"` + b64 + `","idempotency_key":"k1"}`
	valid := `{"prompt":"Approve?","response_schema":{"type":"boolean"},"state":{"step":1},` + stamp + `}`
	var probe tool.InputRequest
	require.NoError(t, probe.UnmarshalJSON([]byte(valid)), "the base document is valid")

	tests := []struct {
		name string
		doc  string
		want string // expected prefix of the error
	}{
		{"unknown top-level member", `{"prompt":"p","response_schema":true,"extra":1}`, `tool: invalid input request: `},
		{"member name in the wrong case", `{"Prompt":"p","response_schema":true}`, `tool: invalid input request: `},
		{"unknown member in call", strings.Replace(valid, `"idempotency_key"`, `"extra":1,"idempotency_key"`, 1), `tool: invalid input request: `},
		{"duplicate prompt", `{"prompt":"p","prompt":"q","response_schema":true}`, `tool: invalid input request: not one I-JSON document: `},
		{"duplicate through an escape", `{"prompt":"p","\u0070rompt":"q","response_schema":true}`, `tool: invalid input request: not one I-JSON document: `},
		{"duplicate in call", strings.Replace(valid, `"tool":"transfer"`, `"tool":"transfer","tool":"transfer"`, 1), `tool: invalid input request: not one I-JSON document: `},
		{"duplicate inside the state", `{"prompt":"p","response_schema":true,"state":{"a":1,"a":1}}`, `tool: invalid input request: not one I-JSON document: `},
		{"trailing data", valid + `{}`, `tool: invalid input request: not one I-JSON document: `},
		{"invalid UTF-8", "{\"prompt\":\"\xff\",\"response_schema\":true}", `tool: invalid input request: not one I-JSON document: `},
		{"not an object", `["p",true]`, `tool: invalid input request: `},
		{"null", `null`, `tool: invalid input request: `},
		{"empty", ``, `tool: invalid input request: `},
		{"missing prompt", `{"response_schema":true}`, `tool: invalid input request: the prompt is required`},
		{"missing response_schema", `{"prompt":"p"}`, `tool: invalid input request: the response schema is required`},
		{"schema that does not compile", `{"prompt":"p","response_schema":{"type":12}}`, `tool: invalid input request: invalid schema: `},
		{"schema that is not a schema", `{"prompt":"p","response_schema":"boolean"}`, `tool: invalid input request: invalid schema: `},
		{"schema with an external $ref", `{"prompt":"p","response_schema":{"$ref":"https://example.com/s.json"}}`, `tool: invalid input request: invalid schema: reference to "https://example.com/s.json" outside the document is not allowed`},
		{"schema with a file $ref", `{"prompt":"p","response_schema":{"$ref":"file:///etc/passwd"}}`, `tool: invalid input request: invalid schema: reference to "file:///etc/passwd" outside the document is not allowed`},
		{"call is not an object", `{"prompt":"p","response_schema":true,"call":1}`, `tool: invalid input request: `},
		{"uppercase hex", strings.Replace(valid, a64, strings.ToUpper(a64), 1), `tool: invalid input request: call stamp digests must be 64 lowercase hexadecimal digits`},
		{"short digest", strings.Replace(valid, a64, a64[1:], 1), `tool: invalid input request: call stamp digests must be 64 lowercase hexadecimal digits`},
		{"long digest", strings.Replace(valid, b64, b64+"b", 1), `tool: invalid input request: call stamp digests must be 64 lowercase hexadecimal digits`},
		{"digest that is not hex", strings.Replace(valid, b64, "g"+b64[1:], 1), `tool: invalid input request: call stamp digests must be 64 lowercase hexadecimal digits`},
		{"missing contract digest", strings.Replace(valid, `"contract_sha256":"`+a64+`",`, ``, 1), `tool: invalid input request: call stamp digests must be 64 lowercase hexadecimal digits`},
		{"missing arguments digest", strings.Replace(valid, `"arguments_sha256":"`+b64+`",`, ``, 1), `tool: invalid input request: call stamp digests must be 64 lowercase hexadecimal digits`},
		{"missing tool", strings.Replace(valid, `"tool":"transfer",`, ``, 1), `tool: invalid input request: call stamp: "" is not a tool name`},
		{"invalid tool name", strings.Replace(valid, `"tool":"transfer"`, `"tool":"trans fer"`, 1), `tool: invalid input request: call stamp: "trans fer" is not a tool name`},
		{"key that is not a string", strings.Replace(valid, `"k1"`, `1`, 1), `tool: invalid input request: `},
		{"noncharacter in the key", strings.Replace(valid, `"k1"`, `"\uffff"`, 1), `tool: invalid input request: not one I-JSON document: `},
		{"oversize", `{"prompt":"` + strings.Repeat("a", 4*tool.MaxInputBytes+1024) + `","response_schema":true}`, `tool: invalid input request: the encoded request is`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := probe
			err := r.UnmarshalJSON([]byte(tt.doc))
			require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
			require.True(t, strings.HasPrefix(err.Error(), tt.want), "error %q does not start with %q", err, tt.want)
			// On error the request is left unchanged.
			before, err := probe.MarshalJSON()
			require.NoError(t, err)
			after, err := r.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, string(before), string(after))
		})
	}
}

// TestInputRequestUnmarshalTolerates records the spellings decoding
// accepts that encoding never writes; each decodes to the request the
// canonical spelling gives.
func TestInputRequestUnmarshalTolerates(t *testing.T) {
	tests := []struct{ name, doc, canonical string }{
		{"whitespace", " {\n \"prompt\" : [ 1 , 2 ] ,\t\"response_schema\" : true } ", `{"prompt":[1,2],"response_schema":true}`},
		{"escapes", `{"prompt":"\u0041\/<","response_schema":{"description":"\u00e9"}}`, `{"prompt":"A/\u003c","response_schema":{"description":"é"}}`},
		{"null call", `{"prompt":1,"response_schema":true,"call":null}`, `{"prompt":1,"response_schema":true}`},
		{"member order", `{"response_schema":true,"prompt":1}`, `{"prompt":1,"response_schema":true}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r tool.InputRequest
			require.NoError(t, r.UnmarshalJSON([]byte(tt.doc)))
			got, err := r.MarshalJSON()
			require.NoError(t, err)
			require.Equal(t, tt.canonical, string(got))
		})
	}
}

func TestInputRequestSchemaModel(t *testing.T) {
	schema, err := tool.SchemaFor[tool.InputRequest]()
	require.NoError(t, err)

	for _, r := range []tool.InputRequest{
		suspend(t, newApproval(), transferCall, "k1"),
		suspend(t, newApproval(), transferCall, ""),
		func() tool.InputRequest {
			r, err := tool.NewInputRequest(tool.InputRequestConfig{Prompt: json.RawMessage(`"Anything?"`), ResponseSchema: mustSchema(`true`)})
			require.NoError(t, err)
			return r
		}(),
	} {
		wire, err := json.Marshal(r)
		require.NoError(t, err)
		require.NoError(t, schema.Validate(wire), "%s", wire)
	}

	wire := persist(t, suspend(t, newApproval(), transferCall, "k1"))
	for name, doc := range map[string][]byte{
		"extra member":         bytes.Replace(wire, []byte(`{"prompt"`), []byte(`{"extra":1,"prompt"`), 1),
		"extra member in call": bytes.Replace(wire, []byte(`"call":{`), []byte(`"call":{"extra":1,`), 1),
		"uppercase digest":     bytes.Replace(wire, []byte(`"contract_sha256":"`), []byte(`"contract_sha256":"A`), 1),
		"invalid tool name":    bytes.Replace(wire, []byte(`"tool":"transfer"`), []byte(`"tool":"trans fer"`), 1),
		"no prompt":            bytes.Replace(wire, []byte(`"prompt"`), []byte(`"question"`), 1),
	} {
		err := schema.Validate(doc)
		_, isRejection := tool.ClassifyInputRejection(err)
		require.True(t, isRejection, "%s: %v", name, err)
	}
}

// FuzzInputRequestUnmarshal: decoding never panics, refuses only with
// ErrInvalidInputRequest and leaves the target unchanged, and whatever
// decodes re-encodes to bytes that decode and encode to themselves.
func FuzzInputRequestUnmarshal(f *testing.F) {
	f.Add([]byte(`{"prompt":"Approve?","response_schema":{"type":"boolean"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r tool.InputRequest
		if err := r.UnmarshalJSON(data); err != nil {
			require.ErrorIs(t, err, tool.ErrInvalidInputRequest)
			require.True(t, strings.HasPrefix(err.Error(), "tool: "), "%v", err)
			require.False(t, r.Valid(), "a refused document leaves the request unchanged")
			return
		}
		encoded, err := r.MarshalJSON()
		require.NoError(t, err, "a decoded request must encode")
		viaEncodingJSON, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(encoded), string(viaEncodingJSON))

		var again tool.InputRequest
		require.NoError(t, again.UnmarshalJSON(encoded), "the encoding must decode: %s", encoded)
		reencoded, err := again.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(encoded), string(reencoded))
		require.Equal(t, string(r.Prompt()), string(again.Prompt()))
		require.Equal(t, string(r.State()), string(again.State()))
	})
}
