package toolmcp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ImportConfig is what [Import] may trust about a remote server, and how
// much it may read from it.
//
// The limits (MaxPages to CallTimeout) bound what a remote server can make
// Import and the imported tools read, hold, wait for and do, each checked
// before the cost it bounds is paid. A zero limit means its documented
// default (the Default constants of this package): the zero ImportConfig
// is safe. [NoLimit] turns a limit off; another negative value is refused
// with an error wrapping [ErrInvalidConfig]. The bytes of one message, the
// events of a stream and the elicitations of a call are bounded by the
// session, which [Connect] makes bounded: see UnboundedSession.
type ImportConfig struct {
	// TrustAnnotations derives each tool's Effect from the server's
	// annotations: readOnlyHint true gives tool.EffectSafe, otherwise
	// idempotentHint true gives tool.EffectIdempotent. MCP says
	// annotations are untrusted, and an Effect decides whether a runtime
	// retries a call of unknown outcome; so by default (false) every
	// imported tool has the zero Effect: no replay promise.
	TrustAnnotations bool
	// Progress, when not nil, relays the server's progress notifications to
	// the calls of the imported tools; see ProgressRelay. nil sends no
	// progress token.
	Progress *ProgressRelay
	// MaxPages bounds the pages of the tools/list listing: Import asks for
	// no page past it and fails with an error wrapping ErrRemoteCall (a
	// server whose every page names a next one would keep it reading
	// forever). 0 means [DefaultMaxPages] (100).
	MaxPages int
	// MaxTools bounds the tools of the listing, all pages together: Import
	// stops at the first page that passes it and fails with an error
	// wrapping ErrRemoteCall, before any tool is converted. 0 means
	// [DefaultMaxTools] (1000).
	MaxTools int
	// MaxSchemaBytes bounds the JSON of one schema the server sends: a
	// tool's input or output schema (a tool over it is refused, in
	// ImportResult.Refused) and the form of a request for input (the call
	// fails with ErrRemoteCall). The size is checked on the value the SDK
	// decoded, before it is encoded again or compiled. 0 means
	// [DefaultMaxSchemaBytes] ([tool.MaxInputBytes], the core's own bound on
	// a schema: a larger value changes nothing).
	MaxSchemaBytes int
	// MaxElicitations bounds the elicitations one call of an imported tool
	// may ask the client to answer, when the client's handler is wrapped
	// with [LimitElicitations], as [Connect] wraps it (the SDK calls the
	// handler, not Import: an unwrapped handler is not bounded). 0 means
	// [DefaultMaxElicitations] (10); NoLimit, no bound.
	MaxElicitations int
	// Timeout bounds one call of Import, the whole listing included: Import
	// runs under a context that ends after Timeout (or sooner, with ctx),
	// and fails with an error wrapping ErrRemoteCall and
	// context.DeadlineExceeded. 0 means [DefaultImportTimeout] (one
	// minute); NoLimit, no bound but ctx.
	Timeout time.Duration
	// CallTimeout bounds each call of an imported tool, every round of a
	// request for input and every elicitation it asks included: the call
	// runs under a context that ends after CallTimeout (or sooner, with
	// its ctx), and fails with an error wrapping ErrRemoteCall and
	// context.DeadlineExceeded, an unknown outcome. 0 means
	// [DefaultCallTimeout] (five minutes); NoLimit, no bound but the
	// call's ctx.
	CallTimeout time.Duration
	// UnboundedSession lets Import take a session that [Connect] did not
	// make. Such a session reads messages and event streams of any size
	// and answers any number of elicitations, unless its maker bounded
	// them ([LimitTransport], [LimitElicitations]); Import cannot tell, so
	// by default (false) it refuses the session with an error wrapping
	// ErrInvalidConfig. Set it to say that the session is bounded as its
	// maker chose, or knowingly not (the SDK's in-memory transport takes
	// no bound).
	UnboundedSession bool
	// TraceContext, when its Inject is set, writes the trace context of
	// each call of an imported tool into the _meta of its tools/call
	// request, so that the server's spans join the caller's trace. See
	// TraceContext.
	TraceContext TraceContext
}

// ImportResult is what [Import] found on the server. Its slices are the
// caller's; nothing in them is shared with another ImportResult.
type ImportResult struct {
	// Tools are the admitted tools, sorted by their local name. Bind
	// them (with any middleware) and register them like any other tool.
	Tools []*RemoteTool
	// Refused lists the remote tools that could not be admitted, each
	// with the reason, sorted by remote name. A refused tool does not stop
	// the others.
	Refused []Refusal
}

// Refusal is one remote tool that [Import] did not admit, listed in
// [ImportResult].Refused.
type Refusal struct {
	// Name is the tool's name on the remote server.
	Name string
	// Err says why; it wraps ErrRemoteTool, and the core's sentinel when
	// the core refused the tool's definition.
	Err error
}

// Import lists the tools of session's server (every page) and returns
// them as tools that call the server through session: [RemoteTool] values,
// in [ImportResult].Tools, to bind ([tool.Bind]) and register
// ([tool.Registry.Register]) like local ones.
//
// # Names
//
// A remote name that fits the core's rule (1 to 64 characters from
// A-Z a-z 0-9 _ -) is kept. Another is mapped: each other character
// becomes "_", and a name still too long is cut to 55 characters followed
// by "_" and eight hex digits of the SHA-256 of the remote name. The map is
// reversible through [RemoteTool.RemoteName], which calls use. Two remote
// tools whose local names collide are both refused, unless one of them
// kept its remote name, which then wins: no call is ever sent to a tool
// the model did not name.
//
// # Schemas
//
// The input schema (and the output schema, when advertised) becomes the
// tool's [tool.Definition] and must pass [tool.Definition.Validate]: a schema
// the core refuses — a pattern its validator cannot compile, a reference
// outside the document, a root that is not "type":"object" — refuses that
// tool only, with the reason in [ImportResult].Refused. Over streamable
// HTTP, on a session [Connect] made, the transport reads each page of the
// listing itself: the schemas are the bytes the server sent (without
// insignificant whitespace), a page with more tools than the listing may
// still hold is refused before any is built, and the SDK decodes each
// schema as {"type":"object"} (its session's copy of the listing holds
// that). Otherwise the SDK hands the schemas over decoded, so their
// numbers have passed through float64 and their members are in sorted
// order. The remote description is kept.
//
// # Tools that require tasks
//
// A remote tool whose execution.taskSupport is "required" accepts only
// task-augmented calls, which neither this package nor the SDK makes; it
// should be refused here. The SDK (v1.8.0) drops a tool's execution
// member while decoding the listing, so Import cannot see it: such a tool
// is imported, and each call of it ends as the server answers a plain
// call — an isError result, so a failed outcome with the server's text
// (server-everything's simulate-research-query does this), which nothing
// retries. Once the SDK keeps the member, such tools belong in Refused.
//
// # Limits
//
// A remote server is not trusted to be small or to stop: Import asks for at
// most [ImportConfig].MaxPages pages holding at most MaxTools tools, refuses
// a schema over MaxSchemaBytes before encoding or compiling it, and gives
// up after Timeout; each call of an imported tool gives up after
// CallTimeout. Each error names the limit and its value. The bytes of
// one page, like those of one result of an imported tool, can only be
// bounded while they are read, and the elicitations of one call only by
// the client's handler: a session made by [Connect] bounds both by
// default, and Import refuses another unless
// [ImportConfig].UnboundedSession is set.
//
// Import's own error wraps [ErrInvalidConfig] for a nil session, a session
// [Connect] did not make (see UnboundedSession) or a negative limit other
// than [NoLimit], and [ErrRemoteCall] when the tools cannot be listed
// within the limits.
func Import(ctx context.Context, session *mcp.ClientSession, config ImportConfig) (ImportResult, error) {
	if session == nil {
		return ImportResult{}, errprefix.Errorf("%w: the session is nil", ErrInvalidConfig)
	}
	limits, err := config.resolve()
	if err != nil {
		return ImportResult{}, err
	}
	if !config.UnboundedSession && !connected(session) {
		return ImportResult{}, errprefix.Errorf("%w: the session was not made by Connect, so the bytes it reads and the elicitations it answers may have no bound; make it with Connect, or set ImportConfig.UnboundedSession", ErrInvalidConfig)
	}
	if limits.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, limits.timeout, errprefix.Part("took longer than %v (ImportConfig.Timeout): %w", limits.timeout, context.DeadlineExceeded))
		defer cancel()
	}
	remote, err := listTools(ctx, session, limits)
	if err != nil {
		return ImportResult{}, errprefix.Errorf("%w: listing tools: %w", ErrRemoteCall, err)
	}
	var result ImportResult
	byName := map[string][]*RemoteTool{}
	for _, t := range remote {
		rt, err := newRemoteTool(session, t, config, limits)
		if err != nil {
			result.Refused = append(result.Refused, Refusal{Name: t.tool.Name, Err: err})
			continue
		}
		byName[rt.def.Name] = append(byName[rt.def.Name], rt)
	}
	for name, tools := range byName {
		if len(tools) > 1 {
			tools = keptNameWins(name, tools, &result)
		}
		result.Tools = append(result.Tools, tools...)
	}
	sort.Slice(result.Tools, func(i, j int) bool { return result.Tools[i].def.Name < result.Tools[j].def.Name })
	sort.Slice(result.Refused, func(i, j int) bool { return result.Refused[i].Name < result.Refused[j].Name })
	return result, nil
}

// listed is a tool of the listing, and the schemas the transport read for
// it as the server sent them (nil when the SDK's decoded ones are all
// there is).
type listed struct {
	tool *mcp.Tool
	raw  *rawSchemas
}

// listTools reads the listing page by page, within the limits on pages
// and tools; the first error it meets ends it. A transport Connect bounded
// reads each page itself (see listing).
func listTools(ctx context.Context, session *mcp.ClientSession, limits limits) ([]listed, error) {
	var remote []listed
	l := &listing{maxTools: limits.tools}
	ctx = context.WithValue(ctx, listingKey{}, l)
	params := &mcp.ListToolsParams{}
	for pages := 1; ; pages++ {
		l.mu.Lock()
		l.toolsLeft = limits.tools - len(remote)
		l.mu.Unlock()
		page, err := session.ListTools(ctx, params)
		raw, read, refused := l.take()
		if refused != nil {
			return nil, refused
		}
		if err != nil {
			if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
				err = errprefix.Part("after %d pages and %d tools: %w", pages-1, len(remote), cause)
			}
			return nil, err
		}
		if len(page.Tools) > limits.tools-len(remote) {
			return nil, fmt.Errorf("the server lists more than %d tools (ImportConfig.MaxTools)", limits.tools)
		}
		for i, t := range page.Tools {
			e := listed{tool: t}
			if read && len(raw) == len(page.Tools) {
				e.raw = &raw[i]
			}
			remote = append(remote, e)
		}
		if page.NextCursor == "" {
			return remote, nil
		}
		if pages == limits.pages {
			return nil, fmt.Errorf("the server lists more than %d pages (ImportConfig.MaxPages)", limits.pages)
		}
		params = &mcp.ListToolsParams{Cursor: page.NextCursor}
	}
}

// keptNameWins resolves a collision on name: the tool whose remote name is
// name stays, every mapped one is refused; without such a tool, all are.
func keptNameWins(name string, tools []*RemoteTool, result *ImportResult) []*RemoteTool {
	var kept []*RemoteTool
	var remoteNames []string
	for _, t := range tools {
		remoteNames = append(remoteNames, fmt.Sprintf("%q", t.remote))
		if t.remote == name {
			kept = append(kept, t)
		}
	}
	sort.Strings(remoteNames)
	for _, t := range tools {
		if len(kept) == 1 && kept[0] == t {
			continue
		}
		result.Refused = append(result.Refused, Refusal{Name: t.remote, Err: errprefix.Errorf("%w: the remote tools %s all map to the local name %q", ErrRemoteTool, strings.Join(remoteNames, ", "), name)})
	}
	return kept
}

// localName maps a remote tool name to one that fits the core's rule.
func localName(remote string) string {
	var b strings.Builder
	for _, r := range remote {
		if r < 0x80 && (r == '_' || r == '-' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if name == "" || len(name) > 64 {
		sum := sha256.Sum256([]byte(remote))
		name = name[:min(len(name), 55)] + "_" + hex.EncodeToString(sum[:4])
	}
	return name
}

// RemoteTool is a tool of a remote MCP server, called through a client
// session ([*mcp.ClientSession]). It implements [tool.Tool]: bind it like any
// other tool ([tool.Bind]), so that its arguments are admitted by
// [tool.Contract.Prepare] before anything is sent, and its results are
// checked against its output schema.
//
// Call sends the admitted arguments, byte for byte, as the arguments of a
// tools/call and maps the result:
//   - a result: its content becomes the Output's blocks (text; image and
//     audio as inline media; an embedded resource as inline media, as
//     text when it is text, or as media by URI when it holds neither; a
//     resource link as media by URI), and its
//     structuredContent the Output's Details; an empty text block, and a
//     text block that only repeats the structured content, are dropped;
//   - an isError result: a [*tool.Failure] of kind failed whose public
//     Output is the result's content: what the server chose to show. When
//     the result's _meta says, under [OutcomeMetaKey], that the outcome was
//     "unknown" (as [AddTools] writes it), the call's error wraps
//     [ErrRemoteCall] instead and its outcome stays unknown; when it says
//     "rejected", the error is a [*tool.InputRejection] with the result's
//     text, which the model can correct. The remote _meta is as untrusted
//     as the annotations: it is read only to make an outcome less
//     definite (unknown) or to keep a refusal model-correctable, never to
//     turn an error into a success, and whether an unknown outcome may be
//     retried is the tool's local [tool.Effect] (see [ImportConfig]), not
//     the server's;
//   - an input-required result with one elicitation form (MCP 2026-07-28; the
//     client sees one only when its own multi-round-trip handling is off,
//     [mcp.MultiRoundTripOptions] with Disabled set): a [tool.InputRequest]
//     whose prompt is the form's message, whose response schema is the form's
//     schema and whose state holds the server's request state. The runtime
//     suspends and resumes the call like any other; the resumed call retries
//     with the answer as an accepted form. With the SDK's handling on, the
//     client's [mcp.ClientOptions].ElicitationHandler answers instead, and a
//     server older than 2026-07-28 always asks that handler;
//   - a transport or protocol error, a result the core refuses (content that
//     is not a valid Output, structured content that breaks the output schema
//     — the [tool.Binding] checks that), a request for input of another kind,
//     or the end of ctx: an error wrapping [ErrRemoteCall], which [dispatch]
//     reports as an unknown outcome ([dispatch.KindUnknown]).
//
// A [tool.Block] holds either contents or a URI, never both, so the URI
// of an embedded resource that has contents (text or a blob) is not kept:
// the contents are what the model reads.
//
// Structured content and form schemas arrive decoded by the SDK: their
// numbers have passed through float64. A form's schema over
// [ImportConfig].MaxSchemaBytes, and structured content over
// [tool.MaxOutputBytes], are refused before they are encoded again; the
// bytes of a result are bounded while they are read, and the elicitations
// one call answers, by the session [Connect] made; each call ends after
// [ImportConfig].CallTimeout at the latest. A RemoteTool is immutable and safe
// for concurrent use, as the session is. The server's progress reaches the
// call's [tool.ProgressReporter] through [ImportConfig].Progress.
type RemoteTool struct {
	session  *mcp.ClientSession
	progress *ProgressRelay
	inject   func(context.Context, map[string]any)
	remote   string
	def      tool.Definition
	limits   limits
}

func newRemoteTool(session *mcp.ClientSession, l listed, config ImportConfig, limits limits) (*RemoteTool, error) {
	t := l.tool
	var raw rawSchemas
	if l.raw != nil {
		raw = *l.raw
	}
	input, err := schemaOf(raw.input, t.InputSchema, limits.schemaBytes, "the input schema")
	if err != nil {
		return nil, errprefix.Errorf("%w: %w (ImportConfig.MaxSchemaBytes)", ErrRemoteTool, err)
	}
	def := tool.Definition{Name: localName(t.Name), Description: t.Description, InputSchema: input}
	if raw.output != nil || t.OutputSchema != nil {
		if def.OutputSchema, err = schemaOf(raw.output, t.OutputSchema, limits.schemaBytes, "the output schema"); err != nil {
			return nil, errprefix.Errorf("%w: %w (ImportConfig.MaxSchemaBytes)", ErrRemoteTool, err)
		}
	}
	if config.TrustAnnotations && t.Annotations != nil {
		switch {
		case t.Annotations.ReadOnlyHint:
			def.Effect = tool.EffectSafe
		case t.Annotations.IdempotentHint:
			def.Effect = tool.EffectIdempotent
		}
	}
	if err := def.Validate(); err != nil {
		return nil, wrap(ErrRemoteTool, err)
	}
	return &RemoteTool{session: session, progress: config.Progress, inject: config.TraceContext.Inject, remote: t.Name, def: def, limits: limits}, nil
}

// schemaOf is a schema's JSON: raw, the bytes the server sent, when the
// transport kept them, or else decoded, the SDK's value, encoded. Either
// is refused past limit bytes, decoded before it is encoded.
func schemaOf(raw []byte, decoded any, limit int, what string) ([]byte, error) {
	if raw == nil {
		return marshalBounded(decoded, limit, what)
	}
	if len(raw) > limit {
		return nil, fmt.Errorf("%s is more than %d bytes", what, limit)
	}
	return raw, nil
}

// RemoteName is the tool's name on the remote server.
func (t *RemoteTool) RemoteName() string { return t.remote }

// Definition returns the tool's definition: the local name, the remote
// description and schemas, and the [tool.Effect] (see [ImportConfig]). A
// copy.
func (t *RemoteTool) Definition() tool.Definition { return t.def.Clone() }

// Call calls the remote tool; see [RemoteTool]. It sends a copy of the
// invocation's arguments, retains nothing of the invocation, and returns
// an Output of its own. ctx bounds the remote call: when it ends, the SDK
// tells the server that the request was cancelled and Call returns.
func (t *RemoteTool) Call(ctx context.Context, inv tool.Invocation) (tool.Result, error) {
	if t.limits.callTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, t.limits.callTimeout, errprefix.Part("took longer than %v (ImportConfig.CallTimeout): %w", t.limits.callTimeout, context.DeadlineExceeded))
		defer cancel()
	}
	params := &mcp.CallToolParams{Name: t.remote, Arguments: json.RawMessage(inv.Arguments())}
	if c, resumed := inv.Continuation(); resumed {
		if err := answerRemote(params, c); err != nil {
			return tool.Result{}, errprefix.Errorf("%w: %s: %w", ErrRemoteCall, t.remote, err)
		}
	}
	if t.progress != nil {
		token, forget := t.progress.register(ctx)
		defer forget()
		params.SetProgressToken(token)
	}
	if t.inject != nil {
		if params.Meta == nil {
			params.Meta = mcp.Meta{}
		}
		t.inject(ctx, params.Meta)
		if len(params.Meta) == 0 {
			params.Meta = nil
		}
	}
	ctx, budget, end := startBudget(ctx, t.session, t.limits.elicitations)
	defer end()
	res, err := t.session.CallTool(ctx, params)
	if budget.over.Load() {
		return tool.Result{}, errprefix.Errorf("%w: %s: %w", ErrRemoteCall, t.remote, budget.err())
	}
	if err != nil {
		if cause := context.Cause(ctx); ctx.Err() != nil && cause != nil && !errors.Is(err, cause) {
			return tool.Result{}, errprefix.Errorf("%w: %s: %w: %w", ErrRemoteCall, t.remote, cause, err)
		}
		return tool.Result{}, errprefix.Errorf("%w: %s: %w", ErrRemoteCall, t.remote, err)
	}
	if res.NeedsInput() {
		ir, err := remoteInputRequest(res, t.limits.schemaBytes)
		if err != nil {
			return tool.Result{}, errprefix.Errorf("%w: %s asked for input: %w", ErrRemoteCall, t.remote, err)
		}
		return tool.Result{InputRequest: &ir}, nil
	}
	out, err := outputOf(res)
	if err != nil {
		return tool.Result{}, errprefix.Errorf("%w: %s: %w", ErrRemoteCall, t.remote, err)
	}
	if res.IsError {
		return tool.Result{}, t.remoteError(res, out)
	}
	return tool.Result{Output: out}, nil
}

var errRemoteIsError = errors.New("the remote server answered with an isError result")

// remoteError is the error of an isError result whose content is out. The
// kind the serving side wrote under OutcomeMetaKey is read only where it
// keeps a call at least as safe as a failure: "unknown" (the call may have
// had its effect) is an error wrapping ErrRemoteCall, and "rejected" (the
// arguments were refused, nothing ran) a tool.InputRejection with the
// result's text; anything else, or nothing, is a failure.
func (t *RemoteTool) remoteError(res *mcp.CallToolResult, out tool.Output) error {
	kind, _ := res.Meta[OutcomeMetaKey].(string)
	switch kind {
	case "unknown":
		return errprefix.Errorf("%w: %s: the remote server reports that the call's outcome is unknown", ErrRemoteCall, t.remote)
	case "rejected":
		var texts []string
		for _, b := range out.Content {
			if b.Kind == tool.BlockText {
				texts = append(texts, b.Text)
			}
		}
		message := strings.Join(texts, "\n")
		if message == "" {
			message = fmt.Sprintf("The tool %s refused its arguments.", t.def.Name)
		}
		r, err := tool.NewInputRejection(tool.InputRejectionConfig{Message: message, Cause: errRemoteIsError})
		if err != nil {
			return errprefix.Errorf("%w: %s: %w", ErrRemoteCall, t.remote, err)
		}
		return r
	}
	if len(out.Content) == 0 {
		out = tool.NewTextOutput(fmt.Sprintf("The tool %s reported an error.", t.def.Name))
	}
	f, err := tool.NewFailure(tool.FailureConfig{Kind: tool.FailureKindFailed, Output: out, Cause: errRemoteIsError})
	if err != nil {
		return errprefix.Errorf("%w: %s: %w", ErrRemoteCall, t.remote, err)
	}
	return f
}

// remoteState is the continuation state of a remote request for input:
// what the retry must echo.
type remoteState struct {
	RequestState string `json:"request_state"`
	InputID      string `json:"input_id"`
}

// remoteInputRequest turns an input-required result with one elicitation
// form into a [tool.InputRequest]: the form's message is the prompt, its
// schema the response schema, and the server's request state and request
// ID the continuation state.
func remoteInputRequest(res *mcp.CallToolResult, maxSchemaBytes int) (tool.InputRequest, error) {
	if len(res.InputRequests) != 1 {
		return tool.InputRequest{}, fmt.Errorf("%d input requests, want one elicitation form", len(res.InputRequests))
	}
	var id string
	var request mcp.InputRequest
	for id, request = range res.InputRequests { // the only entry
	}
	form, ok := request.(*mcp.ElicitParams)
	if !ok || form.Mode == "url" {
		return tool.InputRequest{}, fmt.Errorf("input request %q is not an elicitation form", id)
	}
	raw, err := marshalBounded(form.RequestedSchema, maxSchemaBytes, "the form's schema")
	if err != nil {
		return tool.InputRequest{}, errprefix.Errorf("%w (ImportConfig.MaxSchemaBytes)", err)
	}
	schema, err := tool.ParseSchema(raw)
	if err != nil {
		return tool.InputRequest{}, err
	}
	prompt, err := json.Marshal(form.Message)
	if err != nil {
		return tool.InputRequest{}, err
	}
	state, err := json.Marshal(remoteState{RequestState: res.RequestState, InputID: id})
	if err != nil {
		return tool.InputRequest{}, err
	}
	return tool.NewInputRequest(tool.InputRequestConfig{Prompt: prompt, ResponseSchema: schema, ContinuationState: state})
}

// answerRemote sets the retry of a remote call that asked for input: the
// person's answer as an accepted form, and the server's request state.
func answerRemote(params *mcp.CallToolParams, c tool.Continuation) error {
	var state remoteState
	if err := json.Unmarshal(c.State(), &state); err != nil {
		return errprefix.Part("continuation state: %w", err)
	}
	var content map[string]any
	if err := json.Unmarshal(c.Response(), &content); err != nil {
		return errprefix.Part("the answer is not a JSON object: %w", err)
	}
	params.InputResponses = mcp.InputResponseMap{state.InputID: &mcp.ElicitResult{Action: "accept", Content: content}}
	params.RequestState = state.RequestState
	return nil
}

// outputOf turns a result's content and structured content into a
// [tool.Output].
func outputOf(res *mcp.CallToolResult) (tool.Output, error) {
	var out tool.Output
	if res.StructuredContent != nil {
		details, err := marshalBounded(res.StructuredContent, tool.MaxOutputBytes, "the structured content")
		if err != nil {
			return tool.Output{}, errprefix.Errorf("%w (tool.MaxOutputBytes)", err)
		}
		out.Details = details
	}
	for _, c := range res.Content {
		b, err := contentBlock(c)
		if err != nil {
			return tool.Output{}, err
		}
		if b.Kind == "" || b.Kind == tool.BlockText && out.Details != nil && sameJSON(b.Text, out.Details) {
			continue
		}
		out.Content = append(out.Content, b)
	}
	if err := out.Validate(); err != nil {
		return tool.Output{}, err
	}
	return out, nil
}

func contentBlock(c mcp.Content) (tool.Block, error) {
	switch c := c.(type) {
	case *mcp.TextContent:
		if c.Text == "" {
			return tool.Block{}, nil
		}
		return tool.NewTextBlock(c.Text), nil
	case *mcp.ImageContent:
		return tool.NewMediaBlock(c.MIMEType, c.Data), nil
	case *mcp.AudioContent:
		return tool.NewMediaBlock(c.MIMEType, c.Data), nil
	case *mcp.ResourceLink:
		return tool.NewMediaURIBlock(orOctets(c.MIMEType), c.URI), nil
	case *mcp.EmbeddedResource:
		if c.Resource == nil {
			return tool.Block{}, errors.New("an embedded resource without contents")
		}
		if c.Resource.Blob == nil {
			if c.Resource.Text == "" {
				if c.Resource.URI == "" {
					return tool.Block{}, nil
				}
				// No contents to embed: the URI is all there is.
				return tool.NewMediaURIBlock(orOctets(c.Resource.MIMEType), c.Resource.URI), nil
			}
			return tool.NewTextBlock(c.Resource.Text), nil
		}
		return tool.NewMediaBlock(orOctets(c.Resource.MIMEType), c.Resource.Blob), nil
	default:
		return tool.Block{}, fmt.Errorf("content of type %T is not a tool result", c)
	}
}

func orOctets(mediaType string) string {
	if mediaType == "" {
		return "application/octet-stream"
	}
	return mediaType
}

// sameJSON reports whether text is a JSON document equal to value, up to
// whitespace and member order.
func sameJSON(text string, value []byte) bool {
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil || json.Unmarshal(value, &b) != nil {
		return false
	}
	return reflect.DeepEqual(a, b)
}
