// Package toolmcp carries tools across the Model Context Protocol with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk/mcp), in both
// directions, without leaving the trust boundary of package [tool].
//
// The name reads as "tool, over MCP" at the call site: toolmcp.AddTools
// serves a registry's tools on an mcp.Server, and toolmcp.Import turns the
// tools of a remote MCP server into tool.Tools.
//
// # Serving
//
// [AddTools] adds every tool of a [tool.Registry] to an [*mcp.Server]. Each
// call runs through a [dispatch.Dispatcher]: the arguments the client sent
// reach [tool.Contract.Prepare] as the exact JSON text, and every
// [dispatch.Outcome] becomes the MCP result a client expects — content and
// structuredContent, an isError result with public text only, a JSON-RPC
// error for a tool that does not exist. A [tool.InputRequest] becomes an
// input-required result whose requestState is the sealed
// [dispatch.Checkpoint], encrypted, so the client's retry with the person's
// answer is resumed ([dispatch.Dispatcher.Resume]) by any server instance
// that holds the seal keys, and a state that was tampered with is refused.
// Clients older than MCP 2026-07-28 are asked with a server-initiated
// elicitation instead.
//
// Over streamable HTTP, wrap the SDK's handler with [HTTPHandler]: the
// answers of retries then reach Resume as the exact JSON text the client
// sent (duplicate members and invalid UTF-8 refused, numbers never
// rounded), and a call ends when the connection carrying it drops.
// Over stdio and in-memory transports the SDK's decoded answer is all
// there is; [HTTPHandler] lists what is lost and what the bridge refuses
// there. [AddTools] documents the mapping, and [Config] and
// [ToolOptions] what a server decides per registry and per tool.
//
// The command agentloop-mcp (go run ./adapters/mcp/cmd/agentloop-mcp)
// serves a small shop's tools this way over stdio or streamable HTTP.
//
// # Importing
//
// [Import] lists the tools of an [*mcp.ClientSession] and returns them as
// [RemoteTool] values, each a [tool.Tool]: bound like any other tool
// ([tool.Bind]), their arguments are admitted by [tool.Contract.Prepare]
// before anything is sent, and their results are checked against the schema
// the server advertised. A remote request for input can become the runtime's
// own [tool.InputRequest], and a [ProgressRelay] carries the server's
// progress to the call. [Import] and [RemoteTool] document what is trusted
// and how each result is mapped.
//
// A remote server is not trusted to be small or to stop either. [Import]
// reads a bounded number of pages and tools, refuses a schema over its
// bound before encoding or compiling it, and gives up after a deadline;
// [ImportConfig] documents each limit and its default. Two bounds need the
// client to be built for them, since the caller makes the session: the
// bytes of one message, results included, are bounded while they are read
// only by a transport made with [LimitTransport], and the elicitations one
// imported call can make the client answer only by a handler wrapped with
// [LimitElicitations]:
//
//	transport, err := toolmcp.LimitTransport(&mcp.StreamableClientTransport{Endpoint: url}, 0)
//	// handle err
//	client := mcp.NewClient(impl, &mcp.ClientOptions{ElicitationHandler: toolmcp.LimitElicitations(ask)})
//	session, err := client.Connect(ctx, transport, nil)
//	// handle err
//	imported, err := toolmcp.Import(ctx, session, toolmcp.ImportConfig{})
//
// # Concurrency and ownership
//
// AddTools and Import copy what they keep of their configuration; the
// server's handlers, every [RemoteTool] and a [ProgressRelay] are safe for
// concurrent use.
package toolmcp
