package toolmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentcontract/tool"
	"github.com/agentcontract/tool/internal/errprefix"
)

// HardenConfig configures [Harden]. The zero HardenConfig is ready to use.
type HardenConfig struct {
	// Logger receives what the client is not shown: a handler's private
	// error text, a panic and its stack, an input schema the core cannot
	// enforce. nil logs nothing.
	Logger *slog.Logger
}

// Harden installs, on a server whose tools were added with the SDK
// (mcp.AddTool, Server.AddTool) rather than with [AddTools], a receiving
// middleware that puts three of this package's promises in front of every
// tools/call:
//
//   - strict admission: the call's arguments, as the exact JSON text the
//     client sent, are admitted by [tool.Contract.Prepare] against the
//     input schema the server advertises for the tool before the SDK
//     decodes them or any handler runs. Duplicate member names, invalid
//     UTF-8, text that is not one JSON object, values that break the
//     schema, and arguments beyond the core's cost bounds
//     ([tool.MaxInputBytes], [tool.MaxValidationWork]) are refused with an
//     isError result carrying the rejection's public message, which the
//     model can act on. A tool whose schema the core cannot compile is
//     not called: its calls get an isError result saying so (and the
//     reason is logged), since admitting them unchecked would break the
//     promise silently.
//   - panic recovery: a handler that panics yields an isError result
//     saying the call failed, with the tool's name only; the panic and its
//     stack go to Logger, and the server goes on serving.
//   - public text only: a handler's error (the error a typed handler
//     returns, which the SDK would put into the result's text, or a plain
//     error from a raw handler, which it would send as a JSON-RPC error)
//     reaches the client as an isError result saying the call failed,
//     without the error's text, which is logged. A *[tool.Failure] is the
//     exception: its public Output is the result's content. JSON-RPC
//     errors the SDK itself raises (an unknown tool, say) pass unchanged.
//
// The SDK offers no public list of a server's tools, so Harden learns each
// tool's input schema from the server's own tools/list, asked through the
// middleware chain for the session of the call, and compiles it once per
// tool and schema text. Learning it there, rather than when tools are
// added, means Harden sees exactly what clients are shown — tools added
// after Harden was installed included — and needs no change where tools
// are registered. A call names a tool the listing lacks: it passes on, and
// the SDK answers as it does.
//
// Harden must be installed after any middleware that changes tools/call
// arguments, so that it judges what the handler will receive. The
// middleware is safe for concurrent use. A nil server is an error wrapping
// [ErrInvalidConfig].
func Harden(server *mcp.Server, config HardenConfig) error {
	if server == nil {
		return errprefix.Errorf("%w: the server is nil", ErrInvalidConfig)
	}
	h := &hardener{logger: config.Logger, contracts: map[string]hardenedTool{}}
	server.AddReceivingMiddleware(h.middleware)
	return nil
}

// hardener holds the contracts compiled from the advertised schemas.
type hardener struct {
	logger    *slog.Logger
	mu        sync.Mutex
	contracts map[string]hardenedTool // by tool name
}

// hardenedTool is the contract compiled from one schema text of a tool,
// or why it could not be.
type hardenedTool struct {
	schema   string
	contract tool.Contract
	err      error
}

// schemaOnly is a tool that only carries a definition, for its Contract.
type schemaOnly struct{ def tool.Definition }

func (s schemaOnly) Definition() tool.Definition { return s.def }
func (s schemaOnly) Call(context.Context, tool.Invocation) (tool.Result, error) {
	return tool.Result{}, errors.New("a contract of Harden runs nothing")
}

func (h *hardener) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Params == nil {
			return next(ctx, method, req)
		}
		name := call.Params.Name
		schema, found, err := h.schemaOf(ctx, next, call)
		if err != nil {
			return nil, err
		}
		if !found {
			return next(ctx, method, req)
		}
		contract, err := h.contract(name, schema)
		if err != nil {
			h.log(ctx, "tool input schema cannot be enforced", name, err)
			return publicError(fmt.Sprintf("The tool %s cannot be called: its input schema cannot be enforced.", name)), nil
		}
		args := string(call.Params.Arguments)
		if args == "" || args == "null" {
			args = "{}"
		}
		if _, err := contract.Prepare(tool.Request{Name: contract.Name(), Arguments: args}, tool.Admission{}); err != nil {
			if r, ok := tool.ClassifyInputRejection(err); ok {
				return publicError(r.Message()), nil
			}
			h.log(ctx, "tool arguments could not be judged", name, err)
			return failedCall(name), nil
		}
		return h.run(ctx, next, method, call)
	}
}

// run calls the handler, recovering a panic, and keeps private error text
// out of the result.
func (h *hardener) run(ctx context.Context, next mcp.MethodHandler, method string, call *mcp.CallToolRequest) (res mcp.Result, err error) {
	name := call.Params.Name
	defer func() {
		if p := recover(); p != nil {
			if h.logger != nil {
				h.logger.ErrorContext(ctx, "tool handler panicked", "tool", name, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
			res, err = failedCall(name), nil
		}
	}()
	res, err = next(ctx, method, call)
	if err != nil {
		var rpc *jsonrpc.Error
		if errors.As(err, &rpc) {
			return nil, err
		}
		return h.publicOf(ctx, name, err), nil
	}
	if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.GetError() != nil {
		return h.publicOf(ctx, name, r.GetError()), nil
	}
	return res, nil
}

// publicOf is the isError result for a handler's error: a Failure's public
// Output, or a sentence naming the tool; the error's text is logged.
func (h *hardener) publicOf(ctx context.Context, name string, err error) *mcp.CallToolResult {
	if f, ok := tool.ClassifyFailure(err); ok {
		return &mcp.CallToolResult{Content: contentOf(f.Output()), IsError: true}
	}
	h.log(ctx, "tool handler failed", name, err)
	return failedCall(name)
}

func (h *hardener) log(ctx context.Context, msg, name string, err error) {
	if h.logger != nil {
		h.logger.WarnContext(ctx, msg, "tool", name, "error", err.Error())
	}
}

func failedCall(name string) *mcp.CallToolResult {
	return publicError(fmt.Sprintf("The call to %s failed.", name))
}

func publicError(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true}
}

// errSchemaNotEncoded is the message of the protocol error schemaOf
// answers when the advertised input schema cannot be encoded.
var errSchemaNotEncoded = errprefix.New("the tool's input schema could not be encoded")

// schemaOf finds the input schema the server advertises for the tool of
// call, listing the tools through the middleware chain for call's session.
func (h *hardener) schemaOf(ctx context.Context, next mcp.MethodHandler, call *mcp.CallToolRequest) (string, bool, error) {
	params := &mcp.ListToolsParams{}
	for range maxHardenPages {
		res, err := next(ctx, "tools/list", &mcp.ListToolsRequest{Session: call.Session, Params: params, Extra: call.Extra})
		if err != nil {
			return "", false, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return "", false, nil
		}
		for _, t := range list.Tools {
			if t.Name == call.Params.Name {
				schema, err := json.Marshal(t.InputSchema)
				if err != nil {
					return "", false, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errSchemaNotEncoded.Error()}
				}
				return string(schema), true, nil
			}
		}
		if list.NextCursor == "" {
			return "", false, nil
		}
		params = &mcp.ListToolsParams{Cursor: list.NextCursor}
	}
	return "", false, nil
}

// maxHardenPages bounds the pages of the server's own listing Harden reads.
const maxHardenPages = 100

// contract returns the contract of the tool name for schema, compiled once
// per schema text.
func (h *hardener) contract(name, schema string) (tool.Contract, error) {
	h.mu.Lock()
	c, ok := h.contracts[name]
	h.mu.Unlock()
	if ok && c.schema == schema {
		return c.contract, c.err
	}
	c = hardenedTool{schema: schema}
	b, err := tool.Bind(schemaOnly{def: tool.Definition{Name: localName(name), InputSchema: json.RawMessage(schema)}})
	if err != nil {
		c.err = err
	} else {
		c.contract = b.Contract()
	}
	h.mu.Lock()
	h.contracts[name] = c
	h.mu.Unlock()
	return c.contract, c.err
}
