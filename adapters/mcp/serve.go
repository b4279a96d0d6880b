package toolmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/dispatch"
	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Config is what AddTools needs to serve a registry's tools. AddTools
// copies what it keeps of it. The zero Config is refused: it names no
// registry. A Dispatch of a registry alone serves every tool that does
// not ask a person (one that asks gets an isError result of an unknown
// outcome); a Store and seal keys, together, serve those that do.
//
// Several server instances behind a load balancer must share two things:
// the same Dispatch.SealKeys (a retry may reach any instance, which must
// open the request state) and one Dispatch.Store that all of them reach
// (the claim that makes each request state answerable once). A
// dispatch.MemoryStore is right for one instance only: with two, a state
// claimed on one could be answered again on the other.
type Config struct {
	// Dispatch configures the dispatch.Dispatcher that runs every call:
	// the registry whose tools are served (required), the keys that seal
	// the request state of a suspended call (with a Store, for tools
	// that ask a person; every server instance that may receive a
	// client's retry needs the same keys),
	// the idempotency keys, the logger and the per-call deadline
	// (CallTimeout: a call whose tool has not returned by then gets the
	// isError result of an unknown outcome, while the tool, which
	// ignored its context, runs on in its own goroutine). MaxConcurrency
	// is not used: the MCP server runs each tools/call on its own.
	Dispatch dispatch.Config
	// Principal, when not nil, names who the client acts for (a user ID
	// or a tenant from the request's authentication, say), for each
	// request: a call that suspends is sealed with it, and its retry is
	// accepted only from a request with the same principal. An error
	// refuses the request with a JSON-RPC error. nil: calls name no
	// principal, and any client holding the request state may answer.
	Principal func(ctx context.Context, req *mcp.CallToolRequest) (string, error)
	// Tools holds per-tool choices that a tool.Definition does not
	// express, by tool name. A tool without an entry gets the zero
	// ToolOptions. A name that is not in the registry is an error.
	Tools map[string]ToolOptions
	// TraceContext, when its Extract is set, reads the trace context of
	// each tools/call request from its _meta, so that the call's spans
	// join the client's trace. See TraceContext.
	TraceContext TraceContext
}

// ToolOptions are the choices for one served tool that its Definition
// does not carry.
type ToolOptions struct {
	// Title is the human-readable name clients display; empty leaves it
	// out and clients show the tool's name.
	Title string
	// ClosedWorld declares that the tool reaches nothing beyond its own
	// domain (openWorldHint false). The zero value announces an open
	// world, MCP's own default, explicitly.
	ClosedWorld bool
	// Additive declares that a tool which is not tool.EffectSafe only adds
	// and never destroys (destructiveHint false). The zero value announces
	// it as destructive, MCP's default, explicitly.
	Additive bool
	// ResponseSchemas lists every schema the tool may ask a person to
	// answer with a tool.InputRequest. Each must fit MCP's elicitation
	// form (a flat object of primitives, enums and multi-select arrays);
	// AddTools refuses the configuration otherwise, so that a tool that
	// could never be continued over MCP is found before it is served.
	ResponseSchemas []tool.Schema
}

// OutcomeMetaKey is the key, in the _meta of an isError tools/call result,
// under which AddTools writes the kind of the call's outcome ("failed",
// "rejected" or "unknown": the dispatch.Kind), and from which Import reads
// it back. MCP's isError alone cannot tell a definite failure from a call
// that may have had its effect.
const OutcomeMetaKey = "com.github.agentcontract.tool/outcome"

// The versions of MCP that matter here: multi-round-trip requests and
// output of any JSON type (SEP-2322, SEP-2106) arrived in this revision.
const multiRoundTripVersion = "2026-07-28"

// inputID names the one input request of a suspended call.
const inputID = "input"

// maxLegacyRounds bounds how many questions one call may ask a client that
// predates multi-round-trip requests, as the SDK bounds a modern client's
// retries.
const maxLegacyRounds = 10

// AddTools adds every tool of config.Dispatch.Registry to server, each with
// a handler that runs the call through a dispatch.Dispatcher built from
// config.Dispatch, and installs a receiving middleware on server that
// adapts tools/list to the client's protocol version. Call it once per
// server.
//
// The tools served are the registry's definitions when AddTools runs;
// a tool registered later is not listed, and a tool that is gone from the
// registry by the time it is called answers as unknown.
//
// # What the client sees
//
// The arguments reach tool.Contract.Prepare as the exact JSON text the
// client sent: duplicate member names, invalid UTF-8 and number text are
// judged by the contract, not smoothed over by a decode and re-encode.
// The tool's Effect becomes the annotations, each hint written out:
// tool.EffectSafe is readOnlyHint true (and idempotentHint true,
// destructiveHint false); tool.EffectIdempotent is readOnlyHint false,
// idempotentHint true; no effect is readOnlyHint false, idempotentHint
// false; destructiveHint and openWorldHint follow ToolOptions. A
// Definition's OutputSchema is the tool's outputSchema. A client older than
// MCP 2026-07-28, where structured output must be an object, is shown an
// output schema that does not describe objects wrapped as the one member,
// "result", of an object, and receives {"result": output} as
// structuredContent — unless the schema uses references or declares its
// own identity or dialect, which would not survive the move; that client is
// then shown no output schema and gets the output as text only.
//
// Outcomes (see dispatch.Outcome) become results:
//   - completed: the Output's blocks as content (text, image, audio,
//     resource, resource link), the Details as structuredContent and, as
//     MCP asks, once more as a text block;
//   - failed, rejected and unknown: isError results whose content is the
//     public text only — a Failure's Output, an InputRejection's message,
//     or the fixed sentence of an unknown outcome — never the private error;
//   - unknown tool: a JSON-RPC error (invalid params);
//   - the isError results of these three outcomes carry the outcome's
//     kind, dispatch.KindFailed, KindRejected or KindUnknown, in their
//     _meta under OutcomeMetaKey, so that an importing bridge (Import)
//     keeps an unknown outcome unknown and a rejection model-correctable;
//   - suspended: see below.
//
// Progress the tool reports is sent as notifications/progress with the
// client's progress token, when it gave one. A client's cancellation
// (notifications/cancelled) cancels the ctx of the call; over streamable
// HTTP wrapped with HTTPHandler, so does a dropped connection, and on a
// stateless handler the end of the HTTP request with the handler options
// below. A Dispatch.CallTimeout bounds how long a call may take.
//
// # Retries of a first call
//
// A client that wants a first tools/call deduplicated sends its own key
// for the call in the request's _meta under IdempotencyMetaKey; the call
// runs under a key derived from it and the request's principal
// (IdempotencyKeyFor). With a Dispatch.Store, a retry under the same key
// (after a dropped connection, say) gets the first attempt's outcome and
// does not run the tool again; an attempt whose outcome is unknown is
// reconciled before anything runs again (dispatch's "Exactly once"). A
// call without a key is a new call every time: a retried first call runs
// the tool again. docs/exactly-once.md has the fault table.
//
// # Suspension
//
// A tool.InputRequest becomes an input-required result (MCP 2026-07-28,
// multi-round-trip requests): one elicitation form whose message is the
// prompt (its text when the prompt is a JSON string, else its JSON) and
// whose schema is the response schema, and a requestState that is the
// sealed dispatch.Checkpoint, encrypted (AES-256-GCM under a key derived
// from the seal key), as MCP asks of servers: the client can neither read
// the tool's state nor change a byte of it. The client retries the call
// with the person's answer and the state; the retry is
// dispatch.Dispatcher.Resume, so any server instance holding the seal keys
// continues the call, after any restart, and a state that was edited,
// forged or issued under other keys is refused with a JSON-RPC error
// (invalid params) before anything runs. The retry's arguments are not
// read: the state carries the call.
//
// Every retry claims the request state in Dispatch.Store before anything
// runs (dispatch.Dispatcher.Resume documents the order of the checks), so
// a state is answered once, in any session and on any instance sharing
// the store: the same answer resent gets the first outcome again, without
// running the tool; another answer, an answer after a decline, an expired
// state, and an answer from another principal (Config.Principal) are
// refused with a JSON-RPC error (invalid params) naming the reason. The
// refusal of another principal's answer names no principal, neither the
// one the call was made for nor the one the request was taken for; the
// server's log (Dispatch.Logger) has the detail.
//
// The answer: accept continues the tool with the form's content as its
// answer (a content that breaks the response schema is a JSON-RPC error,
// and does not use up the state: the person may correct it). Over
// streamable HTTP wrapped with HTTPHandler the content is the exact JSON
// text the client sent; elsewhere it is the SDK's decoded content, and
// HTTPHandler says what is lost there and what the bridge refuses. Decline is
// final: the state is claimed, the tool sees nothing more of the call, and
// the client gets the isError result of dispatch.Dispatcher.Decline ("The
// person declined the call to …"). Cancel (the request dismissed without
// a choice) is not a claim: the tool is not continued, the client gets an
// isError result saying that the person dismissed the request, and the
// same state may still be answered until it expires. A tool that wants to
// act on a refusal puts the choice in its form (an "approve" boolean,
// say).
//
// A client older than 2026-07-28 cannot retry with answers: the SDK asks it
// with a server-initiated elicitation/create and runs the handler once more
// with the answer; further questions of the same call are asked the same
// way, at most ten.
//
// A client of any version that declared no elicitation capability (or
// URL elicitation only) is not sent the request: its capabilities are read
// for each call, from the request's _meta for a 2026-07-28 client and
// from initialize for an older one, and it gets an isError result saying
// that the tool needs an answer from a person, which this client cannot
// ask for. The call ends there: its checkpoint is not sealed, sent or
// recorded, so there is nothing to answer later and nothing to claim; the
// tool sees no more of the call, and the model learns from the result that
// the call did not go through. (Leaving the checkpoint pending for a
// person to answer on another channel would leave the model without the
// outcome when the answer comes; a deployment that wants that routes such
// tools to that channel, not to this client.)
//
// # The HTTP handler these promises assume
//
// Over streamable HTTP, serve with mcp.NewStreamableHTTPHandler wrapped in
// HTTPHandler (the exact bytes of an answer, and a dropped connection
// cancelling the call), and choose its StreamableHTTPOptions by what the
// clients need:
//   - multi-round-trip requests (2026-07-28) and sealed request state:
//     the SDK offers protocol 2026-07-28 only on a stateless handler
//     (Stateless true); a stateful one negotiates an older version, and
//     calls that suspend are continued by server-initiated elicitation
//     instead;
//   - cancellation: on a stateless handler, set
//     PropagateRequestCancellation as well, so that the end of the HTTP
//     request (the client gave up) ends the call's ctx; on a stateful one,
//     notifications/cancelled and HTTPHandler do it;
//   - server-initiated elicitation (clients before 2026-07-28) needs a
//     stateful handler (Stateless false): a stateless one cannot send
//     requests to the client, and such clients are then told the tool
//     needs an answer they cannot give.
//
// The example command agentloop-mcp serves both ways (-http, and -http
// with -stateless).
//
// Errors wrap ErrInvalidConfig: a nil server, a Dispatch configuration
// dispatch.New refuses (no registry, a Store without seal keys or seal
// keys without a Store), a Tools entry
// for a tool the registry lacks, and response schemas outside the
// elicitation form (every problem listed).
func AddTools(server *mcp.Server, config Config) error {
	if server == nil {
		return errprefix.Errorf("%w: the server is nil", ErrInvalidConfig)
	}
	d, err := dispatch.New(config.Dispatch)
	if err != nil {
		return wrap(ErrInvalidConfig, err)
	}
	box, err := newStateBox(config.Dispatch.SealKeys)
	if err != nil {
		return wrap(ErrInvalidConfig, err)
	}
	defs := config.Dispatch.Registry.Definitions()
	b := &bridge{d: d, box: box, logger: config.Dispatch.Logger, principal: config.Principal, trace: config.TraceContext, tools: make(map[string]servedTool, len(defs))}
	var problems []string
	for _, def := range defs {
		opts := config.Tools[def.Name]
		st := servedTool{objectOutput: len(def.OutputSchema) == 0 || describesObjects(def.OutputSchema), forms: map[string]bool{}}
		if !st.objectOutput {
			st.wrappedOutput = wrapOutputSchema(def.OutputSchema)
		}
		for i, s := range opts.ResponseSchemas {
			if !s.Valid() {
				problems = append(problems, fmt.Sprintf("tool %q: response schema %d is the zero Schema", def.Name, i))
				continue
			}
			if err := checkElicitation(s.JSON()); err != nil {
				problems = append(problems, fmt.Sprintf("tool %q: response schema %d is not an elicitation form: %v", def.Name, i, err))
				continue
			}
			st.forms[string(s.JSON())] = true
		}
		b.tools[def.Name] = st
	}
	for _, name := range slices.Sorted(maps.Keys(config.Tools)) {
		if _, ok := b.tools[name]; !ok {
			problems = append(problems, fmt.Sprintf("tool %q has options but is not in the registry", name))
		}
	}
	if len(problems) > 0 {
		return errprefix.Errorf("%w: %s", ErrInvalidConfig, strings.Join(problems, "; "))
	}
	for _, def := range defs {
		server.AddTool(mcpTool(def, config.Tools[def.Name]), b.handle)
	}
	server.AddReceivingMiddleware(b.listForVersion)
	return nil
}

// servedTool is what the handler needs to know about a tool beyond its
// definition.
type servedTool struct {
	// objectOutput: the output schema, if any, describes objects only,
	// which every protocol version accepts.
	objectOutput bool
	// wrappedOutput, for an output schema that does not describe objects,
	// is the schema older clients are shown instead: an object whose one
	// member "result" holds the output. Nil when the schema cannot be
	// wrapped; older clients are then shown none.
	wrappedOutput json.RawMessage
	// forms holds the canonical JSON of the declared response schemas.
	forms map[string]bool
}

// wrapOutputSchema wraps an output schema as the one member, "result", of
// an object, for clients before 2026-07-28, whose protocol requires
// structured output to be an object. A schema that refers to itself or
// declares its own identity or dialect ($ref, $dynamicRef, $id, $anchor,
// $dynamicAnchor, $schema) would change meaning one level down, so it is
// not wrapped (nil): those clients are shown no output schema and receive
// the output as text only.
func wrapOutputSchema(schema json.RawMessage) json.RawMessage {
	for _, k := range []string{`"$ref"`, `"$dynamicRef"`, `"$id"`, `"$anchor"`, `"$dynamicAnchor"`, `"$schema"`, `"$recursiveRef"`, `"$recursiveAnchor"`} {
		if bytes.Contains(schema, []byte(k)) {
			return nil
		}
	}
	return json.RawMessage(`{"type":"object","properties":{"result":` + string(schema) + `},"required":["result"]}`)
}

// bridge serves the tools of one AddTools call. It is immutable after
// AddTools and safe for concurrent use.
type bridge struct {
	d         *dispatch.Dispatcher
	box       *stateBox
	logger    *slog.Logger
	principal func(context.Context, *mcp.CallToolRequest) (string, error)
	trace     TraceContext
	tools     map[string]servedTool
}

// errNoPrincipal is the message of the protocol error principalOf answers
// when Config.Principal fails; its error stays private.
var errNoPrincipal = errprefix.New("the request's principal could not be established")

// principalOf names who req acts for, or "" without Config.Principal.
func (b *bridge) principalOf(ctx context.Context, req *mcp.CallToolRequest) (string, error) {
	if b.principal == nil {
		return "", nil
	}
	p, err := b.principal(ctx, req)
	if err != nil {
		return "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: errNoPrincipal.Error()}
	}
	return p, nil
}

func mcpTool(def tool.Definition, opts ToolOptions) *mcp.Tool {
	t := &mcp.Tool{
		Name:        def.Name,
		Title:       opts.Title,
		Description: def.Description,
		InputSchema: json.RawMessage(def.InputSchema),
		Annotations: annotations(def.Effect, opts),
	}
	if len(def.OutputSchema) > 0 {
		t.OutputSchema = json.RawMessage(def.OutputSchema)
	}
	return t
}

// annotations writes every hint out, so that no client falls back on MCP's
// defaults (destructive, open world) by omission.
func annotations(effect tool.Effect, opts ToolOptions) *mcp.ToolAnnotations {
	a := &mcp.ToolAnnotations{
		Title:           opts.Title,
		ReadOnlyHint:    effect == tool.EffectSafe,
		IdempotentHint:  effect.Replayable(),
		DestructiveHint: ptr(effect != tool.EffectSafe && !opts.Additive),
		OpenWorldHint:   ptr(!opts.ClosedWorld),
	}
	return a
}

func ptr[T any](v T) *T { return &v }

// handle is the mcp.ToolHandler of every served tool.
func (b *bridge) handle(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx, release := withRequest(ctx, req)
	defer release()
	ctx = b.trace.extract(ctx, req.Params.GetMeta())
	progress := progressSink(req)
	principal, err := b.principalOf(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.Params.RequestState != "" || req.Params.InputResponses != nil {
		return b.resume(ctx, req, principal, progress)
	}
	key, err := clientKey(req.Params.GetMeta(), principal)
	if err != nil {
		return nil, invalidParams(err)
	}
	o := b.d.Run(ctx, dispatch.Call{
		Request:        tool.Request{Name: req.Params.Name, Arguments: string(req.Params.Arguments)},
		IdempotencyKey: key,
		Principal:      principal,
		Progress:       progress,
	})
	return b.result(ctx, req, o)
}

// result maps an Outcome to what the client receives.
func (b *bridge) result(ctx context.Context, req *mcp.CallToolRequest, o dispatch.Outcome) (*mcp.CallToolResult, error) {
	switch o.Kind {
	case dispatch.KindUnknownTool:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: o.Text()}
	case dispatch.KindSuspended:
		return b.suspend(ctx, req, o)
	}
	res := &mcp.CallToolResult{Content: contentOf(o.Output), IsError: o.IsError}
	if o.IsError {
		res.Meta = mcp.Meta{OutcomeMetaKey: string(o.Kind)}
	}
	if o.Kind == dispatch.KindCompleted && len(o.Output.Details) > 0 {
		switch {
		case !legacy(req.Session) || isObject(o.Output.Details):
			res.StructuredContent = json.RawMessage(o.Output.Details)
		case b.tools[o.Tool].wrappedOutput != nil:
			res.StructuredContent = json.RawMessage(`{"result":` + string(o.Output.Details) + `}`)
		}
	}
	return res, nil
}

// suspend turns a suspended Outcome into an input-required result.
func (b *bridge) suspend(ctx context.Context, req *mcp.CallToolRequest, o dispatch.Outcome) (*mcp.CallToolResult, error) {
	params, res := b.form(ctx, req, o)
	if res != nil {
		return res, nil
	}
	state, err := o.Checkpoint.MarshalJSON()
	if err != nil {
		return b.notContinued(ctx, o, "could not be suspended", err), nil
	}
	return &mcp.CallToolResult{
		// An empty content, not null: clients validate it as an array.
		Content:       []mcp.Content{},
		InputRequests: mcp.InputRequestMap{inputID: params},
		RequestState:  b.box.seal(state),
	}, nil
}

// form builds the elicitation of a suspended Outcome, or the isError result
// to send instead when the request cannot be put to this client.
func (b *bridge) form(ctx context.Context, req *mcp.CallToolRequest, o dispatch.Outcome) (*mcp.ElicitParams, *mcp.CallToolResult) {
	ir := o.Checkpoint.InputRequest()
	schema := ir.ResponseSchema().JSON()
	if !b.tools[o.Tool].forms[string(schema)] {
		if err := checkElicitation(schema); err != nil {
			return nil, b.notContinued(ctx, o, "asked for input in a form MCP cannot carry", err)
		}
	}
	if !canElicit(req) {
		return nil, b.notContinued(ctx, o, "needs an answer from a person, which this client cannot ask for", nil)
	}
	return &mcp.ElicitParams{Mode: "form", Message: promptText(ir.Prompt()), RequestedSchema: json.RawMessage(schema)}, nil
}

// notContinued is the isError result for a suspended call that cannot be
// continued over this connection; the reason is logged.
func (b *bridge) notContinued(ctx context.Context, o dispatch.Outcome, why string, cause error) *mcp.CallToolResult {
	if b.logger != nil {
		b.logger.WarnContext(ctx, "tool call not continued", "tool", o.Tool, "idempotency_key", string(o.IdempotencyKey), "reason", why, "error", cause)
	}
	text := fmt.Sprintf("The tool %s %s; the call was not continued.", o.Tool, why)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

func invalidParams(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}

// promptText is the elicitation message for a prompt: the text of a JSON
// string, or the JSON itself.
func promptText(prompt json.RawMessage) string {
	var s string
	if json.Unmarshal(prompt, &s) == nil {
		return s
	}
	return string(prompt)
}

func progressSink(req *mcp.CallToolRequest) tool.ProgressReporter {
	token := req.Params.GetProgressToken()
	if token == nil {
		return nil
	}
	return tool.ProgressReporterFunc(func(ctx context.Context, p tool.Progress) error {
		return req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: token,
			Progress:      p.Completed,
			Total:         p.Total,
			Message:       p.Message,
		})
	})
}

// legacy reports whether the session speaks a protocol version before
// multi-round-trip requests and output of any JSON type. A session without
// initialize parameters is a stateless modern one.
func legacy(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	p := ss.InitializeParams()
	return p != nil && p.ProtocolVersion < multiRoundTripVersion
}

// canElicit reports whether the client that sent req can put a form to a
// person: its capabilities, read per request for a 2026-07-28 client (from
// the request's _meta) and per session for an older one, declare
// elicitation with forms (an empty elicitation capability means forms).
func canElicit(req *mcp.CallToolRequest) bool {
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// listForVersion shows a client older than 2026-07-28, whose protocol
// requires object output, the wrapped form of each output schema that does
// not describe objects, or none (see wrapOutputSchema).
func (b *bridge) listForVersion(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		list, ok := res.(*mcp.ListToolsResult)
		if !ok || !legacy(ss) {
			return res, err
		}
		adapted := *list
		adapted.Tools = make([]*mcp.Tool, len(list.Tools))
		for i, t := range list.Tools {
			if st, ours := b.tools[t.Name]; ours && !st.objectOutput {
				c := *t
				c.OutputSchema = nil
				if st.wrappedOutput != nil {
					c.OutputSchema = st.wrappedOutput
				}
				t = &c
			}
			adapted.Tools[i] = t
		}
		return &adapted, nil
	}
}

// describesObjects reports whether schema has "type":"object" at its root,
// the only output schema a client before 2026-07-28 accepts.
func describesObjects(schema []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(schema, &m) != nil {
		return false
	}
	return string(m["type"]) == `"object"`
}

// isObject reports whether value is a JSON object.
func isObject(value []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(value, &m) == nil && m != nil
}
