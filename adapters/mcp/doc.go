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
// The example command agentloop-mcp (go run
// ./examples/shop/cmd/agentloop-mcp, from a clone of the repository)
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
// A remote server is not trusted to be small or to stop either, and every
// bound has a default that holds when nothing is configured. [Import]
// reads a bounded number of pages and tools, refuses a schema over its
// bound before encoding or compiling it, and gives up after a deadline;
// each call of an imported tool gives up after its own
// ([DefaultCallTimeout]). On a session [Connect] made, a page of the
// listing sent over streamable HTTP is read by the transport, tools
// counted before any is built and schemas kept as sent, at about three
// times its bytes. The bytes of one message, results included, can only
// be bounded while they are read, and the elicitations one call makes the
// client answer only by the client's handler: make the session with
// [Connect], which bounds both ([DefaultMaxMessageBytes] a message,
// [DefaultMaxStreamEvents] and [DefaultMaxStreamBytes] the event stream
// that answers a request, [DefaultMaxElicitations] a call). Import refuses
// a session Connect did not make unless [ImportConfig].UnboundedSession
// says that its maker chose its bounds. [ImportConfig] and [ConnectConfig]
// document each limit and its default; [NoLimit] turns one off, the one
// explicit way to do so:
//
//	session, err := toolmcp.Connect(ctx, toolmcp.ConnectConfig{
//		Implementation: &mcp.Implementation{Name: "agent", Version: "v1.0.0"},
//		Options:        &mcp.ClientOptions{ElicitationHandler: ask},
//		Transport:      &mcp.StreamableClientTransport{Endpoint: url},
//	})
//	// handle err
//	imported, err := toolmcp.Import(ctx, session, toolmcp.ImportConfig{})
//
// # Concurrency and ownership
//
// AddTools, Connect and Import copy what they keep of their
// configuration; the server's handlers, every [RemoteTool] and a
// [ProgressRelay] are safe for concurrent use, and so is Connect.
package toolmcp
