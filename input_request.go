package tool

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/agentcontract/tool/internal/strictjson"
)

// InputRequestConfig describes what a tool asks for; see [NewInputRequest].
type InputRequestConfig struct {
	// Prompt is what to show whoever answers: one JSON document, such as a
	// string or an object with the details of a payment. Required.
	Prompt json.RawMessage
	// ResponseSchema is the contract every answer must satisfy. Required.
	ResponseSchema Schema
	// ContinuationState is optional JSON the tool wants back when the call
	// resumes: its checkpoint.
	ContinuationState json.RawMessage
}

// InputRequest suspends a call until a person or another system answers
// it: a prompt, the schema of an acceptable answer and the tool's own
// checkpoint state. A tool returns one in [Result.InputRequest], before any
// effect it cannot repeat or with enough state to resume safely.
//
// [Binding.Call] stamps a returned InputRequest with the call it belongs to;
// MarshalJSON and UnmarshalJSON carry the stamp, so a runtime can persist
// the request and resume the call in another process. The wire form is
// described in "Suspending a call" in the package documentation.
//
// The zero InputRequest is invalid. An InputRequest is immutable and safe
// for concurrent use; its accessors return copies.
type InputRequest struct {
	prompt []byte
	schema Schema
	state  []byte
	stamp  callStamp
}

// NewInputRequest validates and copies config. The prompt must be one
// RFC 7493 JSON document, the response schema Valid, and the state, when
// given, one RFC 7493 document; each at most [MaxInputBytes], as given and
// once encoded. Errors wrap [ErrInvalidInputRequest]. The result carries no
// stamp until it is returned through [Binding.Call].
//
// The prompt and state are kept in the form MarshalJSON writes: compact,
// with member order and number text as given, and strings escaped as
// encoding/json escapes them (so the output of encoding/json.Marshal is
// kept byte for byte). A tool therefore reads back the same bytes in
// process and after any round trip through storage.
func NewInputRequest(config InputRequestConfig) (InputRequest, error) {
	prompt, err := encodeDocument("prompt", config.Prompt, true)
	if err != nil {
		return InputRequest{}, err
	}
	if !config.ResponseSchema.Valid() {
		return InputRequest{}, errorf("%w: the response schema is the zero Schema", ErrInvalidInputRequest)
	}
	schema, err := jsontext.AppendFormat(nil, config.ResponseSchema.s.canonical, wireOptions)
	if err != nil {
		return InputRequest{}, errorf("%w: the response schema cannot be encoded: %v", ErrInvalidInputRequest, err)
	}
	if len(schema) > MaxInputBytes {
		return InputRequest{}, errorf("%w: the response schema is %d bytes once encoded, more than the limit of %d", ErrInvalidInputRequest, len(schema), MaxInputBytes)
	}
	state, err := encodeDocument("state", config.ContinuationState, false)
	if err != nil {
		return InputRequest{}, err
	}
	return InputRequest{prompt: prompt, schema: config.ResponseSchema, state: state}, nil
}

// maxEncodedInputRequest bounds the encoded form of an [InputRequest]: the
// prompt, response schema, state and idempotency key, each at most
// [MaxInputBytes] once encoded, and room for the rest of the stamp.
const maxEncodedInputRequest = 4*MaxInputBytes + 1<<10

// encodeDocument checks doc and returns a copy in wire form, or nil when
// doc is empty and not required.
func encodeDocument(what string, doc []byte, required bool) ([]byte, error) {
	if len(doc) == 0 {
		if required {
			return nil, errorf("%w: the %s is required", ErrInvalidInputRequest, what)
		}
		return nil, nil
	}
	if len(doc) > MaxInputBytes {
		return nil, errorf("%w: the %s is %d bytes, more than the limit of %d", ErrInvalidInputRequest, what, len(doc), MaxInputBytes)
	}
	if _, err := strictjson.Parse(doc); err != nil {
		return nil, errorf("%w: the %s is not one I-JSON document: %v", ErrInvalidInputRequest, what, err)
	}
	encoded, err := jsontext.AppendFormat(nil, doc, wireOptions)
	if err != nil {
		return nil, errorf("%w: the %s cannot be encoded: %v", ErrInvalidInputRequest, what, err)
	}
	if len(encoded) > MaxInputBytes {
		return nil, errorf("%w: the %s is %d bytes once encoded, more than the limit of %d", ErrInvalidInputRequest, what, len(encoded), MaxInputBytes)
	}
	return encoded, nil
}

// Prompt returns a copy of the prompt.
func (r InputRequest) Prompt() json.RawMessage { return bytes.Clone(r.prompt) }

// ResponseSchema returns the schema an answer must satisfy.
func (r InputRequest) ResponseSchema() Schema { return r.schema }

// State returns a copy of the tool's checkpoint state, or nil.
func (r InputRequest) State() json.RawMessage { return bytes.Clone(r.state) }

// Valid reports whether r has a prompt and a response schema. The zero
// [InputRequest] is not valid.
func (r InputRequest) Valid() bool { return len(r.prompt) > 0 && r.schema.Valid() }

func (r InputRequest) clone() InputRequest {
	r.prompt = bytes.Clone(r.prompt)
	r.state = bytes.Clone(r.state)
	return r
}

type inputRequestWire struct {
	Prompt         jsontext.Value `json:"prompt"`
	ResponseSchema jsontext.Value `json:"response_schema"`
	State          jsontext.Value `json:"state,omitzero"`
	Call           *callWire      `json:"call,omitzero"`
}

type callWire struct {
	Tool            string `json:"tool" jsonschema:"pattern=^[A-Za-z0-9_-]{1\\,64}$"`
	ContractSHA256  string `json:"contract_sha256"`
	ArgumentsSHA256 string `json:"arguments_sha256"`
	IdempotencyKey  string `json:"idempotency_key,omitzero"`
}

// inputRequestModel describes the wire form to schema reflection.
type inputRequestModel struct {
	Prompt         any        `json:"prompt"`
	ResponseSchema any        `json:"response_schema" jsonschema:"oneof_type=object;boolean"`
	State          any        `json:"state,omitempty"`
	Call           *callModel `json:"call,omitempty"`
}

type callModel struct {
	Tool            string `json:"tool" jsonschema:"pattern=^[A-Za-z0-9_-]{1\\,64}$"`
	ContractSHA256  string `json:"contract_sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
	ArgumentsSHA256 string `json:"arguments_sha256" jsonschema:"pattern=^[0-9a-f]{64}$"`
	IdempotencyKey  string `json:"idempotency_key,omitempty"`
}

// JSONSchemaModel returns a value whose Go type describes the wire form of
// an [InputRequest], for [SchemaFor] and typed tools.
func (InputRequest) JSONSchemaModel() any { return inputRequestModel{} }

// MarshalJSON encodes the checkpoint form described in "Suspending a call"
// in the package documentation: prompt, response schema, state and call
// stamp. The output is compact and escaped as encoding/json escapes, so
// encoding/json.Marshal writes exactly these bytes. Encoding a request
// decoded from this output gives the same bytes again. The zero
// [InputRequest] is an error wrapping [ErrInvalidInputRequest].
func (r InputRequest) MarshalJSON() ([]byte, error) {
	if !r.Valid() {
		return nil, errorf("%w: the zero InputRequest has no wire form", ErrInvalidInputRequest)
	}
	w := inputRequestWire{
		Prompt:         r.prompt,
		ResponseSchema: r.schema.s.canonical,
		State:          r.state,
	}
	if r.stamp.set {
		w.Call = &callWire{
			Tool:            r.stamp.tool,
			ContractSHA256:  hex.EncodeToString(r.stamp.contract[:]),
			ArgumentsSHA256: hex.EncodeToString(r.stamp.arguments[:]),
			IdempotencyKey:  string(r.stamp.key),
		}
	}
	out, err := jsonv2.Marshal(w, wireOptions)
	if err != nil {
		return nil, errorf("%w: %v", ErrInvalidInputRequest, err)
	}
	if len(out) > maxEncodedInputRequest {
		return nil, errorf("%w: the encoded request is %d bytes, more than the limit of %d", ErrInvalidInputRequest, len(out), maxEncodedInputRequest)
	}
	return out, nil
}

// UnmarshalJSON decodes the checkpoint form strictly. Input longer than
// MarshalJSON ever writes, anything but one RFC 7493 object, unknown or
// duplicate members, a missing prompt or schema, a schema that does not
// compile, a prompt or state [NewInputRequest] would refuse, and a malformed
// stamp are errors wrapping [ErrInvalidInputRequest]. Whitespace, string
// escapes and member order are free: the decoded request holds the bytes
// NewInputRequest would. On error r is left unchanged.
func (r *InputRequest) UnmarshalJSON(data []byte) error {
	if len(data) > maxEncodedInputRequest {
		return errorf("%w: the encoded request is %d bytes, more than the limit of %d", ErrInvalidInputRequest, len(data), maxEncodedInputRequest)
	}
	if _, err := strictjson.Parse(data); err != nil {
		return errorf("%w: not one I-JSON document: %v", ErrInvalidInputRequest, err)
	}
	var w inputRequestWire
	if err := jsonv2.Unmarshal(data, &w, jsonv2.RejectUnknownMembers(true)); err != nil {
		return errorf("%w: %v", ErrInvalidInputRequest, err)
	}
	if len(w.ResponseSchema) == 0 {
		return errorf("%w: the response schema is required", ErrInvalidInputRequest)
	}
	schema, err := ParseSchema(w.ResponseSchema)
	if err != nil {
		return errorf("%w: %w", ErrInvalidInputRequest, err)
	}
	decoded, err := NewInputRequest(InputRequestConfig{Prompt: json.RawMessage(w.Prompt), ResponseSchema: schema, ContinuationState: json.RawMessage(w.State)})
	if err != nil {
		return err
	}
	if w.Call != nil {
		stamp := callStamp{set: true, tool: w.Call.Tool, key: IdempotencyKey(w.Call.IdempotencyKey)}
		if validateName(stamp.tool) != nil {
			return errorf("%w: call stamp: %q is not a tool name", ErrInvalidInputRequest, stamp.tool)
		}
		if !decodeDigest(w.Call.ContractSHA256, &stamp.contract) || !decodeDigest(w.Call.ArgumentsSHA256, &stamp.arguments) {
			return errorf("%w: call stamp digests must be 64 lowercase hexadecimal digits", ErrInvalidInputRequest)
		}
		decoded.stamp = stamp
	}
	*r = decoded
	return nil
}

// decodeDigest parses 64 lowercase hex digits, the only form MarshalJSON
// writes, so that a stamp has exactly one spelling.
func decodeDigest(s string, dst *[sha256.Size]byte) bool {
	if len(s) != hex.EncodedLen(sha256.Size) || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.Decode(dst[:], []byte(s))
	return err == nil
}
