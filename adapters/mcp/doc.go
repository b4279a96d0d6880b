// Package toolmcp carries tools across the Model Context Protocol with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk/mcp), in both
// directions, without leaving the trust boundary of package tool.
//
// The name reads as "tool, over MCP" at the call site: toolmcp.AddTools
// serves a registry's tools on an mcp.Server, and toolmcp.Import turns the
// tools of a remote MCP server into tool.Tools.
//
// # Serving
//
// AddTools adds every tool of a tool.Registry to an *mcp.Server. Each call
// runs through a dispatch.Dispatcher: the arguments the client sent reach
// tool.Contract.Prepare as the exact JSON text, and every dispatch.Outcome
// becomes the MCP result a client expects — content and
// structuredContent, an isError result with public text only, a JSON-RPC
// error for a tool that does not exist. A tool.InputRequest becomes an
// input-required result whose requestState is the sealed
// dispatch.Checkpoint, so the client's retry with the person's answer is
// resumed by any server instance that holds the seal keys, and a state
// that was tampered with is refused. AddTools documents the mapping.
//
// # Importing
//
// Import lists the tools of an *mcp.ClientSession and returns them as
// tool.Tools: bound like any other tool, their arguments are admitted by
// Prepare before anything is sent, and their results are checked against
// the schema the server advertised. Import documents what is trusted.
package toolmcp
