// Package bridgetest holds the tests that join the OpenTelemetry module
// and the MCP adapter: a call through the MCP bridge, in memory, traced
// from the client's span to the server's. It is a module of its own, never
// published, so that neither published module requires the other.
package bridgetest
